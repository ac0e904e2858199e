/* cuda.production: the PrismML fork's one-column PTQ1_0 mat-vec as the fork dispatches it on sm_89 and newer (Ada,
 * Hopper: the H200), re-implemented from docs/cuda-production.md (facts read from the fork's sources; the code is
 * this project's). y is bit-identical to hsdr_matvec_q8_1 in hsdr_cuda_soa_order.
 *
 * encode  the fork's quantize_q8_1 for the SOA_ISUM layout: one thread per activation of the column padded to a
 *         multiple of 4096 (padding reads as 0), 256-thread CTAs; amax by warp max, d = amax / 127, q = roundf(x / d),
 *         the exact integer sum of the 32-block by warp sum. The 32 K-blocks of a group are transposed across 32
 *         words: byte e of K-block kb lives in word group(kb) * 1152 + (e / 4) * 32 + (kb % 32), byte e % 4, and word
 *         (32 + sub) * 32 + kb % 32 of the group holds the half2 (fp16 d, the exact int16 sum's bits) of 32-block
 *         sub. The one difference from the fork: its build has -use_fast_math, so its two divisions are
 *         div.approx.ftz; ours round correctly (hsdr_q8_1_quantize's quantization; docs/cuda-production.md
 *         section 2 says how often that can change a bit).
 * matvec  the fork's mul_mat_vec_q<PTQ1_0, 1 column, y_soa> geometry. K/128 < 128 (small K): 4 rows per 128-thread
 *         CTA, warp w takes row 4 c + w, lane l its blocks l, l + 32, ..., then an xor butterfly. Otherwise a CTA per
 *         row: thread t takes blocks t, t + 128, ..., requesting the block 128 further into L2 first; warps 1..3 put
 *         their partials into shared memory and warp 0 adds them in warp order, then the butterfly. Per block (the
 *         fork's vec_dot_ptq1_0_q8_1_multi): each qs word's four bytes spread into two 16-bit-lane words, x3 per
 *         digit, the four raw digits {0, 1, 2} packed by one byte permute into dp4a against the lane's activation
 *         word; four int32 sums, one per 32-block; acc = fmaf(d8_k, sumi_k - isum_k, acc), k = 0..3, then
 *         p = fmaf(d_w, acc, p) (the fork's "acc += d8 * s" and "tmp += d * acc", contracted by nvcc; written here as
 *         the intrinsics they contract to). The mat-vec is launched programmatically dependent on the encode and
 *         waits for it at its start (the fork's ggml_cuda_pdl_sync). */
#include <stdlib.h>

#include "common.cuh"
extern "C" {
#include "matvec.h"
}

/* The SOA_ISUM layout (docs/cuda-production.md section 2): groups of 32 K-blocks, 36 words per K-block. */
enum { GROUP_KB = 32, WORDS_PER_KB = 36, GROUP_WORDS = GROUP_KB * WORDS_PER_KB, K_PAD = GROUP_KB * 128 };
enum { QUANTIZE_THREADS = 256, ROWS_THREADS = 128, SMALL_K_BLOCKS = 128 };

static __host__ __device__ __forceinline__ int pad_k(int K)
{
    return (K + K_PAD - 1) / K_PAD * K_PAD;
}

/* Word of one column's activations holding word w (0..7: int8 values 4w..4w+3; 8: the half2 (d, isum)) of Q8_1
 * block ib. */
static __device__ __forceinline__ int soa_word(int ib, int w)
{
    const int kb = ib >> 2, sub = ib & 3;
    return (kb >> 5) * GROUP_WORDS + (w < 8 ? sub * 8 + w : 32 + sub) * GROUP_KB + (kb & 31);
}

