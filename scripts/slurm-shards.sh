#!/bin/sh
# slurm-shards.sh: one shard of an experiment matrix per task of a Slurm job array (README, "Spreading one matrix
# over machines"); tests/slurm_shards.sh submits this very file to a one-node Slurm (ctest -L slurm). From the
# repository root (relative paths are taken from the directory sbatch is called in):
#   sbatch --array=0-7 scripts/slurm-shards.sh [MATRIX [OUT [HSDR_RUN_ARGUMENTS...]]]
#   ./build/hsdr merge results/merged results/shard-*/results.jsonl      # once every task has finished
# Task i of n runs `BUILD/hsdr run MATRIX --shard i/n --out OUT/shard-i --quiet HSDR_RUN_ARGUMENTS...`.
# MATRIX defaults to matrix.yaml, OUT to results; n is the array's task count (an array of 0..n-1).
# Environment: HSDR_BUILD (build folder holding hsdr, default build), HSDR_SHARDS (n, for an array that is not
# 0..n-1, e.g. one failed shard again: sbatch --array=5 --export=ALL,HSDR_SHARDS=8 scripts/slurm-shards.sh).
# Each task takes a whole machine (--exclusive): a shard's timings are not disturbed by another's.
#SBATCH --job-name=hsdr-shards
#SBATCH --array=0-7
#SBATCH --exclusive
#SBATCH --output=slurm-%A_%a.out
set -eu
matrix=${1:-matrix.yaml}
out=${2:-results}
if [ $# -gt 2 ]; then
    shift 2
else
    set --
fi
if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
    echo "slurm-shards.sh: not a task of a job array: submit with sbatch --array=0-(n-1) $0" >&2
    exit 2
fi
i=$SLURM_ARRAY_TASK_ID
n=${HSDR_SHARDS:-}
if [ -z "$n" ]; then
    n=${SLURM_ARRAY_TASK_COUNT:-0} lo=${SLURM_ARRAY_TASK_MIN:-} hi=${SLURM_ARRAY_TASK_MAX:-}
    if [ "$lo" != 0 ] || [ "$hi" != $((n - 1)) ]; then
        echo "slurm-shards.sh: the array ($lo-$hi, $n tasks) is not 0-(n-1): set HSDR_SHARDS to the number of" \
            "shards" >&2
        exit 2
    fi
fi
echo "slurm-shards.sh: job ${SLURM_ARRAY_JOB_ID:-?} task $i: shard $i/$n of $matrix on $(hostname -s)" \
    "into $out/shard-$i"
exec "${HSDR_BUILD:-build}/hsdr" run "$matrix" --shard "$i/$n" --out "$out/shard-$i" --quiet "$@"
