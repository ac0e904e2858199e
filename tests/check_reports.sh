#!/bin/sh
# check_reports.sh: every committed results/<machine>/REPORT.md is what plots/run makes of its directory today
# (regenerated into a temporary directory and compared; the figures are redrawn there too, not compared: PNG bytes
# depend on the matplotlib version).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for report in results/*/REPORT.md; do
    [ -f "$report" ] || continue
    dir=$(dirname "$report")
    plots/run "$dir" --out "$tmp/figures" --report "$tmp/REPORT.md" >/dev/null
    diff -u "$report" "$tmp/REPORT.md" || { echo "check_reports: $report differs from what plots/run makes of $dir"; exit 1; }
    n=$((n + 1))
done
echo "check_reports: $n committed reports up to date"
