# The GGUF reader and `hsdr inspect` (issue 21 items 1, 2, 6), on the files tests/make_gguf.py writes into
# tests/data/gguf/ (committed, so that these tests run the binary only -- in the sanitizer build too, where ASan and
# UBSan watch the reader on every hostile file). Label gguf.
set(GGUF_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf)
function(gguf_test name rc)
  add_test(NAME gguf.${name} COMMAND ${EXPECT} ${rc} ${ARGN})
  set_tests_properties(gguf.${name} PROPERTIES LABELS gguf)
endfunction()
# well-formed files: the summary, the ternary statistics, JSON
gguf_test(inspect_model 0 "GGUF v3, 51[0-9]+ bytes, 20 metadata pairs, 11 tensors, alignment 32"
  "^name +\"Synthetic-Ternary-2L\"$" "prism\\.hadamard +BOOL +true" "tokenizer\\.ggml\\.tokens +ARRAY +STRING\\[32\\]"
  "^  blk\\.1\\.ffn_down\\.weight +PQ2_0 +256x128 +8704 " "^  output_norm\\.weight +BF16 +128 +256$"
  "^7 ternary tensors, " -- $<TARGET_FILE:hsdr> inspect ${GGUF_DATA}/model.gguf)
gguf_test(inspect_json 0 "\"general.architecture\":[[:space:]]*\"qwen3\"" "\"zero_trit_fraction\":[[:space:]]*0\\.8"
  "\"data_hash\":[[:space:]]*\"[0-9a-f]{16}\"" -- $<TARGET_FILE:hsdr> inspect --json ${GGUF_DATA}/tiny.gguf)
gguf_test(inspect_no_file 2 "hsdr inspect: give a GGUF file" -- $<TARGET_FILE:hsdr> inspect)
gguf_test(inspect_two_files 2 "hsdr inspect: give one file" -- $<TARGET_FILE:hsdr> inspect a.gguf b.gguf)
gguf_test(inspect_missing 2 "nosuch\\.gguf: No such file" -- $<TARGET_FILE:hsdr> inspect ${GGUF_DATA}/nosuch.gguf)
gguf_test(inspect_directory 2 "gguf: not a regular file" -- $<TARGET_FILE:hsdr> inspect ${GGUF_DATA})

# hostile files: exit 2, "FILE: offset N: FIELD: what"
function(gguf_bad name regex)
  gguf_test(bad_${name} 2 "bad-${name}\\.gguf: ${regex}" -- $<TARGET_FILE:hsdr> inspect ${GGUF_DATA}/bad-${name}.gguf)
endfunction()
gguf_bad(empty "offset 0: header\\.magic: needs 4 bytes, 0 left")
gguf_bad(truncated-magic "offset 0: header\\.magic: needs 4 bytes, 3 left")
gguf_bad(truncated-counts "offset 8: header\\.tensor_count: needs 8 bytes, 4 left")
gguf_bad(truncated-key "offset 569: kv\\[14\\]\\.key: string length 12 runs past the end of the file")
gguf_bad(truncated-kv "offset 829: kv\\[17\\] 'tokenizer\\.ggml\\.scores'\\.value: needs 8 bytes, 1 left")
gguf_bad(truncated-infos "offset 1064: tensor\\[2\\]\\.name: string length 19 runs past the end of the file")
gguf_bad(truncated-data "offset 1340: tensor\\[6\\] 'output\\.weight'\\.offset: 224 bytes .* run past the end of")
gguf_bad(magic "offset 0: header\\.magic: bytes 47 47 55 47 are not \"GGUF\"")
gguf_bad(version-1 "offset 4: header\\.version: 1 is not 2 or 3 \\(GGUF v1")
gguf_bad(version-99 "offset 4: header\\.version: 99 is not 2 or 3$")
gguf_bad(huge-tensor-count "offset 8: header\\.tensor_count: 4611686018427387904 tensor infos cannot fit")
gguf_bad(huge-kv-count "offset 16: header\\.metadata_kv_count: 1152921504606846976 pairs cannot fit")
gguf_bad(huge-string "offset 102: kv\\[2\\]\\.key: string length 1152921504606846976 is above the limit 65535")
gguf_bad(array-past-end "offset 123: kv\\[2\\] 'x\\.arr'\\.value: array of 1099511627776 UINT32 needs at least 4 bytes")
gguf_bad(nested-array "offset 119: kv\\[2\\] 'x\\.arr'\\.value: arrays of arrays are not supported")
gguf_bad(bool "offset 120: kv\\[2\\] 'x\\.flag'\\.value: bool value 2 is not 0 or 1")
gguf_bad(value-type "offset 116: kv\\[2\\] 'x\\.what'\\.value_type: 13 is not a GGUF value type")
gguf_bad(key-not-ascii "offset 102: kv\\[2\\]\\.key: byte 2 of the key is 0x01, not printable ASCII")
gguf_bad(duplicate-key "offset 102: kv\\[2\\]\\.key: 'general\\.architecture' appears again \\(first as kv\\[0\\]\\)")
gguf_bad(n-dims-5 "offset 118: tensor\\[0\\] 'a\\.weight'\\.n_dims: 5 is not 1\\.\\.4")
gguf_bad(dim-zero "offset 130: tensor\\[0\\] 'a\\.weight'\\.dims\\[1\\]: 0 is 0")
gguf_bad(dim-overflow "offset 130: tensor\\[0\\] 'a\\.weight'\\.dims\\[1\\]: 4294967296 makes the element count")
gguf_bad(unknown-type "offset 138: tensor\\[0\\] 'a\\.weight'\\.type: 200 is not a ggml type this reader knows")
gguf_bad(type-size "offset 138: tensor\\[0\\] 'a\\.weight'\\.type: ne0 = 100 is not a multiple of PTQ1_0's block")
gguf_bad(misaligned "offset 190: tensor\\[1\\] 'b\\.weight'\\.offset: 72 is not a multiple of the alignment 32")
gguf_bad(overlap "offset 190: tensor\\[1\\] 'b\\.weight'\\.offset: data 32\\.\\.88 overlaps tensor\\[0\\] 'a\\.weight'")
gguf_bad(past-end "offset 190: tensor\\[1\\] 'b\\.weight'\\.offset: 56 bytes at data offset 1048576 .* past the end")
gguf_bad(duplicate-name "offset 150: tensor\\[1\\]\\.name: 'a\\.weight' appears again")
gguf_bad(alignment-zero "offset 98: kv 'general\\.alignment'\\.value: 0 is not a power of two")
gguf_bad(alignment-48 "offset 98: kv 'general\\.alignment'\\.value: 48 is not a power of two")
gguf_bad(alignment-type "offset 94: kv 'general\\.alignment'\\.value_type: UINT64, expected UINT32")

# the writer (Python, stdlib only): the committed files are what it writes today, and inspect --json reads back
# every statistic and each tensor's data_hash exactly as the writer computed them
if(HSDR_PYTHON)
  add_test(NAME gguf.files_current COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_gguf.py check ${GGUF_DATA})
  add_test(NAME gguf.read_back COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_gguf.py compare
           $<TARGET_FILE:hsdr> ${GGUF_DATA})
  set_tests_properties(gguf.files_current gguf.read_back PROPERTIES LABELS "gguf;python")
  set_tests_properties(gguf.read_back PROPERTIES PASS_REGULAR_EXPRESSION "matches the writer bit for bit")
endif()
