#!/usr/bin/env python3
"""check_profile_gguf.py HSDR FILE.gguf OUTDIR: `hsdr profile --gguf` on a synthetic GGUF, its JSON checked field by
field against what this script derives on its own (standard library only): the file's FNV-1a data hash over the
whole file (harness/inspect.h's definition), the ternary tensors in forward order from `hsdr inspect --json` (by
layer, then file order, the tensors outside the layers last), their PTQ1_0 bytes, the layer kinds, the per-GEMV
breakdown of every variant and the full-model extrapolation (head + each kind's mean per measured layer x its layers).
Runs: every layer; --layers 1 (one layer extrapolated); --tensors 'blk.*.ffn_*' --no-head; and on two files written
here from make_gguf.py's tiny model under a printed seed: a tied head (token_embd PTQ1_0, no output.weight), with and
without --no-head; two layer kinds (the full model null when --layers 1 leaves a kind unmeasured)."""
import json
import os
import random
import re
import subprocess
import sys

VARIANTS = "ref.q8_0,ref.stateset"  # one reads PTQ1_0 in place, one converts (prepare)


def fnv1a_words(data):
    """inspect.h's data_hash: FNV-1a 64 over little-endian 64-bit words (the last zero-padded), then the length."""
    prime, h, mask = 0x100000001B3, 0xCBF29CE484222325, (1 << 64) - 1
    for i in range(0, len(data), 8):
        h = ((h ^ int.from_bytes(data[i:i + 8], "little")) * prime) & mask
    return ((h ^ len(data)) * prime) & mask


