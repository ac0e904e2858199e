#!/usr/bin/env python3
"""check_results.py HSDR DIR [--expect-cases N]: validate DIR/results.jsonl (+ .csv, breakeven.json) of `hsdr run`
against docs/results-schema.md: every row has the schema's fields with the right types, ok rows carry timings
beside a bytes floor and a measured ceiling, the CSV mirrors the rows, no row is marked partial and no temporary or
partial file is left."""
import csv
import json
import math
import os
import subprocess
import sys


def fail(msg):
    print("check_results: " + msg)
    sys.exit(1)


def num(row, key):
    v = row.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        fail(f"{row.get('key')}: field {key} is not a finite number: {v!r}")
    return v


def registry_stages(hsdr):
    """Stage names as the registry declares them (`hsdr list --json`): no second list here."""
    out = subprocess.run([hsdr, "list", "--json"], check=True, capture_output=True, text=True).stdout
    return {s for line in out.splitlines() if line.strip() for s in json.loads(line)["stages"].split(",") if s}


def main():
    stages = registry_stages(sys.argv[1])
    d = sys.argv[2]
    expect = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--expect-cases" else None
    left = [f for f in os.listdir(d) if f.endswith(".tmp") or "partial" in f]
    if left:
        fail(f"temporary or partial files left: {left}")
    rows = [json.loads(line) for line in open(os.path.join(d, "results.jsonl")) if line.strip()]
    if expect is not None and len(rows) != expect:
        fail(f"{len(rows)} rows, expected {expect}")
    keys = set()
    for r in rows:
        for k, t in (("schema", str), ("key", str), ("variant", str), ("backend", str), ("family", str),
                     ("distribution", str), ("mode", str), ("status", str), ("shape", str), ("context", dict)):
            if not isinstance(r.get(k), t):
                fail(f"{r.get('key')}: field {k} missing or not {t.__name__}")
        if r["schema"] != "hsdr-results/1":
            fail("wrong schema")
        if "partial" in r:
            fail(f"{r['key']}: a complete run's row carries the mark of an interrupted one: {r['partial']}")
        if r["key"] in keys:
            fail(f"duplicate key {r['key']}")
        keys.add(r["key"])
        for k in ("K", "N", "R", "threads", "seed", "weight_bytes"):
            num(r, k)
        if r["mode"] not in ("hot", "cold"):
            fail(f"{r['key']}: mode {r['mode']}")
        ctx = r["context"]
        for k in ("commit", "compiler", "c_flags", "cpu_model", "caches", "ceilings", "threads_pinned", "matrix"):
            if k not in ctx:
                fail(f"{r['key']}: context lacks {k}")
        if r["status"] == "failed":
            if r["validation"]["passed"]:
                fail(f"{r['key']}: failed row with passed validation")
            if "time_ns" in r:
                fail(f"{r['key']}: a failed case was timed")
            continue
        if r["status"] != "ok":
            continue
        if not r["validation"]["passed"]:
            fail(f"{r['key']}: ok row without passed validation")
        t = r["time_ns"]
        for k in ("median", "p10", "p90", "min", "mean", "rel_spread", "reps"):
            num(t, k)
        if not t["p10"] <= t["median"] <= t["p90"]:
            fail(f"{r['key']}: p10 <= median <= p90 violated")
        if len(r["samples_ns"]) != t["reps"]:
            fail(f"{r['key']}: samples_ns has {len(r['samples_ns'])} entries for {t['reps']} reps")
        ceiling, floor = num(r, "ceiling_bytes_per_s"), num(r, "bytes_floor_ns")
        if abs(floor - r["weight_bytes"] / ceiling * 1e9) > 1e-6 * floor:
            fail(f"{r['key']}: bytes_floor_ns is not weight_bytes / ceiling")
        if abs(num(r, "gb_per_s") - r["weight_bytes"] / t["median"]) > 1e-9 * r["gb_per_s"]:
            fail(f"{r['key']}: gb_per_s inconsistent")
        num(r, "pct_of_ceiling")
        num(r, "critical_path_depth")
        for k in ("nmse", "max_rel", "production_nmse", "production_max_rel"):
            num(r["error"], k)
        if not set(r.get("stages", {})) <= stages:
            fail(f"{r['key']}: stage names outside the registry's {set(r['stages']) - stages}")
        if r["family"] != "production" and "ratio_to_production" not in r:
            fail(f"{r['key']}: no ratio_to_production field")
    with open(os.path.join(d, "results.csv"), newline="") as f:
        crows = list(csv.DictReader(f))
    if len(crows) != len(rows) or [c["key"] for c in crows] != [r["key"] for r in rows]:
        fail("CSV rows do not mirror the JSONL rows")
    be = json.load(open(os.path.join(d, "breakeven.json")))
    if be.get("schema") != "hsdr-breakeven/1" or not isinstance(be.get("rows"), list):
        fail("breakeven.json malformed")
    print(f"check_results: {len(rows)} rows OK ({sum(r['status'] == 'ok' for r in rows)} timed), "
          f"{len(be['rows'])} break-even fits")


if __name__ == "__main__":
    main()
