# The plot pipeline end to end: a small results directory from every producer, then plots/run (matplotlib, found by
# plots/run itself): every figure and REPORT.md. Label "plots": run once, in the Release build.
add_test(NAME plots.pipeline COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/plots_pipeline.sh $<TARGET_FILE:hsdr>
  ${CMAKE_CURRENT_BINARY_DIR}/plots-out)
set_tests_properties(plots.pipeline PROPERTIES LABELS plots PASS_REGULAR_EXPRESSION "plots pipeline: 8 figures and REPORT.md OK")
# the committed reports are what the report generator makes of their results today
add_test(NAME plots.committed_reports COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_reports.sh)
set_tests_properties(plots.committed_reports PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "check_reports: [0-9]+ committed reports up to date")
# a malformed columns-<model>.jsonl (hsdr columns) next to valid results: plots/run names the file and line, exit 2
add_test(NAME plots.bad_columns COMMAND sh -c "d=$(mktemp -d) && cp ${CMAKE_CURRENT_SOURCE_DIR}/data/results/a.jsonl \
$d/results.jsonl && printf '{\"schema\":\"hsdr-columns/0\"}\\n' >$d/columns-x.jsonl && ${PROJECT_SOURCE_DIR}/plots/run $d; \
rc=$?; rm -rf $d; echo exit=$rc")
set_tests_properties(plots.bad_columns PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "columns-x\\.jsonl:1: schema 'hsdr-columns/0', expected 'hsdr-columns/1'.*exit=2")
