#!/usr/bin/env python3
"""make_gguf.py: small GGUF files for `hsdr inspect`'s tests, written with the Python standard library only.

  make_gguf.py write DIR    writes into DIR:
      model.gguf + model.expect.json   a synthetic 2-layer model (real-looking metadata: architecture, name, block
                                       count, embedding length, prism.hadamard, tokenizer arrays) whose PTQ1_0 and
                                       PQ2_0 tensors are quantized from seeded random floats (spec/ptq1_0.md
                                       sections 1 and 2, re-implemented here), plus F16 / BF16 / F32 tensors;
                                       the .expect.json holds what `hsdr inspect --json` must report, computed here
      tiny.gguf + tiny.expect.json     the same kind of file, a few hundred bytes (the fuzz target's seed)
      bad-*.gguf                       hostile files, each refused with exit 2 (tests/gguf.cmake: offset + field)
      pq2-code3.gguf                   well-formed, but its PQ2_0 tensor blk.0.ffn_down.weight holds a code 3 (+2, not
                                       ternary) in block 3 (row 1, block 1 of the row), weight 5: the commands on
                                       real weights refuse it (tests/gguf_model.cmake), inspect counts it
  make_gguf.py check DIR    the files of DIR are byte for byte what `write` produces today
  make_gguf.py compare HSDR DIR   runs HSDR inspect --json on DIR/model.gguf and DIR/tiny.gguf and compares every
                                  field of the .expect.json (metadata values, each tensor's type, shape, bytes,
                                  data_hash, zero fractions, scale statistics) exactly

Statistics as in harness/inspect.h: zero_trit_fraction = zero weights / weights; all_zero_block_fraction =
all-zero blocks / blocks; scales = fp16 d of every block as a float, NaN left out, sorted, min / max the ends,
p5 / median / p95 the nearest-rank value at 1-based rank max(1, ceil(p * n / 100)); data_hash = FNV-1a 64 over
little-endian 64-bit words (last one zero-padded), then the byte count as one more word.
GGUF layout per ggml's docs/gguf.md (github.com/ggml-org/ggml, commit 9d325133eed396b7bf005a53a83d9747cbd8bde1).
"""
import json
import math
import os
import random
import struct
import subprocess
import sys

from fixtures import data_hash, f32, write_or_check

# ---- GGUF writer --------------------------------------------------------------------------------------------------
U8, I8, U16, I16, U32, I32, F32V, BOOL, STRING, ARRAY, U64, I64, F64V = range(13)
SCALAR_FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32V: "<f", BOOL: "<?",
              U64: "<Q", I64: "<q", F64V: "<d"}
T_F32, T_F16, T_BF16, T_PQ2_0, T_PTQ1_0 = 0, 1, 30, 142, 143
TYPE_NAME = {0: "F32", 1: "F16", 30: "BF16", 142: "PQ2_0", 143: "PTQ1_0"}


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def value_bytes(vtype, v):
    if vtype == STRING:
        return gstr(v)
    if vtype == ARRAY:
        etype, items = v
        return struct.pack("<IQ", etype, len(items)) + b"".join(value_bytes(etype, x) for x in items)
    return struct.pack(SCALAR_FMT[vtype], v)


def kv_bytes(key, vtype, v):
    return gstr(key) + struct.pack("<I", vtype) + value_bytes(vtype, v)


