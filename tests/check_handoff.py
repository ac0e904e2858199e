#!/usr/bin/env python3
"""check_handoff.py HSDR OUTDIR: the shape of `hsdr bandwidth --handoff --json` (schema hsdr-handoff/1, one line per
thread count: every call cell, free then held, at gaps 0, 10, 50, 200 us, the barrier, the context) and of `hsdr
profile --split auto` and `--split tune` (the split per GEMV, within the pool's threads; tune's per GEMV shape).
Shapes and invariants only, never the numbers: timed values have no place in a test."""
import json
import os
import subprocess
import sys

TIME_KEYS = {"median", "p10", "p25", "p75", "p90", "min", "mean", "rel_spread", "reps", "stop", "launches_per_sample"}
GAPS = [0, 10, 50, 200]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def check_time(t, where):
    check(isinstance(t, dict) and set(t) == TIME_KEYS, f"{where}: keys {sorted(t) if isinstance(t, dict) else t}")
    if not isinstance(t, dict) or set(t) != TIME_KEYS:
        return
    for k in TIME_KEYS - {"stop"}:
        check(isinstance(t[k], (int, float)), f"{where}.{k}: {t[k]!r} is not a number")
    check(t["reps"] == 1000, f"{where}.reps {t['reps']}, expected 1000")
    check(t["launches_per_sample"] == 1, f"{where}.launches_per_sample {t['launches_per_sample']}")
    check(t["p10"] <= t["median"] <= t["p90"], f"{where}: p10 {t['p10']} median {t['median']} p90 {t['p90']}")


def main():
    hsdr, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    run = subprocess.run([hsdr, "bandwidth", "--handoff", "--threads", "1,2", "--json"], capture_output=True,
                         text=True, check=False)
    check(run.returncode == 0, f"bandwidth --handoff exit {run.returncode}: {run.stderr}")
    lines = run.stdout.splitlines()
    check(len(lines) == 2, f"{len(lines)} lines, expected one per thread count (2)")
    for i, line in enumerate(lines):
        row = json.loads(line)
        where = f"line {i + 1}"
        check(set(row) == {"schema", "threads", "pinning", "task", "calls", "barriers_per_call", "barrier_ns",
                           "context"}, f"{where}: keys {sorted(row)}")
        check(row.get("schema") == "hsdr-handoff/1", f"{where}: schema {row.get('schema')}")
        check(row.get("threads") == i + 1, f"{where}: threads {row.get('threads')}")
        check(row.get("task") == "empty", f"{where}: task {row.get('task')}")
        pin = row.get("pinning", "")
        check(pin.startswith("pinned: ") or pin.startswith("not pinned: "), f"{where}: pinning {pin!r}")
        check(row.get("barriers_per_call") == 64, f"{where}: barriers_per_call {row.get('barriers_per_call')}")
        check(isinstance(row.get("context"), dict) and "cpu" in json.dumps(row["context"]).lower(),
              f"{where}: no machine context")
        calls = row.get("calls", [])
        want = [(held, gap) for held in (False, True) for gap in GAPS]
        got = [(c.get("held"), c.get("gap_us")) for c in calls]
        check(got == want, f"{where}: calls {got}, expected {want}")
        for c in calls:
            check(set(c) == {"held", "gap_us", "time_ns"}, f"{where}: call keys {sorted(c)}")
            check_time(c.get("time_ns", {}), f"{where} held={c.get('held')} gap={c.get('gap_us')}")
        check_time(row.get("barrier_ns", {}), f"{where} barrier_ns")

    for split in ("auto", "tune"):
        prof = os.path.join(out, f"profile-split-{split}.json")
        run = subprocess.run([hsdr, "profile", "--model", "bonsai-4b", "--layers", "1", "--tokens", "2", "--no-head",
                              "--threads", "2", "--split", split, "--variants", "cpu.production,ref.q8_0", "--json",
                              prof], capture_output=True, text=True, check=False)
        check(run.returncode == 0, f"profile --split {split} exit {run.returncode}: {run.stderr}")
        check(f"split: {split}" in run.stdout, f"profile --split {split} does not say how it splits")
        check(run.stdout.count("  threads:") == 2, f"profile --split {split}: not one threads line per variant")
        if run.returncode == 0:
            doc = json.load(open(prof, encoding="utf-8"))
            check(doc.get("split") == split, f"profile split {doc.get('split')}, expected {split}")
            for v in doc.get("variants", []):
                per_shape = {}
                for g in v.get("per_gemv", []):
                    check(g.get("threads") in (1, 2), f"{v['variant']} {g.get('tensor')}: threads {g.get('threads')}")
                    per_shape.setdefault((g.get("K"), g.get("N")), set()).add(g.get("threads"))
                # tune chooses per GEMV shape: the GEMVs of one shape share the count
                check(split != "tune" or all(len(t) == 1 for t in per_shape.values()),
                      f"{v['variant']}: --split tune gave one shape several counts: {per_shape}")
            check(len(doc.get("variants", [])) == 2, f"profile variants {len(doc.get('variants', []))}")

    for f in failures[:20]:
        print("FAIL", f)
    print(f"check_handoff: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
