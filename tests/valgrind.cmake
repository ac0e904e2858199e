# `hsdr check` (and a small `hsdr run`) under Valgrind's Memcheck: no invalid read or write, no use of an uninitialised
# value in a branch or a system call, no leak that can be ours (definite, indirect or possible). The sanitizer build
# checks the same code with compiler instrumentation; Memcheck checks the Release binary users run, the optimized
# SIMD kernels as compiled, and the libraries (cJSON, libyaml, hwloc, the Vulkan loader) as shipped.
# Label "valgrind"; not in the sanitizer builds (Memcheck cannot run a binary built with a sanitizer). tests/valgrind.sh
# keeps each full report under the build's valgrind/ folder.
if(NOT HSDR_SANITIZE AND NOT HSDR_TSAN AND NOT APPLE)
  find_program(HSDR_VALGRIND valgrind)
  if(NOT HSDR_VALGRIND)
    message(WARNING "hsdr: no valgrind: the Memcheck tests are not registered (scripts/ensure-deps.sh test installs it)")
  else()
    set(VG ${CMAKE_CURRENT_SOURCE_DIR}/valgrind.sh ${HSDR_VALGRIND} ${CMAKE_CURRENT_SOURCE_DIR}/valgrind.supp)
    set(VG_LOG ${CMAKE_CURRENT_BINARY_DIR}/valgrind)
    function(vg_test name) # vg_test(NAME REGEX... -- ${VG} LOG WANT_RC -- COMMAND...)
      cli_test(${name} 0 ${ARGN})
      set_tests_properties(cli.${name} PROPERTIES LABELS "cli;valgrind")
    endfunction()
    set(VG_CLEAN "valgrind.sh: Memcheck clean")
    # every vector, every reference path and every CPU kernel (about 10 s each under Memcheck)
    vg_test(valgrind_check_reference "^[1-9][0-9]* passed, 0 failed$" ${VG_CLEAN}
      -- ${VG} ${VG_LOG}/check-reference.log 0 -- $<TARGET_FILE:hsdr> check --backend reference ${VEC})
    vg_test(valgrind_check_cpu "^[1-9][0-9]* passed, 0 failed$" ${VG_CLEAN}
      -- ${VG} ${VG_LOG}/check-cpu.log 0 -- $<TARGET_FILE:hsdr> check --backend cpu ${VEC})
    # the device backends on the spec's examples (every kernel, every output; a minute each under Memcheck): the
    # Metal kernels under the CPU shim, the Vulkan host on lavapipe (the driver's own allocations suppressed)
    vg_test(valgrind_check_metal "^[1-9][0-9]* passed, 0 failed$" ${VG_CLEAN}
      -- ${VG} ${VG_LOG}/check-metal.log 0 -- $<TARGET_FILE:hsdr> check --backend metal ${VEC}/spec-examples.json)
    if(HSDR_VULKAN_ON)
      vg_test(valgrind_check_vulkan "^[1-9][0-9]* passed, 0 failed$" ${VG_CLEAN}
        -- ${VG} ${VG_LOG}/check-vulkan.log 0 -- $<TARGET_FILE:hsdr> check --backend vulkan ${VEC}/spec-examples.json)
    endif()
    # every backend's probe (CUDA's included: without a device it reports why) and the registry
    vg_test(valgrind_list "ref.q1516" ${VG_CLEAN} -- ${VG} ${VG_LOG}/list.log 0 -- $<TARGET_FILE:hsdr> list)
    # the timed path: validate-then-time on 1 and 2 threads, state sets shared over R rows, stage attribution
    vg_test(valgrind_run_cpu "cases in .*: [1-9][0-9]* ok, 0 failed validation, 0 errors" ${VG_CLEAN}
      -- ${VG} ${VG_LOG}/run-cpu.log 0 -- $<TARGET_FILE:hsdr> run ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml --out ${CMAKE_CURRENT_BINARY_DIR}/run-out/valgrind
      --quiet --set variants=backend:cpu --set K=1024 --set N=40 --set R=1,4 --set threads=1,2
      --set distribution=gaussian --set mode=hot --set extra=none)
    # real weights: profile --gguf on the synthetic GGUF (PQ2_0 converted, a converting variant), the JSON written;
    # the token rotated over 3 copies (a 20 kB cache: HSDR_LLC_BYTES)
    vg_test(valgrind_profile_gguf "^cpu\\.planar2 +[0-9.]+ " ${VG_CLEAN}
      -- ${CMAKE_COMMAND} -E env HSDR_LLC_BYTES=20000 ${VG} ${VG_LOG}/profile-gguf.log 0 -- $<TARGET_FILE:hsdr> profile
      --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --tokens 1 --variants ref.q8_0,cpu.planar2 --json ${CMAKE_CURRENT_BINARY_DIR}/profile-gguf-valgrind.json)
    # the error paths: every malformed vector, matrix and results file of tests/data/ is refused (exit 2) without a
    # leak or a bad read on the way out
    file(GLOB VG_BAD_VECTORS CONFIGURE_DEPENDS ${DATA}/bad-*.json)
    foreach(f ${VG_BAD_VECTORS})
      get_filename_component(bad ${f} NAME_WE)
      vg_test(valgrind_${bad} ${VG_CLEAN} -- ${VG} ${VG_LOG}/${bad}.log 2 -- $<TARGET_FILE:hsdr> check ${f})
    endforeach()
    file(GLOB VG_BAD_MATRICES CONFIGURE_DEPENDS ${DATA}/matrix/bad-*.yaml)
    foreach(f ${VG_BAD_MATRICES})
      get_filename_component(bad ${f} NAME_WE)
      vg_test(valgrind_matrix_${bad} ${VG_CLEAN}
        -- ${VG} ${VG_LOG}/matrix-${bad}.log 2 -- $<TARGET_FILE:hsdr> run ${f} --dry-run)
    endforeach()
    vg_test(valgrind_compare_bad_line ${VG_CLEAN} -- ${VG} ${VG_LOG}/compare-bad-line.log 2
      -- $<TARGET_FILE:hsdr> compare ${DATA}/results/a.jsonl ${DATA}/results/bad-line3.jsonl)
    vg_test(valgrind_compare "1 FASTER, 1 SLOWER" ${VG_CLEAN} -- ${VG} ${VG_LOG}/compare.log 0
      -- $<TARGET_FILE:hsdr> compare ${DATA}/results/a.jsonl ${DATA}/results/b.jsonl)
  endif()
endif()
