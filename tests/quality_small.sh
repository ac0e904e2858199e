#!/bin/sh
# quality_small.sh HSDR PYTHON OUT_DIR: the same small quality study on 1 and on 2 threads, checked by
# check_quality.py (schema, invariants, an exact path without error, identical numbers on both thread counts).
set -eu
hsdr=$1 py=$2 out=$3
mkdir -p "$out"
for t in 1 2; do
    "$hsdr" quality --model bonsai-4b --layers 1 --seeds 2 --tokens 1 --vocab 1024 --threads $t \
        --variants 'ref.exact,cpu.production,cpu.direct,cpu.flns,cpu.q1516,cpu.tile64' --json "$out/t$t.json"
done
"$py" "$(dirname "$0")/check_quality.py" "$out/t1.json" "$out/t2.json"
