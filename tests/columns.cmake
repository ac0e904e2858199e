# hsdr columns: the 1..8-column CUDA kernel on real shapes. Without a CUDA device (CI) it says why and exits 1; with
# one, a short run (two column counts, two repetitions) validates and times. Bad options exit 2 either way.
add_test(NAME cli.columns_small COMMAND sh -c
  "$<TARGET_FILE:hsdr> columns --tensors attn_k --cols 1,2 --reps 2 --mode hot; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 1 ]")
set_tests_properties(cli.columns_small PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "cuda.production_cols cannot run here: |attn_k +[0-9]+ +[0-9]+ +2  hot .*x$")
cli_test(columns_bad_cols 2 "--cols '1,9': expected distinct column counts in 1\\.\\.8" -- $<TARGET_FILE:hsdr> columns
  --cols 1,9)
cli_test(columns_bad_mode 2 "--mode 'warm': expected hot, cold or both" -- $<TARGET_FILE:hsdr> columns --mode warm)
cli_test(columns_bad_tensors 2 "--tensors 'nosuch' selects no tensor of bonsai2-27b" -- $<TARGET_FILE:hsdr> columns
  --tensors nosuch)
