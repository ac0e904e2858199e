#!/bin/sh
# determinism.sh HSDR PYTHON MATRIX OUT: run MATRIX twice (every family, 1 and 2 threads, R = 1 and 4) and compare the
# runs and the thread counts with check_determinism.py.
set -eu
hsdr=$1 python=$2 matrix=$3 out=$4
rm -rf "$out"
for run in a b; do
    "$hsdr" run "$matrix" --out "$out/$run" --quiet --stages none \
        --set variants=family:direct,family:stateset,family:q1516,family:production --set K=256,1024 --set N=24 \
        --set R=1,4 --set threads=1,2 --set mode=hot --set extra=none >/dev/null
done
exec "$python" "$(dirname "$0")/check_determinism.py" "$out/a/results.jsonl" "$out/b/results.jsonl"
