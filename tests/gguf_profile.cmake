# `hsdr profile --gguf` (issue 21 item 3) on the synthetic 2-layer model of tests/data/gguf/ (tests/make_gguf.py):
# the file's tensors as the token's GEMVs, the refusals, and the JSON checked field by field against what
# tests/check_profile_gguf.py derives from the file. Label gguf.
set(GGUF_PROFILE_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/gguf)
function(gguf_profile_test name rc)
  add_test(NAME gguf.profile_${name} COMMAND ${EXPECT} ${rc} ${ARGN})
  set_tests_properties(gguf.profile_${name} PROPERTIES LABELS gguf)
endfunction()
# every tensor measured and printed, a variant that reads PTQ1_0 in place and one that converts
gguf_profile_test(model 0 "^hsdr profile: model, 2 of 2 layers \\+ head measured, 7 GEMVs"
  "^file: model\\.gguf, data hash [0-9a-f]{16} .*7 ternary tensor\\(s\\) kept of 2 layer\\(s\\)"
  "^  blk\\.0\\.attn_q\\.weight +PTQ1_0 +K +128 N +128 .* layer 0$"
  "^  blk\\.0\\.ffn_gate\\.weight +PTQ1_0 .* layer 0$"
  "^  blk\\.0\\.ffn_down\\.weight +PQ2_0 +K +256 N +128 +7168 bytes as PTQ1_0  layer 0$"
  "^  blk\\.1\\.attn_q\\.weight " "^  blk\\.1\\.ffn_gate\\.weight " "^  blk\\.1\\.ffn_down\\.weight "
  "^  output\\.weight +PTQ1_0 +K +128 N +32 .* head$"
  "^layer kind 1: 2 of 2 layer\\(s\\) measured: attn_q,ffn_gate,ffn_down$"
  "^cpu\\.production +[0-9.]+ +[0-9.]+ " "^cpu\\.planar2 +[0-9.]+ +[0-9.]+ "
  "^  per tensor: attn_q [0-9.]+% ffn_gate [0-9.]+% ffn_down [0-9.]+% output [0-9.]+%$"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf --tokens 2
     --variants cpu.production,cpu.planar2)
gguf_profile_test(layers_1 0 "1 of 2 layers \\+ head measured, 4 GEMVs" "^layer kind 1: 1 of 2 layer"
  "^ref\\.q8_0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf --layers 1 --tokens 2 --variants ref.q8_0)
gguf_profile_test(tensors_none 2 "model\\.gguf: none of its 7 PTQ1_0/PQ2_0 tensors matches 'nosuch\\*'"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf --tensors "nosuch*" --tokens 1)
gguf_profile_test(head_only_no_head 2 "model\\.gguf: no GEMV to measure: .* --no-head leaves out the head"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf --tensors output.weight --no-head)
gguf_profile_test(with_model 2 "give --model or --gguf, not both"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf --model bonsai-4b)
gguf_profile_test(tensors_without_gguf 2 "--tensors selects tensors of a --gguf file"
  -- $<TARGET_FILE:hsdr> profile --model bonsai-4b --tensors "blk.*")
gguf_profile_test(bad_magic 2 "bad-magic\\.gguf: offset 0: header\\.magic: bytes 47 47 55 47"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/bad-magic.gguf)
gguf_profile_test(truncated 2 "bad-truncated-data\\.gguf: offset 1340: tensor\\[6\\] 'output\\.weight'\\.offset"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/bad-truncated-data.gguf)
gguf_profile_test(missing 2 "nosuch\\.gguf: No such file"
  -- $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/nosuch.gguf)
# the token made cold (issue 22 item 3): rotated over the fewest copies cycling more than 4x a cache of
# HSDR_LLC_BYTES (36736 bytes a token: 11 copies over 4x 100 kB), on 2 threads; the token alone over 4x; --hot; a
# malformed HSDR_LLC_BYTES refused (the plan over random sizes: test_timing)
gguf_profile_test(cold_rotation 0
  "host: cold: 11 token copies, 404\\.1 kB cycled, over 4x the 100\\.0 kB last-level cache, the cache size from"
  "^cpu\\.production +[0-9.]+ " "^cpu\\.direct +[0-9.]+ "
  -- ${CMAKE_COMMAND} -E env HSDR_LLC_BYTES=100000 $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf
     --tokens 3 --threads 2 --variants cpu.production,cpu.direct)
gguf_profile_test(cold_alone 0 "host: cold: the 36\\.7 kB token alone is over 4x the 1\\.0 kB last-level cache"
  -- ${CMAKE_COMMAND} -E env HSDR_LLC_BYTES=1000 $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf
     --tokens 1 --variants cpu.production)
gguf_profile_test(hot 0 "host: not cold \\(--hot\\): the 36\\.7 kB token read in place, not over 4x the 100\\.0 kB"
  -- ${CMAKE_COMMAND} -E env HSDR_LLC_BYTES=100000 $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf
     --tokens 1 --hot --variants cpu.production)
gguf_profile_test(llc_env_bad 2 "HSDR_LLC_BYTES='12x': character 3: expected a positive number of bytes"
  -- ${CMAKE_COMMAND} -E env HSDR_LLC_BYTES=12x $<TARGET_FILE:hsdr> profile --gguf ${GGUF_PROFILE_DATA}/model.gguf
     --tokens 1 --variants cpu.production)
if(HSDR_PYTHON)
  add_test(NAME gguf.profile_json COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_profile_gguf.py
           $<TARGET_FILE:hsdr> ${GGUF_PROFILE_DATA}/model.gguf ${CMAKE_CURRENT_BINARY_DIR}/gguf_profile)
  set_tests_properties(gguf.profile_json PROPERTIES LABELS "gguf;python"
                       PASS_REGULAR_EXPRESSION "profile --gguf matches the file in every field")
endif()
