#!/bin/sh
# vulkan-table.sh [BUILD_DIR]: issue 19's table in one call of the lent GPU machine, into $OUT (default
# results/gpu-latest): every Vulkan variant beside its CUDA counterpart on each bonsai2-27b GEMV (cold, one column;
# the state sets at R = 1, 8 and 32) and on the bonsai2-27b token, both backends in the same process and the same
# rounds (the CUDA context also keeps the SM clock up: gpu-env.sh), with the read of the same bytes by each backend
# measured in the same run. First the gate -- `hsdr check` of both backends over every vector file and
# tests/test_cuda_cols when built: nothing is timed if any fails -- then `hsdr bandwidth` of both backends, the matrix
# (results.jsonl.gz), the profile (profile-bonsai2-27b.json), the clock log (clocks.csv) and table.md
# (scripts/vulkan_table.py: per GEMV, per token, each target met or not). Everything printed goes to
# vulkan-table.log. Run it where scripts/gpu-bench.sh runs (the same BUILD_DIR and carried .gl); about 6 minutes on
# the H200. VULKAN_TABLE_QUICK=1: 5 tokens and 0.1 s a case, for a check of the script.
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the header above
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
out=${OUT:-results/gpu-latest}
mkdir -p "$out"
. scripts/gpu-env.sh # the build's libraries, the carried Vulkan loader, the NVIDIA ICD, step, clocks_*
hsdr=$dir/hsdr
log=$out/vulkan-table.log
: >"$log"
status=0
tokens=20 limit=0.25
[ "${VULKAN_TABLE_QUICK:-0}" = 1 ] && tokens=5 limit=0.1
# the Vulkan variants and their CUDA counterparts (scripts/vulkan_table.py pairs them)
variants='vulkan.*,cuda.production,cuda.planar2,cuda.planar2_tma_fused,cuda.direct,cuda.direct_mma_p2,cuda.q1516'
variants="$variants,cuda.q1516_p2,cuda.stateset"
clocks_start "$out/clocks.csv"
step device sh -c "nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; $hsdr list"
gate() {
    step check-cuda "$hsdr" check --backend cuda vectors/ || return 1
    if [ -x "$dir/tests/test_cuda_cols" ]; then
        step columns "$dir/tests/test_cuda_cols" || return 1
    fi
    step check-vulkan "$hsdr" check --backend vulkan vectors/
}
if gate; then
    step bandwidth-cuda "$hsdr" bandwidth --backend cuda
    step bandwidth-vulkan "$hsdr" bandwidth --backend vulkan
    step matrix "$hsdr" run matrix.yaml --out "$out" --quiet --stages none --set variants="$variants" \
        --set shapes=bonsai2-27b --set K=5120 --set N=16384 --set R=1,8,32 --set cols=1 --set threads=1 \
        --set distribution=bonsai --set mode=cold --set skip=none --set extra=none --set time_limit_s="$limit"
    step profile "$hsdr" profile --model bonsai2-27b --layers 4 --tokens "$tokens" --variants "$variants" \
        --json "$out/profile-bonsai2-27b.json"
    rm -f "$out/results.csv"
    if command -v python3 >/dev/null 2>&1; then
        step table python3 scripts/vulkan_table.py "$out" --out "$out/table.md"
    fi
    [ -f "$out/results.jsonl" ] && gzip -f "$out/results.jsonl"
else
    echo "== a check failed: nothing is timed" | tee -a "$log"
fi
clocks_stop
clocks_report "$out/clocks.csv" | tee -a "$log"
exit "$status"
