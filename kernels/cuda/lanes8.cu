/* cuda.lanes8 (our baseline, not the fork's kernel): activations staged in shared memory once per CTA, 8 lanes per
 * row; the fork's per-block fmaf chain, its own row split (hsdr_cuda_lanes8_order).
 *   Idea     four rows per warp, 8 lanes each, so that a row's blocks are spread over fewer lanes and the warp's
 *            activation reads are shared: x staged in shared memory once per CTA, one lane per 128-block, dp4a on
 *            the digits {0, 1, 2} with each 32-block's exact sum subtracted once, then an 8-lane butterfly.
 *   Layout   weights: PTQ1_0 as stored. Activations: Q8_1 of hsdr_q8_1_quantize (int8 values, fp16 d and s per
 *            32-block), staged per CTA at a 132-byte stride per 128-block (bank-conflict-free), then the K/32 fp32
 *            scales and int32 exact sums.
 *   Stages   encode (quantize), reduce (the mat-vec: decode, dot, scale and merge fused).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.lanes8 *'
 *
 * encode  one warp per 32 activations: amax by warp max, d = amax / 127, q = roundf(x / d) (IEEE division: no fast
 *         math), s = fp16(d * sum q): bit-identical to hsdr_q8_1_quantize.
 * matvec  the activations staged in shared memory once per CTA (bank-conflict-free padding); 8 lanes per row, one
 *         lane per 128-weight block (b = lane, lane + 8, ...), 4 rows per warp. The block's seven 32-bit words are
 *         decoded four bytes at a time: the bytes are spread into 16-bit lanes, multiplied by 3 per digit step, and
 *         the digit {0, 1, 2} is bits 8-9 of each lane and goes into dp4a against the four int8 activations of
 *         the same weights; the exact sum of each 32-block's activations (from the encode) is subtracted once.
 *         Per block acc = fmaf chain over the four Q8_1 scales, p = fmaf(d_w, acc, p); then an xor butterfly over
 *         the row's 8 lanes. Every float operation is an explicit intrinsic, so nvcc cannot contract or reorder
 *         anything: the sequence is hsdr_matvec_q8_1's in hsdr_cuda_lanes8_order, bit for bit. */
#include <stdlib.h>

#include "common.cuh"

__global__ void hsdr_cu_quantize_q8_1(const float *x, int K, hsdr_cu_q8_1 *q, int *qsum)
{
#if __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); /* a dependent mat-vec may start its weight loads now */
#endif
    const int lane = threadIdx.x & 31;
    const int blk = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (blk >= K / 32) /* uniform per warp: K is a multiple of 32 */
        return;
    x += (size_t)blockIdx.y * K; /* column blockIdx.y */
    q += (size_t)blockIdx.y * (K / 32);
    qsum += (size_t)blockIdx.y * (K / 32);
    float d;
    int qi, sum;
    hsdr_cu_q8_1_lane(x[32 * blk + lane], d, qi, sum);
    q[blk].qs[lane] = (int8_t)qi;
    if (lane == 0) {
        qsum[blk] = sum; /* exact: the mat-vecs put raw digits {0, 1, 2} into dp4a and subtract it once */
        q[blk].d = __float2half_rn(d);
        q[blk].s = __float2half_rn(__fmul_rn(d, (float)sum));
    }
}

/* Activations staged in shared memory: the int8 values of 128-block b at b * ACT_STRIDE (132 bytes: the 4-byte pad
 * puts the same word of the 8 consecutive blocks that a row's 8 lanes read into 8 different banks), then the K/32
 * Q8_1 scales as floats. */
enum { ROW_LANES = 8, ROWS_PER_WARP = 32 / ROW_LANES, WARPS_PER_CTA = 8, ROWS_PER_CTA = ROWS_PER_WARP * WARPS_PER_CTA,
       ACT_STRIDE = 132 };

