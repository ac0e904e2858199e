// Shared by every .metal kernel, the Apple host and the CPU shim: the parameter block, the launch shapes, the one
// kernel signature (its [[buffer(i)]] attributes are the buffer indices, listed in metal.h), and small helpers.
// Compiles as MSL (Metal Shading Language, C++14-based) and as C/C++ (host and shim).
#ifndef HSDR_METAL_COMMON_H
#define HSDR_METAL_COMMON_H

#if defined(__METAL_VERSION__)
#include <metal_stdlib>
using namespace metal;
#endif
#if defined(__METAL_VERSION__) || defined(HSDR_METAL_SHIM)
#define HSDR_U32 uint
#define HSDR_I32 int
#else
#include <stdint.h>
#define HSDR_U32 uint32_t
#define HSDR_I32 int32_t
#endif

// Buffer 7: the parameters of one dispatch.
struct hsdr_params {
    HSDR_U32 K, N, G; // G = K / 128
    HSDR_I32 e;       // LNS8 pre-scale
    HSDR_U32 flags;   // HSDR_METAL_FLAG_*: which optional outputs to write
    HSDR_U32 R;       // rows that share one activation state set (stateset)
    HSDR_U32 row0;    // first row of this dispatch
};

#define HSDR_METAL_FLAG_A 1u // write A[8] per (row, group) into buffer 4
#define HSDR_METAL_FLAG_Q 2u // write Q15.16 per (row, group) and per row into buffers 5 and 6

// Launch shapes: threads per threadgroup, and rows per threadgroup (threadgroups = ceil(N / rows)).
// production, direct, q1516: four 32-lane simdgroups, a row each; stateset: one simdgroup, a tile of R rows.
#define HSDR_METAL_SIMD 32u
#define HSDR_METAL_THREADS_ROWS 128u
#define HSDR_METAL_THREADS_STATESET 32u
#define HSDR_METAL_MAX_R 256u // the largest tile of rows the stateset kernel takes

// ---- kernel-side helpers (MSL, and C++ under the shim) ----
#if defined(__METAL_VERSION__)
inline float hsdr_half_bits_to_float(ushort b)
{
    return float(as_type<half>(b));
}
#endif
#if defined(__METAL_VERSION__) || defined(HSDR_METAL_SHIM)

// The kernel signature every hsdr kernel shares (buffers 0..7 and the thread's position).
#define HSDR_METAL_KERNEL_ARGS                                                                                      \
    device const uint *W [[buffer(0)]], device const uchar *ACT [[buffer(1)]],                                     \
        device const float *SCALE [[buffer(2)]], device float *Y [[buffer(3)]], device int *AOUT [[buffer(4)]],    \
        device long *QG [[buffer(5)]], device long *QR [[buffer(6)]], constant hsdr_params &P [[buffer(7)]],         \
        uint tgid [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]],                       \
        uint lane [[thread_index_in_simdgroup]], uint sid [[simdgroup_index_in_threadgroup]]

// Byte i (0..27) of the PTQ1_0 block whose first word is W[base].
inline uint hsdr_ptq_byte(device const uint *W, uint base, uint i)
{
    return (W[base + (i >> 2)] >> (8u * (i & 3u))) & 0xffu;
}

// The block's fp32 scale (its fp16 d, bytes 26..27).
inline float hsdr_ptq_scale(device const uint *W, uint base)
{
    return hsdr_half_bits_to_float(ushort(W[base + 6u] >> 16));
}

// The ternary value (-1, 0, +1) of weight e (0..127) of the block at W[base] (spec/ptq1_0.md section 1).
inline int hsdr_ptq_trit(device const uint *W, uint base, uint e)
{
    uint b, n;
    if (e < 80u) {
        b = e & 15u;
        n = e >> 4;
    } else if (e < 120u) {
        b = 16u + ((e - 80u) & 7u);
        n = (e - 80u) >> 3;
    } else {
        b = 24u + ((e - 120u) & 1u);
        n = (e - 120u) >> 1;
    }
    const uint pow3 = n == 0u ? 1u : n == 1u ? 3u : n == 2u ? 9u : n == 3u ? 27u : 81u;
    const uint v = (hsdr_ptq_byte(W, base, b) * pow3) & 0xffu;
    return int((3u * v) >> 8) - 1;
}

// The signed contribution s t 2^q of a lane with code c and trit t to A[c & 7] (0 for k = 0 or t = 0).
inline int hsdr_lns8_term(uint c, int t)
{
    const uint k = c & 0x7fu;
    if (k == 0u || t == 0)
        return 0;
    const int v = 1 << (k >> 3);
    return ((c >> 7) != 0u) != (t < 0) ? -v : v;
}

// A[8] of group g of a row: the lanes' phase partials summed across the simdgroup (exact: |A[p]| <= 2^22).
inline void hsdr_direct_group(device const uint *W, device const uchar *ACT, uint base, uint g, uint lane,
                              thread int *A)
{
    int part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint i = lane; i < 128u; i += HSDR_METAL_SIMD) {
        const uint c = ACT[g * 128u + i];
        part[c & 7u] += hsdr_lns8_term(c, hsdr_ptq_trit(W, base, i));
    }
    for (int p = 0; p < 8; p++)
        A[p] = simd_sum(part[p]);
}

// c_p = 2^((p - 2) / 8) rounded to fp32 (Metal has no fp64; the fp32 group sums stay within the tolerance of
// spec/vectors.md: about 10 roundings of 2^-24 per group against the 2^-20 allowed).
inline float hsdr_lns8_cp(int p)
{
    const float c[8] = {0.840896415f, 0.917004043f, 1.0f, 1.090507733f, 1.189207115f, 1.296839555f, 1.414213562f,
                        1.542210825f};
    return c[p];
}

// G_g = 2^e (d / 512) sum_p A[p] c_p in fp32.
inline float hsdr_lns8_group(thread const int *A, float d, int e)
{
    float s = 0.0f;
    for (int p = 0; p < 8; p++)
        s = fma(float(A[p]), hsdr_lns8_cp(p), s);
    return s * d * ldexp(1.0f, e - 9);
}

// A float-float accumulator: (hi, lo) += v by TwoSum, so a row's sum over its groups adds no more than a couple of
// roundings however many groups there are.
inline void hsdr_ff_add(thread float &hi, thread float &lo, float v)
{
    const float s = hi + v, bb = s - hi, err = (hi - (s - bb)) + (v - bb);
    hi = s;
    lo += err;
}

#endif
#endif
