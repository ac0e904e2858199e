/* cuda.production: the production PTQ1_0 generic mat-vec design on CUDA (spec/ptq1_0.md section 5).
 *
 * encode  one warp per 32 activations: amax by warp max, d = amax / 127, q = roundf(x / d) (IEEE division: no fast
 *         math), s = fp16(d * sum q): bit-identical to hsdr_q8_1_quantize.
 * matvec  one warp per row, one lane per 128-weight block (b = lane, lane + 32, ...). The block's seven 32-bit words
 *         are decoded four bytes at a time: the bytes are spread into 16-bit lanes, multiplied by 3 per digit step,
 *         and the digit is bits 8-9 of each lane; biased by -1 (__vsub4) they go into dp4a against the four int8
 *         activations of the same weights. Per block acc = fmaf chain over the four Q8_1 scales, p = fmaf(d_w, acc,
 *         p); then an xor-butterfly warp sum. Every float operation is an explicit intrinsic, so nvcc cannot contract
 *         or reorder anything: the sequence is hsdr_matvec_q8_1_warp's, bit for bit. */
#include <stdlib.h>

#include "common.cuh"

__global__ void hsdr_cu_quantize_q8_1(const float *x, int K, hsdr_cu_q8_1 *q)
{
    const int lane = threadIdx.x & 31;
    const int blk = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (blk >= K / 32) /* uniform per warp: K is a multiple of 32 */
        return;
    const float v = x[32 * blk + lane];
    float amax = fabsf(v);
    for (int o = 16; o >= 1; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(HSDR_FULL_MASK, amax, o)); /* max: exact in any order */
    const float d = __fdiv_rn(amax, 127.0f);
    const int qi = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));
    int sum = qi;
    for (int o = 16; o >= 1; o >>= 1)
        sum += __shfl_xor_sync(HSDR_FULL_MASK, sum, o); /* integers: exact */
    q[blk].qs[lane] = (int8_t)qi;
    if (lane == 0) {
        q[blk].d = __float2half_rn(d);
        q[blk].s = __float2half_rn(__fmul_rn(d, (float)sum));
    }
}

/* The four int8 activations of weights w..w+3 (w a multiple of 4, inside one 128-block) as one dp4a operand. */
__device__ __forceinline__ int act4(const hsdr_cu_q8_1 *a, int w)
{
    return *(const int *)(a[w >> 5].qs + (w & 31));
}

/* One step of the byte-pair decode: lanes hold bytes (b0, b2) and (b1, b3) of a word in 16-bit halves; multiply by 3
 * and take bits 8-9 of every half: the next base-3 digit of each byte, packed back in byte order, biased by -1. */
__device__ __forceinline__ int digit_step(uint32_t &even, uint32_t &odd)
{
    even *= 3u;
    odd *= 3u;
    const uint32_t dig = ((even >> 8) & 0x00030003u) | (odd & 0x03000300u);
    even &= 0x00ff00ffu;
    odd &= 0x00ff00ffu;
    return (int)__vsub4(dig, 0x01010101u);
}

/* isum[k] += the dot of one qs word's 4 x 5 weights with their activations. first: the weight of digit 0 of the
 * word's first byte; step: how far digit n + 1 is from digit n. */
__device__ __forceinline__ void qs_word(uint32_t word, int first, int step, const hsdr_cu_q8_1 *a, int isum[4])
{
    uint32_t even = word & 0x00ff00ffu, odd = (word >> 8) & 0x00ff00ffu;
#pragma unroll
    for (int n = 0; n < 5; n++) {
        const int w = first + step * n;
        isum[w >> 5] = __dp4a(digit_step(even, odd), act4(a, w), isum[w >> 5]);
    }
}

