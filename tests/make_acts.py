#!/usr/bin/env python3
"""make_acts.py: activation files (docs/real-model.md, harness/activations.h) for the tests, standard library only.

  make_acts.py write DIR    writes into DIR:
      model/NAME.npy        one (T, K) '<f4' array per ternary tensor of tests/data/gguf/model.gguf (T = 8 tokens,
                            K the tensor's ne0): real-looking activations -- heavy-tailed channels with a few
                            persistent outliers, RMS-normalized, then the sign flip + normalized Walsh-Hadamard
                            rotation of the input width, as the model's matmuls see them
      model.expect.json     per set: name, T, K and the FNV-1a hash of its float32 bytes (as `hsdr states
                            --activations --json` reports it)
      capture.bin           the same activations as the capture callback of docs/real-model.md writes them (one
                            record per matmul call, tokens split over two calls): scripts/acts-to-npy.py turns it
                            back into model/ byte for byte
      ok-*.npy              accepted variants of one set: '<f2', '<f8', format versions 2.0 and 3.0
      bad-*.npy             hostile files, each refused with exit 2 (tests/real_model.cmake: offset + field)
      bad-width/            a set whose K does not match its tensor's ne0
  make_acts.py check DIR    the files of DIR are byte for byte what `write` produces today
  make_acts.py compare HSDR DIR   runs HSDR states --activations --json on DIR/model and every ok-*.npy and compares
                                  each set's T, K and data_hash with the writer's
.npy layout per NumPy's format description (numpy/lib/format.py, NEP 1): magic, version, header length, dict header
padded with spaces to a multiple of 64 bytes and ended by '\\n', then the data.
"""
import json
import math
import os
import random
import struct
import subprocess
import sys

from fixtures import data_hash, f32, write_or_check

# the ternary tensors of tests/data/gguf/model.gguf (name, K = ne0): see tests/make_gguf.py model()
TENSORS = [("blk.%d.%s.weight" % (l, n), k) for l in range(2) for n, k in (("attn_q", 128), ("ffn_gate", 128),
                                                                           ("ffn_down", 256))]
TENSORS.append(("output.weight", 128))
TOKENS = 8


def npy_bytes(values, shape, descr="<f4", version=(1, 0), header=None, fortran=False):
    """An .npy file of the flat values; header (a str) replaces the dict text."""
    fmt = {"<f4": "<f", "<f2": "<e", "<f8": "<d"}.get(descr, "<f")
    if header is None:
        dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    len_bytes = 2 if version[0] == 1 else 4
    pre = 6 + 2 + len_bytes
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    h = (header + " " * pad + "\n").encode()
    out = b"\x93NUMPY" + bytes(version) + struct.pack("<H" if len_bytes == 2 else "<I", len(h)) + h
    return out + b"".join(struct.pack(fmt, v) for v in values)




def wht(v):
    """Normalized Walsh-Hadamard transform (Sylvester order) of a power-of-two-long list."""
    v, h = list(v), 1
    while h < len(v):
        for i in range(0, len(v), 2 * h):
            for j in range(i, i + h):
                v[j], v[j + h] = v[j] + v[j + h], v[j] - v[j + h]
        h *= 2
    s = 1 / math.sqrt(len(v))
    return [x * s for x in v]


def activations(rng, k, swiglu):
    """T rows of K floats: Student-t(3)-like channels (a Gaussian over a chi-square scale), 2 persistent outlier
    channels of magnitude 8..30, RMSNorm, then signs + WHT over the width; the FFN-down input (swiglu) is the
    product of two such vectors, sparser and heavier-tailed, as SiLU(gate) * up is."""
    signs = [rng.choice((-1.0, 1.0)) for _ in range(k)]
    outliers = rng.sample(range(k), 2)
    rows = []
    for _ in range(TOKENS):
        x = [rng.gauss(0, 1) / math.sqrt(max(1e-3, sum(rng.gauss(0, 1) ** 2 for _ in range(3)) / 3))
             for _ in range(k)]
        for c in outliers:
            x[c] = rng.choice((-1, 1)) * rng.uniform(8, 30)
        if swiglu:
            g = [rng.gauss(0, 1.5) for _ in range(k)]
            x = [xi * gi / (1 + math.exp(-gi)) for xi, gi in zip(x, g)]
        rms = math.sqrt(sum(v * v for v in x) / k + 1e-6)
        rows.append([f32(v) for v in wht([s * v / rms for s, v in zip(signs, x)])])
    return rows


def capture_record(name, rows):
    head = "hsdr-act name=%s ne0=%d ne1=%d type=f32\n" % (name, len(rows[0]), len(rows))
    return head.encode() + b"".join(struct.pack("<%df" % len(r), *r) for r in rows)