def build(kvs, tensors, version=3, alignment=32, n_tensors=None, n_kv=None, raw_kv=b"", offsets=None):
    """kvs: [(key, type, value)]; tensors: [(name, dims, ggml type, data bytes)], laid out in order at aligned
    offsets unless offsets says otherwise. n_tensors / n_kv / raw_kv (bytes appended to the pairs) forge headers."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors) if n_tensors is None else n_tensors,
                                          len(kvs) + (1 if raw_kv else 0) if n_kv is None else n_kv))
    for key, vtype, v in kvs:
        out += kv_bytes(key, vtype, v)
    out += raw_kv
    pos, offs = 0, []
    for _, _, _, data in tensors:
        offs.append(pos)
        pos += len(data)
        pos += (alignment - pos % alignment) % alignment
    offs = offsets or offs
    for (name, dims, ttype, _), off in zip(tensors, offs):
        out += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ttype, off)
    out += bytes((alignment - len(out) % alignment) % alignment)
    base = len(out)
    for (_, _, _, data), off in zip(tensors, offs):
        if off >= 1 << 16:  # a forged offset past the end: no data there
            continue
        if base + off > len(out):
            out += bytes(base + off - len(out))
        out[base + off:base + off + len(data)] = data
    return bytes(out)


# ---- fp16 / fp32 and the quantizers of spec/ptq1_0.md --------------------------------------------------------------

def fp16_bits(x):  # round to nearest even (struct's 'e' packing), as the reference's fp32 -> fp16
    return struct.unpack("<H", struct.pack("<e", x))[0]


def fp16_value(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]


def round_half_away(x):
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def ptq_byte(digits):
    digits = list(digits) + [0] * (5 - len(digits))
    q = 81 * digits[0] + 27 * digits[1] + 9 * digits[2] + 3 * digits[3] + digits[4]
    return (256 * q + 242) // 243


def ptq_position(e):
    """Weight e of a block -> (byte index, digit) (spec section 1)."""
    if e < 80:
        return e & 15, e >> 4
    if e < 120:
        s = e - 80
        return 16 + (s & 7), s >> 3
    s = e - 120
    return 24 + (s & 1), s >> 1


def ptq1_0_block(w):
    """128 fp32 values -> (28 bytes, ternary values)."""
    amax = max(abs(x) for x in w)
    d = fp16_bits(amax)
    inv = f32(1.0 / amax) if amax != 0 else 0.0
    t = [round_half_away(f32(x * inv)) for x in w]
    digits = [[0] * 5 for _ in range(26)]
    for e, v in enumerate(t):
        b, n = ptq_position(e)
        digits[b][n] = v + 1
    data = bytes(ptq_byte(digits[b]) for b in range(24)) + bytes(ptq_byte(digits[b][:4]) for b in (24, 25))
    return data + struct.pack("<H", d), t


def pq2_0_block(w):
    """128 fp32 values -> (34 bytes, codes)."""
    amax = max(abs(x) for x in w)
    if amax == 0:
        codes = [1] * 128
    else:
        codes = [min(3, max(0, round_half_away(f32(x / amax)) + 1)) for x in w]
    qs = bytes(sum(codes[4 * i + k] << (2 * k) for k in range(4)) for i in range(32))
    return struct.pack("<H", fp16_bits(amax)) + qs, codes


def quantize(rows, qtype):
    """rows: lists of fp32 values (length a multiple of 128). Returns (bytes, stats)."""
    out, zeros, zero_blocks, scales, code3 = bytearray(), 0, 0, [], 0
    for row in rows:
        for g in range(0, len(row), 128):
            if qtype == T_PTQ1_0:
                data, t = ptq1_0_block(row[g:g + 128])
                z = t.count(0)
                scales.append(struct.unpack("<H", data[26:28])[0])
            else:
                data, codes = pq2_0_block(row[g:g + 128])
                z = codes.count(1)
                code3 += codes.count(3)
                scales.append(struct.unpack("<H", data[0:2])[0])
            out += data
            zeros += z
            zero_blocks += z == 128
    blocks = len(scales)
    stats = {"blocks": blocks, "zero_trit_fraction": zeros / (blocks * 128),
             "all_zero_block_fraction": zero_blocks / blocks, "scales": scale_stats(scales)}
    if qtype == T_PQ2_0:
        stats["code3_count"] = code3
    return bytes(out), stats


def scale_stats(bits):
    vals = sorted(fp16_value(h) for h in bits if not ((h & 0x7c00) == 0x7c00 and h & 0x3ff))
    n = len(vals)

    def rank(p):
        return vals[max(1, -(-p * n // 100)) - 1]

    return {"min": vals[0], "p5": rank(5), "median": rank(50), "p95": rank(95), "max": vals[-1],
            "subnormal": sum(1 for h in bits if (h & 0x7c00) == 0 and h & 0x3ff),
            "zero": sum(1 for h in bits if h & 0x7fff == 0),
            "nan": len(bits) - n}



# ---- the synthetic models ------------------------------------------------------------------------------------------
def gauss_rows(rng, n_rows, k, sigma=1.0):
    return [[f32(rng.gauss(0.0, sigma)) for _ in range(k)] for _ in range(n_rows)]


def model(hidden, ffn, vocab, layers, seed, name, max_rows=None):
    """(file bytes, expected JSON, pairs, tensors) of a synthetic ternary model; max_rows caps the rows of every
    ternary tensor (a small file)."""
    rng = random.Random(seed)
    arch = "qwen3"
    tokens = ["<unk>", "<s>", "</s>"] + ["tok%d" % i for i in range(vocab - 3)]
    kvs = [("general.architecture", STRING, arch), ("general.name", STRING, name),
           ("general.alignment", U32, 32), ("general.quantization_version", U32, 2),
           ("general.file_type", U32, 40), ("%s.block_count" % arch, U32, layers),
           ("%s.context_length" % arch, U32, 4096), ("%s.embedding_length" % arch, U32, hidden),
           ("%s.feed_forward_length" % arch, U32, ffn), ("%s.attention.head_count" % arch, U32, 2),
           ("%s.rope.freq_base" % arch, F32V, 1000000.0),
           ("%s.attention.layer_norm_rms_epsilon" % arch, F32V, f32(1e-6)),
           ("prism.hadamard", BOOL, True), ("prism.hadamard.block", U32, 1024),
           ("prism.format", STRING, "PTQ1_0"),
           ("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
           ("tokenizer.ggml.scores", ARRAY, (F32V, [f32(-i / 8) for i in range(vocab)])),
           ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.add_bos_token", BOOL, False)]
    tensors, expect_tensors = [], []

    def add(tname, dims, ttype, data, stats=None):
        tensors.append((tname, dims, ttype, data))
        e = {"name": tname, "type": TYPE_NAME[ttype], "type_id": ttype, "shape": dims, "bytes": len(data),
             "data_hash": data_hash(data)}
        e.update(stats or {})
        expect_tensors.append(e)

    def ternary(tname, k, n, ttype, special=True):
        n = min(n, max_rows or n)
        rows = gauss_rows(rng, n, k)
        if special and n >= 4:
            rows[1] = [0.0] * k                                    # all-zero blocks (scale 0)
            rows[2] = [f32(x * 1e-6) for x in rows[2]]             # subnormal fp16 scales
            rows[3][:128] = [f32(rng.choice((-1.0, 0.0, 0.0, 0.25))) for _ in range(128)]  # many zeros
        data, stats = quantize(rows, ttype)
        add(tname, [k, n], ttype, data, stats)

    emb = b"".join(struct.pack("<e", f32(rng.gauss(0, 0.02))) for _ in range(hidden * vocab))
    add("token_embd.weight", [hidden, vocab], T_F16, emb)
    for i in range(layers):
        norm = b"".join(struct.pack("<f", f32(1 + rng.gauss(0, 0.1))) for _ in range(hidden))
        add("blk.%d.attn_norm.weight" % i, [hidden], T_F32, norm)
        ternary("blk.%d.attn_q.weight" % i, hidden, hidden, T_PTQ1_0)
        ternary("blk.%d.ffn_gate.weight" % i, hidden, ffn, T_PTQ1_0)
        ternary("blk.%d.ffn_down.weight" % i, ffn, hidden, T_PQ2_0)
    bf = b"".join(struct.pack("<f", f32(1 + rng.gauss(0, 0.1)))[2:] for _ in range(hidden))
    add("output_norm.weight", [hidden], T_BF16, bf)
    ternary("output.weight", hidden, vocab, T_PTQ1_0)
    data = build(kvs, tensors)
    meta = {}
    for key, vtype, v in kvs:
        meta[key] = {"array": "STRING" if v[0] == STRING else "FLOAT32", "count": len(v[1])} if vtype == ARRAY else v
    expect = {"version": 3, "alignment": 32, "kv_count": len(kvs), "tensor_count": len(tensors),
              "file_bytes": len(data), "metadata": meta, "tensors": expect_tensors}
    return data, expect, kvs, tensors


def tiny():
    return model(128, 128, 8, 1, 7, "Tiny-Ternary-1L", max_rows=8)


def hostile():
    """{file name: bytes} of malformed GGUFs; the offset and field each must be refused at are in tests/gguf.cmake."""
    data, _, kvs, tensors = tiny()
    ptq = tensors[2]  # blk.0.attn_q.weight, PTQ1_0 128 x 8
    small = [("general.architecture", STRING, "qwen3"), ("general.alignment", U32, 32)]
    t1 = [("a.weight", [128, 2], T_PTQ1_0, ptq[3][:56]), ("b.weight", [128, 2], T_PTQ1_0, ptq[3][56:112])]
    out = {
        "bad-empty.gguf": b"",
        "bad-truncated-magic.gguf": data[:3],
        "bad-truncated-counts.gguf": data[:12],
        "bad-truncated-kv.gguf": data[:data.index(b"tokenizer.ggml.scores") + 30],
        "bad-truncated-key.gguf": data[:data.index(b"prism.format") + 4],
        "bad-truncated-infos.gguf": data[:data.index(b"blk.0.attn_q.weight") + 8],
        "bad-truncated-data.gguf": data[:-100],
        "bad-magic.gguf": b"GGUG" + data[4:],
        "bad-version-1.gguf": data[:4] + struct.pack("<I", 1) + data[8:],
        "bad-version-99.gguf": data[:4] + struct.pack("<I", 99) + data[8:],
        "bad-huge-tensor-count.gguf": build(small, t1, n_tensors=1 << 62),
        "bad-huge-kv-count.gguf": build(small, t1, n_kv=1 << 60),
        "bad-huge-string.gguf": build(small, t1, raw_kv=struct.pack("<Q", 1 << 60) + b"x.y"),
        "bad-array-past-end.gguf": build(small, t1, raw_kv=gstr("x.arr") + struct.pack("<IIQ", ARRAY, U32, 1 << 40)),
        "bad-nested-array.gguf": build(small, t1, raw_kv=gstr("x.arr") + struct.pack("<IIQ", ARRAY, ARRAY, 1)),
        "bad-bool.gguf": build(small, t1, raw_kv=gstr("x.flag") + struct.pack("<IB", BOOL, 2)),
        "bad-value-type.gguf": build(small, t1, raw_kv=gstr("x.what") + struct.pack("<I", 13)),
        "bad-key-not-ascii.gguf": build(small, t1, raw_kv=gstr(b"x.\x01y") + struct.pack("<IB", U8, 1)),
        "bad-duplicate-key.gguf": build(small + [("general.architecture", STRING, "llama")], t1),
        "bad-n-dims-5.gguf": build(small, [("a.weight", [128, 1, 1, 1, 2], T_PTQ1_0, ptq[3][:56])]),
        "bad-dim-zero.gguf": build(small, [("a.weight", [128, 0], T_PTQ1_0, b"")]),
        "bad-dim-overflow.gguf": build(small, [("a.weight", [1 << 32, 1 << 32], T_F32, b"")]),
        "bad-unknown-type.gguf": build(small, [("a.weight", [128, 2], 200, ptq[3][:56])]),
        "bad-type-size.gguf": build(small, [("a.weight", [100, 2], T_PTQ1_0, ptq[3][:56])]),
        "bad-misaligned.gguf": build(small, t1, offsets=[0, 72]),
        "bad-overlap.gguf": build(small, t1, offsets=[0, 32]),
        "bad-past-end.gguf": build(small, t1, offsets=[0, 1 << 20]),
        "bad-duplicate-name.gguf": build(small, [t1[0], ("a.weight",) + t1[1][1:]]),
        "bad-alignment-zero.gguf": build([small[0], ("general.alignment", U32, 0)], t1),
        "bad-alignment-48.gguf": build([small[0], ("general.alignment", U32, 48)], t1, alignment=48),
        "bad-alignment-type.gguf": build([small[0], ("general.alignment", U64, 32)], t1),
    }
    return out


def pq2_code3():
    """A small model whose PQ2_0 tensor carries one code 3: block 3, weight 5."""
    rng = random.Random(3)
    gate, _ = quantize(gauss_rows(rng, 2, 128), T_PTQ1_0)
    down = bytearray(quantize(gauss_rows(rng, 2, 256), T_PQ2_0)[0])
    down[3 * 34 + 2 + 5 // 4] |= 3 << (2 * (5 % 4))
    kvs = [("general.architecture", STRING, "qwen3"), ("general.alignment", U32, 32)]
    return build(kvs, [("blk.0.ffn_gate.weight", [128, 2], T_PTQ1_0, gate),
                       ("blk.0.ffn_down.weight", [256, 2], T_PQ2_0, bytes(down))])


def files():
    m, me, _, _ = model(128, 256, 32, 2, 20261221, "Synthetic-Ternary-2L")
    t, te, _, _ = tiny()
    out = {"model.gguf": m, "model.expect.json": (json.dumps(me, indent=1) + "\n").encode(),
           "tiny.gguf": t, "tiny.expect.json": (json.dumps(te, indent=1) + "\n").encode()}
    out.update(hostile())
    out["pq2-code3.gguf"] = pq2_code3()
    return out


# ---- commands ------------------------------------------------------------------------------------------------------
def compare(want, got, path, errors):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            errors.append("%s: expected an object, got %r" % (path, got))
            return
        for k, v in want.items():
            if k not in got:
                errors.append("%s.%s: missing" % (path, k))
            else:
                compare(v, got[k], "%s.%s" % (path, k), errors)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            errors.append("%s: expected %d items, got %r" % (path, len(want), got))
            return
        for i, (w, g) in enumerate(zip(want, got)):
            compare(w, g, "%s[%d]" % (path, i), errors)
    elif isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or isinstance(got, bool) or float(got) != float(want):
            errors.append("%s: expected %r, got %r" % (path, want, got))
    elif want != got or type(want) is not type(got):
        errors.append("%s: expected %r, got %r" % (path, want, got))


def main(argv):
    if len(argv) == 3 and argv[1] in ("write", "check"):
        return write_or_check("make_gguf", argv[1], argv[2], files())
    if len(argv) == 4 and argv[1] == "compare":
        errors = []
        for stem in ("model", "tiny"):
            want = json.load(open(os.path.join(argv[3], stem + ".expect.json")))
            run = subprocess.run([argv[2], "inspect", "--json", os.path.join(argv[3], stem + ".gguf")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
            if run.returncode != 0:
                errors.append("%s: hsdr inspect exited %d: %s" % (stem, run.returncode, run.stderr.decode()))
                continue
            compare(want, json.loads(run.stdout), stem, errors)
        for e in errors[:40]:
            print("make_gguf compare: " + e)
        print("make_gguf compare: %s" % ("%d differences" % len(errors) if errors else
                                         "inspect --json matches the writer bit for bit"))
        return 1 if errors else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