def fail(msg):
    print("check_profile_gguf: FAIL: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def ternary_tensors(hsdr, path):
    doc = json.loads(subprocess.run([hsdr, "inspect", "--json", path], check=True, capture_output=True,
                                    text=True).stdout)
    out = []
    for order, t in enumerate(doc["tensors"]):
        if t["type"] not in ("PTQ1_0", "PQ2_0"):
            continue
        m = re.match(r"blk\.(\d+)\.(.*)\.weight$", t["name"])
        layer = int(m.group(1)) if m else -1
        short = m.group(2) if m else re.sub(r"\.weight$", "", t["name"])
        out.append({"name": t["name"], "short": short, "layer": layer, "type": t["type"], "K": t["shape"][0],
                    "N": t["shape"][1], "order": order})
    out.sort(key=lambda t: (t["layer"] < 0, t["layer"], t["order"]))
    return out


def run(hsdr, path, json_path, extra):
    cmd = [hsdr, "profile", "--gguf", path, "--tokens", "2", "--variants", VARIANTS, "--json", json_path] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    expect(r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    with open(json_path) as f:
        return json.load(f), r.stdout


def check(hsdr, path, out_dir, name, extra, keep, layers_measured, head):
    tensors = [t for t in ternary_tensors(hsdr, path) if keep(t)]
    data = open(path, "rb").read()
    doc, text = run(hsdr, path, os.path.join(out_dir, f"profile-{name}.json"), extra)
    layers = sorted({t["layer"] for t in tensors if t["layer"] >= 0})
    measured_layers = layers[:layers_measured]
    # the head: the tensors outside the layers; token_embd (a row lookup) only when there is no other (tied)
    heads = [t for t in tensors if t["layer"] < 0 and t["short"] != "token_embd"] or \
        [t for t in tensors if t["layer"] < 0]
    tied = any(t["short"] == "token_embd" for t in heads) and head
    measured = [t for t in tensors if t["layer"] in measured_layers] + (heads if head else [])

    def ptq(t):
        return t["N"] * (t["K"] // 128) * 28
    token_bytes = sum(ptq(t) for t in tensors if t["layer"] >= 0) + (sum(ptq(t) for t in heads) if head else 0)
    kinds = {}
    for layer in layers:
        sig = ",".join(t["short"] for t in tensors if t["layer"] == layer)
        k = kinds.setdefault(sig, {"tensors": sig, "layers_model": 0, "layers_measured": 0})
        k["layers_model"] += 1
        k["layers_measured"] += layer in measured_layers
    expect(doc["schema"] == "hsdr-profile/1" and doc["weights"] == "gguf", f"{name}: schema/weights {doc}")
    base = os.path.basename(path)
    expect(doc["model"] == base[:-5], f"{name}: model {doc['model']}")
    expect(doc["layers_measured"] == len(measured_layers) and doc["layers_model"] == len(layers),
           f"{name}: layers {doc['layers_measured']} of {doc['layers_model']}")
    g = doc["gguf"]
    want_hash = f"{fnv1a_words(data):016x}"
    expect(g["file"] == base and g["data_hash"] == want_hash and g["file_bytes"] == len(data),
           f"{name}: file {g['file']} {g['data_hash']} (want {want_hash}) {g['file_bytes']}")
    expect(want_hash in text and base in text, f"{name}: the header lacks the file and its hash")
    expect(g["tensors_kept"] == len(tensors) and g["head"] == head and g["tied_head"] == tied,
           f"{name}: kept {g['tensors_kept']} head {g['head']}")
    expect(g["token_bytes"] == token_bytes, f"{name}: token_bytes {g['token_bytes']}, want {token_bytes}")
    expect(g["layer_kinds"] == list(kinds.values()), f"{name}: layer_kinds {g['layer_kinds']}, want {kinds}")
    got = [(t["name"], t["type"], t["layer"], t["K"], t["N"]) for t in g["tensors_measured"]]
    want = [(t["name"], t["type"], t["layer"], t["K"], t["N"]) for t in measured]
    expect(got == want, f"{name}: tensors_measured {got}, want {want}")
    for t in measured:
        expect(re.search(r"^  " + re.escape(t["name"]) + r" ", text, re.M), f"{name}: the header lacks {t['name']}")
    expect([v["variant"] for v in doc["variants"]] == VARIANTS.split(","), f"{name}: variants {doc['variants']}")
    measured_bytes = sum(ptq(t) for t in measured)
    for v in doc["variants"]:
        per = v["per_gemv"]
        got = [(p["name"], p["tensor"], p["layer"], p["K"], p["N"]) for p in per]
        want = [(t["name"], t["short"], t["layer"], t["K"], t["N"]) for t in measured]
        expect(got == want, f"{name}: {v['variant']} per_gemv {got}, want {want}")
        expect(all(p["mean_ns"] > 0 for p in per), f"{name}: {v['variant']}: a mean_ns is not positive")
        ceiling = v["ceiling_bytes_per_s"]
        # a host variant's floor: the read sampled between its tokens (hsdr profile since issue 22)
        expect(v.get("ceiling_between_tokens") is True and 0 <= v.get("ceiling_rel_spread", -1) < 10 and ceiling > 0,
               f"{name}: {v['variant']}: no read between the tokens ({v.get('ceiling_between_tokens')}, "
               f"{v.get('ceiling_rel_spread')})")
        expect(close(v["floor_ms_per_token_measured"] * 1e6, measured_bytes / ceiling * 1e9, 1e-6),
               f"{name}: {v['variant']} floor {v['floor_ms_per_token_measured']}")
        expect(close(v["floor_ms_per_token_full_model"] * 1e6, token_bytes / ceiling * 1e9, 1e-6),
               f"{name}: {v['variant']} full floor {v['floor_ms_per_token_full_model']}")
        full = sum(p["mean_ns"] for p in per if p["layer"] < 0)
        if any(k["layers_measured"] == 0 for k in kinds.values()):  # a kind without a measured layer
            expect(v["ms_per_token_full_model_extrapolated"] is None, f"{name}: {v['variant']}: full not null")
            full = None
        for k in kinds.values() if full is not None else []:
            ls = [t["layer"] for t in measured if t["layer"] >= 0 and
                  ",".join(u["short"] for u in tensors if u["layer"] == t["layer"]) == k["tensors"]]
            s = sum(p["mean_ns"] for p in per if p["layer"] >= 0 and p["layer"] in ls)
            full += s / k["layers_measured"] * k["layers_model"]
        expect(full is None or close(v["ms_per_token_full_model_extrapolated"] * 1e6, full, 1e-6),
               f"{name}: {v['variant']} full {v['ms_per_token_full_model_extrapolated']} ms, want {full}")
        row = re.search(r"^" + re.escape(v["variant"]) + r" +[0-9.]+ +[0-9.]+", text, re.M)
        expect(row, f"{name}: no row of {v['variant']}")
        shorts = []
        for t in measured:
            if t["short"] not in shorts:
                shorts.append(t["short"])
        breakdown = r"  per tensor:" + "".join(f" {re.escape(s)} [0-9.]+%" for s in shorts) + "$"
        expect(re.search(breakdown, text, re.M), f"{name}: no per-tensor line /{breakdown}/")
    print(f"check_profile_gguf: {name}: {len(measured)} GEMVs of {len(tensors)} kept tensors, "
          f"{len(doc['variants'])} variants: every field as derived")


def variants_of(path, out_dir):
    """Two files written here with tests/make_gguf.py's writer from its 1-layer tiny model, seed printed: tied.gguf
    (token_embd PTQ1_0, no output.weight: the tied head) and kinds.gguf (a second layer without attn_q: two kinds)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_gguf as mg
    seed = random.SystemRandom().randrange(1 << 30)
    print(f"check_profile_gguf: seed {seed}")
    rng = random.Random(seed)
    _, _, kvs, tensors = mg.tiny()
    rows = lambda k, n: [[mg.f32(rng.gauss(0.0, 1.0)) for _ in range(k)] for _ in range(n)]  # noqa: E731
    emb, _ = mg.quantize(rows(128, 8), mg.T_PTQ1_0)
    tied = [("token_embd.weight", [128, 8], mg.T_PTQ1_0, emb)] + \
        [t for t in tensors if t[0] not in ("token_embd.weight", "output.weight")]
    second = [("blk.1." + t[0][6:], t[1], t[2], mg.quantize(rows(t[1][0], t[1][1]), t[2])[0])
              for t in tensors if t[0].startswith("blk.0.ffn_")]
    kinds = [t for t in tensors if t[0] != "output.weight"] + second + [t for t in tensors if t[0] == "output.weight"]
    out = {}
    for name, ts in (("tied", tied), ("kinds", kinds)):
        out[name] = os.path.join(out_dir, name + ".gguf")
        with open(out[name], "wb") as f:
            f.write(mg.build(kvs, ts))
    return out


def main():
    hsdr, path, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    every = lambda t: True  # noqa: E731
    check(hsdr, path, out_dir, "all", [], every, 10**9, True)
    check(hsdr, path, out_dir, "layers1", ["--layers", "1"], every, 1, True)
    check(hsdr, path, out_dir, "ffn", ["--tensors", "blk.*.ffn_*", "--no-head"],
          lambda t: re.match(r"blk\..*\.ffn_", t["name"]) is not None, 10**9, False)
    made = variants_of(path, out_dir)
    check(hsdr, made["tied"], out_dir, "tied", [], every, 10**9, True)
    check(hsdr, made["tied"], out_dir, "tied-no-head", ["--no-head"], every, 10**9, False)
    check(hsdr, made["kinds"], out_dir, "kinds", [], every, 10**9, True)
    check(hsdr, made["kinds"], out_dir, "kinds-layers1", ["--layers", "1"], every, 1, True)
    print("check_profile_gguf: profile --gguf matches the file in every field")


main()
