#!/bin/sh
# fuzz.sh [SECONDS]: build the libFuzzer targets of tests/fuzz/ with clang (build-fuzz/: every library instrumented,
# ASan + UBSan) and run each for SECONDS (default 20) on a scratch copy of its committed corpus
# (tests/fuzz/corpus/NAME/; the committed seeds are never modified). Exits non-zero when any target finds a crash,
# a sanitizer report, a leak, a timeout or a broken invariant, printing the reproducer's path and the command that
# replays it. Ends with 'fuzz: N passed, M failed'.
# Environment: HSDR_FUZZ_BUILD (build folder, default build-fuzz), HSDR_FUZZ_TARGETS (space-separated names, default
# every tests/fuzz/fuzz_*.c), HSDR_CMAKE_ARGS (extra CMake arguments, as for ./hsdr-bench).
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-20}
case "$seconds" in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
BUILD=${HSDR_FUZZ_BUILD:-build-fuzz}
targets=${HSDR_FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c | sed 's/^fuzz_//'; done)}
JOBS=$(nproc 2>/dev/null || echo 2)

# Only what the fuzz targets link: no tests, no optional backends (their stubs keep the registry whole), so the
# instrumented build stays small (about half a minute on 2 cores). -O1 -gline-tables-only, the usual fuzzing build:
# optimized, file:line in every report, and cheaper to compile than -O2 -g.
mkdir -p "$BUILD"
opt="-O1 -gline-tables-only"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" \
    -DHSDR_FUZZ=ON -DBUILD_TESTING=OFF -DHSDR_CUDA=OFF -DHSDR_VULKAN=OFF \
    -DHSDR_GBENCH=OFF -DHSDR_LIKWID=OFF ${HSDR_CMAKE_ARGS:-} >"$BUILD.configure.log" 2>&1 || {
    cat "$BUILD.configure.log" >&2
    exit 1
}
# shellcheck disable=SC2046 # one target name per word
cmake --build "$BUILD" -j "$JOBS" --target $(for t in $targets; do echo "fuzz_$t"; done)

passed=0
failed=0
for t in $targets; do
    exe="$BUILD/tests/fuzz/fuzz_$t"
    work="$BUILD/fuzz-work/$t"
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp tests/fuzz/corpus/"$t"/* "$work/corpus/"
    echo "== fuzz_$t: ${seconds} s on $(ls "$work/corpus" | wc -l) seeds (log: $work/log)"
    # -timeout: one input slower than 10 s is a finding (a hang); LeakSanitizer is on by default
    set +e
    "$exe" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
        "$work/corpus" >"$work/log" 2>&1
    rc=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
    artifacts=$(ls "$work/artifacts")
    if [ "$rc" -eq 0 ] && [ -z "$artifacts" ]; then
        echo "   ok: ${runs:-?} inputs, corpus now $(ls "$work/corpus" | wc -l) files"
        passed=$((passed + 1))
        continue
    fi
    failed=$((failed + 1))
    echo "   FAILED (exit $rc); the end of its log:"
    tail -n 40 "$work/log" | sed 's/^/   | /'
    for a in $artifacts; do
        echo "   reproducer: $work/artifacts/$a"
        echo "   replay:     $exe $work/artifacts/$a"
    done
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
