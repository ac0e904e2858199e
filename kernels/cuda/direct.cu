/* cuda.direct: the direct 8-phase LNS8 reduction, warp-level (the issue's design: lanes own lanes of a group).
 *
 * encode  one CTA: the automatic pre-scale (largest finite normal |x| by an integer max over bit patterns, then
 *         e = ceil((k(max) - 127) / 8)) and every code by the reference encoder's integer rules (exact mantissa
 *         thresholds, saturation, the half-min underflow rule): bit-identical to hsdr_lns8_encode.
 * matvec  one warp per row; for every 128-lane group lane j owns lanes 4j..4j+3: it decodes its four trits from the
 *         one PTQ1_0 word that holds them and adds s * t * 2^q of each nonzero lane into eight per-phase partials
 *         (int32, exact). The warp reduces the 8 x 32 partials with a reduce-scatter butterfly (offsets 16, 8, 4:
 *         halving the phases a lane keeps; then 2, 1), so lane l ends with A[p(l)] exactly; the group's value
 *         d * sum_p A[p] c_p is summed in fp64 over the phases and the groups; y = fp32 of 2^e / 512 times that:
 *         within 2^-20 sum |terms| of y_lns8 (spec/vectors.md's fp32 tolerance). */
#include <stdlib.h>

#include "common.cuh"

extern "C" {
#include "lns8.h"
#include "lns8_const.h"
}

__constant__ uint32_t c_mt[8]; /* the reference's mantissa thresholds (hsdr_lns8_mt), uploaded once */
__constant__ double c_cp[8];   /* c_p = 2^((p - 2) / 8), the reference's nearest doubles */

static cudaError_t upload_constants(void)
{
    static bool done;
    if (done)
        return cudaSuccess;
    cudaError_t e = cudaMemcpyToSymbol(c_mt, hsdr_lns8_mt, sizeof c_mt);
    if (e == cudaSuccess)
        e = cudaMemcpyToSymbol(c_cp, hsdr_lns8_cp_hi, sizeof c_cp);
    done = e == cudaSuccess;
    return e;
}

/* hsdr_lns8_k_unclamped on the bit pattern of |x|: -1 for zero, subnormal, inf and NaN. */
__device__ __forceinline__ int k_unclamped(uint32_t au, int *k)
{
    const uint32_t biased = au >> 23;
    if (biased == 0 || biased == 0xff)
        return -1;
    const uint32_t m = au & 0x7fffffu;
    int j = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        j += m >= c_mt[i];
    *k = 8 * ((int)biased - 127) + HSDR_LNS8_BIAS + j;
    return 0;
}

/* hsdr_lns8_encode_one */
__device__ __forceinline__ uint8_t encode_one(float x, int e)
{
    const uint32_t u = __float_as_uint(x), neg = (u >> 31) << 7, au = u & 0x7fffffffu;
    if (au == 0x7f800000u)
        return (uint8_t)(neg | HSDR_LNS8_KMAX);
    int k;
    if (k_unclamped(au, &k) != 0)
        return 0;
    const long long ks = (long long)k - 8LL * e;
    if (ks > HSDR_LNS8_KMAX)
        return (uint8_t)(neg | HSDR_LNS8_KMAX);
    if (ks >= 1)
        return (uint8_t)(neg | (uint32_t)ks);
    const long long eshift = (long long)((au >> 23) & 0xff) - 127 - e;
    if (eshift > -11 || (eshift == -11 && (au & 0x7fffffu) >= HSDR_LNS8_HALF_MIN_MT))
        return (uint8_t)(neg | 1u);
    return 0;
}

enum { ENCODE_THREADS = 1024, WARPS_PER_CTA = 8 };

/* The activation buffer: K codes, then the pre-scale e (an int at a 16-byte boundary). */
static size_t act_bytes(int K)
{
    return (size_t)((K + 15) & ~15) + 16;
}

__device__ __forceinline__ int *prescale_of(uint8_t *codes, int K)
{
    return (int *)(codes + ((K + 15) & ~15));
}

__global__ void __launch_bounds__(ENCODE_THREADS) hsdr_cu_encode_lns8(const float *x, int K, uint8_t *codes)
{
    __shared__ uint32_t warp_max[ENCODE_THREADS / 32];
    __shared__ int e_shared;
    uint32_t best = 0; /* the largest finite normal |x| pattern: monotone in magnitude */
    for (int i = threadIdx.x; i < K; i += blockDim.x) {
        const uint32_t au = __float_as_uint(x[i]) & 0x7fffffffu;
        if ((au >> 23) != 0 && au < 0x7f800000u && au > best)
            best = au;
    }
    for (int o = 16; o >= 1; o >>= 1)
        best = max(best, __shfl_xor_sync(HSDR_FULL_MASK, best, o));
    if ((threadIdx.x & 31) == 0)
        warp_max[threadIdx.x >> 5] = best;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t m = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++)
            m = max(m, warp_max[w]);
        int k = 0, e = 0;
        if (m != 0 && k_unclamped(m, &k) == 0) {
            const int a = k - HSDR_LNS8_KMAX; /* ceil(a / 8) for either sign */
            e = a >= 0 ? (a + 7) / 8 : -((-a) / 8);
        }
        e_shared = e;
        *prescale_of(codes, K) = e;
    }
    __syncthreads();
    const int e = e_shared;
    for (int i = threadIdx.x; i < K; i += blockDim.x)
        codes[i] = encode_one(x[i], e);
}

