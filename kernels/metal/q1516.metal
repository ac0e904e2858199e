// metal.q1516: the direct A[8] (hsdr_direct_group), then Q15.16 per group (spec/lns8.md section 6).
//   Idea     S = sum_p A[p] C31[p] in 64-bit integers (|S| <= 2^54), and Q_g = S d_g 2^(e + 16 - 31 - 9) rounded to
//            the nearest integer, ties to even, computed exactly with 128-bit integer arithmetic (Metal has no fp64
//            for the spec's reference formula); the row is sum_g Q_g in 64 bits, y = row 2^-16.
//   Layout   buffers of metal.h: W, ACT (the host's LNS8 codes), Y, AOUT (A), QG and QR (Q per group and per row, when
//            flags & Q); hsdr_params.
//   Stages   reduce (the kernel: decode, route, reduce, scale, materialize and merge fused; codes from the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:metal --filter 'variant=metal.q1516 *' (on a Mac
//            with HSDR_METAL; off Apple the CPU shim checks this source and times nothing)
// d_g is an fp16, m 2^x with an 11-bit integer m, so Q_g is |S| m (a 128-bit product, built from 32-bit halves)
// shifted by x + e - 24 with the rounding done on the bits: the correctly rounded value the spec's bound is measured
// from.
#include "hsdr_metal_common.h"

// |s| m as a 128-bit value (hi, lo), m < 2^11.
inline void hsdr_mul_u128(ulong s, uint m, thread ulong &hi, thread ulong &lo)
{
    const ulong lo_part = (s & ulong(0xffffffffu)) * m, hi_part = (s >> 32) * m; // < 2^43 each
    lo = lo_part + (hi_part << 32);
    hi = (hi_part >> 32) + (lo < lo_part ? ulong(1) : ulong(0));
}

// round((hi, lo) / 2^sh), ties to even, for 0 <= sh < 128 (the result below 2^63 in magnitude for real data).
inline ulong hsdr_shift_round(ulong hi, ulong lo, uint sh)
{
    if (sh == 0u)
        return lo;
    ulong q, rem_hi, rem_lo, half_hi, half_lo;
    if (sh < 64u) {
        q = (lo >> sh) | (hi << (64u - sh));
        rem_hi = ulong(0);
        rem_lo = lo & ((ulong(1) << sh) - ulong(1));
        half_hi = ulong(0);
        half_lo = ulong(1) << (sh - 1u);
    } else {
        q = sh == 64u ? hi : hi >> (sh - 64u);
        rem_hi = sh == 64u ? ulong(0) : hi & ((ulong(1) << (sh - 64u)) - ulong(1));
        rem_lo = lo;
        half_hi = sh == 64u ? ulong(0) : ulong(1) << (sh - 65u);
        half_lo = sh == 64u ? (ulong(1) << 63) : ulong(0);
    }
    const bool above = rem_hi > half_hi || (rem_hi == half_hi && rem_lo > half_lo);
    const bool tie = rem_hi == half_hi && rem_lo == half_lo;
    return above || (tie && (q & ulong(1)) != ulong(0)) ? q + ulong(1) : q;
}

// Q_g for A[8], the block's fp16 scale bits and the pre-scale e.
inline long hsdr_q1516_group(thread const int *A, ushort d_bits, int e)
{
    const uint C31[8] = {1805811301u, 1969251188u, 2147483648u, 2341847524u, 2553802834u, 2784941738u, 3037000500u,
                         3311872529u};
    long s = 0;
    for (int p = 0; p < 8; p++)
        s += long(A[p]) * long(C31[p]);
    // d = (-1)^sign m 2^x: normal fp16 m = 1024 + mantissa, x = exponent - 25; subnormal m = mantissa, x = -24
    const uint exp_bits = (d_bits >> 10) & 31u, mant = d_bits & 1023u;
    const bool neg = ((d_bits >> 15) != 0u) != (s < 0);
    const uint m = exp_bits == 0u ? mant : 1024u + mant;
    const int x = exp_bits == 0u ? -24 : int(exp_bits) - 25;
    if (m == 0u || s == 0)
        return 0;
    ulong hi, lo;
    hsdr_mul_u128(ulong(s < 0 ? -s : s), m, hi, lo);
    const int k = x + e + 16 - 31 - 9; // Q = |S| m 2^k
    ulong q;
    if (k >= 0)
        q = lo << uint(k); // only for scales far beyond the data's (|d 2^e| >= 2^24)
    else
        q = -k >= 128 ? ulong(0) : hsdr_shift_round(hi, lo, uint(-k));
    return neg ? -long(q) : long(q);
}

kernel void hsdr_q1516(HSDR_METAL_KERNEL_ARGS)
{
    const uint row = P.row0 + tgid * (HSDR_METAL_THREADS_ROWS / HSDR_METAL_SIMD) + sid;
    long qrow = 0;
    for (uint g = 0u; row < P.N && g < P.G; g++) { // uniform per simdgroup
        const uint base = (row * P.G + g) * 7u;
        int A[8];
        hsdr_direct_group(W, ACT, base, g, lane, A);
        if (lane == 0u) {
            if ((P.flags & HSDR_METAL_FLAG_A) != 0u)
                for (uint p = 0u; p < 8u; p++)
                    AOUT[(row * P.G + g) * 8u + p] = A[p];
            const long q = hsdr_q1516_group(A, ushort(W[base + 6u] >> 16), P.e);
            if ((P.flags & HSDR_METAL_FLAG_Q) != 0u)
                QG[row * P.G + g] = q;
            qrow += q;
        }
    }
    if (row < P.N && lane == 0u) {
        if ((P.flags & HSDR_METAL_FLAG_Q) != 0u)
            QR[row] = qrow;
        Y[row] = float(qrow) * ldexp(1.0f, -16);
    }
}
