/* The fork's one-column SOA_ISUM design (docs/cuda-production.md sections 2 and 3), shared by the kernels that use
 * its activation layout and its row geometry: cuda.production (PTQ1_0 as stored, production.cu) and cuda.planar2 (a
 * predecoded 2-bit form, planar2.cu).
 *   Idea     the fork's rows over one quantization of x: a warp per row below 128 K-blocks, else a 128-thread CTA per
 *            row (its warps' partials added in warp order), the weight format's per-block dot and fp32 steps, then
 *            the xor butterfly; the mat-vec launched programmatically dependent on the encode.
 *   Layout   activations: groups of 32 K-blocks, 36 words per K-block, K padded to a multiple of 4096 (below);
 *            weights: the format's (W).
 *   Stages   encode (hsdr_cu_quantize_soa, production.cu), reduce (the row kernels below).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.production *'
 *            (or cuda.planar2)
 * A weight format supplies one policy type W with
 *   static const uint8_t *prefetch(const uint8_t *w, int N, int G, int row, int kb)  the address to bring into L2
 *   static float dot(const uint8_t *w, int N, int G, int row, int kb, const int32_t *ya, float p)
 * where dot returns p advanced by K-block kb of the row against that K-block's activation words ya (word ww at
 * ya[32 ww]) with the fork's fp32 steps: acc = fmaf(d8_k, sumi_k - isum_k, acc), k = 0..3 from +0, then
 * fmaf(d_w, acc, p). The row kernels below fix everything else, so every format gives the bits of
 * hsdr_matvec_q8_1 in hsdr_cuda_soa_order. */
#ifndef HSDR_CUDA_SOA_CUH
#define HSDR_CUDA_SOA_CUH
#include "common.cuh"

/* The layout: groups of 32 K-blocks, 36 words per K-block; K padded to a multiple of 4096. */
enum { HSDR_SOA_GROUP_KB = 32, HSDR_SOA_GROUP_WORDS = 32 * 36, HSDR_SOA_K_PAD = 32 * 128 };
enum { HSDR_SOA_QUANTIZE_THREADS = 256, HSDR_SOA_ROWS_THREADS = 128, HSDR_SOA_SMALL_K_BLOCKS = 128 };

static __host__ __device__ __forceinline__ int hsdr_soa_pad_k(int K)
{
    return (K + HSDR_SOA_K_PAD - 1) / HSDR_SOA_K_PAD * HSDR_SOA_K_PAD;
}

/* One column's activations: pad_k(K) / 32 blocks of 36 bytes (the fork keeps block_q8_1's bytes per row). */
static inline size_t hsdr_soa_act_bytes(int K)
{
    return (size_t)hsdr_soa_pad_k(K) / 32 * 36;
}

/* The quantizer into the layout (production.cu): pad_k(K) / HSDR_SOA_QUANTIZE_THREADS CTAs of that many threads. */
__global__ void hsdr_cu_quantize_soa(const float *x, int K, int32_t *yw);

/* The activation words of K-block kb of a column (word ww at [32 ww]). */
static __device__ __forceinline__ const int32_t *hsdr_soa_kb_words(const int32_t *yw, int kb)
{
    return yw + (kb >> 5) * HSDR_SOA_GROUP_WORDS + (kb & 31);
}

static __device__ __forceinline__ float hsdr_soa_warp_sum(float v)
{
    for (int o = 16; o >= 1; o >>= 1)
        v = __fadd_rn(v, __shfl_xor_sync(HSDR_FULL_MASK, v, o));
    return v;
}

/* The fp32 end of a K-block: the four 32-blocks' scales and exact sums from the words, then the fork's steps. */
static __device__ __forceinline__ float hsdr_soa_finish(const int sumi[4], const int32_t *ya, float dw, float p)
{
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t ds = (uint32_t)ya[(32 + k) * HSDR_SOA_GROUP_KB];
        const float d8 = __half2float(__ushort_as_half((unsigned short)(ds & 0xffffu)));
        acc = __fmaf_rn(d8, (float)(sumi[k] - (int)(short)(ds >> 16)), acc);
    }
    return __fmaf_rn(dw, acc, p);
}

/* Small K (K/128 < 128): a warp per row, 4 rows per CTA, lane l on K-blocks l, l + 32, ..., then the butterfly. */
template <class W>
__global__ void __launch_bounds__(HSDR_SOA_ROWS_THREADS, 1)
    hsdr_soa_rows_small(const uint8_t *w, const int32_t *yw, int K, int N, float *y)
{
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* the fork's ggml_cuda_pdl_sync, before any load */
#endif
    const int lane = threadIdx.x & 31, row = blockIdx.x * (HSDR_SOA_ROWS_THREADS / 32) + (threadIdx.x >> 5);
    const int G = K / 128;
    float p = 0.0f;
    if (row < N)
        for (int kb = lane; kb < G; kb += 32)
            p = W::dot(w, N, G, row, kb, hsdr_soa_kb_words(yw, kb), p);
    p = hsdr_soa_warp_sum(p);
    if (lane == 0 && row < N)
        y[row] = p;
}

/* K/128 >= 128: a 128-thread CTA per row; thread t on K-blocks t, t + 128, ... (requesting the block 128 further
 * into L2 first); warps 1..3 hand their partials to warp 0 through shared memory, added in warp order; the
 * butterfly. */
template <class W>
__global__ void __launch_bounds__(HSDR_SOA_ROWS_THREADS, 1)
    hsdr_soa_rows_large(const uint8_t *w, const int32_t *yw, int K, int N, float *y)
{
    __shared__ float part[HSDR_SOA_ROWS_THREADS / 32 - 1][32];
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, row = blockIdx.x; /* the grid is N CTAs */
    const int G = K / 128;
    float p = 0.0f;
    for (int kb = tid; kb < G; kb += HSDR_SOA_ROWS_THREADS) {
        if (kb + HSDR_SOA_ROWS_THREADS < G) /* the fork's prefetch of the next iteration's block */
            asm volatile("prefetch.global.L2 [%0];" ::"l"(W::prefetch(w, N, G, row, kb + HSDR_SOA_ROWS_THREADS)));
        p = W::dot(w, N, G, row, kb, hsdr_soa_kb_words(yw, kb), p);
    }
    if (warp > 0)
        part[warp - 1][lane] = p;
    __syncthreads();
    if (warp > 0)
        return;
#pragma unroll
    for (int i = 0; i < HSDR_SOA_ROWS_THREADS / 32 - 1; i++)
        p = __fadd_rn(p, part[i][lane]);
    p = hsdr_soa_warp_sum(p);
    if (lane == 0)
        y[row] = p;
}

/* The fork's launch for one column, into r->shape: small K, ceil(N / 4) CTAs of the warp-per-row kernel; else N. */
template <class W>
static int hsdr_soa_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const bool small = r->K / 128 < HSDR_SOA_SMALL_K_BLOCKS;
    r->shape.kernel = small ? reinterpret_cast<void (*)(void)>(hsdr_soa_rows_small<W>)
                            : reinterpret_cast<void (*)(void)>(hsdr_soa_rows_large<W>);
    r->shape.ctas = (unsigned)(small ? (r->N + HSDR_SOA_ROWS_THREADS / 32 - 1) / (HSDR_SOA_ROWS_THREADS / 32) : r->N);
    r->shape.threads = HSDR_SOA_ROWS_THREADS;
    r->shape.smem = 0;
    return 0;
}

/* The encode (stage encode), then the mat-vec in r->shape launched programmatically dependent on it (reduce). */
cudaError_t hsdr_soa_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip, unsigned twice);

#endif