static size_t smem_bytes(int K)
{
    return (size_t)(K / 128) * ACT_STRIDE + (sizeof(float) + sizeof(int)) * (size_t)(K / 32);
}

/* One step of the byte-pair decode: lanes hold bytes (b0, b2) and (b1, b3) of a word in 16-bit halves; multiply by 3
 * and take bits 8-9 of every half: the next base-3 digit {0, 1, 2} of each byte, packed back in byte order (the bias
 * of -1 is applied once per 32-block, by subtracting the exact sum of its activations). */
__device__ __forceinline__ int digit_step(uint32_t &even, uint32_t &odd)
{
    even *= 3u;
    odd *= 3u;
    const uint32_t dig = ((even >> 8) & 0x00030003u) | (odd & 0x03000300u);
    even &= 0x00ff00ffu;
    odd &= 0x00ff00ffu;
    return (int)dig;
}

/* isum[k] += the dot of one qs word's 4 x 5 weights with their activations. first: the weight of digit 0 of the
 * word's first byte; step: how far digit n + 1 is from digit n. */
__device__ __forceinline__ void qs_word(uint32_t word, int first, int step, const int8_t *a, int isum[4])
{
    uint32_t even = word & 0x00ff00ffu, odd = (word >> 8) & 0x00ff00ffu;
#pragma unroll
    for (int n = 0; n < 5; n++) {
        const int w = first + step * n;
        isum[w >> 5] = __dp4a(digit_step(even, odd), act4(a, w), isum[w >> 5]);
    }
}

/* One 128-block of one row (its words wd): its value d_w * (fmaf chain of d8_k * isum_k), accumulated into p; qs:
 * the exact sums of the block's four Q8_1 blocks. */
__device__ __forceinline__ float block_dot(const uint32_t wd[7], const int8_t *a, const float *d8, const int *qs,
                                          float p)
{
    int isum[4] = {-qs[0], -qs[1], -qs[2], -qs[3]}; /* sum (t + 1) q - sum q = sum t q, exact */
    /* qs[0..15]: digit n of qs[m] is weight 16n + m */
#pragma unroll
    for (int j = 0; j < 4; j++)
        qs_word(wd[j], 4 * j, 16, a, isum);
    /* qs[16..23]: digit n of qs[16 + m] is weight 80 + 8n + m */
#pragma unroll
    for (int j = 0; j < 2; j++)
        qs_word(wd[4 + j], 80 + 4 * j, 8, a, isum);
    /* qh[0..1] (raw digits), then the fp16 scale */
    int h0, h1;
    qh_digits(wd[6], &h0, &h1);
    isum[3] = __dp4a(h0, act4(a, 120), isum[3]);
    isum[3] = __dp4a(h1, act4(a, 124), isum[3]);
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++)
        acc = __fmaf_rn(d8[k], (float)isum[k], acc);
    return __fmaf_rn(__half2float(__ushort_as_half((unsigned short)(wd[6] >> 16))), acc, p);
}

/* 8 lanes per row, 4 rows per warp, 32 rows per CTA; CTAs walk row groups with a grid stride, so the activations
 * are staged once per CTA. Lane l of a row owns its blocks l, l + 8, ...; the row's lanes end with an xor butterfly
 * (offsets 4, 2, 1). */
