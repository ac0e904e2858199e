#!/usr/bin/python3
"""Independent test-vector generator for hsdr-bench (schema hsdr-vectors/1).

This script is the oracle the C reference and every kernel are checked against. It is written from the
specification texts only (shared/spec/lns8.md, shared/spec/ptq1_0.md, shared/spec/vectors.md); it never reads,
imports or calls any C code of this repository. Everything is computed with exact arithmetic:

  * fp32 / fp16 values are Python Fractions; rounding to fp32 / fp16 is an explicit round-to-nearest-even routine
    with gradual underflow and overflow to infinity (fp16 overflows from 65520 upward);
  * fused multiply-adds are exact a*b+c followed by one fp32 rounding;
  * the LNS8 encoder uses the exact mantissa-threshold rule (MT table, re-derived and asserted here) and every
    encoded normal value is cross-checked against an exact log comparison (|x|^16 against powers of two);
  * sums involving c_p = 2^((p-2)/8) are evaluated in Decimal at 80 and 120 digits and the two 17-digit
    renderings must agree; Q15.16 ties are decided exactly (only possible when phase 2 alone is nonzero);
  * fLNS tables (LC, kappa+, kappa-) are computed lazily in 60-digit Decimal with a no-tie assertion.

Standard library only (no numpy). Deterministic: a fixed default seed; each output file has its own random
stream, so adding cases to one file does not change the others.

Usage (from the repository root):
    /usr/bin/python3 vectors/generate.py              # (re)write vectors/*.json and vectors/README.md
    /usr/bin/python3 vectors/generate.py --check      # regenerate in memory, exit 1 if a committed file differs
    /usr/bin/python3 vectors/generate.py --selftest   # recompute vectors/spec-examples.json expect blocks
Options: --seed N (default 20261130), --out DIR (default: this script's folder).
"""

import argparse
import json
import math
import os
import random
import struct
import sys
import time
from decimal import Decimal, localcontext, ROUND_FLOOR, ROUND_HALF_EVEN
from fractions import Fraction

DEFAULT_SEED = 20261130
SCHEMA = "hsdr-vectors/1"
INF = math.inf

# ======================================================================================================
# Binary floating point (exact, Fraction based)
# ======================================================================================================
F32 = (24, -126, 127)   # significand bits (incl. hidden), min normal exponent, max exponent
F16 = (11, -14, 15)


def rnd(q, fmt):
    """Round the rational q to the binary format fmt, nearest-even, gradual underflow, overflow -> +-inf.
    Returns a Fraction, or +-math.inf. (Signed zero is not represented: callers handle it.)"""
    p, emin, emax = fmt
    n = q.numerator
    d = q.denominator
    if n == 0:
        return Fraction(0)
    neg = n < 0
    if neg:
        n = -n
    e = n.bit_length() - d.bit_length()
    if e >= 0:
        if n < (d << e):
            e -= 1
    else:
        if (n << -e) < d:
            e -= 1
    if e < emin:
        e = emin
    sh = e - p + 1
    if sh >= 0:
        num, den = n, d << sh
    else:
        num, den = n << -sh, d
    m, r = divmod(num, den)
    r2 = 2 * r
    if r2 > den or (r2 == den and (m & 1)):
        m += 1
    if m and m.bit_length() + sh > emax + 1:
        return -INF if neg else INF
    v = Fraction(m << sh) if sh >= 0 else Fraction(m, 1 << -sh)
    return -v if neg else v


def f32(q):
    return rnd(q, F32)


def f16(q):
    return rnd(q, F16)


def f32_from_double(x):
    return f32(Fraction(x))


def _bits_from_value(v, fmt, ebits, negzero=False):
    p, emin, emax = fmt
    mbits = p - 1
    bias = (1 << (ebits - 1)) - 1
    if v == INF:
        return ((1 << ebits) - 1) << mbits
    if v == -INF:
        return (1 << (ebits + mbits)) | (((1 << ebits) - 1) << mbits)
    sbit = 1 << (ebits + mbits)
    if v == 0:
        return sbit if negzero else 0
    s = sbit if v < 0 else 0
    a = abs(v)
    n, d = a.numerator, a.denominator
    assert d & (d - 1) == 0, "not a binary float"
    e = n.bit_length() - d.bit_length()
    if e < emin:
        m = a * (1 << (mbits - emin))
        assert m.denominator == 1 and 0 < m < (1 << mbits), "not representable (subnormal)"
        return s | int(m)
    assert e <= emax
    m = a * Fraction(2) ** (mbits - e)
    assert m.denominator == 1 and (1 << mbits) <= m < (2 << mbits), "not representable"
    return s | ((e + bias) << mbits) | (int(m) - (1 << mbits))


def _value_from_bits(b, fmt, ebits):
    """Fraction, +-inf, or None for NaN. -0 becomes 0."""
    p, emin, emax = fmt
    mbits = p - 1
    bias = (1 << (ebits - 1)) - 1
    s = (b >> (ebits + mbits)) & 1
    ex = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    if ex == (1 << ebits) - 1:
        if m:
            return None
        return -INF if s else INF
    if ex == 0:
        v = Fraction(m) * Fraction(2) ** (emin - mbits)
    else:
        v = Fraction((1 << mbits) | m) * Fraction(2) ** (ex - bias - mbits)
    return -v if s else v


def f32_bits(v, negzero=False):
    return _bits_from_value(v, F32, 8, negzero)


def f16_bits(v, negzero=False):
    return _bits_from_value(v, F16, 5, negzero)


def f32_val(b):
    return _value_from_bits(b, F32, 8)


def f16_val(b):
    return _value_from_bits(b, F16, 5)


def num(v):
    """JSON rendering of an fp32 value: the shortest repr of the double equal to it."""
    x = float(v)
    assert Fraction(x) == v
    return x


def rne_int(q):
    fl = q.numerator // q.denominator
    r = q - fl
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl & 1):
        fl += 1
    return fl


def rha_int(q):
    a = abs(q)
    r = (a + Fraction(1, 2)).__floor__()
    return -r if q < 0 else r


# ======================================================================================================
# Decimal helpers: 17 significant digit rendering, irrational sums over c_p
# ======================================================================================================
def fmt17_dec(v):
    """Render a Decimal with 17 significant digits, '%.16e' style (two-digit exponent minimum)."""
    if v == 0:
        return "0.0000000000000000e+00"
    with localcontext() as ctx:
        ctx.prec = 17
        ctx.rounding = ROUND_HALF_EVEN
        r = +v
    sign, digits, exp = r.as_tuple()
    digits = list(digits)
    while digits and digits[0] == 0 and len(digits) > 1:  # normalized by + already, defensive
        digits.pop(0)
    sci = exp + len(digits) - 1
    digits = (digits + [0] * 17)[:17]
    mant = "%d.%s" % (digits[0], "".join(str(x) for x in digits[1:]))
    es = "-" if sci < 0 else "+"
    return "%s%se%s%02d" % ("-" if sign else "", mant, es, abs(sci))


def frac_to_dec_exact(q):
    """Exact Decimal of a dyadic rational."""
    d = q.denominator
    assert d & (d - 1) == 0
    k = d.bit_length() - 1
    with localcontext() as ctx:
        ctx.prec = 100000
        return Decimal(q.numerator * 5 ** k).scaleb(-k)


def fmt17_frac(q):
    return fmt17_dec(frac_to_dec_exact(q))


_CP = {}


def cp_dec(prec):
    """c_p = 2^((p-2)/8), p = 0..7, as Decimals correct to about prec digits."""
    if prec not in _CP:
        with localcontext() as ctx:
            ctx.prec = prec + 20
            r = Decimal(2).sqrt().sqrt().sqrt()          # 2^(1/8)
            inv4 = 1 / Decimal(2).sqrt().sqrt()           # 2^(-1/4)
            vals = []
            pw = Decimal(1)
            for p in range(8):
                vals.append(pw * inv4)
                pw = pw * r
        _CP[prec] = vals
    return _CP[prec]


def irr_value(coefs, prec):
    cps = cp_dec(prec)
    with localcontext() as ctx:
        ctx.prec = prec + 10
        s = Decimal(0)
        for p in range(8):
            if coefs[p]:
                s += (Decimal(coefs[p].numerator) / Decimal(coefs[p].denominator)) * cps[p]
        return s


def _rational_only(coefs):
    return all(coefs[p] == 0 for p in range(8) if p != 2)


def irr_fmt17(coefs):
    """17-digit rendering of sum_p coefs[p]*c_p (coefs Fractions)."""
    if _rational_only(coefs):
        return fmt17_frac(coefs[2])
    a = fmt17_dec(irr_value(coefs, 80))
    b = fmt17_dec(irr_value(coefs, 120))
    assert a == b, (a, b)
    return a


def irr_rne(coefs):
    """Correctly rounded (half even) integer of sum_p coefs[p]*c_p; ties decided exactly."""
    if _rational_only(coefs):
        return rne_int(coefs[2])
    v = irr_value(coefs, 120)
    with localcontext() as ctx:
        ctx.prec = 200
        fl = v.to_integral_value(rounding=ROUND_FLOOR)
        fr = v - fl
        assert abs(fr - Decimal("0.5")) > Decimal("1e-30"), "Q15.16 too close to a tie"
        return int(fl) + (1 if fr > Decimal("0.5") else 0)


# ======================================================================================================
# LNS8
# ======================================================================================================
MT_SPEC = [371396, 1164244, 2028851, 2971711, 3999908, 5121165, 6343903, 7677310]


def _derive_mt():
    """MT_i = smallest m with (1 + m/2^23) >= 2^((i-0.5)/8)  <=>  (2^23+m)^16 >= 2^(23*16 + 2i - 1)."""
    out = []
    for i in range(1, 9):
        target = 1 << (23 * 16 + 2 * i - 1)
        lo, hi = 0, 1 << 23
        while lo < hi:
            mid = (lo + hi) // 2
            if ((1 << 23) + mid) ** 16 >= target:
                hi = mid
            else:
                lo = mid + 1
        out.append(lo)
    return out


MT = _derive_mt()
assert MT == MT_SPEC, (MT, MT_SPEC)


class EncodeError(Exception):
    pass


