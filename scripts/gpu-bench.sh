#!/bin/sh
# gpu-bench.sh [BUILD_DIR]: on a machine with an NVIDIA GPU, everything the CUDA backend is checked and measured
# with, in one call, into $OUT (default results/gpu-latest): the device and the registry, `hsdr check --backend
# cuda` over every vector file (the gate: nothing is timed if it fails), the same under compute-sanitizer when it is
# there, then the GPU matrix per backend (cuda/ and vulkan/: results.jsonl and .gz, breakeven.json), a decode
# profile per model (profile-MODEL.json: one CUDA graph per token), states.jsonl, the quality study through the CUDA
# kernels (quality.json) and an Nsight Compute pass over each kernel; everything printed goes to gpu-bench.log. The
# lent machine returns at most eight files of 16 MB: bring the results.jsonl.gz back (gunzip them here).
# BUILD_DIR (default build-gpu) comes from scripts/gpu-build.sh, or from a local build with CUDA; its
# tests/test_cuda_cols (the dedicated kernel on 1..8 columns) joins the gate when it is there.
# GPU_BENCH_QUICK=1: while working on a kernel, the gate, the bandwidth, the matrix rows of the Q8_1 kernels and of
# the tensor-core HSDR paths, their bonsai2-27b profile and an Nsight Compute pass only (about five minutes); then,
# when a Vulkan driver answers, the Vulkan check and the Q8 Vulkan rows beside cuda.production (into $OUT/vulkan).
# GPU_BENCH_PART=1, 2, 3 or 4: the full run in four calls of the lent machine (each under its 10-minute limit), each
# beginning with the gate: 1 = the sanitizer, bandwidth and the CUDA matrix ($OUT/cuda); 2 = the Vulkan check,
# bandwidth and matrix ($OUT/vulkan); 3 = the profiles, states, quality, Nsight and SASS mix; 4 = the CPU study of the
# machine's host (scripts/cpu-host.sh into $OUT/host: hand-off, threads sweep, a token on every core; it also ends an
# unparted run; GPU_BENCH_BEFORE names an older build's hsdr to run beside this one there). gpu-bench.log is per part
# (gpu-bench-1.log, -2.log, -3.log), and so is clocks.csv, the SM clock sampled every 250 ms (clocks-1.csv, ...): a
# Vulkan-only process was seen at the idle clock on the H200; the log's last line says whether this run was. Here,
# `hsdr merge DIR cuda/results.jsonl vulkan/results.jsonl` (gunzipped) joins the two matrices into DIR/results.jsonl +
# .csv.
#
# Vulkan: the same binary's Vulkan variants run beside CUDA when a Vulkan driver answers (`hsdr check --backend
# vulkan` is their gate). A machine without the loader's packages (the lent H200) gets them from .gl/*.deb, downloaded
# here once (kernels/vulkan/README.md says how) and carried; the NVIDIA ICD is named when the loader cannot find it.
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the header above
cd "$(dirname "$0")/.."
dir=${1:-build-gpu}
out=${OUT:-results/gpu-latest}
mkdir -p "$out"
. scripts/gpu-env.sh # the build's libraries, the carried Vulkan loader, the NVIDIA ICD
hsdr=$dir/hsdr
status=0
part=${GPU_BENCH_PART:-}
log=$out/gpu-bench${part:+-$part}.log
: >"$log"
clocks_start "$out/clocks${part:+-$part}.csv" # the SM clock beside every time (gpu-env.sh says why)
finish() {
    clocks_stop
    clocks_report "$out/clocks${part:+-$part}.csv" | tee -a "$log"
    exit "$status"
}
step device sh -c "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv && $hsdr list"
quick=${GPU_BENCH_QUICK:-0}
gate() {
    step check "$hsdr" check --backend cuda vectors/ || return 1
    if [ -x "$dir/tests/test_cuda_cols" ]; then
        step columns "$dir/tests/test_cuda_cols" || return 1
    else
        echo "== columns: $dir/tests/test_cuda_cols not built (scripts/gpu-build.sh builds it), skipped" | tee -a "$log"
    fi
}
# Nsight Compute's speed-of-light, occupancy, stall reasons, memory and executed opcodes for the mat-vec of each
# variant given, on the largest FFN GEMV (hardware counters; --clock-control none leaves the clocks alone), when ncu
# is there. The third launch of the mat-vec is profiled: the first is the checking interface's (the LNS8 rows write
# A[8] and Q_g there, which the timed launches do not), the next ones are the warmups of the timed run.
ncu_metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum'
ncu_metrics="$ncu_metrics,sass__inst_executed_per_opcode"
nsight() {
    command -v ncu >/dev/null 2>&1 || return 0
    for v in "$@"; do
        step "ncu-$v" ncu --clock-control none --kernel-name regex:_rows --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
            --section ComputeWorkloadAnalysis --section InstructionStats --print-metric-instances details \
            --metrics "$ncu_metrics" \
            "$hsdr" run matrix.yaml --out "$out/ncu" --quiet --stages none --set variants="$v" --set K=5120 \
            --set N=17408 --set shapes=none --set mode=hot --set distribution=bonsai --set threads=1 --set R=1 \
            --set warmup=2 --set repetitions.min=1 --set repetitions.max=1 --set skip=none --set extra=none
    done
    rm -rf "$out/ncu"
}
# the static SASS opcode mix of the Q8_1 mat-vecs (the fork's SOA_ISUM and PT kernels, ours with 8 lanes per row and
# the 1..8-column one at 8 lanes and one column), when cuobjdump is there
sass() {
    command -v cuobjdump >/dev/null 2>&1 || return 0
    step sass scripts/sass-mix.sh "$hsdr" 'soa_rows_small|soa_rows_large|pt_rows|lanes8_rowsP|cols_rowsILi8ELi1E'
}
# the CPU study of this machine's host, after the GPU rows (nothing else runs on its cores then)
host() {
    step host env OUT="$out/host" scripts/cpu-host.sh "$dir" ${GPU_BENCH_BEFORE:-}
}
vulkan_quick='cuda.production,cuda.planar2,vulkan.production,vulkan.planar2*,vulkan.dmmv,vulkan.direct'
quick_variants='cuda.production*,cuda.planar2*,cuda.ptq1_0_tma*,cuda.ptq1_0_ring,cuda.lanes8,cuda.cols,cuda.direct_mma*,cuda.q1516*'
if [ "$quick" = 1 ] && gate; then
    step bandwidth "$hsdr" bandwidth --backend cuda
    step matrix "$hsdr" run matrix.yaml --out "$out" --quiet \
        --set variants="$quick_variants" --set K=5120,17408 \
        --set N=16384 \
        --set R=1 --set cols=1,8 --set threads=1 --set distribution=bonsai --set mode=hot,cold \
        --set shapes=bonsai2-27b --set skip=none --set extra=none
    step profile-bonsai2-27b "$hsdr" profile --model bonsai2-27b --layers 4 --tokens 50 \
        --variants "$quick_variants" \
        --json "$out/profile-bonsai2-27b.json"
    nsight cuda.production cuda.planar2 cuda.planar2_tma cuda.planar2_tma_fused cuda.direct_mma_p2
    sass
    # the Q8 Vulkan rows beside cuda.production, when a Vulkan driver answers and their check passes
    if step vulkan-check "$hsdr" check --backend vulkan vectors/; then
        step vulkan-bandwidth "$hsdr" bandwidth --backend vulkan
        step vulkan-matrix "$hsdr" run matrix.yaml --out "$out/vulkan" --quiet \
            --set variants="$vulkan_quick" --set K=5120,17408 --set N=16384 --set R=1 --set cols=1 --set threads=1 \
            --set distribution=bonsai --set mode=cold --set shapes=bonsai2-27b --set skip=none --set extra=none \
            --set time_limit_s=0.25
        gzip -kf "$out/vulkan/results.jsonl"
        step vulkan-profile "$hsdr" profile --model bonsai2-27b --layers 4 --tokens 20 --variants "$vulkan_quick" \
            --json "$out/vulkan/profile-bonsai2-27b.json"
    fi
