/* cuda.production_pt: the PrismML fork's planar "PT" one-column PTQ1_0 mat-vec (mul_mat_vec_ptq1_0_pt, one column,
 * the default mode that is not batch invariant; what the fork dispatches on sm_75 .. sm_87, a baseline on the H200),
 * re-implemented from facts read from the fork's sources (the code is this project's). y is bit-identical to
 * hsdr_matvec_q8_1 in hsdr_cuda_pt_order.
 *   Idea     x quantized to Q8_1 in 16-byte planes; 128-thread CTAs over (4-row group, K-block) items, each item's
 *            activations loaded once for its 4 rows; every block's value rounded alone into shared memory, then one
 *            thread per row adds its blocks in four interleaved accumulators.
 *   Layout   weights: PTQ1_0 as stored. Activations: planes 0..7 of 16-byte units (plane p: elements 16 p .. 16 p + 15
 *            of every K-block), plane 8 the half2 (fp16 d, exact int16 sum) of every 32-block (encode, below).
 *   Stages   encode (quantize_q8_1), reduce (the mat-vec: decode, dot, scale and merge fused).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.production_pt *'
 *
 * encode  the fork's quantize_q8_1 for the PT layout: one thread per activation, 256-thread CTAs over the K values
 *         (K a multiple of 128: the last CTA may hold 4 warps past K, which compute on zeros and store nothing);
 *         amax by warp max, d = amax / 127, q = roundf(x / d), the exact integer sum of the 32-block by warp sum
 *         (hsdr_q8_1_quantize's quantization, correctly rounded divisions). With nblk = ceil(K / 512) * 4 16-byte
 *         units per plane, element e (0..127) of K-block kb is byte ((e / 16) * nblk + kb) * 16 + e % 16 (planes
 *         0..7: plane p holds elements 16 p .. 16 p + 15 of every K-block); plane 8 holds one half2 per 32-block at
 *         half2 index kb * 4 + e / 32: low half fp16 d, high half the bits of the exact int16 sum. K-blocks K / 128 ..
 *         nblk - 1 of each plane are padding, never written, never read.
 * matvec  mul_mat_vec_ptq1_0_pt's geometry: 128-thread CTAs of rows_per_cta rows (a host rule that fills the CTA's
 *         128 threads with (4-row group, K-block) items as evenly as it can); thread t takes items t, t + 128, ...;
 *         an item loads the K-block's nine 16-byte activation units once and does the 4 rows' blocks against them.
 *         Per block (the fork's vec-dot): each qs word's four bytes spread into two 16-bit-lane words, x3 per digit,
 *         the four raw digits {0, 1, 2} packed by one byte permute into dp4a against the matching activation word;
 *         four int32 sums, one per 32-block; acc = fmaf(d8_k, sumi_k - isum_k, acc), k = 0..3, from +0; then the
 *         block's value d_w * acc rounded on its own (no fma) into shared memory. After a barrier, one thread per row
 *         adds its row's block values in four accumulators: blocks 4 i + m into accumulator m for every complete quad,
 *         the K / 128 mod 4 remaining blocks into accumulator 0, then y = (s0 + s1) + (s2 + s3). Every float operation
 *         is an explicit intrinsic, so nvcc cannot contract or reorder anything. The mat-vec is launched
 *         programmatically dependent on the encode and waits for it at its start (the fork's ggml_cuda_pdl_sync). */
#include <stdlib.h>

#include "common.cuh"
extern "C" {
#include "matvec.h"
}

/* ROWS: weight rows per work item (the fork's value on sm_90); MAX_ROWS: the most rows a CTA takes; ITEM_BUDGET:
 * the shared-memory floats the row rule aims under (rows * (K / 128 + 1) <= 4096 unless that is less than ROWS). */
enum { QUANTIZE_THREADS = 256, MATVEC_THREADS = 128, ROWS = 4, MAX_ROWS = 16, ITEM_BUDGET = 4096 };
enum { PLANES = 8 }; /* int8 planes; plane PLANES holds the (d, isum) half2s */

/* 16-byte units per plane: the K-blocks rounded up to a multiple of 4 (ceil(K / 512) * 4). */
static __host__ __device__ __forceinline__ int pt_nblk(int K)
{
    return (K + 511) / 512 * 4;
}

/* Rows per CTA: the multiple of ROWS in [ROWS, rmax] whose (row group, K-block) items fill the CTA's threads best
 * over whole iterations (the first best; stop at a full fill). rmax = 4096 / (bpr + 1) clamped into [ROWS, 16] and
 * rounded down to a multiple of ROWS. prepare picks it; launch reads it back from the shared memory it sized. */