def k_unclamped_bits(b):
    """k = round(8 log2|x| + 74) of a normal fp32 (bits), by the MT rule, cross-checked exactly."""
    ex = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    assert 0 < ex < 255
    E = ex - 127
    j = 0
    for t in MT:
        if m >= t:
            j += 1
    k = 8 * E + 74 + j
    # exact log cross-check: 2^(2k-149) <= |x|^16 < 2^(2k-147), |x| = M * 2^(ex-150)
    M = (1 << 23) | m
    s = 16 * (ex - 150)
    lhs = M ** 16  # |x|^16 = lhs * 2^s
    lo = 2 * k - 149 - s
    hi = 2 * k - 147 - s
    if lo >= 0:
        ok_lo = lhs >= (1 << lo)
    else:
        ok_lo = True if (lhs << -lo) >= 1 else False
    if hi >= 0:
        ok_hi = lhs < (1 << hi)
    else:
        ok_hi = (lhs << -hi) < 1
    assert ok_lo and ok_hi, ("threshold rule disagrees with exact log", hex(b), k)
    return k


def encode_bits(b, e=0):
    """LNS8 code of one fp32 (bit pattern) with power-of-two pre-scale e. NaN raises EncodeError."""
    s = (b >> 31) & 1
    ex = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    if ex == 255:
        if m:
            raise EncodeError("NaN")
        return 0xFF if s else 0x7F
    if ex == 0:
        return 0x00
    k = k_unclamped_bits(b) - 8 * e
    if k > 127:
        k = 127
    elif k < 1:
        # half_min: |x|*2^-e >= 2^(-81/8)  <=>  |x|^8 >= 2^(8e-81),  |x| = M*2^(ex-150)
        M = (1 << 23) | m
        t = 8 * e - 81 - 8 * (ex - 150)
        if t <= 0:
            k = 1
        else:
            k = 1 if M ** 8 >= (1 << t) else 0
        # independent check with Fractions
        xv = Fraction(M) * Fraction(2) ** (ex - 150 - e)
        assert (k == 1) == (xv ** 8 >= Fraction(1, 2 ** 81))
    return (0x80 if (s and k >= 1) else 0) | k


