# Label slurm: the README's Slurm job array for real. tests/slurm_shards.sh starts a one-node Slurm on this machine
# (installing Debian's slurm-wlm and munge when missing), submits scripts/slurm-shards.sh as an array of 3 shards of
# the small matrix, merges them and compares with the unsharded run; about 10 s once installed. Skipped (exit 77, the
# reason printed) when not root or when apt-get cannot install. Release build only: `./hsdr-bench test` leaves it out
# of the sanitizer builds (it tests the job array, not the harness's memory; the shards themselves are ctest cli.*).
if(HSDR_PYTHON AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME slurm.shard_merge COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm_shards.sh $<TARGET_FILE:hsdr>
    ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/data/run/small.yaml ${CMAKE_CURRENT_BINARY_DIR}/run-out/slurm)
  # apt-get may take minutes on a slow mirror; once the daemons are up the script's own limits (30 s each, 180 s for
  # the array) stop it first, so that its trap stops them (a ctest timeout kills the script, not the daemons)
  set_tests_properties(slurm.shard_merge PROPERTIES LABELS slurm SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
