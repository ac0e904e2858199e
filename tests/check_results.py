#!/usr/bin/env python3
"""check_results.py HSDR DIR [--expect-cases N]: validate DIR/results.jsonl (+ .csv, breakeven.json) of
`hsdr run`: every row has the fields of `hsdr schema --json` with their types (the row check of plots/load.py, fed
the binary's own table), ok rows carry timings that are the statistics of their samples beside a bytes floor and a
measured ceiling (with its samples), the paired ratios agree with their per-round samples, the CSV mirrors the rows,
no row is marked partial and no temporary or partial file is left. (A per-round ratio divides the row's sample by a
sample of its production variant taken right before it in the same round, which no row keeps: the ratios are
checked against their median and interval, and the production rows' own samples against the rounds' count.)"""
import csv
import json
import math
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in plots/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plots"))
import load  # noqa: E402 (plots/load.py: the row check against the schema table; standard library only)

REL = 1e-9  # what a value recomputed here from the row's own numbers may differ by (printing rounds to 15 digits)


def fail(msg):
    print("check_results: " + msg)
    sys.exit(1)


def num(row, key):
    v = row.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        fail(f"{row.get('key')}: field {key} is not a finite number: {v!r}")
    return v


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def percentile(values, q):
    """Linear interpolation between the closest ranks (harness/stats.c): index q * (n - 1) of the sorted values."""
    xs = sorted(values)
    h = q * (len(xs) - 1)
    i = int(h)
    return xs[i] + (h - i) * (xs[min(i + 1, len(xs) - 1)] - xs[i])


def median(values):
    return percentile(values, 0.5)


