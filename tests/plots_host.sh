#!/bin/sh
# plots_host.sh OUT_DIR: plots/run on the committed host study (tests/data/plots/host: a scripts/cpu-host.sh folder,
# no results.jsonl; threads 1, 2, 4), copied into OUT_DIR: both host figures drawn (no placeholder), REPORT.md with
# its sections and numbers computed from the fixture; the same folder with threads/results.jsonl.gz alone gives the
# same report; a truncated results.jsonl.gz is refused (exit 2, the file named); the same folder with a second call
# (tests/data/plots/host-calls: bandwidth-2.jsonl, handoff-2.jsonl, cpu-host-2.log, profile-3.json,
# profile-tune.json) reports both calls, the cache-hot reads per thread and split over the threads, and split tune.
set -u
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
fail() {
    echo "plots host: $*"
    exit 1
}
rm -rf "$out"
mkdir -p "$out"
cp -R "$root/tests/data/plots/host" "$out/host"
"$root/plots/run" "$out/host" >"$out/plots.log" 2>&1 || fail "plots/run exited non-zero (see $out/plots.log)"
! grep -q "(placeholder:" "$out/plots.log" || fail "a figure is a placeholder: $(grep placeholder "$out/plots.log")"
report=$out/host/REPORT.md
for f in thread-scaling parallel-efficiency; do
    [ -s "$out/host/figures/$f.png" ] || fail "figures/$f.png was not produced"
    grep -q "(figures/$f.png)" "$report" || fail "REPORT.md does not show figures/$f.png"
done
# each line below must be in REPORT.md as it is (numbers worked out from the fixture by hand in the comments)
while IFS= read -r line; do
    [ -z "$line" ] || grep -qF -- "$line" "$report" || fail "REPORT.md lacks the line: $line"
done <<'LINES'
# hsdr-bench host study: host (Intel(R) Xeon(R) Processor, 4 cores)
## Machine and read ceiling
| topology (lscpu, cpu-host.log) | Socket(s) 1, Core(s) per socket 4, Thread(s) per core 1, NUMA node(s) 1 |
| older build (profile-before-*) | `0123456789ab` (clean), hsdr 0.1.0 |
| 4 | 33.6 | 3.73x | 8.4 | 93% | 34.3 |
## Steps (cpu-host.log)
No step failed. The script ended with exit 0.
## Thread scaling
| cpu.avx2 | 7.42 (81%) | 13.7 (78%) | 23.9 (70%) | 81% | 81% | 4 |
### attn_k (5120 x 1024, 1.09 MiB of PTQ1_0)
| cpu.avx2 | 154 (81%) | 83.4 (78%) | 47.9 (70%) | 81% | 3.23x |
## Hand-off
| 4 | 0.641 (0.664) | 38.9 (65.8) | 0.641 (0.661) | 0.648 (0.767) | 0.594 (0.646) |
## Token at 4 threads
### Before (the older build): 2 runs
cold (older file: no rotation label); host ceiling 33.6 GB/s
| cpu.direct | 120 to 140 | 7.16 to 8.37 | 13% to 15% | attn_q 11% to 12% | - |
### After (this build): 2 runs
### After, --split auto: 1 run
| cpu.avx2 | 28.7 | 34.9 | 62% | ssm_out 52% | 1 to 4 |
### Before and after
| cpu.avx2 | 81.6 | 67.4 | 28.7 | 0.825x | 0.426x |
## GEMVs of the best baseline at 4 threads
cpu.avx2: the fastest production or baseline variant of this build's token
| attn_qkv | 5120 x 10240 | 3 | 32.8 MiB | 4 | 4.31 | 1.02 | 24% | **under 60%** | 4 | 59% |
| attn_v | 5120 x 1024 | 1 | 1.09 MiB | 4 | 0.0531 | 0.0341 | 60% to 69% |  | 1 | 54% |
LINES
# the sweep kept as threads/results.jsonl.gz alone (as a committed folder may): the same report, but for its name
cp -R "$root/tests/data/plots/host" "$out/gz"
gzip "$out/gz/threads/results.jsonl"
"$root/plots/run" "$out/gz" >"$out/gz.log" 2>&1 || fail "plots/run on results.jsonl.gz exited non-zero"
sed 's/results\.jsonl\.gz/results.jsonl/g; s/^# hsdr-bench host study: gz /# hsdr-bench host study: host /' \
    "$out/gz/REPORT.md" | sed 's/`gz\/`/`host\/`/' | diff -u "$report" - ||
    fail "the report from threads/results.jsonl.gz differs"
# a truncated results.jsonl.gz: refused, naming the file
head -c 200 "$out/gz/threads/results.jsonl.gz" >"$out/gz/threads/cut.gz"
mv "$out/gz/threads/cut.gz" "$out/gz/threads/results.jsonl.gz"
"$root/plots/run" "$out/gz" >"$out/cut.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "threads/results.jsonl.gz: not a whole gzip file" "$out/cut.log" ||
    fail "a truncated results.jsonl.gz: exit $rc, $(cat "$out/cut.log")"