def auto_prescale_bits(bits):
    best = None
    for b in bits:
        ex = (b >> 23) & 0xFF
        m = b & 0x7FFFFF
        if ex == 255:
            raise EncodeError("NaN" if m else "infinite absmax")
        if ex == 0:
            continue
        key = b & 0x7FFFFFFF
        if best is None or key > best:
            best = key
    if best is None:
        return 0
    ku = k_unclamped_bits(best)
    return -((127 - ku) // 8)   # ceil((ku - 127) / 8)


def encode_vector(bits, e=None):
    """Returns (codes, e). e=None means automatic pre-scale. Raises EncodeError for NaN / inf absmax."""
    for b in bits:
        if (b >> 23) & 0xFF == 255 and b & 0x7FFFFF:
            raise EncodeError("NaN")
    if e is None:
        e = auto_prescale_bits(bits)
    return [encode_bits(b, e) for b in bits], e


def first_bits_with_ku(K):
    """Smallest positive normal fp32 (bits) whose unclamped code is K (its predecessor has K-1)."""
    E = (K - 74 - 1) // 8
    j = K - 74 - 8 * E
    assert 1 <= j <= 8
    b = ((E + 127) << 23) | MT[j - 1]
    assert k_unclamped_bits(b) == K and k_unclamped_bits(b - 1) == K - 1
    return b


def lns8_value_dec(k, prec=60):
    """2^((k-74)/8) as Decimal."""
    q, p = k >> 3, k & 7
    with localcontext() as ctx:
        ctx.prec = prec
        return cp_dec(prec)[p] * (Decimal(2) ** (q - 9))


def f32_of_dec(v):
    """fp32 nearest to a positive irrational given as a high-precision Decimal (asserts no near-tie)."""
    fr = Fraction(v)
    r = f32(fr)
    # distance to the rounding boundary must be far larger than the Decimal error
    ulp = Fraction(2) ** (math.floor(math.log2(float(r))) - 23)
    gap = abs(fr - r)
    assert abs(gap - ulp / 2) > ulp * Fraction(1, 10 ** 20)
    return r


# ======================================================================================================
# Groups, Q15.16, fLNS
# ======================================================================================================
def group_A_C(codes, t):
    A = [0] * 8
    C = {}
    for code, ti in zip(codes, t):
        k = code & 127
        if k == 0 or ti == 0:
            continue
        s = -1 if code & 0x80 else 1
        A[k & 7] += s * ti * (1 << (k >> 3))
        C[k] = C.get(k, 0) + s * ti
    for p in range(8):
        assert abs(A[p]) <= 1 << 22
    Cs = {}
    for k in sorted(C):
        assert abs(C[k]) <= 128
        if C[k]:
            Cs[str(k)] = C[k]
    # fold check (spec 4): A[p] = sum_q C[8q+p] 2^q
    for p in range(8):
        assert A[p] == sum(C.get(8 * q + p, 0) << q for q in range(16))
    return A, Cs


def group_coefs(A, dval, e):
    sc = dval * Fraction(2) ** e / 512
    return [sc * A[p] for p in range(8)]


_LN2 = None
_TAB = {}
FLNS_PREC = 60


def _ln2():
    global _LN2
    if _LN2 is None:
        with localcontext() as ctx:
            ctx.prec = FLNS_PREC + 10
            _LN2 = Decimal(2).ln()
    return _LN2


def _rha_dec(v):
    with localcontext() as ctx:
        ctx.prec = FLNS_PREC + 10
        a = abs(v)
        fl = a.to_integral_value(rounding=ROUND_FLOOR)
        fr = a - fl
        assert abs(fr - Decimal("0.5")) > Decimal("1e-30"), "fLNS table tie"
        r = int(fl) + (1 if fr > Decimal("0.5") else 0)
    return -r if v < 0 else r


def LC(F, c):
    key = ("LC", F, c)
    if key not in _TAB:
        with localcontext() as ctx:
            ctx.prec = FLNS_PREC
            v = Decimal(8 << F) * Decimal(c).ln() / _ln2()
        _TAB[key] = _rha_dec(v)
    return _TAB[key]


def kappa(F, d, plus):
    key = ("K+" if plus else "K-", F, d)
    if key not in _TAB:
        with localcontext() as ctx:
            ctx.prec = FLNS_PREC
            y = (-(Decimal(d) * _ln2() / Decimal(8 << F))).exp()
            if plus:
                v = Decimal(8 << F) * (1 + y).ln() / _ln2()
            else:
                assert d >= 1
                v = Decimal(8 << F) * (1 - y).ln() / _ln2()
        _TAB[key] = _rha_dec(v)
    return _TAB[key]


def flns_root(A, F, b, events=None):
    one = 1 << F
    nodes = []
    for p in range(8):
        if A[p] == 0:
            nodes.append(None)
            continue
        n = abs(A[p])
        z = max(0, n.bit_length() - b)
        if z > 0:
            c = (n + (1 << (z - 1))) >> z
            if c == 1 << b:
                c = 1 << (b - 1)
                z += 1
                if events is not None:
                    events.add("renorm")
        else:
            c = n
        assert 1 <= c <= (1 << b) - 1
        nodes.append(((p + 8 * z) * one + LC(F, c), 1 if A[p] > 0 else -1))

    def comb(x, y):
        if x is None:
            return y
        if y is None:
            return x
        if y[0] > x[0]:
            hi, lo = y, x
        else:
            hi, lo = x, y
        d = hi[0] - lo[0]
        if hi[1] == lo[1]:
            k = kappa(F, d, True)
            if k == 0 and events is not None:
                events.add("kappa0")
            return (hi[0] + k, hi[1])
        if d == 0:
            if events is not None:
                events.add("cancel")
            return None
        k = kappa(F, d, False)
        if k == 0 and events is not None:
            events.add("kappa0")
        return (hi[0] + k, hi[1])

    s1 = [comb(nodes[0], nodes[1]), comb(nodes[2], nodes[3]), comb(nodes[4], nodes[5]), comb(nodes[6], nodes[7])]
    s2 = [comb(s1[0], s1[1]), comb(s1[2], s1[3])]
    root = comb(s2[0], s2[1])
    if root is None:
        return {"F": F, "b": b, "lambda_fix": 0, "sign": 0}
    return {"F": F, "b": b, "lambda_fix": root[0], "sign": root[1]}


def group_expect(codes, t, dbits, e=0, F=8, b=12, with_C=True):
    dval = f16_val(dbits)
    assert dval is not None and dval not in (INF, -INF)
    A, C = group_A_C(codes, t)
    coefs = group_coefs(A, dval, e)
    ex = {"A": A}
    if with_C:
        ex["C"] = C
    ex["group_sum"] = irr_fmt17(coefs)
    ex["q15_16"] = irr_rne([c * 65536 for c in coefs])
    if F is not None:
        ex["flns"] = flns_root(A, F, b)
    return ex


# ======================================================================================================
# PTQ1_0
# ======================================================================================================
POS = [None] * 128   # weight e -> (byte index 0..25, digit n)
for _e in range(128):
    if _e < 80:
        POS[_e] = (_e & 15, _e >> 4)
    elif _e < 120:
        _s = _e - 80
        POS[_e] = (16 + (_s & 7), _s >> 3)
    else:
        _s = _e - 120
        POS[_e] = (24 + (_s & 1), _s >> 1)
# forward table of the spec must agree with the inverse
_fwd = {}
for _m in range(16):
    for _n in range(5):
        _fwd[(_m, _n)] = 16 * _n + _m
for _m in range(8):
    for _n in range(5):
        _fwd[(16 + _m, _n)] = 80 + 8 * _n + _m
for _h in range(2):
    for _n in range(4):
        _fwd[(24 + _h, _n)] = 120 + 2 * _n + _h
assert sorted(_fwd.values()) == list(range(128))
for _e in range(128):
    assert _fwd[POS[_e]] == _e


def byte_of_digits(ds):
    """ds: 5 digits (t0 most significant) or 4 digits (qh; fifth digit 0)."""
    ds = list(ds) + [0] * (5 - len(ds))
    q = 81 * ds[0] + 27 * ds[1] + 9 * ds[2] + 3 * ds[3] + ds[4]
    return (256 * q + 242) // 243


def digits_of_byte(byte, count=5):
    out = []
    for n in range(count):
        v = (byte * 3 ** n) % 256
        out.append((3 * v) >> 8)
    return out


def _check_codec():
    for q in range(243):
        ds = [(q // 3 ** (4 - i)) % 3 for i in range(5)]
        by = byte_of_digits(ds)
        assert digits_of_byte(by) == ds
        # other recurrences of the spec
        v, it = by, []
        for _ in range(5):
            w = 3 * v
            it.append(w >> 8)
            v = w & 255
        assert it == ds
        v, cf = by, []
        for _ in range(5):
            cf.append(int(v >= 86) + int(v >= 171))
            v = (3 * v) % 256
        assert cf == ds
        u = Fraction(by, 256)
        g = [(3 ** k * u).__floor__() for k in range(6)]
        assert [g[n + 1] - 3 * g[n] for n in range(5)] == ds
    assert byte_of_digits([0, 1, 2, 2, 0]) == 54


_check_codec()


def ptq_pack(t, dbits):
    assert len(t) == 128 and all(x in (-1, 0, 1) for x in t)
    dig = [[0] * 5 for _ in range(26)]
    for e in range(128):
        by, n = POS[e]
        dig[by][n] = t[e] + 1
    out = bytearray()
    for by in range(24):
        out.append(byte_of_digits(dig[by]))
    for by in range(24, 26):
        out.append(byte_of_digits(dig[by][:4]))
    out += struct.pack("<H", dbits)
    assert len(out) == 28
    # unpack check
    assert ptq_unpack(bytes(out)) == (list(t), dbits)
    return bytes(out)


def ptq_unpack(blk):
    t = [None] * 128
    for e in range(128):
        by, n = POS[e]
        t[e] = digits_of_byte(blk[by])[n] - 1
    return t, struct.unpack("<H", blk[26:28])[0]


def pack_rows_hex(rows_t, rows_d, K):
    """A matrix's PTQ1_0 bytes as hex: rows_t[r] K trits (natural order), rows_d[r] its K/128 fp16 scale patterns."""
    return b"".join(ptq_pack(t[128 * g:128 * g + 128], d[g]) for t, d in zip(rows_t, rows_d)
                    for g in range(K // 128)).hex()


def ptq_quantize(w):
    """w: 128 fp32 values (Fractions). Returns (t list, d bits)."""
    assert len(w) == 128
    amax = max(abs(x) for x in w)
    d = f16(amax)
    dbits = f16_bits(d)
    idv = f32(1 / amax) if amax != 0 else Fraction(0)
    assert idv not in (INF, -INF)
    t = []
    for x in w:
        pr = f32(x * idv)
        tv = rha_int(pr)
        assert -1 <= tv <= 1, "quantizer value outside +-1 (spec has no clamp)"
        t.append(tv)
    return t, dbits


# ======================================================================================================
# Q8_0 (x86 production quantizer) and the fused production dot
# ======================================================================================================
def q8_0_quantize(xs):
    assert len(xs) == 32
    amax = max(abs(x) for x in xs)
    d = f32(amax / 127)
    dq = f16(d)
    assert dq not in (INF, -INF), "Q8_0 scale overflow"
    idv = f32(Fraction(127) / amax) if amax != 0 else Fraction(0)
    q = []
    for x in xs:
        v = rne_int(f32(x * idv))
        assert -127 <= v <= 127
        q.append(v)
    return dq, q


def fma32(a, b, c):
    r = f32(a * b + c)
    assert r not in (INF, -INF)
    assert r != 0 or a * b + c == 0, "underflow to zero (sign would matter)"
    return r


def matvec_expect(K, N, rows_t, rows_d, xs, want_A):
    """rows_t[r]: K ints (natural order), rows_d[r]: list of K/128 fp16 bit patterns; xs: K fp32 Fractions."""
    G = K // 128
    xbits = [f32_bits(x) for x in xs]
    codes, e = encode_vector(xbits, None)
    q8 = [q8_0_quantize(xs[32 * i:32 * i + 32]) for i in range(K // 32)]
    y_exact, y_q8, y_lns, q15, Aall = [], [], [], [], []
    for r in range(N):
        t = rows_t[r]
        exact = Fraction(0)
        sumf = Fraction(0)
        rowc = [Fraction(0)] * 8
        rq = 0
        rA = []
        for g in range(G):
            dv = f16_val(rows_d[r][g])
            assert dv is not None and dv not in (INF, -INF)
            tb = t[128 * g:128 * g + 128]
            s = Fraction(0)
            for j in range(128):
                if tb[j]:
                    s += xs[128 * g + j] if tb[j] > 0 else -xs[128 * g + j]
            exact += dv * s
            # production fused sequence
            sumi = Fraction(0)
            for k in range(4):
                dq, qv = q8[4 * g + k]
                isum = 0
                for j in range(32):
                    isum += tb[32 * k + j] * qv[j]
                assert abs(isum) <= 4064
                sumi = fma32(dq, Fraction(isum), sumi)
            sumf = fma32(dv, sumi, sumf)
            # LNS8 direct path
            A, _ = group_A_C(codes[128 * g:128 * g + 128], tb)
            rA.append(A)
            co = group_coefs(A, dv, e)
            for p in range(8):
                rowc[p] += co[p]
            rq += irr_rne([c * 65536 for c in co])
        y_exact.append(fmt17_frac(exact))
        y_q8.append(num(sumf))
        y_lns.append(irr_fmt17(rowc))
        q15.append(rq)
        Aall.append(rA)
    ex = {"y_exact": y_exact, "y_q8_0": y_q8, "prescale_e": e, "y_lns8": y_lns, "q15_16": q15}
    if want_A:
        ex["A"] = Aall
    return ex


# ======================================================================================================
# Random sources
# ======================================================================================================
def gauss32(rng, sigma=1.0):
    return f32_from_double(rng.gauss(0.0, sigma))


def laplace32(rng, b=1 / math.sqrt(2)):
    u = rng.random()
    while u == 0.0:
        u = rng.random()
    v = -b * math.log(u)
    return f32_from_double(v if rng.random() < 0.5 else -v)


def student3_32(rng):
    z = rng.gauss(0.0, 1.0)
    chi = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
    return f32_from_double(z / math.sqrt(chi / 3.0))


def rand_trits(rng, n, pzero=1 / 3):
    out = []
    for _ in range(n):
        u = rng.random()
        out.append(0 if u < pzero else (1 if rng.random() < 0.5 else -1))
    return out


def rand_f16_normal(rng, lo, hi, neg=False):
    while True:
        v = f16(Fraction(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
        if v != 0 and v != INF:
            return f16_bits(-v if neg else v)


# ======================================================================================================
# Case builders
# ======================================================================================================
def bits_case_input(bits):
    """("x", numbers) when every value is finite, normal or +0; else ("x_bits", ints)."""
    plain = True
    for b in bits:
        ex = (b >> 23) & 0xFF
        if ex == 255 or (ex == 0 and b != 0):
            plain = False
    if plain:
        return "x", [num(f32_val(b)) for b in bits]
    return "x_bits", list(bits)


def enc_case(cid, note, bits, prescale=0, auto=False):
    c = {"id": cid, "kind": "lns8_encode", "note": note}
    key, vals = bits_case_input(bits)
    c[key] = vals
    try:
        if auto:
            codes, e = encode_vector(bits, None)
        else:
            codes, e = encode_vector(bits, prescale)
        ex = {"codes": codes}
        if auto:
            ex["prescale_e"] = e
    except EncodeError:
        ex = {"error": True}
    if auto:
        c["auto_prescale"] = True
    elif prescale:
        c["prescale_e"] = prescale
    c["expect"] = ex
    return c


def dbl_bits(x):
    return f32_bits(f32_from_double(x), negzero=(x == 0 and math.copysign(1, x) < 0))


NEG = 0x80000000


def gen_encode(rng):
    cases = []
    # 1. mantissa thresholds for every exponent E in -16..8 and every MT_i
    for E in range(-16, 9):
        for i in range(1, 9):
            for side, m in (("below", MT[i - 1] - 1), ("above", MT[i - 1])):
                b = ((E + 127) << 23) | m
                cases.append(enc_case("enc/thresh-E%d-i%d-%s" % (E, i, side),
                                      "exponent %d, mantissa MT_%d%s, both signs" % (E, i, "-1" if side == "below" else ""),
                                      [b, b | NEG]))
    for E in list(range(-16, -9)) + [7, 8]:
        for i in range(1, 9):
            for side, m in (("below", MT[i - 1] - 1), ("above", MT[i - 1])):
                b = ((E + 127) << 23) | m
                cases.append(enc_case("enc/thresh-E%d-i%d-%s-pe%d" % (E, i, side, E),
                                      "threshold at exponent %d moved into range by prescale_e = %d" % (E, E),
                                      [b, b | NEG], prescale=E))
    # 2. half_min boundary at several pre-scales
    for e in (-20, -9, -7, -1, 0, 1, 2, 5, 12, 40):
        # smallest fp32 v0 with v0 * 2^-e >= 2^(-81/8), i.e. v0^8 >= 2^(8e-81)
        lo, hi = 0x00800000, 0x7F7FFFFF
        thr = Fraction(2) ** (8 * e - 81)
        while lo < hi:
            mid = (lo + hi) // 2
            if f32_val(mid) ** 8 >= thr:
                hi = mid
            else:
                lo = mid + 1
        v0 = lo
        bits = [v0 - 1, v0, v0 + 1, (v0 - 1) | NEG, v0 | NEG, (v0 + 1) | NEG]
        c = enc_case("enc/half-min-pe%d" % e, "1 ulp around 2^(-81/8)*2^e (half_min underflow), e = %d" % e,
                     bits, prescale=e)
        assert c["expect"]["codes"] == [0, 1, 1, 0, 129, 129], c["expect"]
        cases.append(c)
    # largest value of k_unc = 0 vs. smallest of k_unc = 1 (both code 1), and deep underflow
    b0, b1 = first_bits_with_ku(1) - 1, first_bits_with_ku(1)
    cases.append(enc_case("enc/kunc-0-1", "k_unclamped 0 (half_min -> 1) vs 1, and k_unclamped -8..-6 area",
                          [b0, b1, b0 | NEG, b1 | NEG, first_bits_with_ku(-7), first_bits_with_ku(-7) - 1,
                           first_bits_with_ku(-6), first_bits_with_ku(-8)]))
    # 3. saturation edges
    b126 = first_bits_with_ku(127) - 1
    b127 = first_bits_with_ku(127)
    b128 = first_bits_with_ku(128)
    sat = [b126, b127, b128 - 1, b128, dbl_bits(103.0), dbl_bits(103.07), dbl_bits(103.08), dbl_bits(1e9),
           0x7F7FFFFF, dbl_bits(94.5), dbl_bits(94.6)]
    cases.append(enc_case("enc/saturation-edge", "largest value encoding to 126, smallest to 127, 103.07 area, large",
                          sat + [b | NEG for b in sat]))
    for e in (-3, 3, -12):
        sb = [first_bits_with_ku(127 + 8 * e) - 1, first_bits_with_ku(127 + 8 * e),
              first_bits_with_ku(128 + 8 * e) - 1, first_bits_with_ku(128 + 8 * e), 0x7F7FFFFF]
        cases.append(enc_case("enc/saturation-edge-pe%d" % e, "126/127 and 127/128 boundaries with prescale_e = %d" % e,
                              sb + [b | NEG for b in sb], prescale=e))
    for e in (0, 5, -5, 100, -100):
        cases.append(enc_case("enc/inf-pe%d" % e, "+-Inf saturate to 127 with their sign (prescale_e = %d)" % e,
                              [0x7F800000, 0xFF800000, 0x3F800000], prescale=e))
    # 4. subnormals and zeros
    sub = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80123456]
    for e in (0, -20, -130, -200, 7):
        cases.append(enc_case("enc/subnormal-zero-pe%d" % e, "+-0 and fp32 subnormals -> 0x00 whatever the pre-scale; "
                              "min normal alongside" , sub + [0x00800000, 0x80800000], prescale=e))
    # 5. explicit prescale cases
    for idx, e in enumerate([-20, -16, -9, -4, -2, -1, 1, 2, 3, 4, 6, 9, 13, 20, -60, 60]):
        scale = 2.0 ** (e + rng.uniform(-2, 2))
        bits = [f32_bits(gauss32(rng, scale)) for _ in range(32)]
        cases.append(enc_case("enc/prescale-%02d-pe%d" % (idx, e), "Gaussian x%.3g with explicit prescale_e" % scale,
                              bits, prescale=e))
    # all codes round trip
    rt = [f32_bits(f32_of_dec(lns8_value_dec(k))) for k in range(1, 128)]
    c = enc_case("enc/all-codes-roundtrip", "fp32(2^((k-74)/8)) for k = 1..127 encodes back to k",
                 rt + [b | NEG for b in rt])
    assert c["expect"]["codes"] == list(range(1, 128)) + list(range(129, 256))
    cases.append(c)
    for e in (3, -2):
        rte = [f32_bits(f32(f32_val(b) * Fraction(2) ** e)) for b in rt]
        c = enc_case("enc/all-codes-roundtrip-pe%d" % e, "2^e * fp32(2^((k-74)/8)) with prescale_e = e", rte, prescale=e)
        assert c["expect"]["codes"] == list(range(1, 128))
        cases.append(c)
    # random Gaussian vectors at e = 0
    for idx in range(6):
        bits = [f32_bits(gauss32(rng, [0.01, 0.1, 1.0, 3.0, 10.0, 30.0][idx])) for _ in range(128)]
        cases.append(enc_case("enc/gauss-%d" % idx, "128 Gaussian values, prescale 0", bits))
    # 6. automatic pre-scale
    for s in range(-40, 41, 5):
        n = 16 + (s + 40) % 48
        bits = []
        for _ in range(n):
            v = f32_from_double(rng.gauss(0, 1) * 10.0 ** (s + rng.uniform(-0.5, 0.5)))
            if v in (INF, -INF):
                v = Fraction(0)
            bits.append(f32_bits(v))
        cases.append(enc_case("enc/auto-mag-1e%d" % s, "automatic pre-scale, Gaussian at magnitude ~1e%d" % s,
                              bits, auto=True))
    for idx in range(6):
        bits = []
        for _ in range(64):
            v = f32_from_double(math.copysign(10.0 ** rng.uniform(-12, 8), rng.random() - 0.5))
            bits.append(f32_bits(v))
        cases.append(enc_case("enc/auto-multidecade-%d" % idx, "automatic pre-scale, magnitudes 1e-12..1e8", bits,
                              auto=True))
    cases.append(enc_case("enc/auto-only-subnormal", "only subnormals and zeros: e = 0, all 0x00", sub, auto=True))
    cases.append(enc_case("enc/auto-only-zero", "only +-0: e = 0", [0, NEG, 0, 0], auto=True))
    cases.append(enc_case("enc/auto-subnormal-ignored", "subnormals ignored for absmax; tiny normal sets e",
                          [0x007FFFFF, 0x00800000, 0x80000001, 0x00C00000], auto=True))
    for K in (128, 127, 120, 119, 136, 135, 112, 111, 1, 0, -7, -8, 200, 201, 1000):
        for which, b in (("first", first_bits_with_ku(K)), ("last", first_bits_with_ku(K) - 1)):
            kk = K if which == "first" else K - 1
            others = [f32_bits(f32(f32_val(b) * Fraction(rng.randint(1, 1000), 1001))) for _ in range(5)]
            sgn = NEG if (K + len(which)) % 2 else 0
            bits = [b | sgn] + [o | (NEG if rng.random() < 0.5 else 0) for o in others]
            rng.shuffle(bits)
            c = enc_case("enc/auto-absmax-ku%d-%s" % (K, which),
                         "absmax exactly at the %s fp32 with k_unclamped = %d" % ("smallest" if which == "first" else
                                                                                   "largest", kk), bits, auto=True)
            assert c["expect"]["prescale_e"] == -((127 - kk) // 8)
            cases.append(c)
    cases.append(enc_case("enc/auto-flt-max", "absmax FLT_MAX", [0x7F7FFFFF, 0x3F800000, 0xFF000000], auto=True))
    cases.append(enc_case("enc/auto-min-normal", "absmax = min normal 2^-126 (large negative e)",
                          [0x00800000, 0x80800000, 0x00000005], auto=True))
    cases.append(enc_case("enc/auto-negative-absmax", "absmax is negative", [dbl_bits(-500.0), dbl_bits(3.0),
                                                                               dbl_bits(0.25)], auto=True))
    # 7. errors
    nan = 0x7FC00000
    cases.append(enc_case("enc/err-nan", "plain NaN", [nan]))
    cases.append(enc_case("enc/err-nan-among-normal", "NaN among normal values", [0x3F800000, nan, 0x40000000]))
    cases.append(enc_case("enc/err-neg-nan", "negative quiet NaN", [0x3F800000, 0xFFC00000]))
    cases.append(enc_case("enc/err-snan", "signalling NaN bit pattern", [0x7F800001, 0x3F800000]))
    cases.append(enc_case("enc/err-nan-prescale", "NaN with explicit prescale_e", [0x3F800000, 0x7FFFFFFF],
                          prescale=3))
    cases.append(enc_case("enc/err-nan-auto", "NaN with auto_prescale", [0x3F800000, nan, 0x42C80000], auto=True))
    cases.append(enc_case("enc/err-nan-inf-auto", "NaN and Inf with auto_prescale", [0x7F800000, nan], auto=True))
    cases.append(enc_case("enc/err-inf-auto", "+Inf with auto_prescale: infinite absmax", [0x3F800000, 0x7F800000],
                          auto=True))
    cases.append(enc_case("enc/err-neginf-auto", "-Inf alone with auto_prescale", [0xFF800000], auto=True))
    cases.append(enc_case("enc/err-inf-subnormal-auto", "Inf among subnormals with auto_prescale",
                          [0x00000001, 0xFF800000, 0], auto=True))
    for c in cases[-10:]:
        assert c["expect"] == {"error": True}
    # 8. spec section 7 edge cases
    edge = [1.044, 1.045, 103.0, -1e9, 0.0012, 0.0009, 0.0008, 1e-30]
    c = enc_case("enc/spec-edge-cases", "spec/lns8.md section 7 encoding edge cases", [dbl_bits(v) for v in edge])
    assert c["expect"]["codes"] == [0x4A, 0x4B, 0x7F, 0xFF, 0x01, 0x01, 0x00, 0x00]
    cases.append(c)
    c = enc_case("enc/spec-prescale-example", "spec/lns8.md section 7 pre-scale example",
                 [dbl_bits(v) for v in (1000.0, -3.0, 0.01, 0.0, 62.0)], auto=True)
    assert c["expect"] == {"codes": [0x7A, 0xB7, 0x00, 0x00, 0x5A], "prescale_e": 4}
    cases.append(c)
    ex1 = [1.0, -2.0, 0.5, 1.09, 0.0, 3.0, -0.75, 10.0]
    c = enc_case("enc/spec-example1", "spec/lns8.md section 7 example 1 bytes", [dbl_bits(v) for v in ex1])
    assert c["expect"]["codes"] == [0x4A, 0xD2, 0x42, 0x4B, 0x00, 0x57, 0xC7, 0x65]
    cases.append(c)
    ex2 = [1.0, -1.0, 1.25, 1.5, 1.54, -4.0, 0.3, 7.0]
    c = enc_case("enc/spec-example2", "spec/lns8.md section 7 example 2 codes", [dbl_bits(v) for v in ex2])
    assert [x & 127 for x in c["expect"]["codes"]] == [74, 74, 77, 79, 79, 90, 60, 96]
    cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------------
def lanes_for_A(rng, A, pad_to=None):
    """Lanes (codes, t) whose direct-path accumulators equal A."""
    lanes = []
    for p in range(8):
        n = abs(A[p])
        sg = 1 if A[p] > 0 else -1
        while n:
            q = min(15, n.bit_length() - 1)
            if p == 0 and q == 0:
                raise ValueError("A[0] must be even")
            k = 8 * q + p
            if rng.random() < 0.5:
                lanes.append((k, sg))
            else:
                lanes.append((k | 0x80, -sg))
            n -= 1 << q
    if pad_to:
        while len(lanes) < pad_to:
            r = rng.random()
            if r < 0.4:
                lanes.append((rng.randint(0, 255), 0))
            elif r < 0.7:
                lanes.append((rng.choice([0, 0x80]), rng.choice([-1, 1])))
            else:
                # a cancelling pair
                if len(lanes) + 2 > pad_to:
                    lanes.append((0, 0))
                    continue
                k = rng.randint(1, 127)
                lanes.append((k, 1))
                lanes.append((k, -1) if rng.random() < 0.5 else (k | 0x80, 1))
    if len(lanes) > 128:
        raise ValueError("more than 128 lanes needed")
    rng.shuffle(lanes)
    codes = [l[0] for l in lanes]
    t = [l[1] for l in lanes]
    assert group_A_C(codes, t)[0] == list(A)
    return codes, t


def group_case(cid, note, codes, t, dbits, e=0, F=8, b=12, with_C=True):
    c = {"id": cid, "kind": "group", "note": note, "codes": list(codes), "t": list(t), "d_f16_bits": dbits}
    if e:
        c["prescale_e"] = e
    c["expect"] = group_expect(codes, t, dbits, e, F, b, with_C)
    return c


def random_group(rng, n=128, sigma=1.0, pzero=1 / 3):
    xs = [f32_bits(gauss32(rng, sigma)) for _ in range(n)]
    codes, e = encode_vector(xs, None)
    t = rand_trits(rng, n, pzero)
    return codes, t, e


def find_cancel_A(rng, F, b, limit):
    """An A vector whose fLNS tree has an equal-Lambda opposite-sign cancellation (searched deterministically)."""
    one = 1 << F
    for (p0, p1) in ((2, 3), (4, 5), (6, 7), (0, 1), (1, 2), (3, 4), (5, 6), (0, 7)):
        table = {}
        for n in range(1, limit):
            if p1 == 0 and n & 1:
                continue
            A = [0] * 8
            A[p1] = n
            r = flns_root(A, F, b)
            table.setdefault(r["lambda_fix"], n)
        for n in range(1, limit):
            if p0 == 0 and n & 1:
                continue
            A = [0] * 8
            A[p0] = n
            L = flns_root(A, F, b)["lambda_fix"]
            if L in table:
                A[p1] = -table[L]
                ev = set()
                flns_root(A, F, b, ev)
                if "cancel" in ev:
                    return A
    return None


def gen_group(rng):
    cases = []
    # worked examples
    ex1_codes = [0x4A, 0xD2, 0x42, 0x4B, 0x00, 0x57, 0xC7, 0x65]
    ex1_t = [1, 1, -1, 1, 1, -1, 0, 1]
    ex2_codes = [74, 202, 77, 79, 79, 218, 60, 96]
    ex2_t = [1, 1, 1, -1, 1, 1, -1, 1]
    c1 = group_case("group/example1", "spec/lns8.md section 7 example 1 (d_g = 0.5)", ex1_codes, ex1_t, 0x3800, F=8, b=8)
    c2 = group_case("group/example2", "spec/lns8.md section 7 example 2 (cancellation; d_g = 0.25)", ex2_codes, ex2_t,
                    0x3400, F=8, b=8)
    assert c1["expect"]["A"] == [0, 0, -768, 512, 0, 4096, 0, -1024] and c1["expect"]["q15_16"] == 225470
    assert c1["expect"]["flns"]["lambda_fix"] == 24643
    assert c2["expect"]["A"] == [4096, 0, -2048, 0, -128, 512, 0, 0] and c2["expect"]["q15_16"] == 61058
    assert c2["expect"]["flns"]["lambda_fix"] == 22831
    cases += [c1, c2]
    # example 1 at every (F, b)
    for F in range(9):
        for b in (4, 8, 12, 16):
            if (F, b) == (8, 8):
                continue
            cases.append(group_case("group/example1-F%d-b%d" % (F, b), "example 1 group, fLNS F = %d, b = %d" % (F, b),
                                    ex1_codes, ex1_t, 0x3800, F=F, b=b))
    # random n = 128 groups at every (F, b)
    for F in range(9):
        for b in (4, 8, 12, 16):
            for r in range(2):
                codes, t, e = random_group(rng)
                dbits = rand_f16_normal(rng, 0.002, 2.0)
                cases.append(group_case("group/rand128-F%d-b%d-%d" % (F, b, r),
                                        "Gaussian activations (auto pre-scale), random trits, fLNS F = %d, b = %d" % (F, b),
                                        codes, t, dbits, e, F, b))
    # random n < 128
    for n in (1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, 127):
        codes, t, e = random_group(rng, n)
        F = rng.randint(0, 8)
        b = rng.choice([4, 8, 12, 16])
        cases.append(group_case("group/rand-n%d" % n, "n = %d lanes (lanes beyond n are zero)" % n, codes, t,
                                rand_f16_normal(rng, 0.01, 1.0), e, F, b))
    # sparse activations / dense weights, wide activations
    for idx in range(4):
        xs = [f32_bits(gauss32(rng) if rng.random() < 0.3 else Fraction(0)) for _ in range(128)]
        codes, e = encode_vector(xs, None)
        t = rand_trits(rng, 128, 0.05)
        cases.append(group_case("group/sparse-act-%d" % idx, "70% zero activations (code 0x00 lanes skipped)", codes, t,
                                rand_f16_normal(rng, 0.01, 1.0), e, 8, 12))
    for idx in range(4):
        xs = [f32_bits(f32_from_double(math.copysign(10.0 ** rng.uniform(-4, 4), rng.random() - 0.5)))
              for _ in range(128)]
        codes, e = encode_vector(xs, None)
        t = rand_trits(rng, 128)
        cases.append(group_case("group/multidecade-%d" % idx, "activations over 8 decades (many codes 0/1, saturation)",
                                codes, t, rand_f16_normal(rng, 0.01, 1.0), e, 8, 12))
    # adversarial
    cases.append(group_case("group/all-127-pos", "all lanes code 127, t = +1: A[7] = 2^22", [127] * 128, [1] * 128,
                            0x3C00))
    cases.append(group_case("group/all-255-pos", "all lanes code 255, t = +1: A[7] = -2^22", [255] * 128, [1] * 128,
                            0x3C00))
    cases.append(group_case("group/all-127-neg", "all lanes code 127, t = -1", [127] * 128, [-1] * 128, 0x3C00, F=0,
                            b=4))
    cases.append(group_case("group/all-127-d60000-e10", "|A| = 2^22 with d_g = 60000 and prescale 10 (largest Q15.16)",
                            [127] * 128, [1] * 128, 0x7B53, 10))
    cases.append(group_case("group/all-255-dmax-e10", "|A| = 2^22 with d_g = 65504 and prescale 10",
                            [255] * 128, [1] * 128, 0x7BFF, 10, 8, 16))
    cases.append(group_case("group/all-127-dneg-e-10", "|A| = 2^22 with d_g = -65504 and prescale -10",
                            [127] * 128, [1] * 128, 0xFBFF, -10, 3, 8))
    cases.append(group_case("group/all-127-alternating", "code 127, alternating t: exact cancellation to A = 0",
                            [127] * 128, [1, -1] * 64, 0x3C00))
    cases.append(group_case("group/all-127-half-zero-t", "code 127, t = 0 on half the lanes", [127] * 128,
                            [1, 0] * 64, 0x3C00, F=8, b=16))
    cases.append(group_case("group/all-0x80", "all lanes 0x80 (negative zero code): skipped, A = 0",
                            [0x80] * 128, rand_trits(rng, 128, 0.0), 0x3C00))
    cases.append(group_case("group/all-0x00", "all lanes 0x00", [0] * 128, rand_trits(rng, 128, 0.0), 0x3C00))
    codes = [rng.randint(0, 255) for _ in range(128)]
    cases.append(group_case("group/all-zero-weights", "all t = 0, random codes", codes, [0] * 128, 0x3C00))
    for d in (0x0000, 0x8000):
        codes, t, e = random_group(rng)
        cases.append(group_case("group/d-zero-%04x" % d, "d_g = %s0: G = 0 (fLNS sign is before d_g)" %
                                ("-" if d else "+"), codes, t, d, e))
    for idx in range(4):
        # alternating signs within some phases, other phases left nonzero
        lanes = []
        live = rng.sample(range(8), 3)
        for p in range(8):
            for _ in range(rng.randint(2, 6)):
                q = rng.randint(0 if p else 1, 15)
                k = 8 * q + p
                lanes.append((k, 1))
                lanes.append((k | 0x80, 1) if rng.random() < 0.5 else (k, -1))
            if p in live:
                q = rng.randint(0 if p else 1, 15)
                lanes.append((8 * q + p, rng.choice([-1, 1])))
        rng.shuffle(lanes)
        lanes = lanes[:128]
        codes = [l[0] for l in lanes]
        t = [l[1] for l in lanes]
        F, b = rng.randint(0, 8), rng.choice([4, 8, 12, 16])
        cases.append(group_case("group/cancel-pairs-%d" % idx, "opposite-sign pairs cancel exactly in most phases",
                                codes, t, rand_f16_normal(rng, 0.01, 1.0), 0, F, b))
    for code in (1, 2, 8, 74, 127, 129, 255, 0x80, 0, 0xCA):
        for tv in (1, -1):
            cases.append(group_case("group/single-%d-t%d" % (code, tv), "single lane, code %d, t = %d" % (code, tv),
                                    [code], [tv], 0x3C00, 0, rng.randint(0, 8), rng.choice([4, 8, 12, 16])))
    cases.append(group_case("group/single-74-t0", "single lane, t = 0", [74], [0], 0x3C00))
    for e in range(-10, 11):
        codes, t, _ = random_group(rng)
        cases.append(group_case("group/prescale%+d" % e, "random group with prescale_e = %d" % e, codes, t,
                                rand_f16_normal(rng, 0.005, 0.5), e, rng.randint(0, 8), rng.choice([4, 8, 12, 16])))
    for d in (0x0001, 0x0155, 0x03FF, 0x8001, 0x8200):
        codes, t, e = random_group(rng)
        cases.append(group_case("group/d-subnormal-%04x" % d, "d_g an fp16 subnormal", codes, t, d, e))
    for d in (0x7B53, 0xFB53, 0x7BFF, 0x7000):
        codes, t, e = random_group(rng)
        cases.append(group_case("group/d-large-%04x" % d, "large d_g (Q15.16 bound 1 + |d_g 2^e|/8)", codes, t, d, e))
    for d in (0xB800, 0xBC00, 0xA266, 0xC500):
        codes, t, e = random_group(rng)
        cases.append(group_case("group/d-negative-%04x" % d, "negative d_g", codes, t, d, e))
    # Q15.16 exact ties: only phase 2 nonzero, 2^16 G = x.5
    ties = [
        (1, 0x1C00, 0),    # d = 2^-8: 2^16 * 2^-8 * A / 512 = A/2
        (3, 0x1C00, 0),
        (5, 0x1C00, 0),
        (-1, 0x1C00, 0),
        (-3, 0x1C00, 0),
        (-5, 0x1C00, 0),
        (7, 0x2C00, -4),   # d = 2^-4, e = -4
        (-9, 0x2C00, -4),
        (4, 0x1200, 0),    # d = 3*2^-10 (0x1200 = 1.5*2^-9): 2^16*1.5*2^-9*4/512 = 1.5
        (12, 0x1200, 0),   # 4.5
        (-20, 0x1200, 0),  # -7.5
        (1, 0x0400, 10),   # d = 2^-14, e = 10: 2^(16-14+10-9) = 2^3 * A... not a tie (checked below)
        (4097, 0x1C00, 0),
        (-32767, 0x1C00, 0),
        (3, 0x8001 | 0x1000, 0),
    ]
    for idx, (a2, d, e) in enumerate(ties):
        A = [0, 0, a2, 0, 0, 0, 0, 0]
        codes, t = lanes_for_A(rng, A, pad_to=rng.choice([None, 40, 128]))
        dv = f16_val(d)
        v = dv * Fraction(2) ** (e + 16) * a2 / 512
        tie = v.denominator == 2
        cases.append(group_case("group/q15-tie-%02d" % idx, ("Q15.16 exact tie %s (round half even)" % v) if tie else
                                "phase 2 only, exact rational Q15.16 (%s)" % v, codes, t, d, e, 8, 12))
    # fLNS special paths
    for (F, b) in ((0, 4), (0, 8), (2, 4), (4, 8), (8, 8), (8, 12), (5, 16)):
        # renormalization c == 2^b
        for idx, z in enumerate((1, 3, 6)):
            n = (1 << (b + z)) - (1 << (z - 1))   # (n + 2^(z-1)) >> z == 2^b
            if n > (1 << 22):
                continue
            p = rng.randint(1, 7)
            A = [0] * 8
            A[p] = n if rng.random() < 0.5 else -n
            A[(p + 3) % 8] = 2 * rng.randint(1, 300)
            ev = set()
            flns_root(A, F, b, ev)
            assert "renorm" in ev
            try:
                codes, t = lanes_for_A(rng, A, pad_to=128)
            except ValueError:
                continue
            cases.append(group_case("group/flns-renorm-F%d-b%d-%d" % (F, b, idx),
                                    "count rounds up to 2^b: c = 2^(b-1), z + 1", codes, t, 0x3C00, 0, F, b))
        # equal-Lambda opposite-sign cancellation
        A = find_cancel_A(rng, F, b, 1 << min(b + 2, 12))
        if A is not None:
            codes, t = lanes_for_A(rng, A, pad_to=96)
            c = group_case("group/flns-cancel-F%d-b%d" % (F, b), "equal Lambda, opposite signs: absent root",
                           codes, t, 0x3C00, 0, F, b)
            assert c["expect"]["flns"]["sign"] == 0
            cases.append(c)
            A2 = list(A)
            A2[(A.index(next(x for x in A if x)) + 4) % 8] = 2 * rng.randint(1, 100)
            ev = set()
            flns_root(A2, F, b, ev)
            assert "cancel" in ev
            codes, t = lanes_for_A(rng, A2, pad_to=128)
            cases.append(group_case("group/flns-cancel-partial-F%d-b%d" % (F, b),
                                    "two phases cancel to absent; another phase survives", codes, t, 0x3C00, 0, F, b))
        # kappa beyond the table (very different magnitudes)
        A = [2, 0, 0, 0, 0, 0, 0, 0]
        A[7] = -(100 << 15)
        ev = set()
        flns_root(A, F, b, ev)
        codes, t = lanes_for_A(rng, A, pad_to=128)
        cases.append(group_case("group/flns-spread-F%d-b%d" % (F, b), "huge magnitude spread (kappa 0 beyond the table)"
                                if "kappa0" in ev else "huge magnitude spread", codes, t, 0x3C00, 0, F, b))
    cases.append(group_case("group/flns-all-absent", "all A = 0 with nonzero lanes: absent root",
                            [74, 74, 0xCA, 0xCA, 0x80, 3, 127], [1, -1, 1, -1, 1, 0, 0], 0x3C00, 0, 8, 12))
    return cases


# ------------------------------------------------------------------------------------------------------
def pack_case(cid, note, t, dbits):
    blk = ptq_pack(t, dbits)
    return {"id": cid, "kind": "ptq1_0_pack", "note": note, "t": list(t), "d_f16_bits": dbits,
            "expect": {"block_hex": blk.hex()}}


def quant_case(cid, note, w):
    t, dbits = ptq_quantize(w)
    blk = ptq_pack(t, dbits)
    return {"id": cid, "kind": "ptq1_0_quantize", "note": note, "w": [num(x) for x in w],
            "expect": {"block_hex": blk.hex()}}


def gen_ptq(rng):
    cases = []
    tuples5 = [[(q // 3 ** (4 - i)) % 3 for i in range(5)] for q in range(243)]
    tuples4 = [[(q // 3 ** (3 - i)) % 3 for i in range(4)] for q in range(81)]
    dcycle = [0x3C00, 0x2E66, 0x0001, 0x7BFF, 0xBC00, 0x0000, 0x03FF, 0x1A3D, 0xC8E0]
    # walk: every qs byte position sees all 243 five-digit tuples, every qh position all 81 four-digit tuples
    for blk in range(243):
        t = [None] * 128
        for e in range(128):
            by, n = POS[e]
            if by < 24:
                tup = tuples5[(blk + 10 * by) % 243]
            else:
                tup = tuples4[(blk + 40 * (by - 24)) % 81]
            t[e] = tup[n] - 1
        bb = ptq_pack(t, 0x3C00)
        for by in range(24):
            assert bb[by] == byte_of_digits(tuples5[(blk + 10 * by) % 243])
        cases.append(pack_case("ptq/walk-%03d" % blk, "qs[m] holds tuple (%d + 10m) mod 243, qh[h] tuple (%d + 40h) mod 81"
                               % (blk, blk), t, dcycle[blk % len(dcycle)]))
    for v, name in ((-1, "all-minus1"), (0, "all-zero"), (1, "all-plus1")):
        cases.append(pack_case("ptq/" + name, "every weight %d" % v, [v] * 128, 0x3C00))
    # spec worked example: (-1,0,+1,+1,-1) -> digits (0,1,2,2,0) -> byte 54 at byte positions 0, 7, 15, 16, 23
    t = [0] * 128
    for m in (0, 7, 15, 16, 23):
        for n, v in enumerate((-1, 0, 1, 1, -1)):
            e = 16 * n + m if m < 16 else 80 + 8 * n + (m - 16)
            assert POS[e] == (m, n)
            t[e] = v
    blk = ptq_pack(t, 0x3C00)
    assert all(blk[m] == 54 for m in (0, 7, 15, 16, 23))
    cases.append(pack_case("ptq/spec-byte54", "spec worked example: digits (0,1,2,2,0) -> byte 54 (0x36) at qs[0,7,15,16,23]",
                           t, 0x3C00))
    # sequential-order trap: weights 0..4 set, rest zero
    t = [0] * 128
    for e, v in enumerate((-1, 0, 1, 1, -1)):
        t[e] = v
    cases.append(pack_case("ptq/order-trap-first5", "weights 0..4 = (-1,0,+1,+1,-1): lands in qs[0..4] digit 0", t, 0x3C00))
    t = [0] * 128
    for e in range(120, 128):
        t[e] = [-1, 1][e & 1]
    cases.append(pack_case("ptq/order-trap-qh", "only the 8 qh weights nonzero", t, 0x3C00))
    for e0 in (79, 80, 119, 120, 127):
        t = [0] * 128
        t[e0] = 1
        cases.append(pack_case("ptq/one-hot-%d" % e0, "single +1 at weight %d" % e0, t, 0x3C00))
    for idx in range(12):
        cases.append(pack_case("ptq/random-%02d" % idx, "random trits", rand_trits(rng, 128),
                               rand_f16_normal(rng, 1e-4, 100.0, neg=rng.random() < 0.3)))
    for d, name in ((0x3C00, "1.0"), (0x0001, "min subnormal"), (0x03FF, "max subnormal"), (0x7BFF, "65504"),
                    (0xBC00, "-1.0"), (0x8001, "-min subnormal"), (0x0000, "+0"), (0x8000, "-0"), (0x0400, "min normal"),
                    (0xFBFF, "-65504")):
        cases.append(pack_case("ptq/d-%04x" % d, "d pattern %s" % name, rand_trits(rng, 128), d))

    # ---- quantizer
    def g(sigma):
        return [gauss32(rng, sigma) for _ in range(128)]
    for sigma in (0.02, 0.001, 1.0, 37.5, 1e-4):
        cases.append(quant_case("ptq/q-gauss-%g" % sigma, "Gaussian weights, sigma = %g" % sigma, g(sigma)))
    for idx in range(3):
        w = [f32_from_double(rng.uniform(-1, 1) * 3 ** idx) for _ in range(128)]
        cases.append(quant_case("ptq/q-uniform-%d" % idx, "uniform weights", w))
    for idx, s in enumerate((0.05, 2.0)):
        cases.append(quant_case("ptq/q-laplace-%d" % idx, "Laplace weights", [laplace32(rng, s) for _ in range(128)]))
    cases.append(quant_case("ptq/q-zero", "all zeros: d = 0, id = 0, every t = 0", [Fraction(0)] * 128))
    c = quant_case("ptq/q-negzero", "all -0.0: amax = 0, d = 0x0000, every t = 0", [Fraction(0)] * 128)
    c["w"] = [-0.0] * 128
    cases.append(c)
    for i, v in ((0, 1.0), (77, -0.375), (127, 3.0e-3), (100, -70000.0)):
        w = [Fraction(0)] * 128
        w[i] = f32_from_double(v)
        cases.append(quant_case("ptq/q-one-nonzero-%d" % i, "one nonzero weight %g at %d" % (v, i), w))
    # exact halves: w = +-amax/2 exactly; outcome depends on fp32(w*id)
    found = {True: 0, False: 0}
    tries = 0
    while (found[True] < 3 or found[False] < 3) and tries < 10000:
        tries += 1
        amax = f32_from_double(rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-10, 10))
        idv = f32(1 / amax)
        half = amax / 2
        pr = f32(half * idv)
        key = pr >= Fraction(1, 2)
        if found[key] >= 3:
            continue
        found[key] += 1
        w = [f32_from_double(rng.uniform(-0.45, 0.45) * float(amax)) for _ in range(128)]
        w[0] = amax
        w[5] = half
        w[6] = -half
        w[50] = -amax
        cases.append(quant_case("ptq/q-half-%s-%d" % ("up" if key else "down", found[key]),
                                "w = +-amax/2 exactly; fp32(w*id) %s 0.5 -> %s" % ("==" if pr == Fraction(1, 2) else
                                                                                    (">" if key else "<"),
                                                                                    "+-1" if key else "0"), w))
    assert found[True] >= 1 and found[False] >= 1
    # product rounding matters: exact w/amax on one side of 1/2, fp32(w*id) on the other (or exactly 1/2)
    made = 0
    tries = 0
    while made < 10 and tries < 8000:
        tries += 1
        amax = f32_from_double(rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-20, 20))
        idv = f32(1 / amax)
        hb = f32_bits(amax / 2)
        picks = []
        for db in range(-6, 7):
            wv = f32_val(hb + db)
            pr = f32(wv * idv)
            exact_up = wv / amax >= Fraction(1, 2)
            dec_up = pr >= Fraction(1, 2)
            if exact_up != dec_up or pr == Fraction(1, 2):
                picks.append(wv)
        if not picks:
            continue
        made += 1
        w = [amax]
        for wv in picks:
            w += [wv, -wv]
        while len(w) < 128:
            w.append(f32_from_double(rng.uniform(-0.4, 0.4) * float(amax)))
        w = w[:128]
        rng.shuffle(w)
        cases.append(quant_case("ptq/q-product-rounding-%d" % made,
                                "%d weights near amax/2 whose fp32(w*id) decides differently from w/amax or is exactly 0.5"
                                % len(picks), w))
    assert made >= 3
    # tiny amax: fp16 subnormal d, underflow to 0, ties in the subnormal range
    for name, amax in (("sub", Fraction(3, 10 ** 6)), ("min-sub", Fraction(2) ** -24),
                       ("tie-to-zero", Fraction(2) ** -25), ("above-tie", f32_val(f32_bits(Fraction(2) ** -25) + 1)),
                       ("sub-tie-even", Fraction(3) * Fraction(2) ** -25), ("underflow", Fraction(1, 10 ** 8)),
                       ("fp32-tiny", Fraction(2) ** -120)):
        amax = f32(amax)
        w = [f32(amax * Fraction(rng.randint(-1000, 1000), 1000)) for _ in range(128)]
        w[rng.randrange(128)] = amax
        cases.append(quant_case("ptq/q-tiny-%s" % name, "tiny amax %.6g: fp16 d = 0x%04x" % (float(amax),
                                f16_bits(f16(amax))), w))
    # large amax, fp16 rounding ties and overflow to inf
    for name, amax in (("65504", 65504.0), ("65519", 65519.0), ("65520-inf", 65520.0), ("1e6-inf", 1e6),
                       ("tie-even-down", 1.0 + 2.0 ** -11), ("tie-even-up", 1.0 + 3 * 2.0 ** -11),
                       ("fp32-max", 3.4028234663852886e38)):
        amax = f32_from_double(amax)
        w = [f32(amax * Fraction(rng.randint(-1000, 1000), 1000)) for _ in range(128)]
        w[rng.randrange(128)] = -amax if rng.random() < 0.5 else amax
        dbits = f16_bits(f16(amax))
        cases.append(quant_case("ptq/q-large-%s" % name, "amax %r: fp16 d = 0x%04x%s" % (float(amax), dbits,
                                " (overflow: d = +inf, kept as the spec's RNE fp16 conversion gives it)"
                                if dbits == 0x7C00 else ""), w))
    # subnormal and negative-zero weights next to a normal amax
    w = [f32_val(rng.randint(1, 0x7FFFFF)) * (1 if rng.random() < 0.5 else -1) for _ in range(128)]
    w[3] = Fraction(1, 4)
    cases.append(quant_case("ptq/q-subnormal-weights", "fp32 subnormal weights with amax 0.25 (all quantize to 0)", w))
    w = [gauss32(rng, 0.1) for _ in range(128)]
    cases.append(quant_case("ptq/q-negative-amax", "largest magnitude is negative", w[:10] + [f32_from_double(-5.0)] +
                            w[11:]))
    return cases


# ------------------------------------------------------------------------------------------------------
def gen_matvec(rng):
    cases = []
    dists = ["gauss", "laplace", "student3", "outliers", "sparse", "multidecade", "tiny", "q8-ties"]
    Ks = [128, 256, 384, 1024, 2048, 5120]
    idx = 0
    for K in Ks:
        for dist in dists:
            if dist in ("tiny", "q8-ties") and K not in (256, 2048):
                continue
            N = 1 + idx % 8
            idx += 1
            # activations
            if dist == "gauss":
                xs = [gauss32(rng) for _ in range(K)]
                note = "post-RMSNorm-like Gaussian activations (unit variance)"
            elif dist == "laplace":
                xs = [laplace32(rng) for _ in range(K)]
                note = "Laplace activations (unit variance)"
            elif dist == "student3":
                xs = [student3_32(rng) for _ in range(K)]
                note = "Student-t(3) activations"
            elif dist == "outliers":
                xs = [gauss32(rng) for _ in range(K)]
                for _ in range(max(2, K // 256)):
                    j = rng.randrange(K)
                    xs[j] = f32_from_double(rng.choice([-1, 1]) * rng.uniform(30, 300))
                note = "Gaussian with outlier channels (x30..x300)"
            elif dist == "sparse":
                xs = [gauss32(rng) if rng.random() < 0.25 else Fraction(0) for _ in range(K)]
                note = "sparse activations (75% exact zeros)"
            elif dist == "multidecade":
                xs = [f32_from_double(math.copysign(10.0 ** rng.uniform(-4, 3), rng.random() - 0.5)) for _ in range(K)]
                note = "magnitudes over 7 decades (1e-4..1e3)"
            elif dist == "tiny":
                xs = [gauss32(rng, 1e-5) for _ in range(K)]
                note = "Gaussian x1e-5: Q8_0 scales are fp16 subnormals, large negative pre-scale"
            else:
                xs = []
                for blk in range(K // 32):
                    s = rng.randint(-12, 2)
                    amax = Fraction(127) * Fraction(2) ** s
                    vals = [amax if rng.random() < 0.5 else -amax]
                    for _ in range(31):
                        j = rng.randint(-127, 126)
                        vals.append((Fraction(j) + Fraction(1, 2)) * Fraction(2) ** s)
                    rng.shuffle(vals)
                    xs += vals
                note = "Q8_0 exact ties: id = 2^-s exactly and x*id = j + 1/2 (round half even)"
            # weights
            rows_t, rows_d = [], []
            mixed = dist in ("laplace", "sparse", "q8-ties") or K == 384
            for r in range(N):
                if mixed and r % 2 == 1:
                    t = rand_trits(rng, K)
                    ds = []
                    for g in range(K // 128):
                        u = rng.random()
                        if u < 0.25:
                            ds.append(rng.randint(1, 0x3FF))
                        elif u < 0.4:
                            ds.append(rand_f16_normal(rng, 0.001, 1.0, neg=True))
                        else:
                            ds.append(rand_f16_normal(rng, 0.001, 1.0))
                else:
                    sigma = rng.uniform(0.005, 0.05)
                    t, ds = [], []
                    for g in range(K // 128):
                        tb, db = ptq_quantize([gauss32(rng, sigma) for _ in range(128)])
                        t += tb
                        ds.append(db)
                rows_t.append(t)
                rows_d.append(ds)
            wh = pack_rows_hex(rows_t, rows_d, K)
            if mixed:
                note += "; odd rows: random trits and random fp16 scales (subnormal, negative)"
            c = {"id": "mv/K%d-N%d-%s" % (K, N, dist), "kind": "matvec", "note": note, "K": K, "N": N,
                 "weights_hex": wh, "x": [num(x) for x in xs]}
            c["expect"] = matvec_expect(K, N, rows_t, rows_d, xs, K <= 1024)
            cases.append(c)
    # Across the row-split thresholds of the CUDA kernels (docs/cuda-production.md: the fork's one-column SOA_ISUM
    # mat-vec takes a warp per row below 128 K-blocks, a 128-thread CTA per row from 128): 127, 128 and 136 K-blocks
    # (K = 17408: bonsai2-27b's ffn_down), with zero blocks (all-zero digits, d = 0 or not) and fp16 scale extremes
    # (largest normal, smallest subnormal, both signs) among quantizer-made blocks.
    extremes = [0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x0400]
    for K, N in ((16256, 2), (16384, 3), (17408, 2)):
        xs = [gauss32(rng) for _ in range(K)]
        rows_t, rows_d = [], []
        for r in range(N):
            t, ds = [], []
            for g in range(K // 128):
                if g % 11 == 5:
                    t += [0] * 128
                    ds.append(0 if g % 2 else rand_f16_normal(rng, 0.001, 1.0))
                elif g % 13 == 7:
                    t += rand_trits(rng, 128)
                    ds.append(extremes[(g // 13 + r) % len(extremes)])
                else:
                    tb, db = ptq_quantize([gauss32(rng, rng.uniform(0.005, 0.05)) for _ in range(128)])
                    t += tb
                    ds.append(db)
            rows_t.append(t)
            rows_d.append(ds)
        wh = pack_rows_hex(rows_t, rows_d, K)
        c = {"id": "mv/K%d-N%d-cuda-split" % (K, N), "kind": "matvec",
             "note": "K/128 = %d blocks, across the CUDA row-split threshold (128 blocks); Gaussian activations; zero "
                     "blocks and fp16 scale extremes (+-65504, +-2^-24, 2^-14) among quantizer-made blocks" % (K // 128),
             "K": K, "N": N, "weights_hex": wh, "x": [num(x) for x in xs]}
        c["expect"] = matvec_expect(K, N, rows_t, rows_d, xs, False)
        cases.append(c)
    return cases


# ======================================================================================================
# Output
# ======================================================================================================
FILES = [
    ("lns8_encode.json", "enc", gen_encode,
     "LNS8 encoder vectors (spec/lns8.md section 2): every mantissa threshold MT_i at exponents -16..8 (both sides, "
     "both signs, also moved into range by a pre-scale), half_min underflow 1 ulp around 2^(-81/8)*2^e, saturation "
     "edges, +-Inf, subnormals and zeros, explicit and automatic pre-scale (incl. absmax exactly at code boundaries), "
     "NaN / infinite-absmax errors, the section 7 edge cases."),
    ("ptq1_0.json", "ptq", gen_ptq,
     "PTQ1_0 block packing and the reference quantizer (spec/ptq1_0.md section 1): every qs byte position walks all 243 "
     "five-digit tuples and every qh position all 81 four-digit tuples, the byte-54 worked example, order traps, d "
     "patterns; quantizer on Gaussian / uniform / Laplace weights, exact halves, fp32 product-rounding cases, tiny and "
     "huge amax (fp16 subnormal, underflow to 0, overflow to +inf)."),
    ("group.json", "group", gen_group,
     "Ternary group vectors (spec/lns8.md sections 3-6): A, state counts C, exact group_sum (17 digits), correctly "
     "rounded Q15.16 (half even, ties decided exactly), fLNS root at every F in 0..8 and b in {4,8,12,16}; worked "
     "examples, random groups, adversarial groups (|A| = 2^22, 0x80 lanes, cancellation, single lanes, pre-scales "
     "-10..10, subnormal / large / negative d_g, Q15.16 ties, fLNS renormalization, equal-Lambda cancellation)."),
    ("matvec.json", "mv", gen_matvec,
     "PTQ1_0 matvec vectors: K in {128,256,384,1024,2048,5120}, N 1..8, plus K in {16256,16384,17408} across the CUDA "
     "row-split threshold (zero blocks, fp16 scale extremes), weights from the reference quantizer on "
     "Gaussian floats (plus random-trit rows with random fp16 scales), activations Gaussian / Laplace / Student-t(3) / "
     "outliers / sparse / multi-decade / tiny / Q8_0 exact ties. y_exact and y_lns8 exact (17 digits), y_q8_0 the x86 "
     "production Q8_0 quantizer with the fused fp32 sequence of spec/ptq1_0.md section 7, A only for K <= 1024."),
]


def render(desc, cases):
    head = json.dumps({"schema": SCHEMA, "description": desc})
    assert head.endswith("}")
    lines = [json.dumps(c, separators=(",", ":")) for c in cases]
    return head[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n"


def render_readme(counts, seed):
    out = ["# Test vectors (schema `hsdr-vectors/1`)", "",
           "Generated by `generate.py`, an independent, standard-library-only Python oracle written from",
           "shared/spec/lns8.md, shared/spec/ptq1_0.md and shared/spec/vectors.md (exact Fraction / Decimal arithmetic,",
           "no code of this repository). Do not edit the JSON files by hand.", "",
           "Regenerate / verify (from the repository root):", "",
           "    /usr/bin/python3 vectors/generate.py              # rewrite the files below",
           "    /usr/bin/python3 vectors/generate.py --check      # exit 1 if a committed file differs",
           "    /usr/bin/python3 vectors/generate.py --selftest   # recompute spec-examples.json expectations", "",
           "Seed: %d. `spec-examples.json` is an independently computed file (not written by generate.py)." % seed, "",
           "| file | kind | cases |", "|---|---|---|"]
    for fname, kc in counts:
        for kind in sorted(kc):
            out.append("| %s | %s | %d |" % (fname, kind, kc[kind]))
    out.append("")
    out.append("This README is itself written by generate.py (so `--check` also covers it).")
    out.append("")
    return "\n".join(out)


def build_all(seed, log=None):
    outputs = {}
    counts = []
    ids = set()
    for fname, tag, fn, desc in FILES:
        t0 = time.time()
        rng = random.Random("%d:%s" % (seed, tag))
        cases = fn(rng)
        kc = {}
        for c in cases:
            assert c["id"] not in ids, c["id"]
            assert c["id"].startswith(tag + "/")
            ids.add(c["id"])
            kc[c["kind"]] = kc.get(c["kind"], 0) + 1
        outputs[fname] = render(desc, cases)
        counts.append((fname, kc))
        if log:
            log("%-18s %4d cases %8d bytes  %.1f s" % (fname, len(cases), len(outputs[fname]), time.time() - t0))
    outputs["README.md"] = render_readme(counts, seed)
    return outputs


# ======================================================================================================
# Self-test: recompute spec-examples.json
# ======================================================================================================
def parse_f32(x):
    v = Fraction(x)
    r = f32(v)
    assert r == v, "JSON number is not an fp32 value: %r" % x
    return r


def recompute_case(c):
    kind = c["kind"]
    if kind == "lns8_encode":
        bits = c["x_bits"] if "x_bits" in c else [f32_bits(parse_f32(x), negzero=(x == 0 and math.copysign(1, x) < 0))
                                                   for x in c["x"]]
        auto = c.get("auto_prescale", False)
        try:
            codes, e = encode_vector(bits, None if auto else c.get("prescale_e", 0))
            ex = {"codes": codes}
            if auto:
                ex["prescale_e"] = e
        except EncodeError:
            ex = {"error": True}
        return ex
    if kind == "group":
        fl = c["expect"].get("flns")
        ex = group_expect(c["codes"], c["t"], c["d_f16_bits"], c.get("prescale_e", 0),
                          fl["F"] if fl else None, fl["b"] if fl else 12, "C" in c["expect"])
        return ex
    if kind == "ptq1_0_pack":
        return {"block_hex": ptq_pack(c["t"], c["d_f16_bits"]).hex()}
    if kind == "ptq1_0_quantize":
        t, d = ptq_quantize([parse_f32(x) for x in c["w"]])
        return {"block_hex": ptq_pack(t, d).hex()}
    if kind == "matvec":
        K, N = c["K"], c["N"]
        blob = bytes.fromhex(c["weights_hex"])
        assert len(blob) == N * K // 128 * 28
        rows_t, rows_d = [], []
        for r in range(N):
            t, ds = [], []
            for g in range(K // 128):
                off = (r * (K // 128) + g) * 28
                tb, db = ptq_unpack(blob[off:off + 28])
                t += tb
                ds.append(db)
            rows_t.append(t)
            rows_d.append(ds)
        return matvec_expect(K, N, rows_t, rows_d, [parse_f32(x) for x in c["x"]], "A" in c["expect"])
    raise ValueError("unknown kind " + kind)


def internal_checks():
    # fp32 rounding against the platform's double->float conversion on random doubles
    r = random.Random(1)
    for _ in range(20000):
        x = (1.0 + r.getrandbits(52) / 2.0 ** 52) * 2.0 ** r.randint(-160, 130) * r.choice([-1.0, 1.0])
        if r.random() < 0.1:   # exact fp32 ties and near-ties
            x = (1.0 + (r.getrandbits(23) * 2 + 1) / 2.0 ** 24 + r.choice([0.0, 2.0 ** -52, -2.0 ** -52])) * \
                2.0 ** r.randint(-150, 127)
        try:
            y = struct.unpack("<f", struct.pack("<f", x))[0]
        except OverflowError:
            y = math.copysign(INF, x)
        v = f32(Fraction(x)) if x != 0 else Fraction(0)
        if y in (INF, -INF):
            assert v == y, x
        else:
            assert v == Fraction(y), x
    # fp16 corners
    for val, bits in ((65504, 0x7BFF), (65519, 0x7BFF), (65520, 0x7C00), (Fraction(2) ** -25, 0x0000),
                      (Fraction(2) ** -24, 0x0001), (Fraction(3) * Fraction(2) ** -25, 0x0002),
                      (1 + Fraction(1, 2048), 0x3C00), (1 + Fraction(3, 2048), 0x3C02), (60000, 0x7B53)):
        assert f16_bits(f16(Fraction(val))) == bits, (val, hex(f16_bits(f16(Fraction(val)))))
    # c_p table of the spec
    cps = cp_dec(60)
    spec = [1805811301, 1969251188, 2147483648, 2341847524, 2553802834, 2784941738, 3037000500, 3311872529]
    with localcontext() as ctx:
        ctx.prec = 60
        got = [int((c * (1 << 31)).to_integral_value(rounding=ROUND_HALF_EVEN)) for c in cps]
    assert got == spec, got


def selftest(path):
    internal_checks()
    with open(path) as f:
        doc = json.load(f)
    assert doc["schema"] == SCHEMA
    n = 0
    for c in doc["cases"]:
        got = recompute_case(c)
        if got != c["expect"]:
            print("selftest MISMATCH in %s:\n  file: %s\n  ours: %s" % (c["id"], c["expect"], got))
            return False
        n += 1
    print("selftest: %d cases of %s reproduced exactly; internal checks passed" % (n, os.path.basename(path)))
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", default=here)
    ap.add_argument("--check", action="store_true", help="regenerate in memory; exit 1 if a committed file differs")
    ap.add_argument("--selftest", action="store_true", help="recompute spec-examples.json's expect blocks")
    args = ap.parse_args()
    t0 = time.time()
    if args.selftest:
        ok = selftest(os.path.join(here, "spec-examples.json"))
        print("%.1f s" % (time.time() - t0))
        sys.exit(0 if ok else 1)
    outputs = build_all(args.seed, log=lambda s: print(s, file=sys.stderr))
    if args.check:
        bad = []
        for fname, text in outputs.items():
            p = os.path.join(args.out, fname)
            try:
                with open(p, "rb") as f:
                    cur = f.read()
            except OSError:
                cur = None
            if cur != text.encode("ascii"):
                bad.append(fname)
                print("DIFFERS: %s" % p)
        print("check: %s (%.1f s)" % ("FAILED" if bad else "all %d files identical" % len(outputs), time.time() - t0))
        sys.exit(1 if bad else 0)
    os.makedirs(args.out, exist_ok=True)
    for fname, text in outputs.items():
        p = os.path.join(args.out, fname)
        tmp = p + ".tmp%d" % os.getpid()
        with open(tmp, "wb") as f:
            f.write(text.encode("ascii"))
        os.replace(tmp, p)
    print("wrote %d files to %s (%.1f s)" % (len(outputs), args.out, time.time() - t0))


if __name__ == "__main__":
    main()
