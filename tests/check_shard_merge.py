#!/usr/bin/env python3
"""check_shard_merge.py ALL MERGED: MERGED/results.jsonl (`hsdr merge` of the shards of `hsdr run --shard i/n`) holds
exactly the cases of the unsharded run ALL/results.jsonl, with identical deterministic fields (seed, validation,
occupancy, output error, depth); only timings may differ. MERGED/breakeven.json holds the same fits (each state-set
variant against each direct one, per configuration, over the same R values) as ALL's. Used by run_shard_merge.sh
(shards run one after another here) and slurm_shards.sh (shards run as a Slurm job array)."""
import json
import os
import sys


def load(p):
    return {r["key"]: r for r in map(json.loads, filter(str.strip, open(p)))}


def fits(d):
    rows = json.load(open(os.path.join(d, "breakeven.json")))["rows"]
    return sorted(tuple(r[f] for f in ("K", "N", "threads", "distribution", "mode", "shape", "stateset", "direct",
                                       "r_values")) for r in rows)


a, b = (load(os.path.join(d, "results.jsonl")) for d in sys.argv[1:3])
if set(a) != set(b):
    sys.exit(f"key sets differ: only unsharded {sorted(set(a) - set(b))[:3]}, "
             f"only merged {sorted(set(b) - set(a))[:3]}")
for k in a:
    for f in ("seed", "status", "validation", "occupancy", "error", "critical_path_depth", "weight_bytes"):
        if a[k].get(f) != b[k].get(f):
            sys.exit(f"{k}: field {f} differs: {a[k].get(f)!r} vs {b[k].get(f)!r}")
fa, fb = (fits(d) for d in sys.argv[1:3])
if not fa or fa != fb:
    sys.exit(f"breakeven.json: {len(fa)} fits unsharded, {len(fb)} merged, or they differ: {fa[:2]} vs {fb[:2]}")
print(f"shard+merge equivalence: {len(a)} cases identical in every deterministic field, {len(fa)} break-even fits")
