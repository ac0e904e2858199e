# Real weights in `hsdr run` and `hsdr check` (issue 21 item 3): the ternary tensors of the synthetic 2-layer GGUF
# (tests/data/gguf/model.gguf, written by tests/make_gguf.py) as the cases of `run --gguf` (matrix `shapes: gguf`),
# with the activations of tests/data/acts/model (run --activations), and `check --gguf`; hostile inputs exit 2 with
# a message. The loader itself: unit.gguf_model (a GGUF written under a printed seed), and here the same test on
# model.gguf (every weight of every tensor, PQ2_0 ones converted, against the stored ones). Label gguf.
set(GGUF_RUN ${CMAKE_CURRENT_SOURCE_DIR}/data/run/gguf.yaml)
set(GGUF_MODEL ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf)
set(GGUF_ACTS ${CMAKE_CURRENT_SOURCE_DIR}/data/acts/model)
set(GGUF_RUN_OUT ${CMAKE_CURRENT_BINARY_DIR}/run-out-gguf)
function(gguf_model_test name rc)
  add_test(NAME gguf.${name} COMMAND ${EXPECT} ${rc} ${ARGN})
  set_tests_properties(gguf.${name} PROPERTIES LABELS gguf)
endfunction()

add_test(NAME gguf.model_round_trip COMMAND test_gguf_model ${GGUF_MODEL})
set_tests_properties(gguf.model_round_trip PROPERTIES LABELS gguf
  PASS_REGULAR_EXPRESSION "model\\.gguf: 7 tensors \\(2 PQ2_0\\), 167936 weights equal to the stored ones")

# run --gguf: a row per (tensor, variant), validated on the real weights and timed; the rows valid in the schema
if(HSDR_PYTHON)
  add_test(NAME gguf.run COMMAND sh -c "$<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --stages none \
--quiet --out ${GGUF_RUN_OUT}/weights && ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_results.py \
$<TARGET_FILE:hsdr> ${GGUF_RUN_OUT}/weights && ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_gguf_rows.py \
$<TARGET_FILE:hsdr> ${GGUF_MODEL} ${GGUF_RUN_OUT}/weights")
  add_test(NAME gguf.run_activations COMMAND sh -c "$<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} \
--activations ${GGUF_ACTS} --token 5 --set R=1 --stages none --quiet --out ${GGUF_RUN_OUT}/acts && ${HSDR_PYTHON} \
${CMAKE_CURRENT_SOURCE_DIR}/check_results.py $<TARGET_FILE:hsdr> ${GGUF_RUN_OUT}/acts && ${HSDR_PYTHON} \
${CMAKE_CURRENT_SOURCE_DIR}/check_gguf_rows.py $<TARGET_FILE:hsdr> ${GGUF_MODEL} ${GGUF_RUN_OUT}/acts ${GGUF_ACTS} 5")
  set_tests_properties(gguf.run gguf.run_activations PROPERTIES LABELS "gguf;python" RUN_SERIAL TRUE
    PASS_REGULAR_EXPRESSION "check_gguf_rows: [0-9]+ rows cover the 7 ternary tensors x [0-9]+ variants")
endif()
gguf_model_test(run_dry 0 "^hsdr run: .*gguf\\.yaml: [0-9]+ cases expanded"
  "^variant=ref\\.q8_0 K=128 N=128 R=1 threads=1 dist=gaussian mode=hot shape=gguf:blk\\.0\\.attn_q\\.weight$"
  "^variant=ref\\.stateset K=256 N=128 R=4 threads=1 dist=gaussian mode=hot shape=gguf:blk\\.1\\.ffn_down\\.weight$"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --dry-run)
# gguf_tensors globs; a matrix without gguf in its shapes runs the file's tensors only
gguf_model_test(run_globs 0 "^hsdr run: .*: 2 cases expanded, 0 skipped"
  "shape=gguf:blk\\.0\\.ffn_down\\.weight$" "shape=gguf:output\\.weight$"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --set variants=ref.q8_0 --set R=1
  --set "gguf_tensors=blk.0.ffn_d*,output.*" --dry-run)
