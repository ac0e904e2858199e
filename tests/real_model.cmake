# Real model inputs (issue 21 items 4-6): activation files (harness/npy.c, harness/activations.c) on the files
# tests/make_acts.py writes into tests/data/acts/ (committed), `hsdr states --activations`, `hsdr quality --gguf
# --activations`, scripts/acts-to-npy.py, and the whole round trip of the synthetic 2-layer GGUF (real_model.sh),
# then REPORT.md's Real model section from its outputs (real_model_report.sh). Label gguf.
set(ACTS_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/acts)
function(acts_test name rc)
  add_test(NAME acts.${name} COMMAND ${EXPECT} ${rc} ${ARGN})
  set_tests_properties(acts.${name} PROPERTIES LABELS gguf)
endfunction()
acts_test(states_model 0 "REAL activations from .*acts/model: 7 set\\(s\\)"
  "^blk\\.1\\.ffn_down\\.weight +\\| +[0-9.]+ +[0-9]+ +[0-9]+ \\|" "^all +\\|" "^bonsai K=128 +\\|" "^bonsai K=256 +\\|"
  -- $<TARGET_FILE:hsdr> states --activations ${ACTS_DATA}/model --vectors 8)
acts_test(states_json 0 "\"source\":\"real\",\"set\":\"output\\.weight\".*\"T\":8,\"K\":128"
  "\"set\":\"all\".*\"vectors\":56" "\"source\":\"modelled\",\"distribution\":\"bonsai\",\"K\":256,\"drawn_K\":1024"
  -- $<TARGET_FILE:hsdr> states --activations ${ACTS_DATA}/model --vectors 8 --json)
acts_test(states_one_file 0 "REAL activations from .*ok-f8\\.npy: 1 set" "^ok-f8 +\\|"
  -- $<TARGET_FILE:hsdr> states --activations ${ACTS_DATA}/ok-f8.npy --vectors 4)
acts_test(states_missing 2 "hsdr states: .*nosuch: No such file" -- $<TARGET_FILE:hsdr> states --activations
  ${ACTS_DATA}/nosuch)
acts_test(states_empty_dir 2 "gguf: no \\.npy file in the directory" -- $<TARGET_FILE:hsdr> states --activations
  ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf)
acts_test(states_width 2 "blk\\.0\\.ffn_gate\\.weight\\.npy: K = 64 is not a multiple of 128" -- $<TARGET_FILE:hsdr>
  states --activations ${ACTS_DATA}/bad-width)

# hostile .npy files: exit 2, "FILE: offset N: FIELD: what"
function(acts_bad name regex)
  acts_test(bad_${name} 2 "bad-${name}\\.npy: ${regex}" -- $<TARGET_FILE:hsdr> states --activations
    ${ACTS_DATA}/bad-${name}.npy)
endfunction()
acts_bad(magic "offset 0: magic: bytes 93 4e 55 4d 50 5a are not \"\\\\x93NUMPY\"")
acts_bad(truncated-magic "offset 0: magic: needs 6 bytes, 4 left")
acts_bad(version "offset 6: version: 4\\.0 is not 1\\.0, 2\\.0 or 3\\.0")
acts_bad(header-len "offset 8: header_len: 60000 bytes of header run past the end of the file")
acts_bad(not-dict "offset 10: header: expected '\\{' \\(the header is a Python dict literal\\), found '.'")
acts_bad(unknown-key "offset 70: header: unknown key 'extra'")
acts_bad(missing-key "offset 10: header: key 'fortran_order' missing")
acts_bad(duplicate-key "offset 27: header: key 'descr' appears again \\(first at offset 11\\)")
acts_bad(fortran "offset 44: header\\.fortran_order: True \\(column-major\\)")
acts_bad(3d "offset 60: header\\.shape: 3 dimensions \\(2, 1, 128\\); expected 2: \\(tokens, K\\)")
acts_bad(1d "offset 60: header\\.shape: 1 dimension \\(256\\); expected 2")
acts_bad(empty-shape "offset 60: header\\.shape: \\(0, 128\\) is empty")
acts_bad(dtype "offset 20: header\\.descr: '<i4' is not a float dtype")
acts_bad(big-endian "offset 20: header\\.descr: '>f4' is not little-endian")
acts_bad(padding "offset 71: header\\.padding: found 'x' after the dict")
acts_bad(truncated-data "offset 128: data: needs 1024 bytes \\(2 x 128 x 4\\), 924 left \\(truncated\\)")
acts_bad(trailing-data "offset 1152: data: 4 bytes after the 2 x 128 array's data")
acts_bad(nan "offset 660: element \\(1, 5\\): NaN")
acts_bad(inf "offset 156: element \\(0, 7\\): infinite")
acts_bad(f8-range "offset 128: element \\(0, 0\\): beyond float's range")

# the writer (Python, stdlib only): the committed files are what it writes today, and hsdr reads every set back bit
# for bit (T, K and the FNV-1a hash of the floats, in every accepted dtype and format version)
if(HSDR_PYTHON)
  add_test(NAME acts.files_current COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_acts.py check ${ACTS_DATA})
  add_test(NAME acts.read_back COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_acts.py compare
           $<TARGET_FILE:hsdr> ${ACTS_DATA})
  set_tests_properties(acts.files_current acts.read_back PROPERTIES LABELS "gguf;python")
  set_tests_properties(acts.read_back PROPERTIES PASS_REGULAR_EXPRESSION "11 sets read back bit for bit")
