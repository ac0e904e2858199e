#!/bin/sh
# run_shard_merge.sh HSDR PYTHON MATRIX WORKDIR: the union of `hsdr run --shard i/3` (i = 0..2) merged with
# `hsdr merge` holds exactly the cases of the unsharded run, with identical deterministic fields (seed, validation,
# occupancy, output error, depth); only timings may differ. The merged breakeven.json holds the same fits (each state-set
# variant against each direct one, per configuration, over the same R values) as the unsharded run's.
set -eu
hsdr=$1 py=$2 matrix=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
"$hsdr" run "$matrix" --out "$work/all" --quiet --stages none --set extra=none >/dev/null
for i in 0 1 2; do
    "$hsdr" run "$matrix" --out "$work/s$i" --shard "$i/3" --quiet --stages none --set extra=none >/dev/null
done
"$hsdr" merge "$work/merged" "$work/s0/results.jsonl" "$work/s1/results.jsonl" "$work/s2/results.jsonl"
"$py" - "$work/all" "$work/merged" <<'PY'
import json, os, sys
def load(p):
    return {r["key"]: r for r in map(json.loads, filter(str.strip, open(p)))}
a, b = (load(os.path.join(d, "results.jsonl")) for d in sys.argv[1:3])
if set(a) != set(b):
    sys.exit(f"key sets differ: only unsharded {sorted(set(a) - set(b))[:3]}, only merged {sorted(set(b) - set(a))[:3]}")
for k in a:
    for f in ("seed", "status", "validation", "occupancy", "error", "critical_path_depth", "weight_bytes"):
        if a[k].get(f) != b[k].get(f):
            sys.exit(f"{k}: field {f} differs: {a[k].get(f)!r} vs {b[k].get(f)!r}")
def fits(d):
    rows = json.load(open(os.path.join(d, "breakeven.json")))["rows"]
    return sorted(tuple(r[f] for f in ("K", "N", "threads", "distribution", "mode", "shape", "stateset", "direct",
                                       "r_values")) for r in rows)
fa, fb = (fits(d) for d in sys.argv[1:3])
if not fa or fa != fb:
    sys.exit(f"breakeven.json: {len(fa)} fits unsharded, {len(fb)} merged, or they differ: {fa[:2]} vs {fb[:2]}")
print(f"shard+merge equivalence: {len(a)} cases identical in every deterministic field, {len(fa)} break-even fits")
PY
