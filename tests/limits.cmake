# Resource limits: a case whose buffers would not fit in memory is refused up front (before any allocation), recorded
# as an error row that says how many bytes it needed against the cap, and the run exits 1.
set(LIMITS_OUT ${CMAKE_CURRENT_BINARY_DIR}/run-out/limits)
add_test(NAME cli.run_refuses_oversized COMMAND sh -c
  "$<TARGET_FILE:hsdr> run ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml --out ${LIMITS_OUT} --quiet --stages none --set variants=ref.q8_0 --set K=131072 --set N=262144 --set R=1 --set threads=1 --set mode=hot --set distribution=gaussian --set extra=none; echo exit=$?; grep -o 'refused: inputs need [0-9]* bytes, above the [0-9]*-byte cap' ${LIMITS_OUT}/results.jsonl")
set_tests_properties(cli.run_refuses_oversized PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "1 errors.*exit=1.*refused: inputs need 16120553472 bytes, above the [0-9]+-byte cap")
