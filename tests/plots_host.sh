#!/bin/sh
# plots_host.sh OUT_DIR: plots/run on the committed host study (tests/data/plots/host: a scripts/cpu-host.sh folder,
# no results.jsonl; threads 1, 2, 4), copied into OUT_DIR: both host figures drawn (no placeholder), REPORT.md with
# its sections and numbers computed from the fixture; the same folder with threads/results.jsonl.gz alone gives the
# same report; a truncated results.jsonl.gz is refused (exit 2, the file named).
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
echo "plots host: 2 figures and REPORT.md OK"
