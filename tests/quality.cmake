# hsdr quality: the synthetic accuracy study on bonsai-4b shapes, cut to one layer and a 1024-row head. Run on 1 and on
# 2 threads: schema, invariants, an exact path without error, identical numbers on both thread counts.
add_test(NAME cli.quality_small COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/quality_small.sh $<TARGET_FILE:hsdr>
  ${HSDR_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/quality-out)
set_tests_properties(cli.quality_small PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "check_quality: [0-9]+ paths x 2 samples OK, identical across thread counts")
cli_test(quality_table 0 "^ref\\.exact +fp32 \\(not quantized\\) .* 100\\.0%$" "SYNTHETIC"
  -- $<TARGET_FILE:hsdr> quality --model bonsai-4b --layers 1 --seeds 1 --tokens 1 --vocab 256 --variants "nosuch,,ref.ex*")
# the study's GEMVs on 2 threads of the pool, small enough for the ThreadSanitizer build (label threads)
cli_test(quality_threads 0 "^cpu\\.direct +LNS8, exact A\\[8\\]" -- $<TARGET_FILE:hsdr> quality --model bonsai-4b --layers 1
  --seeds 1 --tokens 1 --vocab 256 --threads 2 --variants ref.exact,cpu.production,cpu.direct)
cli_test(quality_bad_layers 2 "--layers: '0' is not an integer in 1\\.\\.64" -- $<TARGET_FILE:hsdr> quality --layers 0)
cli_test(quality_bad_flns 2 "--flns '8': expected F,b" -- $<TARGET_FILE:hsdr> quality --flns 8)
cli_test(quality_bad_model 2 "--model 'nosuch': unknown model" -- $<TARGET_FILE:hsdr> quality --model nosuch)
cli_test(quality_no_variant 2 "--variants 'nosuch' selects no variant" -- $<TARGET_FILE:hsdr> quality --variants nosuch)
cli_test(quality_too_big 2 "above the [0-9]+-byte cap" -- $<TARGET_FILE:hsdr> quality --vocab 16000000)
cli_test(quality_incomplete 2 "--seeds needs a value" -- $<TARGET_FILE:hsdr> quality --seeds)