def hsdr_json_lines(hsdr, *args):
    out = subprocess.run([hsdr, *args], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def registry_stages(hsdr):
    """Stage names as the registry declares them (`hsdr list --json`): no second list here."""
    return {s for v in hsdr_json_lines(hsdr, "list", "--json") for s in v["stages"].split(",") if s}


def schema_of(hsdr):
    """The row schema as this binary prints it (`hsdr schema --json`)."""
    out = subprocess.run([hsdr, "schema", "--json"], check=True, capture_output=True, text=True).stdout
    try:
        return load.parse_row_schema(json.loads(out), "hsdr schema --json")
    except load.InputError as e:
        fail(str(e))


def check_samples(key, t, samples, what):
    """time_ns-style statistics t (median, p10, p25, p75, p90, min, mean, rel_spread) against the samples."""
    if not samples or not all(isinstance(s, (int, float)) and math.isfinite(s) and s > 0 for s in samples):
        fail(f"{key}: {what}: samples missing or not positive finite numbers")
    for name, q in (("p10", 0.10), ("p25", 0.25), ("median", 0.50), ("p75", 0.75), ("p90", 0.90)):
        if name in t and not close(t[name], percentile(samples, q)):
            fail(f"{key}: {what}.{name} {t[name]} is not the {q:g} quantile of its samples "
                 f"({percentile(samples, q)})")
    if "min" in t and t["min"] != min(samples):
        fail(f"{key}: {what}.min is not the smallest sample")
    if "mean" in t and not close(t["mean"], sum(samples) / len(samples)):
        fail(f"{key}: {what}.mean is not the mean of its samples")
    spread = (percentile(samples, 0.75) - percentile(samples, 0.25)) / median(samples)
    if abs(t["rel_spread"] - spread) > 1e-9:
        fail(f"{key}: {what}.rel_spread {t['rel_spread']} is not (p75 - p25) / median = {spread}")


def check_timing(r):
    """time_ns against samples_ns, the floor, GB/s and % of the ceiling against the median."""
    key, t = r["key"], r["time_ns"]
    if len(r["samples_ns"]) != t["reps"]:
        fail(f"{key}: samples_ns has {len(r['samples_ns'])} entries for {t['reps']} reps")
    visits = r["context"]["settings"].get("visits", 1)
    if sum(r["rounds_per_visit"]) != t["reps"] or len(r["rounds_per_visit"]) != visits or min(r["rounds_per_visit"]) < 1:
        fail(f"{key}: rounds_per_visit {r['rounds_per_visit']} for {t['reps']} rounds in {visits} visits")
    if not t["min"] <= t["p10"] <= t["p25"] <= t["median"] <= t["p75"] <= t["p90"]:
        fail(f"{key}: min <= p10 <= p25 <= median <= p75 <= p90 violated")
    if t["launches_per_sample"] < 1 or t["stop"] not in ("noise", "time_limit", "max_reps"):
        fail(f"{key}: time_ns.launches_per_sample {t['launches_per_sample']} or stop {t['stop']!r}")
    check_samples(key, t, r["samples_ns"], "time_ns")
    ceiling, floor = num(r, "ceiling_bytes_per_s"), num(r, "bytes_floor_ns")
    if not close(floor, r["weight_bytes"] / ceiling * 1e9, 1e-6):
        fail(f"{key}: bytes_floor_ns is not weight_bytes / ceiling")
    if not close(num(r, "gb_per_s"), r["weight_bytes"] / t["median"]):
        fail(f"{key}: gb_per_s inconsistent")
    if not close(num(r, "pct_of_ceiling"), 100 * floor / t["median"]):
        fail(f"{key}: pct_of_ceiling is not 100 * bytes_floor_ns / time_ns.median")


def check_ceiling(r):
    """The ceiling object: its samples give ceiling_bytes_per_s, and the context lists the measurement."""
    key, c = r["key"], r["ceiling"]
    if c is None:
        fail(f"{key}: an ok row without its ceiling measurement")
    if len(c["samples_ns"]) != c["reps"] or c["bytes"] <= 0 or c["age_s"] < 0:
        fail(f"{key}: ceiling: {len(c['samples_ns'])} samples for {c['reps']} reps, bytes {c['bytes']}, "
             f"age_s {c['age_s']}")
    check_samples(key, c, c["samples_ns"], "ceiling")
    if not close(r["ceiling_bytes_per_s"], c["bytes"] / median(c["samples_ns"]) * 1e9):
        fail(f"{key}: ceiling_bytes_per_s is not ceiling.bytes / the median of ceiling.samples_ns")
    # a device's read is listed with threads 0: it does not depend on the host threads
    threads = 0 if r.get("device") else r["threads"]
    listed = [e for e in r["context"].get("ceilings") or [] if e.get("bytes") == c["bytes"] and
              e.get("mode") == r["mode"] and e.get("threads") == threads and
              close(e.get("bytes_per_s", 0), r["ceiling_bytes_per_s"])]
    if not listed:
        fail(f"{key}: its ceiling ({c['bytes']} bytes, {r['mode']}, threads {threads}) is not in context.ceilings")


def configuration(r):
    """The cases timed in the same rounds: same inputs, threads and mode."""
    return (r["shape"], r["K"], r["N"], r["distribution"], r["seed"], r["threads"], r["mode"])


def check_ratio(r, production_rows):
    """The paired ratio fields: null together without a production variant; 1 and [1, 1] (no samples) on the
    production row itself; else the median of the per-round ratios, inside its interval, one ratio per round, and as
    many rounds as its production row (when that row is in the file: they were measured in the same rounds)."""
    key, pv = r["key"], r["production_variant"]
    ratio, ci, per_round = r["ratio_to_production"], r["ratio_to_production_ci"], r["ratio_to_production_samples"]
    if pv is None:
        if (ratio, ci, per_round) != (None, None, None):
            fail(f"{key}: ratio fields set without a production variant")
        return
    if r["variant"] == pv:
        if ratio != 1 or ci != [1, 1] or per_round is not None:
            fail(f"{key}: the production row's ratio is {ratio}, interval {ci}, samples {per_round!r}: expected 1, "
                 f"[1, 1], null")
        return
    if ratio is None or ci is None or per_round is None or len(ci) != 2:
        fail(f"{key}: paired with {pv} but ratio {ratio}, interval {ci}, per-round ratios "
             f"{'null' if per_round is None else len(per_round)}")
    lo, hi = ci
    if not lo <= ratio <= hi:
        fail(f"{key}: ratio_to_production {ratio} outside its interval [{lo}, {hi}]")
    if len(per_round) != r["time_ns"]["reps"] or len(per_round) != len(r["samples_ns"]):
        fail(f"{key}: {len(per_round)} per-round ratios for {r['time_ns']['reps']} reps and "
             f"{len(r['samples_ns'])} samples")
    if not close(ratio, median(per_round)):
        fail(f"{key}: ratio_to_production {ratio} is not the median of its per-round ratios ({median(per_round)})")
    if not min(per_round) <= lo <= hi <= max(per_round):
        fail(f"{key}: interval [{lo}, {hi}] outside the per-round ratios' range")
    prod = production_rows.get((pv,) + configuration(r))
    if prod is not None and len(prod["samples_ns"]) != len(r["samples_ns"]):
        fail(f"{key}: {len(r['samples_ns'])} rounds, its production row {prod['key']} {len(prod['samples_ns'])}")


def main():
    args = sys.argv[1:]
    hsdr, d = args[0], args[1]
    expect = int(args[3]) if len(args) > 3 and args[2] == "--expect-cases" else None
    stages = registry_stages(hsdr)
    schema = schema_of(hsdr)
    left = [f for f in os.listdir(d) if f.endswith(".tmp") or "partial" in f]
    if left:
        fail(f"temporary or partial files left: {left}")
    path = os.path.join(d, "results.jsonl")
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                rows.append(json.loads(line))
                try:
                    load.check_row(rows[-1], f"{path}:{n}", schema)
                except load.InputError as e:
                    fail(str(e))
    if expect is not None and len(rows) != expect:
        fail(f"{len(rows)} rows, expected {expect}")
    production_rows = {(r["variant"],) + configuration(r): r for r in rows
                       if r["status"] == "ok" and r["variant"] == r["production_variant"]}
    keys = set()
    for r in rows:
        if r["schema"] != schema.name or "converted_from" in r:
            fail(f"{r['key']}: schema {r['schema']}, converted from {r.get('converted_from')}: a run writes "
                 f"{schema.name}")
        if "partial" in r:
            fail(f"{r['key']}: a complete run's row carries the mark of an interrupted one: {r['partial']}")
        if r["key"] in keys:
            fail(f"duplicate key {r['key']}")
        keys.add(r["key"])
        if r["cols"] < 1 or (f" cols={r['cols']} " in r["key"] + " ") != (r["cols"] > 1):
            fail(f"{r['key']}: cols {r['cols']} (the key names cols > 1 only)")
        if r["mode"] not in ("hot", "cold"):
            fail(f"{r['key']}: mode {r['mode']}")
        ctx = r.get("context") or fail(f"{r['key']}: no context")
        for k in ("commit", "compiler", "c_flags", "cpu_model", "caches", "ceilings", "threads_pinned", "matrix"):
            if k not in ctx:
                fail(f"{r['key']}: context lacks {k}")
        if r["status"] == "failed":
            if r["validation"]["passed"]:
                fail(f"{r['key']}: failed row with passed validation")
            if "time_ns" in r:
                fail(f"{r['key']}: a failed case was timed")
            continue
        if r["status"] == "error":
            if not r.get("error_message") or "time_ns" in r or "error" in r:
                fail(f"{r['key']}: an error row needs error_message, and has no time_ns or error metrics")
            continue
        if r["status"] != "ok":
            fail(f"{r['key']}: status {r['status']!r}")
        if not r["validation"]["passed"]:
            fail(f"{r['key']}: ok row without passed validation")
        check_timing(r)
        check_ceiling(r)
        check_ratio(r, production_rows)
        num(r, "critical_path_depth")
        for k in ("nmse", "max_rel", "production_nmse", "production_max_rel"):
            num(r["error"], k)
        if not set(r.get("stages", {})) <= stages:
            fail(f"{r['key']}: stage names outside the registry's {set(r['stages']) - stages}")
    with open(os.path.join(d, "results.csv"), newline="") as f:
        crows = list(csv.DictReader(f))
    if len(crows) != len(rows) or [c["key"] for c in crows] != [r["key"] for r in rows]:
        fail("CSV rows do not mirror the JSONL rows")
    be = json.load(open(os.path.join(d, "breakeven.json")))
    if be.get("schema") != "hsdr-breakeven/1" or not isinstance(be.get("rows"), list):
        fail("breakeven.json malformed")
    paired = sum(r["status"] == "ok" and r["ratio_to_production_samples"] is not None for r in rows)
    print(f"check_results: {len(rows)} rows OK ({sum(r['status'] == 'ok' for r in rows)} timed, {paired} paired with "
          f"production), {len(be['rows'])} break-even fits")


if __name__ == "__main__":
    main()
