#!/bin/sh
# vulkan-shape-sweep.sh [BUILD_DIR] [LOCAL,RPW ...]: vulkan.planar2 and vulkan.planar2_fused on each workgroup given
# (HSDR_VULKAN_PLANAR2_SHAPE: LOCAL invocations, a multiple of the subgroup size, taking RPW rows) over the
# bonsai2-27b GEMVs, cold, in the same rounds as vulkan.production and the CUDA twins cuda.production and cuda.planar2
# (whose CUDA context also keeps the SM clock up: gpu-env.sh's clocks_start), and their bonsai2-27b token beside
# cuda.planar2's; each shape first checked against every matvec vector in the order it gives (nothing is timed if
# that fails). Default shapes: the fork's two (32,4 and 128,4 on a 32-wide subgroup) and 2, 4, 8 subgroups with 8, 16
# and 32 rows. Results in $OUT/planar2-shape/LOCAL-RPW/ (results.jsonl.gz, profile-bonsai2-27b.json; default OUT
# results/gpu-latest), the summaries in $OUT/planar2-shape.log, the clocks in $OUT/planar2-shape-clocks.csv. Run it
# where scripts/gpu-bench.sh runs (the same BUILD_DIR and carried .gl).
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
[ $# -gt 0 ] && shift
shapes=${*:-32,4 128,4 64,8 128,16 256,32}
out=${OUT:-results/gpu-latest}
mkdir -p "$out/planar2-shape"
log=$out/planar2-shape.log
: >"$log"
. scripts/gpu-env.sh # the build's libraries, the carried Vulkan loader, the NVIDIA ICD
clocks_start "$out/planar2-shape-clocks.csv"
status=0
for shape in $shapes; do
    name=$(echo "$shape" | tr ',' '-')
    echo "== HSDR_VULKAN_PLANAR2_SHAPE=$shape" | tee -a "$log"
    if HSDR_VULKAN_PLANAR2_SHAPE=$shape "$dir/hsdr" check --variant 'vulkan.planar2*' vectors/matvec.json \
        >>"$log" 2>&1 &&
        HSDR_VULKAN_PLANAR2_SHAPE=$shape "$dir/hsdr" run matrix.yaml --out "$out/planar2-shape/$name" \
            --set variants=cuda.production,cuda.planar2,vulkan.production,vulkan.planar2,vulkan.planar2_fused \
            --set shapes=bonsai2-27b \
            --set K=5120 --set N=16384 --set R=1 --set cols=1 --set threads=1 --set distribution=bonsai \
            --set mode=cold --set skip=none --set extra=none --set time_limit_s=0.25 >>"$log" 2>&1 &&
        HSDR_VULKAN_PLANAR2_SHAPE=$shape "$dir/hsdr" profile --model bonsai2-27b --layers 4 --tokens 20 \
            --variants 'cuda.planar2,vulkan.planar2,vulkan.planar2_fused' \
            --json "$out/planar2-shape/$name/profile-bonsai2-27b.json" >>"$log" 2>&1; then
        gzip -f "$out/planar2-shape/$name/results.jsonl"
        rm -f "$out/planar2-shape/$name/results.csv" "$out/planar2-shape/$name/breakeven.json"
    else
        echo "== $shape: failed (above): not timed" | tee -a "$log"
        status=1
    fi
done
clocks_stop
exit "$status"
