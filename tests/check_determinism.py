#!/usr/bin/env python3
"""check_determinism.py A.jsonl B.jsonl: two `hsdr run`s of the same matrix (same seed). Every case must have the
same inputs (seed) and the same validation outcome in both runs, and within a run the cases that differ only in the
thread count must too. Rows of hsdr-results/2 or /1 (converted as plots/load.py does: an older run of the same matrix
compares with a new one). Standard library only."""
import os
import re
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in plots/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plots"))
import load  # noqa: E402 (plots/load.py: hsdr-results/1 rows read as /2)


def rows(path):
    try:
        return {r["key"]: load.upgrade_row(r, f"{path}:{n}") for n, r in load.read_json_lines(path)}
    except load.InputError as e:
        sys.exit(f"check_determinism: {e}")


def main():
    a, b = rows(sys.argv[1]), rows(sys.argv[2])
    bad = []
    if set(a) != set(b):
        bad.append(f"the runs have different cases: {sorted(set(a) ^ set(b))[:5]}")
    for key in sorted(set(a) & set(b)):
        for field in ("seed", "validation", "status"):
            if a[key].get(field) != b[key].get(field):
                bad.append(f"{key}: {field} differs between the runs: {a[key].get(field)!r} vs {b[key].get(field)!r}")
    by_threads = {}
    for key, r in a.items():
        by_threads.setdefault(re.sub(r" threads=\d+", "", key), []).append(r)
    pairs = 0
    for key, group in by_threads.items():
        for r in group[1:]:
            pairs += 1
            for field in ("seed", "validation", "status"):
                if r.get(field) != group[0].get(field):
                    bad.append(f"{key}: {field} differs between threads={group[0]['threads']} and "
                               f"threads={r['threads']}")
    for line in bad[:20]:
        print("check_determinism:", line)
    if bad or pairs == 0:
        print(f"check_determinism: FAILED ({len(bad)} differences, {pairs} thread pairs)")
        return 1
    print(f"check_determinism: {len(a)} cases identical across runs, {pairs} thread pairs identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
