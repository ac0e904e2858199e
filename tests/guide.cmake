# docs/adding-a-variant.md built from its own code blocks (tests/check_guide.py): a copy of the source tree with the
# guide's example variants written in, its hsdr built (Release, -j2; the CUDA example too when this build has the CUDA
# backend), then the guide's commands run and their results checked. Label guide, run in the Release build only
# (./hsdr-bench test leaves it out of the sanitizer build, like plots): about 30 s on two cores, 80 s with nvcc.
if(HSDR_PYTHON)
  set(GUIDE_ARGS --source ${PROJECT_SOURCE_DIR} --work ${CMAKE_CURRENT_BINARY_DIR}/guide --cmake ${CMAKE_COMMAND}
      --generator ${CMAKE_GENERATOR} --c-compiler ${CMAKE_C_COMPILER} --cpu-kernels ${HSDR_CPU_KERNELS})
  if(CMAKE_MAKE_PROGRAM)
    list(APPEND GUIDE_ARGS --make-program ${CMAKE_MAKE_PROGRAM})
  endif()
  if(CMAKE_CXX_COMPILER)
    list(APPEND GUIDE_ARGS --cxx-compiler ${CMAKE_CXX_COMPILER})
  endif()
  if(HSDR_CUDA_ON)
    list(APPEND GUIDE_ARGS --nvcc ${CMAKE_CUDA_COMPILER})
    if(CMAKE_CUDA_ARCHITECTURES)
      list(APPEND GUIDE_ARGS --cuda-arch ${CMAKE_CUDA_ARCHITECTURES})
    endif()
  elseif(HSDR_CUDA STREQUAL "OFF")
    list(APPEND GUIDE_ARGS --no-cuda-reason "HSDR_CUDA=OFF in this build")
  else()
    list(APPEND GUIDE_ARGS --no-cuda-reason "nvcc not found")
  endif()
  add_test(NAME guide.example COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_guide.py ${GUIDE_ARGS})
  set_tests_properties(guide.example PROPERTIES LABELS guide SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
