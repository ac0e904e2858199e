#!/bin/sh
# plots_pipeline.sh HSDR OUT_DIR: a small results directory from every producer (hsdr run on
# tests/data/plots/matrix.yaml, states, profile, quality), then plots/run on it: every figure and REPORT.md must be
# produced from real data (no placeholder), and REPORT.md must show every figure and the intervals of the paired
# ratios; scripts/results_table.py must read the rows.
set -eu
hsdr=$1 out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
"$hsdr" run "$root/tests/data/plots/matrix.yaml" --out "$out" --quiet >/dev/null
"$hsdr" states --json --vectors 4 >"$out/states.jsonl"
"$hsdr" profile --model bonsai-4b --layers 1 --tokens 1 --no-head --variants 'cpu.production,cpu.direct' \
    --json "$out/profile-bonsai-4b.json" >/dev/null
"$hsdr" quality --model bonsai-4b --layers 2 --seeds 1 --tokens 1 --vocab 1024 --json "$out/quality.json" >/dev/null
"$root/plots/run" "$out" | tee "$out/plots.log"
# every input is present: a placeholder here means a figure no longer understands what the producers write
if grep -q "(placeholder:" "$out/plots.log"; then
    echo "plots pipeline: a figure was drawn as a placeholder although its inputs exist"
    exit 1
fi
n=0
for f in stages breakeven roofline speedup error states profile quality; do
    [ -s "$out/figures/$f.png" ] || { echo "plots pipeline: figures/$f.png was not produced"; exit 1; }
    grep -q "figures/$f.png" "$out/REPORT.md" || { echo "plots pipeline: REPORT.md does not show figures/$f.png"; exit 1; }
    n=$((n + 1))
done
# hsdr-results/2 rows carry the paired ratios' intervals: the report shows them beside the ratios
grep -q "In brackets after the range: the 95% bootstrap intervals" "$out/REPORT.md" ||
    { echo "plots pipeline: REPORT.md shows no interval of ratio_to_production"; exit 1; }
# the Markdown table of the same rows (standard library only: any python3)
python3 "$root/scripts/results_table.py" "$out/results.jsonl" --backend cpu | grep -q '^| cpu\.direct | .* \[' ||
    { echo "plots pipeline: scripts/results_table.py shows no cpu.direct row with its interval"; exit 1; }
echo "plots pipeline: $n figures and REPORT.md OK"
