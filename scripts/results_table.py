#!/usr/bin/env python3
"""Markdown table of benchmark results, from a results.csv (or .jsonl) of `hsdr run` alone.

usage: scripts/results_table.py RESULTS [--backend cpu] [--mode cold] [--shapes-only] [--variants a,b]
                                [--dist gaussian]

One row per case: variant, K x N (and model tensor; the activation columns when more than one), R, threads, median
time, Gweights/s, GB/s of PTQ1_0 weights, % of the read ceiling measured in the same run, ratio to the production
kernel of the backend (time / production time: < 1 is faster; from a .jsonl of hsdr-results/2 with its 95% interval
over the timing rounds), dominant stage, and the hot/cold label. Rows whose case failed validation or errored are
listed with their status and no numbers. Reads hsdr-results/2 and /1 (whose rows have one column). Standard library
only (runs with any python3)."""
import argparse
import csv
import json
import signal
import sys


def load(path):
    try:
        if path.endswith(".jsonl"):
            rows = []
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        rows.append(flatten(json.loads(line)))
                    except json.JSONDecodeError as e:
                        sys.exit(f"{path}:{n}: not JSON: {e}")
            return rows
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")


def flatten(obj, prefix=""):
    """A JSON row as the CSV has it: nested keys dotted, values as text; arrays (samples, the ratio's interval) kept
    as they are."""
    out = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v if isinstance(v, list) else "" if v is None else str(v)
    return out


def cols(r):
    """Activation columns of a row: 1 on rows of hsdr-results/1, which had no cols field."""
    return int(r.get("cols") or 1)


def num(r, key):
    try:
        return float(r.get(key, ""))
    except ValueError:
        return None


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is not an error
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--backend")
    ap.add_argument("--mode", choices=["hot", "cold"])
    ap.add_argument("--dist")
    ap.add_argument("--variants", help="comma-separated variant names, in the order wanted")
    ap.add_argument("--shapes-only", action="store_true", help="only the model-shape cases")
    a = ap.parse_args()
    rows = load(a.results)
    marked = next((r for r in rows if r.get("partial.done")), None)
    if marked:  # the rows of an interrupted `hsdr run` (docs/results-schema.md): say that cases are missing
        print(f"{a.results}: note: an interrupted run ({marked['partial.done']} of {marked['partial.total']} cases, "
              f"{marked['partial.interrupted_by']}); `hsdr run ... --resume` completes it", file=sys.stderr)
    order = a.variants.split(",") if a.variants else []
    sel = []
    for r in rows:
        if a.backend and r.get("backend") != a.backend:
            continue
        if a.mode and r.get("mode") != a.mode:
            continue
        if a.dist and r.get("distribution") != a.dist:
            continue
        if a.shapes_only and not r.get("shape"):
            continue
        if order and r.get("variant") not in order:
            continue
        sel.append(r)
    if not sel:
        sys.exit(f"{a.results}: no case matches the selection")

    def key(r):
        v = r.get("variant", "")
        return (order.index(v) if v in order else len(order), v, int(r["K"]), int(r["N"]), r.get("distribution", ""),
                int(r["R"]), cols(r), int(r["threads"]), r.get("mode", ""))

    sel.sort(key=key)
    print("| variant | K x N | dist | R | threads | mode | median ms | Gweights/s | GB/s | % of ceiling | x production "
          "| dominant stage |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sel:
        shape = f"{r['K']} x {r['N']}" + (f" ({r['shape'].split('/')[-1]})" if r.get("shape") else "")
        shape += f", {cols(r)} columns" if cols(r) > 1 else ""
        head = f"| {r['variant']} | {shape} | {r.get('distribution', '')} | {r['R']} | {r['threads']} | {r['mode']} |"
        if r.get("status") != "ok":
            print(f"{head} {r.get('status')} | | | | | |")
            continue
        t, gb, pct, ratio = (num(r, k) for k in ("time_ns.median", "gb_per_s", "pct_of_ceiling", "ratio_to_production"))
        ci = r.get("ratio_to_production_ci") if r["variant"] != r.get("production_variant") else None
        ratio_s = "-" if ratio is None else f"{ratio:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
        pct_s = "-" if pct is None else f"{pct:.1f}"  # null: no ceiling was measured
        gw = int(r["K"]) * int(r["N"]) / t
        print(f"{head} {t / 1e6:.3f} | {gw:.1f} | {gb:.2f} | {pct_s} | {ratio_s} | "
              f"{r.get('dominant_stage') or '-'} |")


if __name__ == "__main__":
    main()