# two calls in one folder: call 1 = the fixture (its bandwidth.jsonl with the earlier probe's one 16 KiB hot read split
# over the threads), call 2 = host-calls' numbered files and profiles (the 16 KiB-per-thread probe, split tune)
cp -R "$root/tests/data/plots/host" "$out/calls"
cp "$root/tests/data/plots/host-calls/"*.json "$root/tests/data/plots/host-calls/"*.jsonl \
    "$root/tests/data/plots/host-calls/"*.log "$out/calls/"
"$root/plots/run" "$out/calls" >"$out/calls.log" 2>&1 ||
    fail "plots/run on two calls exited non-zero (see $out/calls.log)"
! grep -q "(placeholder:" "$out/calls.log" || fail "two calls: a figure is a placeholder"
report=$out/calls/REPORT.md
# by hand: median GB/s at 2 threads (17.39 + 19) / 2 = 18.2, / 10 (1 thread's (9 + 11) / 2) = 1.82x, / 2 = 9.1 per
# thread, 91 %; at 4 (33.59 + 35) / 2 = 34.3 = 3.43x, 8.57 per thread, 86 %; hot per thread 190 / 100 = 1.9x,
# 360 / 100 = 3.6x; call 2's barrier at 4 threads 2 x 0.594 (0.646) us; avx2 split tune / all in call 2 = 56 / 70
while IFS= read -r line; do
    [ -z "$line" ] || grep -qF -- "$line" "$report" || fail "two calls: REPORT.md lacks the line: $line"
done <<'LINES'
The folder holds 2 calls of the script on this machine: call 1 (`bandwidth.jsonl`, `handoff.jsonl`, `cpu-host.log`,
started 2026-12-03T05:44:34Z); call 2 (`bandwidth-2.jsonl`, `handoff-2.jsonl`, `cpu-host-2.log`,
started 2026-12-03T06:10:00Z).
| call 2: this build | `b00000000002` (clean), hsdr 0.1.0; started 2026-12-03T06:10:00Z on vm; Linux 6.18.44-fc-v1045
| threads | read GB/s, call 1 (`bandwidth.jsonl`) | read GB/s, call 2 (`bandwidth-2.jsonl`) | median GB/s |
| hot, 16 KiB split over the threads, call 1: GB/s (per thread) |
| cache-hot x 1 thread, 16 KiB per thread, call 2 (GB/s) |
| 2 | 17.4 | 19 | 18.2 | 1.82x | 9.1 | 91% | 17.7 | 150 (8 KiB a thread) | 1.9x (190) |
| 4 | 33.6 | 35 | 34.3 | 3.43x | 8.57 | 86% | 34.3 | 200 (4 KiB a thread) | 3.6x (360) |
Hot, 16 KiB split over the threads, call 1: per-pass overhead, not the cores' scaling.
| `bandwidth-2.jsonl` | 6 lines |
`profile-3.json`: after (this build) (call 2); `profile-auto.json`: after, --split auto (call 1);
`profile-tune.json`: after, --split tune (call 2) |
- call 2, `cpu-host-2.log`: Steps the log shows: machine, check, handoff-table, profile-1, profile-tune. No step failed.
| 4 | call 1 | 0.641 (0.664) | 38.9 (65.8) | 0.641 (0.661) | 0.648 (0.767) | 0.594 (0.646) |
| 4 | call 2 | 0.641 (0.664) | 38.9 (65.8) | 0.641 (0.661) | 0.648 (0.767) | 1.19 (1.29) |
### After, --split tune: 1 run
- `profile-tune.json` (call 2): bonsai2-27b, 4 of 64 layers + head, 4 tokens, 4 threads, split tune;
| cpu.avx2 | 56 | 17.9 | 32% | attn_k 4.3% | 2 to 4 |
| after, --split tune ms/token | after / before, call 1 | after: split auto / all, call 1 |
| after: split tune / all, call 2 |
| cpu.avx2 | 81.6 | 70 | 28.7 | 56 | 0.825x | 0.426x | 0.8x |
| attn_v | 5120 x 1024 | 1 | 1.09 MiB | 4 | 0.0564 | 0.0341 | 60% to 69% |  | 1 | 54% | 2 | 69% |
LINES
! grep -q "No call here measured the cache-hot read per thread" "$report" ||
    fail "two calls: the report says no call measured the per-thread hot read, but call 2 did"
# a malformed line in a later call's file: refused before any drawing (exit 2, the file, line and field named)
sed '2s/"threads":2,/"threads":"two",/' "$root/tests/data/plots/host-calls/bandwidth-2.jsonl" \
    >"$out/calls/bandwidth-2.jsonl"
"$root/plots/run" "$out/calls" >"$out/calls-bad.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "bandwidth-2.jsonl:2: field 'threads' should be integer, got \"two\"" "$out/calls-bad.log" ||
    fail "a malformed bandwidth-2.jsonl: exit $rc, $(cat "$out/calls-bad.log")"
echo "plots host: 2 figures and REPORT.md OK"