static int pt_rows_per_cta(int bpr)
{
    int rmax = ITEM_BUDGET / (bpr + 1);
    rmax = rmax < ROWS ? ROWS : rmax > MAX_ROWS ? MAX_ROWS : rmax;
    rmax -= rmax % ROWS;
    int best = ROWS;
    double best_util = 0.0;
    for (int r = ROWS; r <= rmax; r += ROWS) {
        const long items = (long)(r / ROWS) * bpr;
        const long iters = (items + MATVEC_THREADS - 1) / MATVEC_THREADS;
        const double util = (double)items / (double)(iters * MATVEC_THREADS);
        if (util > best_util + 1e-9) {
            best_util = util;
            best = r;
        }
        if (util > 0.999)
            break;
    }
    return best;
}

/* Dynamic shared memory of the mat-vec: one float per (row, K-block), rows padded to bpr + 1 floats. */
static size_t pt_smem(int rows_per_cta, int bpr)
{
    return (size_t)rows_per_cta * (size_t)(bpr + 1) * sizeof(float);
}

__global__ void __launch_bounds__(QUANTIZE_THREADS, 1) hsdr_cu_quantize_pt(const float *x, int K, uint8_t *ya)
{
#if __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); /* the fork's ggml_cuda_pdl_lc: the mat-vec may launch now */
#endif
    const int i = blockIdx.x * blockDim.x + threadIdx.x; /* < ceil(K / 256) * 256 */
    const int lane = threadIdx.x & 31;
    /* K is a multiple of 32, so a warp is wholly inside or wholly past K; past it, all lanes still take part in the
     * shuffles (on zeros) and store nothing. A 32-block is exactly one warp. */
    const bool in = i < K;
    float d;
    int q, isum;
    hsdr_cu_q8_1_lane(in ? x[i] : 0.0f, d, q, isum);
    if (!in)
        return;
    const int nblk = pt_nblk(K), kb = i >> 7, e = i & 127;
    ya[((size_t)(e >> 4) * nblk + kb) * 16 + (e & 15)] = (uint8_t)(int8_t)q;
    if (lane == 0) { /* the first element of the 32-block e / 32 */
        ((uint32_t *)(ya + (size_t)PLANES * nblk * 16))[kb * 4 + (e >> 5)] = hsdr_cu_d_isum(d, isum);
    }
}

/* One 128-block of a row (its 28 bytes at blk) against its K-block's activations (a[p][c]: plane p, word c = the
 * int8 elements 16 p + 4 c .. 16 p + 4 c + 3; ds[k]: the half2 of 32-block k): the block's value d_w * acc. */
static __device__ __forceinline__ float block_value(const uint8_t *blk, const int (&a)[PLANES][4], const int (&ds)[4])
{
    int sumi[4] = {0, 0, 0, 0}; /* raw digits against q: sum (t + 1) q per 32-block; exact */
    /* element e of the K-block is plane e / 16, word (e % 16) / 4 */
    hsdr_cu_ptq1_0_sums(blk, [&a](int e) { return a[e >> 4][(e & 15) >> 2]; }, sumi);
    /* sumi_k - isum_k = sum (t - 1) q exactly; the chain from +0 in k order, then one rounded product */
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t w = (uint32_t)ds[k];
        const float d8 = __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
        acc = __fmaf_rn(d8, (float)(sumi[k] - (int)(short)(w >> 16)), acc);
    }
    const float dw = __half2float(*(const __half *)(blk + 26));
    return __fmul_rn(dw, acc); /* rounded on its own: no fma with the row's sum */
}

/* CTA b: rows b * rows_per_cta .. (at most rows_per_cta, ROWS per item); 128 threads; dynamic shared memory
 * pt_smem(rows_per_cta, bpr). */
