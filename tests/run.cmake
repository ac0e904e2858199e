# hsdr run: expansion, validate-then-time, results files, sharding + merge, errors.
set(RUN_SMALL ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml)
set(RUN_OUT ${CMAKE_CURRENT_BINARY_DIR}/run-out)
cli_test(run_dry 0 "cases expanded" "variant=ref.stateset K=1024 N=512 R=4 threads=2 dist=bonsai mode=cold"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run)
add_test(NAME cli.run_small COMMAND ${CMAKE_COMMAND} -E env
  sh -c "$<TARGET_FILE:hsdr> run ${RUN_SMALL} --out ${RUN_OUT}/small && ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_results.py $<TARGET_FILE:hsdr> ${RUN_OUT}/small")
set_tests_properties(cli.run_small PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "check_results: [0-9]+ rows OK")
# the same matrix with its rounds spread over 3 visits to each configuration (several configurations in flight)
add_test(NAME cli.run_visits COMMAND ${CMAKE_COMMAND} -E env
  sh -c "$<TARGET_FILE:hsdr> run ${RUN_SMALL} --set visits=3 --quiet --out ${RUN_OUT}/visits && ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_results.py $<TARGET_FILE:hsdr> ${RUN_OUT}/visits")
set_tests_properties(cli.run_visits PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "check_results: [0-9]+ rows OK")
add_test(NAME cli.run_shard_merge COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_shard_merge.sh $<TARGET_FILE:hsdr>
  ${HSDR_PYTHON} ${RUN_SMALL} ${RUN_OUT}/shards)
set_tests_properties(cli.run_shard_merge PROPERTIES LABELS cli)
cli_test(run_set_override 0 "variant=ref.direct K=256 N=16 R=1 threads=1 dist=gaussian mode=hot"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set K=256 --set threads=1 --set distribution=gaussian)
cli_test(run_filter 0 "shard 0/1 runs 2$"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --filter "*ref.q8_0*K=128 *")
cli_test(run_missing_matrix 2 "nosuch.yaml" -- $<TARGET_FILE:hsdr> run ${CMAKE_CURRENT_SOURCE_DIR}/nosuch.yaml)
cli_test(run_bad_set 2 "K" -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --set K=100)
cli_test(run_bad_set_negative 2 "--set: override 'N=-5': N\\[0\\]: -5 is out of range \\(1\\.\\.16777216\\)"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set N=-5)
cli_test(run_bad_set_enormous 2 "override 'N=99999999999': N\\[0\\]: 99999999999 is out of range"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set N=99999999999)
cli_test(run_bad_set_threads 2 "override 'threads=0': threads\\[0\\]: 0 is out of range"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set threads=0)
cli_test(run_bad_set_nan 2 "override 'K=nan': K\\[0\\]: 'nan' is not an integer"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set K=nan)
cli_test(run_bad_shard 2 "--shard '3/3'" -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --shard 3/3)
# a kilobyte of axes describing millions of cases: refused before expanding (it used to run out of memory and abort)
cli_test(run_too_many_cases 2 "bad-too-many-cases.yaml: axes: the matrix expands to [0-9]+ cases.* above the limit of"
  -- $<TARGET_FILE:hsdr> run ${DATA}/matrix/bad-too-many-cases.yaml --dry-run)
cli_test(run_bad_option 2 "unknown option '--frob'" -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --frob)
# a glob that matches no whole key says how a filter matches (a bare 'cpu.direct*' is the usual slip)
cli_test(run_filter_none 0 "0 after --filter 'ref.direct\\*'" "a glob .* must match a whole key, e.g. 'variant=cpu.direct \\*'"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --filter "ref.direct*" --dry-run)
# commas separate alternatives: a glob and a substring, each case kept once
cli_test(run_filter_list 0 "variant=ref.direct K=" "variant=ref.q8_0 K="
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --filter "variant=ref.direct *,ref.q8_0 " --dry-run)
cli_test(profile_small 0 "ref.q8_0 +[0-9.]+ +[0-9.]+" "per tensor: attn_q"
  -- $<TARGET_FILE:hsdr> profile --model bonsai-4b --layers 1 --tokens 1 --no-head --variants ref.q8_0,ref.direct)
# every CPU kernel timed on 2 threads of the pool, state sets shared over R rows (label threads: also under TSan)
cli_test(run_cpu_threads 0 "cases in .*: [1-9][0-9]* ok, 0 failed validation, 0 errors"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --out ${RUN_OUT}/cpu-threads --quiet --set variants=backend:cpu --set K=1024
  --set N=40 --set R=1,4 --set threads=2 --set distribution=gaussian --set mode=hot --set extra=none)
cli_test(profile_threads 0 "cpu.direct +[0-9.]+ +[0-9.]+" -- $<TARGET_FILE:hsdr> profile --model bonsai-4b --layers 1
  --tokens 1 --no-head --threads 2 --variants cpu.production,cpu.direct)
cli_test(profile_no_model 2 "--model is required" -- $<TARGET_FILE:hsdr> profile)
cli_test(profile_too_big 2 "above the [0-9]+-byte cap" -- $<TARGET_FILE:hsdr> profile --model bonsai2-27b --layers 64)
if(TARGET hsdr-gbench)
  cli_test(gbench_smoke 0 "ref.q8_0/bonsai2-27b/attn_k" -- $<TARGET_FILE:hsdr-gbench> --tensors attn_k
    --benchmark_filter=ref.q8_0 --benchmark_min_time=0.01)
endif()

# every command answers --help with its entry of the usage text, exit 0
cli_test(run_help 0 "^usage: hsdr run \\[MATRIX\\]" "paired ratios" -- $<TARGET_FILE:hsdr> run --help)
cli_test(compare_help 0 "^usage: hsdr compare A.jsonl B.jsonl" "--raw" -- $<TARGET_FILE:hsdr> compare --help)
cli_test(bandwidth_help 0 "^usage: hsdr bandwidth" -- $<TARGET_FILE:hsdr> bandwidth -h)
cli_test(profile_help 0 "^usage: hsdr profile --model" -- $<TARGET_FILE:hsdr> profile --help)
# the settings of the rounds: visits 1..16, a ceiling interval above 0 s
cli_test(run_bad_visits 2 "override 'visits=0': visits: 0 is out of range \\(1\\.\\.16\\)"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set visits=0)
cli_test(run_bad_ceiling_interval 2 "override 'ceiling_interval_s=-1': ceiling_interval_s: -1"
  -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --dry-run --set ceiling_interval_s=-1)