gguf_model_test(run_alone 0 "the matrix's shapes do not name gguf: .* the cases are the file's 7 tensors"
  "^hsdr run: .*: 7 cases expanded"
  -- $<TARGET_FILE:hsdr> run ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml --gguf ${GGUF_MODEL}
  --set variants=ref.q8_0 --set threads=1
  --set distribution=gaussian --dry-run)

# check --gguf: every available variant on every tensor's real weights
gguf_model_test(check 0
  "^hsdr check --gguf .*model\\.gguf: 7 tensors, [0-9]+ variants, activations gaussian, seed 11"
  "tensor blk\\.0\\.ffn_down\\.weight \\(PQ2_0 -> PTQ1_0, 256x128\\): [0-9]+ checks passed, 0 failed"
  "^[1-9][0-9]* passed, 0 failed$" -- $<TARGET_FILE:hsdr> check --gguf ${GGUF_MODEL} --seed 11)
gguf_model_test(check_fresh_seed 0 "seed [0-9]+ \\(replay with --seed [0-9]+\\)" "^[1-9][0-9]* passed, 0 failed$"
  -- $<TARGET_FILE:hsdr> check --gguf ${GGUF_MODEL} --tensors "blk.1.*" --backend reference --rows 64)

# hostile: exit 2 with a message
gguf_model_test(run_no_gguf 2
  "gguf\\.yaml:10:[0-9]+: shapes\\[0\\]: gguf: the tensors of a model file: give it with --gguf"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --dry-run)
gguf_model_test(run_no_match 2 "--gguf: .*model\\.gguf: none of its 7 PTQ1_0/PQ2_0 tensors matches 'blk\\.9\\.\\*'"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --set "gguf_tensors=blk.9.*" --dry-run)
gguf_model_test(run_code3 2 "pq2-code3\\.gguf: offset 390: tensor blk\\.0\\.ffn_down\\.weight: PQ2_0 block 3 "
  "\\(row 1, block 1 of the row\\), weight 5: code 3 \\(\\+2\\) is not ternary"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_DATA}/pq2-code3.gguf --dry-run)
gguf_model_test(check_code3 2 "pq2-code3\\.gguf: offset 390: tensor blk\\.0\\.ffn_down\\.weight: PQ2_0 block 3"
  -- $<TARGET_FILE:hsdr> check --gguf ${GGUF_DATA}/pq2-code3.gguf)
gguf_model_test(check_no_match 2 "none of its 7 PTQ1_0/PQ2_0 tensors matches 'nosuch'"
  -- $<TARGET_FILE:hsdr> check --gguf ${GGUF_MODEL} --tensors nosuch)
gguf_model_test(check_not_gguf 2 "bad-magic\\.gguf: offset 0: header\\.magic"
  -- $<TARGET_FILE:hsdr> check --gguf ${GGUF_DATA}/bad-magic.gguf)
gguf_model_test(check_tensors_alone 2 "--tensors applies to --gguf FILE only" -- $<TARGET_FILE:hsdr> check
  --tensors "blk.*" ${VEC})
gguf_model_test(run_acts_missing_set 2
  "--activations .*bad-width: no set feeds tensor blk\\.0\\.attn_q\\.weight"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --activations
  ${CMAKE_CURRENT_SOURCE_DIR}/data/acts/bad-width --dry-run)
gguf_model_test(run_acts_token 2 "tensor blk\\.0\\.attn_q\\.weight: --token 99, but .* holds 8 tokens"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --gguf ${GGUF_MODEL} --activations ${GGUF_ACTS} --token 99 --dry-run)
gguf_model_test(run_acts_no_gguf 2 "--activations feeds the tensors of a model file: give --gguf FILE too"
  -- $<TARGET_FILE:hsdr> run ${GGUF_RUN} --activations ${GGUF_ACTS} --dry-run)