__global__ void hsdr_cu_production_rows(const uint8_t *W, const hsdr_cu_q8_1 *q, int K, int N, float *y)
{
    const int lane = threadIdx.x & 31;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= N) /* uniform per warp */
        return;
    const int G = K / 128;
    const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
    float p = 0.0f;
    for (int b = lane; b < G; b += 32) {
        const uint32_t *blk = (const uint32_t *)(wrow + (size_t)b * HSDR_PTQ1_0_BLOCK); /* 4-byte aligned */
        const hsdr_cu_q8_1 *a = q + 4 * b;
        int isum[4] = {0, 0, 0, 0};
        /* qs[0..15]: digit n of qs[m] is weight 16n + m */
#pragma unroll
        for (int j = 0; j < 4; j++)
            qs_word(__ldg(blk + j), 4 * j, 16, a, isum);
        /* qs[16..23]: digit n of qs[16 + m] is weight 80 + 8n + m */
#pragma unroll
        for (int j = 0; j < 2; j++)
            qs_word(__ldg(blk + 4 + j), 80 + 4 * j, 8, a, isum);
        /* qh[0..1] (4 digits each: digit n of qh[h] is weight 120 + 2n + h) and the fp16 scale */
        const uint32_t last = __ldg(blk + 6);
        uint32_t even = last & 0x000000ffu, odd = (last >> 8) & 0x000000ffu; /* qh0 in byte 0, qh1 in byte 1 */
        int dig[4];
#pragma unroll
        for (int n = 0; n < 4; n++) {
            even *= 3u, odd *= 3u;
            dig[n] = (int)(((even >> 8) & 3u) | ((odd & 0x300u))); /* bytes: qh0 digit n, qh1 digit n */
            even &= 0xffu, odd &= 0xffu;
        }
        const int lo = (int)__vsub4((uint32_t)(dig[0] | dig[1] << 16), 0x01010101u); /* weights 120..123 */
        const int hi = (int)__vsub4((uint32_t)(dig[2] | dig[3] << 16), 0x01010101u); /* weights 124..127 */
        isum[3] = __dp4a(lo, act4(a, 120), isum[3]);
        isum[3] = __dp4a(hi, act4(a, 124), isum[3]);
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; k++)
            acc = __fmaf_rn(__half2float(a[k].d), (float)isum[k], acc);
        const float dw = __half2float(__ushort_as_half((unsigned short)(last >> 16)));
        p = __fmaf_rn(dw, acc, p);
    }
    for (int o = 16; o >= 1; o >>= 1)
        p = __fadd_rn(p, __shfl_xor_sync(HSDR_FULL_MASK, p, o));
    if (lane == 0)
        y[row] = p;
}

/* Launch shapes: 8 warps per CTA; the encode has one warp per Q8_1 block, the mat-vec one warp per row. */
enum { WARPS_PER_CTA = 8 };

static unsigned ctas_for(long warps)
{
    return (unsigned)((warps + WARPS_PER_CTA - 1) / WARPS_PER_CTA);
}

static size_t act_bytes(int K)
{
    return sizeof(hsdr_cu_q8_1) * (size_t)(K / 32);
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    hsdr_cu_q8_1 *q = (hsdr_cu_q8_1 *)r->act;
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    if (stage >= 0) /* one stage alone */
        skip = stage == HSDR_STAGE_ENCODE ? red : enc, twice = 0;
    for (int i = 0; i < ((skip & enc) ? 0 : (twice & enc) ? 2 : 1); i++)
        hsdr_cu_quantize_q8_1<<<ctas_for(r->K / 32), 32 * WARPS_PER_CTA>>>(r->x, r->K, q);
    for (int i = 0; i < ((skip & red) ? 0 : (twice & red) ? 2 : 1); i++)
        hsdr_cu_production_rows<<<ctas_for(r->N), 32 * WARPS_PER_CTA>>>(W, q, r->K, r->N, r->y);
    return cudaGetLastError();
}

static const hsdr_cu_kernels kernels = {act_bytes, launch};
extern "C" const hsdr_device_ops hsdr_cuda_production_ops = HSDR_CU_OPS(kernels);