__global__ void __launch_bounds__(QUANTIZE_THREADS, 1) hsdr_cu_quantize_soa(const float *x, int K, int32_t *yw)
{
#if __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); /* the fork's ggml_cuda_pdl_lc: the mat-vec may launch now */
#endif
    const int i = blockIdx.x * blockDim.x + threadIdx.x; /* < pad_k(K): the grid covers it exactly */
    const int lane = threadIdx.x & 31;
    const float v = i < K ? x[i] : 0.0f;
    float amax = fabsf(v);
    for (int o = 16; o >= 1; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(HSDR_FULL_MASK, amax, o)); /* max: exact in any order */
    const float d = __fdiv_rn(amax, 127.0f);
    const int q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));
    int isum = q;
    for (int o = 16; o >= 1; o >>= 1)
        isum += __shfl_xor_sync(HSDR_FULL_MASK, isum, o); /* integers: exact */
    ((int8_t *)(yw + soa_word(i >> 5, lane >> 2)))[lane & 3] = (int8_t)q;
    if (lane == 0) {
        const uint32_t bits = (uint32_t)__half_as_ushort(__float2half_rn(d)) | (uint32_t)(uint16_t)isum << 16;
        yw[soa_word(i >> 5, 8)] = (int32_t)bits;
    }
}

/* One 128-block of a row (its 28 bytes at blk) against the K-block's activation words (ya: word ww at ya[32 ww]):
 * the fork's per-block sequence, accumulated into p. */
static __device__ __forceinline__ float block_dot(const uint8_t *blk, const int32_t *ya, float p)
{
    int sumi[4] = {0, 0, 0, 0};
    /* qs[0..15]: digit t of qs[m] is weight 16 t + m */
#pragma unroll
    for (int g = 0; g < 4; g++) {
        const uint32_t packed = ((const uint32_t *)blk)[g];
        uint32_t lo = __byte_perm(packed, 0, 0x4140), hi = __byte_perm(packed, 0, 0x4342);
#pragma unroll
        for (int t = 0; t < 5; t++) {
            const uint32_t wl = lo * 3u, wh = hi * 3u;
            lo = wl & 0x00ff00ffu, hi = wh & 0x00ff00ffu;
            const int e = 16 * t + 4 * g;
            sumi[e >> 5] = __dp4a((int)__byte_perm(wl, wh, 0x7531), ya[(e >> 2) * GROUP_KB], sumi[e >> 5]);
        }
    }
    /* qs[16..23]: digit t of qs[16 + m] is weight 80 + 8 t + m */
#pragma unroll
    for (int g = 0; g < 2; g++) {
        const uint32_t packed = ((const uint32_t *)(blk + 16))[g];
        uint32_t lo = __byte_perm(packed, 0, 0x4140), hi = __byte_perm(packed, 0, 0x4342);
#pragma unroll
        for (int t = 0; t < 5; t++) {
            const uint32_t wl = lo * 3u, wh = hi * 3u;
            lo = wl & 0x00ff00ffu, hi = wh & 0x00ff00ffu;
            const int e = 80 + 8 * t + 4 * g;
            sumi[e >> 5] = __dp4a((int)__byte_perm(wl, wh, 0x7531), ya[(e >> 2) * GROUP_KB], sumi[e >> 5]);
        }
    }
    /* qh[0..1]: digit t of qh[h] is weight 120 + 2 t + h; two digits per multiply pair */
    uint32_t v = (uint32_t)blk[24] | (uint32_t)blk[25] << 16;
#pragma unroll
    for (int t = 0; t < 4; t += 2) {
        const uint32_t w0 = v * 3u;
        v = w0 & 0x00ff00ffu;
        const uint32_t w1 = v * 3u;
        v = w1 & 0x00ff00ffu;
        sumi[3] = __dp4a((int)__byte_perm(w0, w1, 0x7531), ya[(30 + t / 2) * GROUP_KB], sumi[3]);
    }
    const float dw = __half2float(*(const __half *)(blk + 26));
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t ds = (uint32_t)ya[(32 + k) * GROUP_KB];
        const float d8 = __half2float(__ushort_as_half((unsigned short)(ds & 0xffffu)));
        acc = __fmaf_rn(d8, (float)(sumi[k] - (int)(short)(ds >> 16)), acc);
    }
    return __fmaf_rn(dw, acc, p);
}

/* The activation words of K-block kb of a column (word ww at [32 ww]). */
static __device__ __forceinline__ const int32_t *kb_words(const int32_t *yw, int kb)
{
    return yw + (kb >> 5) * GROUP_WORDS + (kb & 31);
}