__global__ void __launch_bounds__(32 * WARPS_PER_CTA)
    hsdr_cu_lanes8_rows(const uint8_t *W, const hsdr_cu_q8_1 *q, const int *qsum, int K, int N, float *y)
{
    extern __shared__ uint32_t smem[];
    const int G = K / 128;
    const int lane = threadIdx.x & 31, sub = lane & (ROW_LANES - 1);
    const int first_row = (threadIdx.x >> 5) * ROWS_PER_WARP + (lane >> 3);
    /* the first block of this thread's first row is requested before the activations are staged: the two memory
     * latencies overlap */
    uint32_t cur[7];
    {
        const int row = blockIdx.x * ROWS_PER_CTA + first_row;
        load_block(W + (size_t)(row < N ? row : 0) * G * HSDR_PTQ1_0_BLOCK, row < N ? sub : G, G, cur);
    }
    int8_t *sq = (int8_t *)smem;
    float *sd = (float *)(sq + (size_t)G * ACT_STRIDE); /* G * 132 is a multiple of 4 */
    int *ss = (int *)(sd + K / 32);
    for (int i = threadIdx.x; i < K / 32; i += blockDim.x) {
        sd[i] = __half2float(q[i].d);
        ss[i] = qsum[i];
    }
    for (int i = threadIdx.x; i < K / 4; i += blockDim.x) { /* word i: Q8_1 block i / 8, word i % 8 */
        const int qb = i >> 3, w = 4 * (i & 7);
        *(int *)(sq + (size_t)(qb >> 2) * ACT_STRIDE + 32 * (qb & 3) + w) = *(const int *)(q[qb].qs + w);
    }
    __syncthreads();
    for (int rg = blockIdx.x; rg * ROWS_PER_CTA < N; rg += gridDim.x) {
        const int row = rg * ROWS_PER_CTA + first_row;
        float p = 0.0f;
        if (row < N) {
            const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
            if (rg != (int)blockIdx.x)
                load_block(wrow, sub, G, cur);
            /* one block ahead: the next block's words are requested before this one is decoded */
            for (int b = sub; b < G; b += ROW_LANES) {
                uint32_t next[7];
                load_block(wrow, b + ROW_LANES, G, next);
                p = block_dot(cur, sq + (size_t)b * ACT_STRIDE, sd + 4 * b, ss + 4 * b, p);
#pragma unroll
                for (int j = 0; j < 7; j++)
                    cur[j] = next[j];
            }
        }
        for (int o = ROW_LANES / 2; o >= 1; o >>= 1) /* every lane takes part: rows past N add zeros */
            p = __fadd_rn(p, __shfl_xor_sync(HSDR_FULL_MASK, p, o));
        if (sub == 0 && row < N)
            y[row] = p;
    }
}

/* The Q8_1 blocks, then the exact int sum of each block's 32 values. */
static size_t act_bytes(int K)
{
    return (sizeof(hsdr_cu_q8_1) + sizeof(int)) * (size_t)(K / 32);
}

/* Everything the launch needs from the host, once per run (create): the mat-vec at most 8 CTAs per SM, walking the
 * row groups, and its shared memory allowed where it exceeds the default dynamic limit (K > 37000). */
static int prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    const long groups = (r->N + ROWS_PER_CTA - 1) / ROWS_PER_CTA;
    const size_t smem = smem_bytes(r->K);
    int dev = 0, sms = 0;
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(hsdr_cu_allow_smem(hsdr_cu_lanes8_rows, smem));
    r->shape.ctas = (unsigned)(groups < 8L * sms ? groups : 8L * sms);
    r->shape.threads = 32 * WARPS_PER_CTA;
    r->shape.smem = smem;
    return 0;
fail:
    return -1;
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    hsdr_cu_q8_1 *q = (hsdr_cu_q8_1 *)r->act;
    int *qsum = (int *)(q + r->K / 32);
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice); i++)
        hsdr_cu_quantize_q8_1<<<hsdr_cu_quantize_ctas(r->K), HSDR_CU_QUANTIZE_THREADS, 0, r->stream>>>(r->x, r->K, q,
                                                                                                     qsum);
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice); i++)
        hsdr_cu_lanes8_rows<<<r->shape.ctas, r->shape.threads, r->shape.smem, r->stream>>>(W, q, qsum, r->K, r->N,
                                                                                                r->y);
    return cudaGetLastError();
}

/* one column: the harness's cols axis is cuda.cols' */
static const hsdr_cu_kernels kernels = {1, act_bytes, prepare, launch, NULL, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_lanes8_ops = HSDR_CU_OPS(kernels);
