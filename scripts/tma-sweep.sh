#!/bin/sh
# tma-sweep.sh [BUILD_DIR]: the streamed kernels' knobs (kernels/cuda/tma.cuh and tma_knobs.h:
# HSDR_TMA="STAGES,ROWS,THREADS[,CTAS_PER_SM[,EARLY]]") swept on a GPU machine, in one call, into $OUT (default
# results/gpu-latest): first the data path alone (scripts/tma-stream.cu, when BUILD_DIR/tma-stream is there: nvcc -O3
# -arch=sm_90a -o BUILD_DIR/tma-stream scripts/tma-stream.cu), then per setting every bonsai2-27b GEMV, cold, with
# cuda.production, cuda.planar2 and the streamed rows (fused or not) in the same rounds (sweep.csv: the matrix's CSV
# rows, the setting in front), and the token beside cuda.planar2's and cuda.production_pt's, the best of the earlier
# designs (sweep.log).
# TMA_SETTINGS overrides the settings swept (space-separated).
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the header above
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
out=${OUT:-results/gpu-latest}
mkdir -p "$out"
. scripts/gpu-env.sh # the build's libraries
log=$out/sweep.log
: >"$log"
[ -x "$dir/tma-stream" ] && "$dir/tma-stream" >>"$log" 2>&1
: >"$out/sweep.csv"
for k in ${TMA_SETTINGS:-4,1,256 8,1,256 4,2,256 4,4,256 8,2,128 4,1,512}; do
    echo "== HSDR_TMA=$k" >>"$log"
    HSDR_TMA=$k "$dir/hsdr" run matrix.yaml --out "$out/sweep-run" --quiet \
        --set variants='cuda.production,cuda.planar2,cuda.planar2_tma*,cuda.ptq1_0_tma*' --set K=5120 --set N=17408 \
        --set R=1 --set cols=1 --set threads=1 --set distribution=bonsai --set mode=cold --set shapes=bonsai2-27b \
        --set skip=none --set extra=none --set time_limit_s=0.25 --stages alone >>"$log" 2>&1
    [ -s "$out/sweep.csv" ] || head -1 "$out/sweep-run/results.csv" | sed 's/^/tma,/' >"$out/sweep.csv"
    tail -n +2 "$out/sweep-run/results.csv" | sed "s/^/\"$k\",/" >>"$out/sweep.csv"
    HSDR_TMA=$k "$dir/hsdr" profile --model bonsai2-27b --layers 4 --tokens 20 \
        --variants 'cuda.production_pt,cuda.planar2,cuda.planar2_tma*,cuda.ptq1_0_tma*' >>"$log" 2>&1
    rm -rf "$out/sweep-run"
done
