#!/usr/bin/env python3
"""Every Vulkan variant beside its CUDA counterpart, per bonsai2-27b GEMV and per token (issue 19's table).

usage: scripts/vulkan_table.py DIR [--out FILE]

DIR holds what scripts/vulkan-table.sh writes in one call of the GPU machine: results.jsonl (or .jsonl.gz) of
`hsdr run` with the Vulkan variants and their CUDA twins, cold, on the bonsai2-27b GEMVs, and profile-bonsai2-27b.json
of `hsdr profile` with the same variants. Per GEMV (R = 1; the state sets also at R = 8 and 32): the Vulkan time, its %
of a Vulkan read of the same bytes measured in the same run (the row's ceiling), the twin's time and % of a CUDA read,
and Vulkan / CUDA. Per token: ms, % of the token's bytes floor at the device's read ceiling, and the ratio. Then the
issue's three targets, each met or not by these numbers. Markdown on stdout (or FILE). Standard library only."""
import argparse
import gzip
import json
import os
import sys

# (Vulkan variant, its CUDA counterpart): the same design where one exists (docs/perf-notes.md, issue 19)
PAIRS = [
    ("vulkan.production", "cuda.production"),
    ("vulkan.mmvq", "cuda.production"),
    ("vulkan.dmmv", "cuda.production"),
    ("vulkan.q8_0", "cuda.production"),
    ("vulkan.q8_0_dot", "cuda.production"),
    ("vulkan.planar2", "cuda.planar2"),
    ("vulkan.planar2_fused", "cuda.planar2_tma_fused"),
    ("vulkan.direct", "cuda.direct"),
    ("vulkan.q1516", "cuda.q1516"),
    ("vulkan.stateset", "cuda.stateset"),
]
# the family each target is judged on, by its fastest Vulkan variant (the others are listed, without a target)
FAMILY = {"vulkan.production": "production", "vulkan.planar2": "baseline", "vulkan.direct": "direct",
          "vulkan.q1516": "q1516", "vulkan.stateset": "stateset"}
# the fastest CUDA kernel of a family, shown beside the same-design twin where it differs
FAST = {"vulkan.direct": "cuda.direct_mma_p2", "vulkan.q1516": "cuda.q1516_p2"}
TARGET_RATIO, TARGET_READ, TARGET_TOKEN = 1.3, 80.0, 70.0


def rows_of(d):
    for name in ("results.jsonl", "results.jsonl.gz"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            op = gzip.open if name.endswith(".gz") else open
            with op(p, "rt") as f:
                return [json.loads(line) for line in f if line.strip()]
    sys.exit(f"vulkan_table.py: {d}: no results.jsonl or results.jsonl.gz")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    t = {}  # (variant, tensor, R) -> row
    for r in rows_of(a.dir):
        if r.get("status") != "ok" or r.get("mode") != "cold" or not str(r.get("shape", "")).startswith("bonsai2-27b/"):
            continue
        t[(r["variant"], r["shape"].split("/", 1)[1], r["R"])] = r
    prof_path = os.path.join(a.dir, "profile-bonsai2-27b.json")
    prof = {}
    if os.path.exists(prof_path):
        with open(prof_path) as f:
            prof = {v["variant"]: v for v in json.load(f)["variants"]}
    tensors = sorted({k[1] for k in t}, key=lambda s: [k[1] for k in t].index(s))
    out = []
    w = out.append

    def us(r):
        return r["time_ns"]["median"] / 1e3

    w("## Per GEMV (bonsai2-27b, cold, one column; times are medians in µs; % = of a read of the same bytes by the")
    w("same backend in the same run)\n")
    w("| Vulkan variant | CUDA twin | GEMV | R | Vulkan µs | % Vulkan read | CUDA µs | % CUDA read | Vulkan / CUDA |")
    w("|---|---|---|---|---|---|---|---|---|")
    ratios, reads = {}, {}
    for v, c in PAIRS:
        for R in (1, 8, 32):
            for s in tensors:
                rv, rc = t.get((v, s, R)), t.get((c, s, R))
                if rv is None:
                    continue
                q = us(rv) / us(rc) if rc else None
                if R == 1 and q is not None:
                    ratios.setdefault(v, []).append(q)
                if R == 1:
                    reads.setdefault(v, []).append(rv["pct_of_ceiling"])
                w(f"| {v} | {c} | {s} | {R} | {us(rv):.1f} | {rv['pct_of_ceiling']:.0f} % | "
                  + (f"{us(rc):.1f} | {rc['pct_of_ceiling']:.0f} % | {q:.2f} |" if rc else "- | - | - |"))
    w("\n## Per token (bonsai2-27b, 4 layers measured, GEMVs only; floor = the token's PTQ1_0 bytes at the device's")
    w("read ceiling, per row)\n")
    w("| variant | backend | ms / token | floor ms | % of floor | x its twin's token |")
    w("|---|---|---|---|---|---|")
    tok = {}
    for v, c in PAIRS + [(x, None) for x in sorted({p[1] for p in PAIRS} | set(FAST.values()))]:
        p = prof.get(v)
        if p is None or v in tok:
            continue
        ms, floor = p["ms_per_token_measured"], p["floor_ms_per_token_measured"]
        tok[v] = (ms, 100.0 * floor / ms)
        twin = prof.get(c) if c else None
        ratio = f"{ms / twin['ms_per_token_measured']:.2f} ({c})" if twin else "-"
        w(f"| {v} | {v.split('.')[0]} | {ms:.3f} | {floor:.3f} | {100.0 * floor / ms:.1f} % | {ratio} |")
    w("\n## Targets\n")
    for v, c in PAIRS:
        if v in ratios:
            lo, hi = min(ratios[v]), max(ratios[v])
            fast = ""
            if v in FAST:
                fq = [us(t[(v, s, 1)]) / us(t[(FAST[v], s, 1)]) for s in tensors
                      if (v, s, 1) in t and (FAST[v], s, 1) in t]
                if fq:
                    fast = f"; against {FAST[v]} {min(fq):.2f}–{max(fq):.2f}"
            if v in FAMILY:
                met = "met" if hi <= TARGET_RATIO else "not met"
                w(f"- {FAMILY[v]}: {v} within {TARGET_RATIO}x of {c} per GEMV: {met} ({lo:.2f}–{hi:.2f}){fast}")
            else:
                w(f"- (no target) {v} / {c} per GEMV: {lo:.2f}–{hi:.2f}")
    base = [v for v, _ in PAIRS if v in reads and v not in ("vulkan.direct", "vulkan.q1516", "vulkan.stateset")]
    if base:
        best = max(base, key=lambda v: sum(reads[v]) / len(reads[v]))
        lo, hi = min(reads[best]), max(reads[best])
        w(f"- best Vulkan baseline >= {TARGET_READ:.0f} % of the Vulkan read: "
          f"{'met' if lo >= TARGET_READ else 'not met'} ({best}: {lo:.0f}–{hi:.0f} %)")
    vt = {v: x for v, x in tok.items() if v.startswith("vulkan.") and v in base}
    if vt:
        best = max(vt, key=lambda v: vt[v][1])
        w(f"- Vulkan token >= {TARGET_TOKEN:.0f} % of its floor (best baseline): "
          f"{'met' if vt[best][1] >= TARGET_TOKEN else 'not met'} ({best}: {vt[best][0]:.3f} ms, {vt[best][1]:.1f} %)")
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
