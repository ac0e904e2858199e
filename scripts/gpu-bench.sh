#!/bin/sh
# gpu-bench.sh [BUILD_DIR]: on a machine with an NVIDIA GPU, everything the CUDA backend is checked and measured
# with, in one call, into $OUT (default results/gpu-latest): the device and the registry, `hsdr check --backend
# cuda` over every vector file (the gate: nothing is timed if it fails), the same under compute-sanitizer when it is
# there, then the GPU matrix (results.jsonl, results.csv, breakeven.json). At most 8 files, for the lent machine's
# return limit. BUILD_DIR (default build-gpu) comes from scripts/gpu-build.sh, or from a local build with CUDA.
set -u
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
out=${OUT:-results/gpu-latest}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
hsdr=$dir/hsdr
status=0
step() { # step NAME COMMAND...: run, log to $out/NAME.log and the terminal, remember a failure
    name=$1
    shift
    echo "== $name: $*"
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    cat "$out/$name.log"
    [ "$rc" -eq 0 ] || { echo "== $name: exit $rc"; status=1; }
    return "$rc"
}
step device sh -c "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv && $hsdr list"
if step check "$hsdr" check --backend cuda vectors/; then
    if command -v compute-sanitizer >/dev/null 2>&1; then
        step sanitizer compute-sanitizer --tool memcheck --error-exitcode 9 "$hsdr" check --backend cuda \
            vectors/matvec.json
    else
        echo "== sanitizer: compute-sanitizer not found, skipped"
    fi
    # the GPU matrix: matrix.yaml with the device's axes (rows enough to fill the GPU; the real GEMVs of
    # bonsai2-27b, hot = L2-resident where it fits, cold = rotating over more than 3x the L2)
    step matrix "$hsdr" run matrix.yaml --out "$out" --quiet --set variants=backend:cuda \
        --set K=1024,2048,5120,8192,17408 --set N=16384 --set R=1 --set threads=1 --set distribution=bonsai \
        --set mode=hot,cold --set shapes=bonsai2-27b --set skip=none --set extra=none
else
    echo "== the CUDA kernels failed their check: nothing is timed"
fi
exit "$status"
