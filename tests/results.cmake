# CLI tests of `hsdr compare` and `hsdr merge` on the result files in tests/data/results/ (schema hsdr-results/1:
# converted on reading, and compared on their raw times since they carry neither paired ratios nor ceiling samples;
# merged-expected.* is what merge writes of them: hsdr-results/2 rows marked converted_from).
# a.jsonl -> b.jsonl: ref.direct K=1024 x0.8 (FASTER), ref.stateset x1.25 (SLOWER), ref.q8_0 within 0.1% (SAME),
# ref.tile64 +3% under 30% noise (AMBIGUOUS), ref.flns failed in B and ref.q1516 with 2 samples in A (NOT_COMPARABLE),
# K=2048 only in A, K=4096 only in B.
set(RES ${CMAKE_CURRENT_SOURCE_DIR}/data/results)
set(HSDR $<TARGET_FILE:hsdr>)

cli_test(compare_verdicts 0
  "^variant=ref\\.direct K=1024 .*\\[0\\.79[0-9]*, 0\\.80[0-9]*\\] +FASTER$"
  "^variant=ref\\.stateset K=1024 .* SLOWER$"
  "^variant=ref\\.q8_0 K=1024 .* SAME$"
  "^variant=ref\\.tile64 K=1024 .* AMBIGUOUS$"
  "^variant=ref\\.flns K=1024 .* NOT_COMPARABLE: B status failed$"
  "^variant=ref\\.q1516 K=1024 .* NOT_COMPARABLE: A has 2 samples_ns \\(needs 3\\)$"
  "^variant=ref\\.direct K=2048 .* ONLY_IN_A$"
  "^variant=ref\\.direct K=4096 .* ONLY_IN_B$"
  "^1 FASTER, 1 SLOWER, 1 SAME, 1 AMBIGUOUS, 2 NOT_COMPARABLE, 1 ONLY_IN_A, 1 ONLY_IN_B$"
  -- ${HSDR} compare ${RES}/a.jsonl ${RES}/b.jsonl)
cli_test(compare_reversed 0
  "^variant=ref\\.direct K=1024 .* SLOWER$" "^variant=ref\\.stateset K=1024 .* FASTER$"
  "^variant=ref\\.direct K=4096 .* ONLY_IN_A$" "NOT_COMPARABLE: A status failed$"
  -- ${HSDR} compare ${RES}/b.jsonl ${RES}/a.jsonl)
cli_test(compare_json 0
  "^\\{\"key\":\"variant=ref\\.direct K=1024 [^\"]*\",\"verdict\":\"FASTER\",\"figure\":\"raw\",\"figure_a\":1000\\.5,\"figure_b\":800\\.5,\"median_a_ns\":1000\\.5,\"median_b_ns\":800\\.5,"
  "\"verdict\":\"AMBIGUOUS\"" "\"verdict\":\"NOT_COMPARABLE\",\"reason\":\"B status failed\""
  "\"counts\":\\{\"FASTER\":1,\"SLOWER\":1,\"SAME\":1,\"AMBIGUOUS\":1,\"NOT_COMPARABLE\":2,\"ONLY_IN_A\":1,\"ONLY_IN_B\":1\\}"
  -- ${HSDR} compare --json ${RES}/a.jsonl ${RES}/b.jsonl)
# a 30% threshold takes x0.8, x1.25 and the noisy +3% into "same"
cli_test(compare_threshold 0 "^0 FASTER, 0 SLOWER, 4 SAME, 0 AMBIGUOUS,"
  -- ${HSDR} compare ${RES}/a.jsonl ${RES}/b.jsonl --threshold 0.3)
cli_test(compare_one_file 2 "give exactly two result files" -- ${HSDR} compare ${RES}/a.jsonl)
cli_test(compare_bad_threshold 2 "--threshold: '2' is not a number in \\(0, 1\\)"
  -- ${HSDR} compare ${RES}/a.jsonl ${RES}/b.jsonl --threshold 2)
cli_test(compare_unknown_option 2 "unknown option '--fast'" -- ${HSDR} compare --fast ${RES}/a.jsonl ${RES}/b.jsonl)
cli_test(compare_missing_file 2 "no-such\\.jsonl: cannot open: No such file"
  -- ${HSDR} compare ${RES}/a.jsonl ${RES}/no-such.jsonl)
cli_test(compare_malformed 2 "bad-line3\\.jsonl:3:[0-9]+: malformed JSON"
  -- ${HSDR} compare ${RES}/bad-line3.jsonl ${RES}/b.jsonl)
cli_test(compare_bad_schema 2 "bad-schema\\.jsonl:2: field 'schema': expected \"hsdr-results/2\" or \"hsdr-results/1\""
  -- ${HSDR} compare ${RES}/a.jsonl ${RES}/bad-schema.jsonl)
