# Determinism: the same matrix run twice (same seed) gives the same inputs and validation outcomes, and so do 1 and 2
# threads (tests/determinism.sh, tests/check_determinism.py); tests/test_determinism.c holds the integers of every
# backend that runs here to ref.direct's, and every output to itself on a second run.
if(HSDR_PYTHON)
  add_test(NAME cli.run_deterministic COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/determinism.sh $<TARGET_FILE:hsdr>
    ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml ${CMAKE_CURRENT_BINARY_DIR}/run-out/determinism)
  set_tests_properties(cli.run_deterministic PROPERTIES LABELS "cli;python"
    PASS_REGULAR_EXPRESSION "check_determinism: [0-9]+ cases identical across runs, [1-9][0-9]* thread pairs identical")
endif()
