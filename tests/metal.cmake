# The Metal kernels: on Apple with HSDR_METAL on, on the GPU; elsewhere under the CPU shim, which runs the very same
# .metal sources on the CPU (correctness only: the shim is never timed).
cli_test(check_metal 0 "^[1-9][0-9]* passed, 0 failed$" -- $<TARGET_FILE:hsdr> check --backend metal ${VEC})
set_tests_properties(cli.check_metal PROPERTIES LABELS "cli;metal")
# the four kernels on the spec's examples, in seconds: the quick check of the shim, also in the ThreadSanitizer build.
# (The sanitizer build skips the label "metal": cli.check_vectors already runs every Metal variant on every vector
# there, and the shim's thousands of OS-thread rendezvous make each full pass minutes long.)
cli_test(check_metal_examples 0 "^[1-9][0-9]* passed, 0 failed$" -- $<TARGET_FILE:hsdr> check --backend metal
         ${VEC}/spec-examples.json)
set_tests_properties(cli.check_metal_examples PROPERTIES LABELS "cli;shim")
if(NOT (APPLE AND HSDR_METAL_ON))
  # the shim's own collectives and barriers, and its refusal of a divergent collective
  add_executable(metal_shim_selftest metal_shim_selftest.cpp)
  target_compile_options(metal_shim_selftest PRIVATE -std=c++17 -Wno-unused-parameter)
  target_link_libraries(metal_shim_selftest PRIVATE hsdr_ref Threads::Threads)
  add_test(NAME unit.metal_shim COMMAND metal_shim_selftest)
  add_test(NAME unit.metal_shim_divergent COMMAND metal_shim_selftest divergent)
  set_tests_properties(unit.metal_shim unit.metal_shim_divergent PROPERTIES LABELS "unit;shim")
  set_tests_properties(unit.metal_shim_divergent PROPERTIES
    PASS_REGULAR_EXPRESSION "simdgroup lanes reached different collectives")
endif()