def files():
    rng = random.Random(20261221)
    out, expect, capture = {}, [], [b"", b""]
    for name, k in TENSORS:
        rows = activations(rng, k, "ffn_down" in name)
        flat = [v for r in rows for v in r]
        out["model/%s.npy" % name] = npy_bytes(flat, (TOKENS, k))
        expect.append({"name": name, "T": TOKENS, "K": k, "data_hash": data_hash(struct.pack("<%df" % len(flat),
                                                                                            *flat))})
        capture[0] += capture_record(name, rows[:3])  # a prompt of 3 tokens, then 5 more in a second call
        capture[1] += capture_record(name, rows[3:])
    out["model.expect.json"] = (json.dumps({"sets": expect}, indent=1) + "\n").encode()
    out["capture.bin"] = capture[0] + capture[1]
    # accepted variants of the first set (values exact in each dtype: multiples of 1/8 below 64)
    vals = [f32(rng.randrange(-512, 512) / 8) for _ in range(4 * 128)]
    vhash = data_hash(struct.pack("<%df" % len(vals), *vals))
    for tag, kw in (("f2", {"descr": "<f2"}), ("f8", {"descr": "<f8"}), ("v2", {"version": (2, 0)}),
                    ("v3", {"version": (3, 0)})):
        out["ok-%s.npy" % tag] = npy_bytes(vals, (4, 128), **kw)
        expect.append({"name": "ok-" + tag, "T": 4, "K": 128, "data_hash": vhash})
    out["ok.expect.json"] = (json.dumps({"sets": expect[len(TENSORS):]}, indent=1) + "\n").encode()
    del expect[len(TENSORS):]
    good = npy_bytes(vals[:256], (2, 128))
    hdr = lambda text: npy_bytes(vals[:256], (2, 128), header=text)  # noqa: E731
    nan = list(vals[:256])
    nan[128 + 5] = float("nan")
    inf = list(vals[:256])
    inf[7] = float("inf")
    out.update({
        "bad-magic.npy": b"\x93NUMPZ" + good[6:],
        "bad-truncated-magic.npy": good[:4],
        "bad-version.npy": good[:6] + bytes((4, 0)) + good[8:],
        "bad-header-len.npy": good[:8] + struct.pack("<H", 60000) + good[10:],
        "bad-not-dict.npy": hdr("['descr', '<f4']"),
        "bad-unknown-key.npy": hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 128), 'extra': 1}"),
        "bad-missing-key.npy": hdr("{'descr': '<f4', 'shape': (2, 128)}"),
        "bad-duplicate-key.npy": hdr("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 128)}"),
        "bad-fortran.npy": npy_bytes(vals[:256], (2, 128), fortran=True),
        "bad-3d.npy": npy_bytes(vals[:256], (2, 1, 128)),
        "bad-1d.npy": npy_bytes(vals[:256], (256,)),
        "bad-empty-shape.npy": npy_bytes([], (0, 128)),
        "bad-dtype.npy": hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 128), }"),
        "bad-big-endian.npy": hdr("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 128), }"),
        "bad-padding.npy": good[:good.index(b"}") + 1] + b"x" + good[good.index(b"}") + 2:],
        "bad-truncated-data.npy": good[:-100],
        "bad-trailing-data.npy": good + b"\0\0\0\0",
        "bad-nan.npy": npy_bytes(nan, (2, 128)),
        "bad-inf.npy": npy_bytes(inf, (2, 128)),
        "bad-f8-range.npy": npy_bytes([1e300] + vals[1:256], (2, 128), descr="<f8"),
        "bad-width/blk.0.ffn_gate.weight.npy": npy_bytes(vals[:128], (2, 64)),
    })
    return out


def main(argv):
    if len(argv) == 3 and argv[1] in ("write", "check"):
        return write_or_check("make_acts", argv[1], argv[2], files())
    if len(argv) == 4 and argv[1] == "compare":
        errors, n = [], 0
        runs = [("model", os.path.join(argv[3], "model"))]
        runs += [("ok", os.path.join(argv[3], "ok-%s.npy" % t)) for t in ("f2", "f8", "v2", "v3")]
        got = {}
        for _, path in runs:
            run = subprocess.run([argv[2], "states", "--activations", path, "--json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, check=False)
            if run.returncode != 0:
                errors.append("%s: hsdr states exited %d: %s" % (path, run.returncode, run.stderr.decode()))
                continue
            for line in run.stdout.decode().splitlines():
                row = json.loads(line)
                if row.get("set") not in (None, "all"):
                    got[row["set"]] = row
        for stem in ("model", "ok"):
            for want in json.load(open(os.path.join(argv[3], stem + ".expect.json")))["sets"]:
                n += 1
                row = got.get(want["name"])
                if row is None:
                    errors.append("%s: no row in the output" % want["name"])
                    continue
                for key in ("T", "K", "data_hash"):
                    if row.get(key) != want[key]:
                        errors.append("%s.%s: expected %r, got %r" % (want["name"], key, want[key], row.get(key)))
        for e in errors[:40]:
            print("make_acts compare: " + e)
        print("make_acts compare: %s" % ("%d differences" % len(errors) if errors else
                                         "%d sets read back bit for bit" % n))
        return 1 if errors else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
