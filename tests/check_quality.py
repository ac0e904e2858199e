#!/usr/bin/env python3
"""check_quality.py A.json [B.json]: validate `hsdr quality --json` output (schema hsdr-quality/1, see
docs/results-schema.md): every field present with the right type, one sample per seed x token, one entry per
layer, metrics in range, summaries that agree with the samples, an exact variant's path without error. With B (the
same study on another thread count), every metric must be identical: the study does not depend on how rows are
split."""
import json
import math
import sys


def fail(msg):
    print("check_quality: " + msg)
    sys.exit(1)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    for k, t in (("schema", str), ("synthetic", bool), ("model", str), ("shapes", dict), ("layers", int),
                 ("seeds", int), ("tokens", int), ("seed", int), ("flns_F", int), ("flns_b", int), ("threads", int),
                 ("weight_nonzero_fraction", float), ("pipeline", str), ("context", dict), ("paths", list)):
        if not isinstance(doc.get(k), t):
            fail(f"{path}: field {k} missing or not {t.__name__}")
    if doc["schema"] != "hsdr-quality/1" or doc["synthetic"] is not True:
        fail(f"{path}: wrong schema or not labelled synthetic")
    if not 0 < doc["weight_nonzero_fraction"] < 1:
        fail(f"{path}: weight_nonzero_fraction {doc['weight_nonzero_fraction']}")
    if not doc["paths"]:
        fail(f"{path}: no paths")
    L, n = doc["layers"], doc["seeds"] * doc["tokens"]
    for p in doc["paths"]:
        name = p.get("variant")
        for k in ("name", "variant", "family", "activations"):
            if not isinstance(p.get(k), str):
                fail(f"{path}: path {name}: field {k}")
        if len(p["per_layer"]) != L or [e["layer"] for e in p["per_layer"]] != list(range(L)):
            fail(f"{path}: path {name}: per_layer has {len(p['per_layer'])} entries, expected {L}")
        if len(p["samples"]) != n:
            fail(f"{path}: path {name}: {len(p['samples'])} samples, expected {n}")
        for s in p["samples"]:
            if len(s["cos"]) != L + 1 or len(s["nmse"]) != L + 1:
                fail(f"{path}: path {name}: a sample has {len(s['cos'])} cos values, expected {L + 1}")
            # cosine within [-1, 1] up to rounding; NMSE and KL non-negative and finite
            if any(not (-1 - 1e-12 <= c <= 1 + 1e-12) for c in s["cos"]):
                fail(f"{path}: path {name}: cosine out of range: {s['cos']}")
            if any(not (math.isfinite(e) and e >= 0) for e in s["nmse"] + [s["kl"]]):
                fail(f"{path}: path {name}: NMSE or KL negative or not finite")
        # the summaries are the samples' mean / min / max
        fin = p["final"]
        kl = [s["kl"] for s in p["samples"]]
        top1 = sum(s["top1"] for s in p["samples"]) / n
        if not math.isclose(fin["kl_mean"], sum(kl) / n, rel_tol=1e-9, abs_tol=1e-300) or fin["kl_max"] != max(kl):
            fail(f"{path}: path {name}: final KL summary does not match the samples")
        if not math.isclose(fin["top1_agreement"], top1):
            fail(f"{path}: path {name}: top1_agreement {fin['top1_agreement']} != {top1}")
        for layer in range(L):
            v = [s["nmse"][layer] for s in p["samples"]]
            if p["per_layer"][layer]["nmse_max"] != max(v) or p["per_layer"][layer]["nmse_min"] != min(v):
                fail(f"{path}: path {name}: layer {layer} NMSE summary does not match the samples")
        if p["family"] == "exact":
            # the fp32-rounded exact GEMV against the double-double one: only output rounding remains
            if max(s["nmse"][-1] for s in p["samples"]) > 1e-12 or max(kl) > 1e-9 or top1 != 1:
                fail(f"{path}: the exact variant's path is not exact: {fin}")
        elif max(s["nmse"][-1] for s in p["samples"]) > 0.1:
            fail(f"{path}: path {name}: logits NMSE above 0.1: {fin}")
    return doc


def metrics(doc):
    return [(p["variant"], p["samples"], p["per_layer"], p["final"]) for p in doc["paths"]]


def main():
    a = load(sys.argv[1])
    if len(sys.argv) > 2:
        b = load(sys.argv[2])
        if a["threads"] == b["threads"]:
            fail("the two files were run on the same thread count")
        if metrics(a) != metrics(b) or a["weight_nonzero_fraction"] != b["weight_nonzero_fraction"]:
            fail(f"{a['threads']} and {b['threads']} threads give different results")
    print(f"check_quality: {len(a['paths'])} paths x {a['seeds'] * a['tokens']} samples OK"
          + (", identical across thread counts" if len(sys.argv) > 2 else ""))


main()
