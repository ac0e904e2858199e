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
# --handoff: the pool's hand-off table on 1 and 2 threads; JSON shape (and profile --split auto's) in
# tests/check_handoff.py; the options that do not apply to it are refused by name
cli_test(bandwidth_handoff 0 "^hand-off: one hsdr_pool_run of an empty task"
  "^threads +free gap 0 .* barrier +pinning$" "^2 +[0-9.]+ \\([0-9.]+\\) "
  -- $<TARGET_FILE:hsdr> bandwidth --handoff --threads 1,2)
cli_test(bandwidth_handoff_sizes 2 "--handoff measures the host's thread pool: .* not --sizes"
  -- $<TARGET_FILE:hsdr> bandwidth --handoff --sizes 64K)
cli_test(bandwidth_handoff_backend 2 "--handoff .* not --backend"
  -- $<TARGET_FILE:hsdr> bandwidth --handoff --backend cuda)
cli_test(profile_bad_split 2 "--split 'some': expected all, auto or tune"
  -- $<TARGET_FILE:hsdr> profile --model bonsai-4b --split some)
if(HSDR_PYTHON)
  add_test(NAME cli.handoff_json COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_handoff.py
    $<TARGET_FILE:hsdr> ${CMAKE_CURRENT_BINARY_DIR}/handoff-out)
  set_tests_properties(cli.handoff_json PROPERTIES LABELS cli)
endif()