__global__ void __launch_bounds__(MATVEC_THREADS, 4)
    hsdr_cu_pt_rows(const uint8_t *W, const int4 *ya, float *y, int N, int bpr, int nblk, int rows_per_cta)
{
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* the fork's ggml_cuda_pdl_sync: the encode's activations are complete */
#endif
    extern __shared__ float part[]; /* part[row * (bpr + 1) + kb]: the block value of local row, K-block kb */
    const int stride = bpr + 1;
    const int row0 = blockIdx.x * rows_per_cta;
    const int n_rows_cta = min(rows_per_cta, N - row0);
    const int n_items = rows_per_cta / ROWS * bpr;
    for (int idx = threadIdx.x; idx < n_items; idx += MATVEC_THREADS) {
        const int rg = idx / bpr, kbx = idx - rg * bpr;
        /* the K-block's activations, loaded once for the item's ROWS rows: the (d, isum) unit first, then planes
         * 0..4, then planes 5..7 */
        int ds[4], a[PLANES][4];
        {
            const int4 u = ya[PLANES * nblk + kbx];
            ds[0] = u.x, ds[1] = u.y, ds[2] = u.z, ds[3] = u.w;
        }
#pragma unroll
        for (int p = 0; p < 5; p++) {
            const int4 u = ya[p * nblk + kbx];
            a[p][0] = u.x, a[p][1] = u.y, a[p][2] = u.z, a[p][3] = u.w;
        }
#pragma unroll
        for (int p = 5; p < PLANES; p++) {
            const int4 u = ya[p * nblk + kbx];
            a[p][0] = u.x, a[p][1] = u.y, a[p][2] = u.z, a[p][3] = u.w;
        }
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            const int lr = rg * ROWS + i;
            /* rows past the matrix (the last CTA) read the CTA's last row and store into their own unused slot */
            const int rc = min(lr, n_rows_cta - 1);
            const uint8_t *blk = W + ((size_t)(row0 + rc) * bpr + kbx) * HSDR_PTQ1_0_BLOCK;
            part[lr * stride + kbx] = block_value(blk, a, ds);
        }
    }
    __syncthreads();
    const int r = threadIdx.x;
    if (r >= n_rows_cta)
        return;
    /* four accumulators from +0: block 4 i + m into s[m] for each complete quad in increasing i, then the
     * remaining bpr % 4 blocks into s[0] in order; y = (s0 + s1) + (s2 + s3) */
    const float *pr = part + r * stride;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    const int quads = bpr / 4;
    for (int i = 0; i < quads; i++) {
        s0 = __fadd_rn(s0, pr[4 * i + 0]);
        s1 = __fadd_rn(s1, pr[4 * i + 1]);
        s2 = __fadd_rn(s2, pr[4 * i + 2]);
        s3 = __fadd_rn(s3, pr[4 * i + 3]);
    }
    for (int b = 4 * quads; b < bpr; b++)
        s0 = __fadd_rn(s0, pr[b]);
    y[row0 + r] = __fadd_rn(__fadd_rn(s0, s1), __fadd_rn(s2, s3));
}

/* One column's activations: the fork keeps block_q8_1's bytes per row for the padded K: 9 planes of nblk 16-byte
 * units (8 int8 planes, then the half2 plane) = 36 bytes per 32 of the padded K. */
static size_t act_bytes(int K)
{
    return (size_t)(PLANES + 1) * (size_t)pt_nblk(K) * 16;
}

/* The launch, once per run (create): rows per CTA by the fork's rule, ceil(N / rows_per_cta) CTAs of 128 threads,
 * the partials' shared memory checked against this device and allowed where it exceeds the default 48 KiB. */
static int prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    const int K = r->K, N = r->N;
    int dev = 0, smem_max = 0, bpr = 0, rows = 0;
    size_t smem = 0;
    if (K <= 0 || K % 128 != 0 || N <= 0) {
        snprintf(err, errlen, "K = %d, N = %d: the PT mat-vec needs K a positive multiple of 128 and N > 0", K, N);
        return -1;
    }
    bpr = K / 128;
    rows = pt_rows_per_cta(bpr);
    smem = pt_smem(rows, bpr);
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem > (size_t)smem_max) {
        snprintf(err, errlen,
                 "K = %d: the PT mat-vec keeps %d rows x %d block values (%zu bytes) in shared memory; this device "
                 "allows %d per CTA",
                 K, rows, bpr + 1, smem, smem_max);
        return -1;
    }
    HSDR_CU(hsdr_cu_allow_smem(hsdr_cu_pt_rows, smem));
    r->shape.kernel = reinterpret_cast<void (*)(void)>(hsdr_cu_pt_rows);
    r->shape.ctas = (unsigned)((N + rows - 1) / rows);
    r->shape.threads = MATVEC_THREADS;
    r->shape.smem = smem;
    return 0;
fail:
    return -1;
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    const int K = r->K, bpr = K / 128, nblk = pt_nblk(K);
    const int rows = (int)(r->shape.smem / pt_smem(1, bpr)); /* prepare's pt_rows_per_cta(bpr) */
    const unsigned enc_ctas = (unsigned)((K + QUANTIZE_THREADS - 1) / QUANTIZE_THREADS); /* covers K exactly */
    uint8_t *ya = (uint8_t *)r->act;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice); i++)
        hsdr_cu_quantize_pt<<<enc_ctas, QUANTIZE_THREADS, 0, r->stream>>>(r->x, K, ya);
    cudaError_t e = cudaGetLastError();
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, hsdr_cu_pt_rows, W, (const int4 *)ya, r->y, r->N, bpr, nblk, rows);
    return e;
}

static const hsdr_cu_kernels kernels = {1, act_bytes, prepare, launch, NULL, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_production_pt_ops = HSDR_CU_OPS(kernels);
