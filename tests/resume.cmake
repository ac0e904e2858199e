# hsdr run interrupted (SIGINT, SIGTERM) and --resume: whole rows marked partial, exit 128 + the signal, the resumed
# result equal to an uninterrupted run but for timings; --resume refuses a directory of other cases (exit 2).
set(RESUME_MATRIX ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml)
set(RESUME_OUT ${CMAKE_CURRENT_BINARY_DIR}/resume-out)
set(CHECK_RESUME ${CMAKE_CURRENT_SOURCE_DIR}/check_resume.py)
if(HSDR_PYTHON)
  add_test(NAME cli.run_resume_sigint COMMAND ${HSDR_PYTHON} ${CHECK_RESUME} interrupt $<TARGET_FILE:hsdr>
    ${RESUME_MATRIX} ${RESUME_OUT}/sigint --signal INT)
  set_tests_properties(cli.run_resume_sigint PROPERTIES LABELS cli
    PASS_REGULAR_EXPRESSION "SIGINT then --resume: [0-9]+ cases, identical")
  # SIGTERM on a shard without the cold extras; then a resumed run stopped by a second signal (the process ends at
  # once) with a torn row in the journal; then --resume again
  add_test(NAME cli.run_resume_sigterm COMMAND ${HSDR_PYTHON} ${CHECK_RESUME} interrupt $<TARGET_FILE:hsdr>
    ${RESUME_MATRIX} ${RESUME_OUT}/sigterm --signal TERM --hard-stop -- --set extra=none --shard 1/2)
  set_tests_properties(cli.run_resume_sigterm PROPERTIES LABELS cli
    PASS_REGULAR_EXPRESSION "SIGTERM then --resume: [0-9]+ cases, identical")
  add_test(NAME cli.run_resume_mismatch COMMAND ${HSDR_PYTHON} ${CHECK_RESUME} mismatch $<TARGET_FILE:hsdr>
    ${RESUME_MATRIX} ${RESUME_OUT}/mismatch)
  set_tests_properties(cli.run_resume_mismatch PROPERTIES LABELS cli
    PASS_REGULAR_EXPRESSION "mismatched directories refused, a complete one resumed as it was")
endif()
cli_test(run_resume_dry 0 "nothing to resume in .*: running every case" "variant=ref.q8_0 K=128 N=16 R=1 threads=1"
  -- $<TARGET_FILE:hsdr> run ${RESUME_MATRIX} --dry-run --resume --out ${RESUME_OUT}/nothing-here)