/* The four trits of lanes 4j..4j+3 of a PTQ1_0 block, in lane order, as -1/0/+1. */
__device__ __forceinline__ void lane_trits(const uint8_t *blk, int j, int t[4])
{
    if (j < 30) {
        /* j < 20: qs[m..m+3] digit n with 16n + m = 4j; else qs[16 + m..] digit n with 80 + 8n + m = 4j */
        const int byte0 = j < 20 ? 4 * (j & 3) : 16 + 4 * ((j - 20) & 1), n = j < 20 ? j >> 2 : (j - 20) >> 1;
        const uint32_t word = __ldg((const uint32_t *)(blk + byte0));
        const uint32_t pow3 = n == 0 ? 3u : n == 1 ? 9u : n == 2 ? 27u : n == 3 ? 81u : 243u; /* 3^(n + 1) */
#pragma unroll
        for (int u = 0; u < 4; u++) /* digit n of byte v = floor(v * 3^(n + 1) / 256) mod 3 */
            t[u] = (int)((((word >> (8 * u)) & 0xffu) * pow3 >> 8) % 3u) - 1;
    } else {
        /* qh: lanes 120 + 2n + h; lane 30 holds n = 0, 1; lane 31 n = 2, 3 */
        const uint32_t word = __ldg((const uint32_t *)(blk + 24));
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int n = 2 * (j - 30) + (u >> 1), h = u & 1;
            const uint32_t pow3 = n == 0 ? 3u : n == 1 ? 9u : n == 2 ? 27u : 81u;
            t[u] = (int)((((word >> (8 * h)) & 0xffu) * pow3 >> 8) % 3u) - 1;
        }
    }
}

/* Keep half of the values a lane holds, add the partner's other half (reduce-scatter over one butterfly level). */
template <int HALF> __device__ __forceinline__ void scatter_half(int v[2 * HALF], int offset, bool upper)
{
#pragma unroll
    for (int i = 0; i < HALF; i++) {
        const int keep = upper ? v[HALF + i] : v[i], send = upper ? v[i] : v[HALF + i];
        v[i] = keep + __shfl_xor_sync(HSDR_FULL_MASK, send, offset);
    }
}

__global__ void __launch_bounds__(32 * WARPS_PER_CTA)
    hsdr_cu_direct_rows(const uint8_t *W, const uint8_t *codes, int K, int N, float *y, int32_t *A_out)
{
    const int lane = threadIdx.x & 31;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= N) /* uniform per warp */
        return;
    const int G = K / 128;
    const int e = *prescale_of((uint8_t *)codes, K);
    const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
    /* the phase lane l ends with: bits 4, 3, 2 of l choose the upper halves at offsets 16, 8, 4 */
    const int my_phase = ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
    double acc = 0.0;
    for (int g = 0; g < G; g++) {
        const uint8_t *blk = wrow + (size_t)g * HSDR_PTQ1_0_BLOCK;
        int t[4];
        lane_trits(blk, lane, t);
        const uint32_t c4 = __ldg((const uint32_t *)(codes + 128 * g + 4 * lane));
        int part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const uint32_t code = (c4 >> (8 * u)) & 0xffu, k = code & 0x7fu;
            const int v = (k != 0 && t[u] != 0) ? (int)(1u << (k >> 3)) : 0; /* k = 0 is skipped */
            const int c = ((code >> 7) != 0) != (t[u] < 0) ? -v : v;
#pragma unroll
            for (int p = 0; p < 8; p++)
                part[p] += (int)(k & 7u) == p ? c : 0;
        }
        scatter_half<4>(part, 16, (lane >> 4) & 1);
        scatter_half<2>(part, 8, (lane >> 3) & 1);
        scatter_half<1>(part, 4, (lane >> 2) & 1);
        int a = part[0];
        a += __shfl_xor_sync(HSDR_FULL_MASK, a, 2);
        a += __shfl_xor_sync(HSDR_FULL_MASK, a, 1); /* A[my_phase], exact, in every lane of the phase */
        if (A_out && (lane & 3) == 0)
            A_out[((size_t)row * G + g) * 8 + my_phase] = a;
        double s = (double)a * c_cp[my_phase]; /* one lane per phase below: lanes with l & 3 == 0 */
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 4);
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 8);
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 16); /* sum over the 8 phases */
        const double d = (double)__half2float(__ushort_as_half(*(const unsigned short *)(blk + 26)));
        acc += d * s;
    }
    if (lane == 0)
        y[row] = (float)ldexp(acc, e - 9); /* 2^e / 512 */
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    cudaError_t err = upload_constants();
    if (err != cudaSuccess)
        return err;
    uint8_t *codes = (uint8_t *)r->act;
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    if (stage >= 0)
        skip = stage == HSDR_STAGE_ENCODE ? red : enc, twice = 0;
    for (int i = 0; i < ((skip & enc) ? 0 : (twice & enc) ? 2 : 1); i++)
        hsdr_cu_encode_lns8<<<1, ENCODE_THREADS>>>(r->x, r->K, codes);
    for (int i = 0; i < ((skip & red) ? 0 : (twice & red) ? 2 : 1); i++)
        hsdr_cu_direct_rows<<<(r->N + WARPS_PER_CTA - 1) / WARPS_PER_CTA, 32 * WARPS_PER_CTA>>>(W, codes, r->K, r->N,
                                                                                               r->y, r->A);
    return cudaGetLastError();
}

static cudaError_t upload_codes(hsdr_device_run *r, const uint8_t *codes, int e)
{
    cudaError_t err = cudaMemcpy(r->act, codes, (size_t)r->K, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy((uint8_t *)r->act + ((r->K + 15) & ~15), &e, sizeof e, cudaMemcpyHostToDevice);
    return err;
}

static const hsdr_cu_kernels kernels = {act_bytes, launch, upload_codes};
extern "C" const hsdr_device_ops hsdr_cuda_direct_ops = HSDR_CU_OPS(kernels);
