#!/bin/sh
# cpu-host.sh [BUILD_DIR [BEFORE_HSDR]]: the CPU decode study of a many-core server in one call, into $OUT (default
# results/host-latest): the machine, `hsdr check --backend cpu` over every vector file (the gate: nothing is timed if
# it fails), the read ceiling per thread count (and an L1-resident read of 16 KiB per thread: the cores' own
# scaling), the pool's hand-off per thread count (`hsdr bandwidth --handoff`), the threads sweep of every CPU variant
# on bonsai2-27b's GEMV geometries (threads/results.jsonl), and a bonsai2-27b token on all the threads (`hsdr
# profile`: default, and `--split tune`: each GEMV shape's thread count measured). The thread counts are the powers
# of two up to the CPUs this process may run on, and that count itself.
# BEFORE_HSDR: another build's hsdr (an older commit, same libraries) whose profile runs in the same call,
# alternating with this build's (before, after, before, after: the machines drift between minutes), into
# profile-before-N.json beside profile-N.json. Everything printed goes to cpu-host.log. Here,
# `plots/run DIR` draws the thread-scaling figure and writes REPORT.md from the folder.
# scripts/gpu-bench.sh runs this as its part 4 (and at the end of an unparted run), so the CPU study of the lent GPU
# machine's host lands with its GPU rows. CPU_HOST_QUICK=1: two thread counts and one geometry (a minute; a check).
# CPU_HOST_PART=1 or 2: the study in two calls of a lent machine (each under its 10-minute limit), each beginning with
# the gate: 1 = the ceilings, the hand-off and the profiles; 2 = the threads sweep.
# CPU_HOST_BUDGET_S=S: the threads sweep (last) stops at S seconds from the start (SIGTERM: the finished rows stay,
# marked partial), so that a call of limited length brings its files back. CPU_HOST_TOKENS (default 32),
# CPU_HOST_PROFILED (the profiles' variants, default every cpu.* one), CPU_HOST_TENSORS (the sweep's --filter),
# CPU_HOST_SWEPT (the sweep's variants, default backend:cpu), CPU_HOST_ROUNDS (before/after alternations, default 2)
# narrow the study.
set -u
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac # the header above
cd "$(dirname "$0")/.."
dir=${1:-build}
before=${2:-}
out=${OUT:-results/host-latest}
mkdir -p "$out"
. scripts/gpu-env.sh # step; a gpu-build.sh folder's libraries (BUILD_DIR/lib) when there are any
hsdr=$dir/hsdr
status=0
log=$out/cpu-host.log
[ "${CPU_HOST_PART:-}" = 2 ] || : >"$log" # part 2 appends to part 1's log
[ -x "$hsdr" ] || { echo "cpu-host.sh: $hsdr not found (build it first)" | tee -a "$log"; exit 1; }
[ -z "$before" ] || [ -x "$before" ] || { echo "cpu-host.sh: BEFORE_HSDR $before not found" | tee -a "$log"; exit 1; }
cpus=$(nproc)
list=1 n=2
while [ "$n" -lt "$cpus" ]; do list="$list,$n" n=$((n * 2)); done
[ "$cpus" -gt 1 ] && list="$list,$cpus"
start=$(date +%s)
tensors=${CPU_HOST_TENSORS:-'*/ffn_gate,*/ffn_down,*/attn_qkv,*/attn_output,*/attn_k'}
tokens=${CPU_HOST_TOKENS:-32}
rounds=${CPU_HOST_ROUNDS:-2}
if [ "${CPU_HOST_QUICK:-0}" = 1 ]; then
    list="1,$cpus" tensors='*/attn_k' tokens=4
fi
variants=$("$hsdr" list 2>/dev/null | awk '$1 ~ /^cpu\./ {printf "%s%s", sep, $1; sep = ","}')
variants=${CPU_HOST_PROFILED:-$variants}
step machine sh -c "lscpu; $hsdr --version; echo \"transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)\""
if ! step check "$hsdr" check --backend cpu vectors/; then
    echo "== the CPU kernels failed their check on this machine: nothing is timed" | tee -a "$log"
    exit 1
fi
# a token on every thread: this build (held, rotated cold), alternating with the older build's, then split tune
profile() { # profile NAME HSDR [ARGS...]
    name=$1 bin=$2
    shift 2
    step "$name" "$bin" profile --model bonsai2-27b --layers 4 --tokens "$tokens" --threads "$cpus" \
        --variants "$variants" --json "$out/$name.json" "$@"
}
part=${CPU_HOST_PART:-}
if [ "$part" != 2 ]; then
    "$hsdr" bandwidth --threads "$list" --sizes 256M --mode cold --json >"$out/bandwidth.jsonl" 2>>"$log" || status=1
    # a read that stays in each core's L1, 16 KiB per thread: its scaling is the cores' own (SMT siblings or a falling
    # clock show here). --sizes is split over the threads, so each count n reads 16n KiB (one 16 KiB over 16 threads
    # was 1 KiB a thread: the per-pass overhead, not the cores, set its pace)
    for n in $(echo "$list" | tr ',' ' '); do
        "$hsdr" bandwidth --threads "$n" --sizes "$((16 * n))K" --mode hot --json >>"$out/bandwidth.jsonl" \
            2>>"$log" || status=1
    done
    "$hsdr" bandwidth --handoff --threads "$list" --json >"$out/handoff.jsonl" 2>>"$log" || status=1
    step handoff-table "$hsdr" bandwidth --handoff --threads "$list"
    for r in $(seq 1 "$rounds"); do
        [ -n "$before" ] && profile "profile-before-$r" "$before"
        profile "profile-$r" "$hsdr"
    done
    # the thread count per GEMV shape measured first (--split auto's rule, one thread's bare read, was measured
    # 1.7-2.6x slower on the 16-core host: docs/perf-notes.md, issue 22)
    profile profile-tune "$hsdr" --split tune
fi
if [ "$part" = 1 ]; then
    echo "== cpu-host.sh: exit $status" | tee -a "$log"
    exit "$status"
fi
# every CPU variant from one thread to all, cold, on the distinct GEMV geometries of bonsai2-27b (attn_k: the
# 1 MB GEMV whose hand-off matters most); each case in rounds with cpu.production
limit=
if [ -n "${CPU_HOST_BUDGET_S:-}" ]; then
    left=$((CPU_HOST_BUDGET_S - ($(date +%s) - start)))
    [ "$left" -gt 5 ] || left=5
    limit="timeout -k 60 $left" # SIGTERM lets the configurations in flight finish their rounds; then SIGKILL
    echo "== threads: $left s left of CPU_HOST_BUDGET_S=$CPU_HOST_BUDGET_S" | tee -a "$log"
fi
step threads $limit "$hsdr" run matrix.yaml --out "$out/threads" --quiet --stages none \
    --set variants="${CPU_HOST_SWEPT:-backend:cpu}" --set threads="$list" --set R=1 --set shapes=bonsai2-27b \
    --set mode=cold --set distribution=bonsai \
    --set skip=none --set extra=none --set time_limit_s=0.25 --filter "$tensors"
# a run stopped by the kill has only its journal: its finished rows become results.jsonl (hsdr merge)
t=$out/threads
if [ ! -s "$t/results.jsonl" ] && [ -s "$t/results.partial.jsonl" ]; then
    step threads-journal "$hsdr" merge "$t" "$t/results.partial.jsonl" && rm -f "$t/results.partial.jsonl"
fi
gzip -kf "$t/results.jsonl" 2>/dev/null
echo "== cpu-host.sh: exit $status" | tee -a "$log"
exit "$status"