cli_test(compare_duplicate_key 2 "dup-key\\.jsonl:2: key 'variant=ref\\.direct K=1024 [^']*' already at line 1"
  -- ${HSDR} compare ${RES}/dup-key.jsonl ${RES}/b.jsonl)

# (no ';' in these sh -c scripts: CMake would split the argument there; "\n" separates commands instead)
# two shards (shard-1 repeats one row of shard-0 identically) -> exactly merged-expected.{jsonl,csv} and the
# break-even fit of their R sweep (merged-breakeven-expected.json)
set(MERGE_OUT ${CMAKE_CURRENT_BINARY_DIR}/merge-out)
cli_test(merge_shards 0 "^merged 5 rows from 2 files \\(1 identical repeat dropped\\)" "^identical to the expected files$"
  -- sh -c "rm -rf \"$1\" && \"$0\" merge \"$1\" \"$2\" \"$3\" && cmp \"$1/results.jsonl\" \"$4\" && cmp \"$1/results.csv\" \"$5\" && cmp \"$1/breakeven.json\" \"$6\" && ! ls -A \"$1\" | grep -v '^\\(results\\.\\(jsonl\\|csv\\)\\|breakeven\\.json\\)$' && echo identical to the expected files"
  ${HSDR} ${MERGE_OUT}/shards ${RES}/shard-0.jsonl ${RES}/shard-1.jsonl ${RES}/merged-expected.jsonl
  ${RES}/merged-expected.csv ${RES}/merged-breakeven-expected.json)
# rows of an interrupted run: merged with their mark, and no break-even fit (an older breakeven.json there removed)
cli_test(merge_partial 0 "^no breakeven\\.json: a fit over part of an R sweep would be a wrong fit$" "^no fit left$"
  -- sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && echo stale >\"$1/breakeven.json\" && \"$0\" merge \"$1\" \"$2\" && test -s \"$1/results.jsonl\" && ! test -e \"$1/breakeven.json\" && echo no fit left"
  ${HSDR} ${MERGE_OUT}/partial ${RES}/partial-shard.jsonl)
cli_test(merge_base 0 "^merged 7 rows from 2 files \\(2 identical repeats dropped\\) into .*/all\\.jsonl and .*/all\\.csv$" "^written$"
  -- sh -c "rm -rf \"$1\" && \"$0\" merge \"$1\" \"$2\" \"$3\" --base all && test -s \"$1/all.jsonl\" && test -s \"$1/all.csv\" && echo written"
  ${HSDR} ${MERGE_OUT}/base ${RES}/a.jsonl ${RES}/dup-key.jsonl)
cli_test(merge_conflict 2
  "key 'variant=ref\\.stateset K=1024 N=64 R=8 threads=1 dist=gaussian mode=hot' differs between .*shard-0\\.jsonl:1 and .*conflict\\.jsonl:1"
  "^nothing under the output directory$"
  -- sh -c "rm -rf \"$1\"\n\"$0\" merge \"$1\" \"$2\" \"$3\" \"$4\"\nrc=$?\n[ -n \"$(ls -A \"$1\" 2>/dev/null)\" ] || echo nothing under the output directory\nexit $rc"
  ${HSDR} ${MERGE_OUT}/conflict ${RES}/shard-0.jsonl ${RES}/shard-1.jsonl ${RES}/conflict.jsonl)
cli_test(merge_malformed 2 "bad-line3\\.jsonl:3:[0-9]+: malformed JSON" -- ${HSDR} merge ${MERGE_OUT}/bad ${RES}/bad-line3.jsonl)
cli_test(merge_no_inputs 2 "give an output directory and at least one input file" -- ${HSDR} merge ${MERGE_OUT}/none)

# the schema's one table (harness/schema.c) and what is derived from it in the repository stay in step
add_test(NAME cli.schema_docs_current COMMAND ${PROJECT_SOURCE_DIR}/scripts/schema-docs.sh ${HSDR} --check)
set_tests_properties(cli.schema_docs_current PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "schema-docs: plots/results_schema.json and docs/results-schema.md up to date")
cli_test(schema_csv 0 "^schema,key,variant,backend,family,K,N,R,cols,threads," -- ${HSDR} schema --csv)
cli_test(schema_text 0 "^schema hsdr-results/2: [0-9]+ fields" "ratio_to_production_ci +array +/null +ok" -- ${HSDR} schema)
cli_test(schema_help 0 "^usage: hsdr schema \\[--json \\| --markdown \\| --csv\\]" -- ${HSDR} schema --help)
cli_test(schema_bad 2 "hsdr schema: unknown option '--yaml'" -- ${HSDR} schema --yaml)