endif()

# hsdr quality --gguf: real weights x real activations, per GEMV; bad inputs exit 2 naming the file
acts_test(quality_real 0 "REAL weights from .*model\\.gguf \\(7 ternary tensor\\(s\\) kept\\), activations captured"
  "^blk\\.1\\.ffn_down\\.weight +256 +128 +8  cpu\\.production +[0-9.]+e-0[5-6] "
  "^cpu\\.direct +direct +LNS8, exact A\\[8\\] +[0-9.]+e-0[3-4] " "REAL activations$"
  -- $<TARGET_FILE:hsdr> quality --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --activations
  ${ACTS_DATA}/model --threads 2 --variants "cpu.production,cpu.direct,ref.q8_0,ref.direct")
acts_test(quality_modelled 0 "activations MODELLED \\(the bonsai distribution"
  "3 ternary tensor\\(s\\) kept by blk\\.0\\.\\*"
  "^blk\\.0\\.ffn_down\\.weight +256 +128 +2 " "MODELLED activations$"
  -- $<TARGET_FILE:hsdr> quality --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --tensors "blk.0.*"
  --tokens 2 --threads 1)
acts_test(quality_width 2
  "blk\\.0\\.ffn_gate\\.weight\\.npy: shape \\(2, 64\\): K = 64, but tensor blk\\.0\\.ffn_gate\\.weight has ne0 = 128"
  -- $<TARGET_FILE:hsdr> quality --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --activations
  ${ACTS_DATA}/bad-width)
acts_test(quality_no_set 2 "ok-f2\\.npy: no kept tensor of .*model\\.gguf has an activation set"
  -- $<TARGET_FILE:hsdr> quality --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --activations
  ${ACTS_DATA}/ok-f2.npy)
acts_test(quality_bad_npy 2 "bad-nan\\.npy: offset 660: element \\(1, 5\\): NaN" -- $<TARGET_FILE:hsdr> quality
  --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/model.gguf --activations ${ACTS_DATA}/bad-nan.npy)
acts_test(quality_bad_gguf 2 "bad-magic\\.gguf: offset 0: header\\.magic" -- $<TARGET_FILE:hsdr> quality
  --gguf ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf/bad-magic.gguf)
acts_test(quality_acts_without_gguf 2 "--activations and --tensors need --gguf FILE" -- $<TARGET_FILE:hsdr> quality
  --activations ${ACTS_DATA}/model)

# scripts/acts-to-npy.py on its fixture, and issue 21's Done-when: the synthetic 2-layer GGUF through inspect,
# states --activations, quality --gguf --activations and profile --gguf (tests/real_model.sh)
if(HSDR_PYTHON)
  add_test(NAME acts.real_model COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/real_model.sh $<TARGET_FILE:hsdr>
           ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/real-model-out)
  set_tests_properties(acts.real_model PROPERTIES LABELS "gguf;python" PASS_REGULAR_EXPRESSION "real_model: OK")
  add_test(NAME acts.to_npy_truncated COMMAND ${EXPECT} 2
           "capture\\.bin: offset [0-9]+: record 'blk\\.0\\.attn_q\\.weight': needs 1536 bytes"
           -- sh -c "d=$(mktemp -d) && head -c 900 ${ACTS_DATA}/capture.bin >$d/capture.bin && ${HSDR_PYTHON} \
${PROJECT_SOURCE_DIR}/scripts/acts-to-npy.py $d/capture.bin $d/out; rc=$?; rm -rf $d; exit $rc")
  set_tests_properties(acts.to_npy_truncated PROPERTIES LABELS "gguf;python")
  # REPORT.md's "Real model" section (issue 21 item 5) from those three outputs, through plots/run (matplotlib:
  # label plots too): the files alone, beside `hsdr run --gguf`, and quality on drawn activations
  add_test(NAME plots.real_model COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/real_model_report.sh $<TARGET_FILE:hsdr>
           ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/real-model-report)
  set_tests_properties(plots.real_model PROPERTIES LABELS "gguf;plots;python" RUN_SERIAL TRUE
    PASS_REGULAR_EXPRESSION "real_model_report: OK")
endif()
# a malformed real-model input: plots/run names the file (and line) and what is wrong, exit 2
add_test(NAME plots.real_model_bad_states COMMAND sh -c "d=$(mktemp -d) && printf '{\"source\":\"guess\"}\\n' \
>$d/states-real.jsonl && ${PROJECT_SOURCE_DIR}/plots/run $d; rc=$?; rm -rf $d; echo exit=$rc")
set_tests_properties(plots.real_model_bad_states PROPERTIES LABELS "gguf;plots"
  PASS_REGULAR_EXPRESSION "states-real\\.jsonl:1: field 'source' is 'guess', expected 'real' or 'modelled'.*exit=2")
add_test(NAME plots.real_model_bad_quality COMMAND sh -c "d=$(mktemp -d) && printf \
'{\"schema\":\"hsdr-quality/1\",\"synthetic\":true}' >$d/quality-real.json && ${PROJECT_SOURCE_DIR}/plots/run $d; \
rc=$?; rm -rf $d; echo exit=$rc")
set_tests_properties(plots.real_model_bad_quality PROPERTIES LABELS "gguf;plots"
  PASS_REGULAR_EXPRESSION "quality-real\\.json: \"synthetic\": true is the synthetic study.*exit=2")
