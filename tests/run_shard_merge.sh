#!/bin/sh
# run_shard_merge.sh HSDR PYTHON MATRIX WORKDIR: the union of `hsdr run --shard i/3` (i = 0..2) merged with
# `hsdr merge` holds exactly the cases of the unsharded run, with identical deterministic fields (seed, validation,
# occupancy, output error, depth); only timings may differ. The merged breakeven.json holds the same fits (each
# state-set variant against each direct one, per configuration, over the same R values) as the unsharded run's
# (check_shard_merge.py; slurm_shards.sh runs the same shards as a Slurm job array).
set -eu
hsdr=$1 py=$2 matrix=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
"$hsdr" run "$matrix" --out "$work/all" --quiet --stages none --set extra=none >/dev/null
for i in 0 1 2; do
    "$hsdr" run "$matrix" --out "$work/s$i" --shard "$i/3" --quiet --stages none --set extra=none >/dev/null
done
"$hsdr" merge "$work/merged" "$work/s0/results.jsonl" "$work/s1/results.jsonl" "$work/s2/results.jsonl"
exec "$py" "$(dirname "$0")/check_shard_merge.py" "$work/all" "$work/merged"
