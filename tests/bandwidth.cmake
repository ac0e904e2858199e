# `hsdr bandwidth`: a small measurement prints a GB/s table; bad arguments exit 2 naming the argument.
cli_test(bandwidth_small 0 "GB/s" "caches" "^64 KiB +[0-9]+\\.[0-9]"
  -- $<TARGET_FILE:hsdr> bandwidth --threads 1 --sizes 64K --mode hot)
cli_test(bandwidth_json 0
  "^\\{\"schema\":\"hsdr-bandwidth/2\",\"backend\":\"cpu\",\"threads\":1,\"bytes\":65536,.*\"mode\":\"hot\",\"bytes_per_s\":.*\"time_ns\":\\{\"median\":"
  -- $<TARGET_FILE:hsdr> bandwidth --threads 1 --sizes 64K --mode hot --json)
cli_test(bandwidth_bad_size 2 "--sizes: '12Q' is not a size" -- $<TARGET_FILE:hsdr> bandwidth --sizes 64K,12Q)
cli_test(bandwidth_zero_size 2 "--sizes: '0' is not a size" -- $<TARGET_FILE:hsdr> bandwidth --sizes 0)
cli_test(bandwidth_bad_threads 2 "--threads: 'x' is not an integer" -- $<TARGET_FILE:hsdr> bandwidth --threads 1,x)
cli_test(bandwidth_bad_mode 2 "--mode: 'warm' is not hot, cold or both" -- $<TARGET_FILE:hsdr> bandwidth --mode warm)
cli_test(bandwidth_missing_value 2 "--sizes needs a value" -- $<TARGET_FILE:hsdr> bandwidth --sizes)
cli_test(bandwidth_unknown_option 2 "unknown option '--frob'" -- $<TARGET_FILE:hsdr> bandwidth --frob)
# a device backend: named in the registry, or refused by name; unavailable here (no GPU in CI): exit 1, saying why
cli_test(bandwidth_backend_unknown 2 "no device variant of backend 'nosuch'" -- $<TARGET_FILE:hsdr> bandwidth --backend nosuch)
