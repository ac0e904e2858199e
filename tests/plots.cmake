# The plot pipeline end to end: a small results directory from every producer, then plots/run (matplotlib, found by
# plots/run itself): every figure and REPORT.md. Label "plots": run once, in the Release build.
set(PLOTS_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/plots)
add_test(NAME plots.pipeline COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/plots_pipeline.sh $<TARGET_FILE:hsdr>
  ${CMAKE_CURRENT_BINARY_DIR}/plots-out)
set_tests_properties(plots.pipeline PROPERTIES LABELS plots PASS_REGULAR_EXPRESSION "plots pipeline: 8 figures and REPORT.md OK")
# the committed reports (their results are hsdr-results/1, converted on reading) are what the report generator makes
# of their results today
add_test(NAME plots.committed_reports COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_reports.sh)
set_tests_properties(plots.committed_reports PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "check_reports: [0-9]+ committed reports up to date")
# a malformed columns-<model>.jsonl (hsdr columns, before hsdr-results/2) next to valid results: plots/run names the
# file and line, exit 2
add_test(NAME plots.bad_columns COMMAND sh -c "d=$(mktemp -d) && cp ${CMAKE_CURRENT_SOURCE_DIR}/data/results/a.jsonl \
$d/results.jsonl && printf '{\"schema\":\"hsdr-columns/0\"}\\n' >$d/columns-x.jsonl && ${PROJECT_SOURCE_DIR}/plots/run $d; \
rc=$?; rm -rf $d; echo exit=$rc")
set_tests_properties(plots.bad_columns PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "columns-x\\.jsonl:1: schema 'hsdr-columns/0', expected 'hsdr-columns/1'.*exit=2")
# a row of the wrong type for its schema field: plots/run names the file, the line and the field, exit 2
add_test(NAME plots.bad_row COMMAND sh -c "d=$(mktemp -d) && sed '2s/\"cols\":1,/\"cols\":\"one\",/' \
${PLOTS_DATA}/columns/results.jsonl >$d/results.jsonl && ${PROJECT_SOURCE_DIR}/plots/run $d; rc=$?; rm -rf $d; \
echo exit=$rc")
set_tests_properties(plots.bad_row PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "results\\.jsonl:2: field 'cols' should be integer, got \"one\".*exit=2")
# the columns section from result rows with cols > 1 (cuda.production_cols, since renamed cuda.cols, measured on the H200: see the fixture's
# matrix.yaml): per model and for the K sweep, 1 column against 8, with the gain
add_test(NAME plots.columns_rows COMMAND sh -c "d=$(mktemp -d) && cp ${PLOTS_DATA}/columns/results.jsonl $d/ && \
${PROJECT_SOURCE_DIR}/plots/run $d >/dev/null; rc=$?; sed -n '/^## Several columns/,$p' $d/REPORT.md; rm -rf $d; \
echo exit=$rc")
string(CONCAT COLUMNS_ROWS_SECTION "## Several columns through one read of the weights\n"
  ".*on the K sweep, cold.*\\| 5120 x 4096 \\| [^\n]*\\| 8 \\|[^\n]*\\| 3\\.78x \\|\n"
  ".*on bonsai2-27b's GEMVs, cold.*3\\.15x to 4\\.32x at 8 columns"
  ".*\\| attn_k \\(5120 x 1024\\) \\|[^\n]*\\| 4\\.32x \\|\n\\| ffn_gate \\(5120 x 17408\\) \\|[^\n]*\\| 3\\.15x \\|"
  ".*exit=0")
set_tests_properties(plots.columns_rows PROPERTIES LABELS plots PASS_REGULAR_EXPRESSION "${COLUMNS_ROWS_SECTION}")
# issue 18's question in the report: per GEMV the fastest kernel of each kind as % of the read of its own bytes (a
# converted layout's footprint: cuda.planar2's 34 bytes a block), and the token per kind; on a committed H200 run
add_test(NAME plots.family_floor COMMAND sh -c "d=$(mktemp -d) && gzip -dc \
${PROJECT_SOURCE_DIR}/results/h200/steps/issue18-tma/results.jsonl.gz >$d/results.jsonl && \
cp ${PROJECT_SOURCE_DIR}/results/h200/steps/issue18-tma/profile-bonsai2-27b.json $d/ && \
${PROJECT_SOURCE_DIR}/plots/run $d >/dev/null; rc=$?; sed -n '/^## How close each kind/,/^## Every variant/p' \
$d/REPORT.md; rm -rf $d; echo exit=$rc")
string(CONCAT FAMILY_FLOOR_SECTION "## How close each kind of kernel gets to the floor\n.*"
  "\\| ffn_down, 1 thread, cold \\| 11\\.8 µs \\| cuda\\.planar2 \\| 18\\.5 µs \\| 77% \\| cuda\\.production_pt \\| "
  "20\\.4 µs \\| 58% \\| - \\|.*"
  "\\| bonsai2-27b \\| best baseline \\| cuda\\.planar2 \\| 0\\.364 \\|.*"
  "\\| bonsai2-27b \\| best on PTQ1_0 as stored \\| cuda\\.production_pt \\| 0\\.371 \\|.*exit=0")
set_tests_properties(plots.family_floor PROPERTIES LABELS plots PASS_REGULAR_EXPRESSION "${FAMILY_FLOOR_SECTION}")
# a host study folder of scripts/cpu-host.sh (no results.jsonl: threads/results.jsonl, handoff.jsonl, bandwidth.jsonl,
# profiles before/after/--split auto, cpu-host.log; tests/data/plots/host/README.md): the thread-scaling and
# parallel-efficiency figures and REPORT.md's sections, with numbers; the sweep read from results.jsonl.gz alone
add_test(NAME plots.host COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/plots_host.sh ${CMAKE_CURRENT_BINARY_DIR}/plots-host)
set_tests_properties(plots.host PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "plots host: 2 figures and REPORT.md OK")
# a malformed handoff.jsonl line in a host study: plots/run names the file, the line and the field, exit 2
add_test(NAME plots.host_bad_handoff COMMAND sh -c "d=$(mktemp -d) && cp -R ${PLOTS_DATA}/host/. $d/ && \
sed '2s/\"held\":false/\"held\":\"no\"/' ${PLOTS_DATA}/host/handoff.jsonl >$d/handoff.jsonl && \
${PROJECT_SOURCE_DIR}/plots/run $d; rc=$?; rm -rf $d; echo exit=$rc")
set_tests_properties(plots.host_bad_handoff PROPERTIES LABELS plots
  PASS_REGULAR_EXPRESSION "handoff\\.jsonl:2: calls\\[0\\]: field 'held' should be boolean, got \"no\".*exit=2")
