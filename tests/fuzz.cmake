# The fuzz targets' corpora (tests/fuzz/corpus/NAME/: seeds, plus the input of every bug the fuzzers found) replayed
# through the same LLVMFuzzerTestOneInput with a plain main (tests/fuzz/replay.c), so every build -- Release and the
# sanitizer build -- re-checks them without libFuzzer or clang. scripts/fuzz.sh does the fuzzing itself.
file(GLOB HSDR_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
if(NOT HSDR_CPU_KERNELS) # fuzz_ptq1_0 decodes the CPU kernels' converted layouts: x86-64 builds only
  list(REMOVE_ITEM HSDR_FUZZ_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_ptq1_0.c)
endif()
foreach(src ${HSDR_FUZZ_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" name ${name})
  add_executable(fuzz_${name}_replay ${src} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay.c)
  target_link_libraries(fuzz_${name}_replay PRIVATE hsdr_harness)
  add_test(NAME fuzz.replay_${name} COMMAND fuzz_${name}_replay ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(fuzz.replay_${name} PROPERTIES LABELS fuzz)
endforeach()
