#!/bin/sh
# gpu-bench.sh [BUILD_DIR]: on a machine with an NVIDIA GPU, everything the CUDA backend is checked and measured
# with, in one call, into $OUT (default results/gpu-latest): the device, the registry, `hsdr check --backend cuda`
# over every vector file (the gate: nothing is timed if it fails), the same under compute-sanitizer when it is
# there. BUILD_DIR (default build-gpu) comes from scripts/gpu-build.sh, or from a local build with CUDA.
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
step device nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
step list "$hsdr" list
if step check "$hsdr" check --backend cuda vectors/; then
    if command -v compute-sanitizer >/dev/null 2>&1; then
        step sanitizer compute-sanitizer --tool memcheck --error-exitcode 9 "$hsdr" check --backend cuda \
            vectors/matvec.json
    else
        echo "== sanitizer: compute-sanitizer not found, skipped"
    fi
else
    echo "== the CUDA kernels failed their check: nothing is timed"
fi
exit "$status"
