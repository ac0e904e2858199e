/* cuda.production: the PrismML fork's one-column PTQ1_0 mat-vec as the fork dispatches it on sm_89 and newer (Ada,
 * Hopper: the H200), re-implemented from docs/cuda-production.md (facts read from the fork's sources; the code is
 * this project's). y is bit-identical to hsdr_matvec_q8_1 in hsdr_cuda_soa_order.
 *   Idea     x quantized to Q8_1 in the fork's SOA_ISUM layout (each 32-block's exact sum beside its scale); then a
 *            warp per row (K/128 < 128) or a 128-thread CTA per row: raw digits {0, 1, 2} by x3 steps into dp4a, the
 *            exact sums subtracted, the fork's fmaf chains per block and per thread, an xor butterfly.
 *   Layout   weights: PTQ1_0 as stored. Activations: the 32 K-blocks of a group transposed across 32 words, then the
 *            half2 (fp16 d, exact int16 sum) of each 32-block (encode, below).
 *   Stages   encode (quantize_q8_1), reduce (the mat-vec: decode, dot, scale and merge fused).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.production *'
 *   Files    the row kernels, their launch and the fp32 end of a block are soa.cuh's (shared with cuda.planar2); this
 *            file has the quantizer and the PTQ1_0 block.
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

#include "soa.cuh"

/* Word of one column's activations holding word w (0..7: int8 values 4w..4w+3; 8: the half2 (d, isum)) of Q8_1
 * block ib. */
static __device__ __forceinline__ int soa_word(int ib, int w)
{
    const int kb = ib >> 2, sub = ib & 3;
    return (kb >> 5) * HSDR_SOA_GROUP_WORDS + (w < 8 ? sub * 8 + w : 32 + sub) * HSDR_SOA_GROUP_KB + (kb & 31);
}

__global__ void __launch_bounds__(HSDR_SOA_QUANTIZE_THREADS, 1) hsdr_cu_quantize_soa(const float *x, int K, int32_t *yw)
{
#if __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); /* the fork's ggml_cuda_pdl_lc: the mat-vec may launch now */
#endif
    const int i = blockIdx.x * blockDim.x + threadIdx.x; /* < pad_k(K): the grid covers it exactly */
    const int lane = threadIdx.x & 31;
    float d;
    int q, isum;
    hsdr_cu_q8_1_lane(i < K ? x[i] : 0.0f, d, q, isum);
    ((int8_t *)(yw + soa_word(i >> 5, lane >> 2)))[lane & 3] = (int8_t)q;
    if (lane == 0)
        yw[soa_word(i >> 5, 8)] = (int32_t)hsdr_cu_d_isum(d, isum);
}

/* PTQ1_0 as stored: one 128-block of a row (its 28 bytes) against the K-block's activation words, the fork's
 * vec_dot_ptq1_0_q8_1_multi. */
struct ptq1_0_soa {
    static __device__ __forceinline__ const uint8_t *block(const uint8_t *w, int G, int row, int kb)
    {
        return w + ((size_t)row * G + kb) * HSDR_PTQ1_0_BLOCK;
    }
    static __device__ __forceinline__ const uint8_t *prefetch(const uint8_t *w, int N, int G, int row, int kb)
    {
        (void)N;
        return block(w, G, row, kb);
    }
    static __device__ __forceinline__ float dot(const uint8_t *w, int N, int G, int row, int kb, const int32_t *ya,
                                               float p)
    {
        (void)N;
        const uint8_t *blk = block(w, G, row, kb);
        int sumi[4] = {0, 0, 0, 0};
        hsdr_cu_ptq1_0_sums(blk, [ya](int e) { return (int)ya[(e >> 2) * HSDR_SOA_GROUP_KB]; }, sumi);
        return hsdr_soa_finish(sumi, ya, __half2float(*(const __half *)(blk + 26)), p);
    }
};

typedef void (*soa_rows_kernel)(const uint8_t *, const int32_t *, int, int, float *);

cudaError_t hsdr_soa_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    int32_t *yw = (int32_t *)r->act;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice); i++)
        hsdr_cu_quantize_soa<<<hsdr_soa_pad_k(r->K) / HSDR_SOA_QUANTIZE_THREADS, HSDR_SOA_QUANTIZE_THREADS, 0,
                               r->stream>>>(r->x, r->K, yw);
    cudaError_t e = cudaGetLastError();
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, reinterpret_cast<soa_rows_kernel>(r->shape.kernel), w, (const int32_t *)yw,
                               r->K, r->N, r->y);
    return e;
}

static const hsdr_cu_kernels kernels = {1,    hsdr_soa_act_bytes, hsdr_soa_prepare<ptq1_0_soa>, hsdr_soa_launch,
                                        NULL, NULL,               NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_production_ops = HSDR_CU_OPS(kernels);