elif [ "$quick" = 1 ]; then
    echo "== the CUDA kernels failed their check: nothing is timed" | tee -a "$log"
elif gate; then
    # the Vulkan variants join every timed step when their check passes
    profiled='cuda.*' qualities='ref.exact,cuda.*' vulkan=0
    if [ "$part" != 1 ] && step vulkan-check "$hsdr" check --backend vulkan vectors/; then
        vulkan=1 profiled='cuda.*,vulkan.*'
        qualities='ref.exact,cuda.*,vulkan.production,vulkan.direct,vulkan.q1516'
        step vulkan-bandwidth "$hsdr" bandwidth --backend vulkan
    elif [ "$part" != 1 ]; then
        echo "== vulkan: no Vulkan device, or its check failed: the Vulkan variants are not timed" | tee -a "$log"
    fi
    if [ "$part" = 1 ] || [ -z "$part" ]; then
        if command -v compute-sanitizer >/dev/null 2>&1; then
            step sanitizer compute-sanitizer --tool memcheck --error-exitcode 9 "$hsdr" check --backend cuda \
                vectors/matvec.json
        else
            echo "== sanitizer: compute-sanitizer not found, skipped" | tee -a "$log"
        fi
        step bandwidth "$hsdr" bandwidth --backend cuda
    fi
    # the GPU matrix, one folder a backend ($out/cuda, $out/vulkan; `hsdr merge` joins them): matrix.yaml with the
    # device's axes (rows enough to fill the GPU; the real GEMVs of bonsai2-27b, hot = L2-resident where it fits,
    # cold = rotating over more than 3x the L2); the 1..8-column kernel on 1..8 columns (decode streams or draft
    # tokens sharing one read of the weights), each column count validated per column, then timed in the same rounds
    # as the one-column rows (0.25 s per case: a GPU launch takes microseconds, so the rounds end on
    # repetitions.max, but for the slowest Vulkan shaders). The rows carry every sample: compressed, each
    # results.jsonl comes back from the lent machine (16 MB a file).
    # The Vulkan matrix runs cuda.production in the same rounds: a process driving the H200 through Vulkan alone
    # was measured at the idle SM clock again in this part (617 of 1004 samples below 1000 MHz; gpu-env.sh); its rows
    # are dropped from vulkan/ afterwards (the CUDA part has them).
    matrix() { # matrix BACKEND
        with=
        [ "$1" = vulkan ] && with=,cuda.production
        step "matrix-$1" "$hsdr" run matrix.yaml --out "$out/$1" --quiet --set variants="backend:$1$with" \
            --set K=1024,2048,5120,8192,17408 --set N=16384 --set R=1,8,32 --set cols=1,2,3,4,5,6,7,8 \
            --set threads=1 --set distribution=bonsai --set mode=hot,cold --set shapes=bonsai2-27b --set skip=none \
            --set extra=none --set time_limit_s=0.25
        if [ -n "$with" ]; then
            python3 -c 'import json, sys
rows = [l for l in open(sys.argv[1]) if json.loads(l).get("backend") == sys.argv[2]]
open(sys.argv[1], "w").writelines(rows)' "$out/$1/results.jsonl" "$1" || status=1
        fi
        gzip -kf "$out/$1/results.jsonl"
        rm -f "$out/$1/results.csv"
    }
    if [ "$part" = 1 ] || [ -z "$part" ]; then
        matrix cuda
    fi
    if { [ "$part" = 2 ] || [ -z "$part" ]; } && [ "$vulkan" = 1 ]; then
        matrix vulkan
    fi
    if [ "$part" = 1 ] || [ "$part" = 2 ]; then
        finish
    fi
    if [ "$part" = 4 ]; then
        host
        finish
    fi
    # a whole decode token per model: each GEMV's launches captured into one CUDA graph, replayed back to back
    for m in bonsai2-27b:4 bonsai-8b:2 bonsai-4b:2; do
        step "profile-${m%%:*}" "$hsdr" profile --model "${m%%:*}" --layers "${m##*:}" --tokens 50 \
            --variants "$profiled" --json "$out/profile-${m%%:*}.json"
    done
    # the activation statistics of this host, and the synthetic accuracy study through the CUDA kernels
    "$hsdr" states --json >"$out/states.jsonl" 2>>"$log" || status=1
    step quality "$hsdr" quality --variants "$qualities" --json "$out/quality.json"
    nsight cuda.production cuda.production_pt cuda.cols cuda.planar2_tma cuda.ptq1_0_tma cuda.direct_mma \
        cuda.direct_mma_p2
    sass
    [ -z "$part" ] && host
else
    echo "== the CUDA kernels failed their check: nothing is timed" | tee -a "$log"
fi
finish