static __device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o >= 1; o >>= 1)
        v = __fadd_rn(v, __shfl_xor_sync(HSDR_FULL_MASK, v, o));
    return v;
}

/* Small K (K/128 < 128): a warp per row, 4 rows per CTA. */
__global__ void __launch_bounds__(ROWS_THREADS, 1)
    hsdr_cu_soa_rows_small(const uint8_t *W, const int32_t *yw, int K, int N, float *y)
{
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    const int lane = threadIdx.x & 31, row = blockIdx.x * (ROWS_THREADS / 32) + (threadIdx.x >> 5);
    const int G = K / 128;
    float p = 0.0f;
    if (row < N) {
        const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
        for (int kb = lane; kb < G; kb += 32)
            p = block_dot(wrow + (size_t)kb * HSDR_PTQ1_0_BLOCK, kb_words(yw, kb), p);
    }
    p = warp_sum(p);
    if (lane == 0 && row < N)
        y[row] = p;
}

/* K/128 >= 128: a 128-thread CTA per row. */
__global__ void __launch_bounds__(ROWS_THREADS, 1)
    hsdr_cu_soa_rows_large(const uint8_t *W, const int32_t *yw, int K, int N, float *y)
{
    __shared__ float part[ROWS_THREADS / 32 - 1][32];
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    (void)N; /* the grid is N CTAs */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, row = blockIdx.x;
    const int G = K / 128;
    const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
    float p = 0.0f;
    for (int kb = tid; kb < G; kb += ROWS_THREADS) {
        if (kb + ROWS_THREADS < G) /* the fork's prefetch of the next iteration's block */
            asm volatile("prefetch.global.L2 [%0];" ::"l"(wrow + (size_t)(kb + ROWS_THREADS) * HSDR_PTQ1_0_BLOCK));
        p = block_dot(wrow + (size_t)kb * HSDR_PTQ1_0_BLOCK, kb_words(yw, kb), p);
    }
    if (warp > 0)
        part[warp - 1][lane] = p;
    __syncthreads();
    if (warp > 0)
        return;
#pragma unroll
    for (int w = 0; w < ROWS_THREADS / 32 - 1; w++)
        p = __fadd_rn(p, part[w][lane]);
    p = warp_sum(p);
    if (lane == 0)
        y[row] = p;
}

/* One column's activations: pad_k(K) / 32 blocks of 36 bytes (the fork keeps block_q8_1's bytes per row). */
static size_t act_bytes(int K)
{
    return (size_t)pad_k(K) / 32 * 36;
}

typedef void (*rows_kernel)(const uint8_t *, const int32_t *, int, int, float *);

/* The fork's launch for one column: small K, ceil(N / 4) CTAs of the warp-per-row kernel; else N CTAs. */
static int prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const bool small = r->K / 128 < SMALL_K_BLOCKS;
    r->shape.kernel = reinterpret_cast<void (*)(void)>(small ? hsdr_cu_soa_rows_small : hsdr_cu_soa_rows_large);
    r->shape.ctas = (unsigned)(small ? (r->N + ROWS_THREADS / 32 - 1) / (ROWS_THREADS / 32) : r->N);
    r->shape.threads = ROWS_THREADS;
    r->shape.smem = 0;
    return 0;
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    int32_t *yw = (int32_t *)r->act;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(r->shape.ctas);
    cfg.blockDim = dim3(r->shape.threads);
    cfg.stream = r->stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice); i++)
        hsdr_cu_quantize_soa<<<pad_k(r->K) / QUANTIZE_THREADS, QUANTIZE_THREADS, 0, r->stream>>>(r->x, r->K, yw);
    cudaError_t e = cudaGetLastError();
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, reinterpret_cast<rows_kernel>(r->shape.kernel), W, (const int32_t *)yw, r->K,
                               r->N, r->y);
    return e;
}

static const hsdr_cu_kernels kernels = {1, act_bytes, prepare, launch, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_production_ops = HSDR_CU_OPS(kernels);
