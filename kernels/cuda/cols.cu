/* cuda.cols (our baseline, not the fork's kernel): a dedicated 1..8-column PTQ1_0 mat-vec after the design the fork
 * reports for its multi-column path (spec/ptq1_0.md section 5), bit-identical per column to hsdr_matvec_q8_1 in
 * hsdr_cuda_cols_order(K, N) (8, 16 or 32 lanes per row, one warp).
 *   Idea     one read of the weights for up to 8 activation columns (decode streams, draft tokens): every column
 *            staged in shared memory per CTA, floor-form digits (one multiply per two bytes) into dp4a, 8/16/32 lanes
 *            a row by the row count, the mat-vec launched programmatically dependent on the encode.
 *   Layout   weights: PTQ1_0 as stored. Activations: Q8_1 per column (hsdr_q8_1_quantize's values) with each
 *            32-block's exact sum; in shared memory per 128-block its values, four scales and exact sums at a
 *            176-byte stride.
 *   Stages   encode (quantize every column), reduce (the mat-vec: decode, dot, scale and merge fused).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.cols *' --set cols=1,8
 *
 * encode  hsdr_cu_quantize_q8_1 over the columns (Q8_1 blocks and their exact integer sums); it releases the mat-vec
 *         at once (programmatic dependent launch), so the mat-vec's CTAs start and request their first weight blocks
 *         while the activations are still being quantized.
 * matvec  CTAs of 512 threads (256 from 3 columns), as many as fit on the device; each takes an equal share of the
 *         warp items (one item = the 32 / L rows of one warp, L = 8, 16 or 32 lanes per row by the row count), so
 *         every SM gets the same number of rows. The activations of every column are staged in shared memory once
 *         per CTA, per 128-block with its four scales and exact sums (176-byte stride: 16-byte loads, no bank
 *         conflicts between the 8 lanes of a row). Lane l of a row owns blocks l, l + L, ... and requests the next
 *         block's seven words (one address) before decoding the current one.
 * decode  the floor form of the digits: with g_n = floor(byte * 3^n / 256) (g_0 = 0), digit n = g_{n+1} - 3 g_n, so
 *         sum_n t_n a_n = sum_{n>=1} g_n a_{n-1} - 3 sum_{n>=1} g_n a_n. Bytes 0, 2 and 1, 3 of a word sit in 16-bit
 *         lanes; byte * 3^n < 2^16 for n <= 5, so one multiply per lane pair gives g_n of two bytes in their high
 *         halves with nothing to mask, and one byte permute packs the four g_n for dp4a (unsigned digits against
 *         signed activations). Every integer sum is exact; the -3 is applied once per 32-block, and so is the exact
 *         activation sum of the bias. The float sequence is the generic kernel's, with explicit intrinsics only.
 * host    create works out the launch once (prepare: the kernel for the lanes and the column count, its shared
 *         memory, the CTAs that fit); enqueue only launches the two kernels, so the harness's marks hold device work
 *         alone. The run takes r->cols columns (1..8: the harness's cols axis); hsdr_cuda_cols checks
 *         them through the same run.
 * (docs/perf-notes.md: versions 1..5, what each changed and measured.) */
#include <stdlib.h>

#include "common.cuh"
extern "C" {
#include "matvec.h"
}

/* Staged activations, per column and 128-block (ACT_STRIDE bytes, a multiple of 16): the 128 int8 values, the four
 * Q8_1 scales (float), the four exact sums (int), 16 bytes of pad. The 176-byte stride puts the 16-byte loads of 8
 * consecutive blocks (the lanes of a row) into 8 disjoint groups of 4 banks. */
enum { MAX_COLS = 8, ACT_STRIDE = 176, ACT_D8 = 128, ACT_SUM = 144 };

/* CTA size by column count: two columns or fewer fit 64 registers per thread at 512 threads. */
static constexpr __host__ __device__ int cta_threads(int NC)
{
    return NC <= 2 ? 512 : 256;
}

/* Bytes of one column's staged activations. */
static size_t col_bytes(int K)
{
    return (size_t)(K / 128) * ACT_STRIDE;
}

/* The seven words of the 128-block at p (streamed once: not kept in L1/L2). */
static __device__ __forceinline__ void load7(const uint32_t *p, uint32_t wd[7])
{
#pragma unroll
    for (int j = 0; j < 7; j++)
        wd[j] = __ldcs(p + j);
}

/* One 128-block of one row (words wd) against NC columns (their staged block at blk + c * cbytes):
 * p[c] = fmaf(d_w, the fmaf chain of d8_k * isum_k, p[c]). Digit-major: for digit n the floor digits g of the six
 * qs words are made once (g[j] = bytes floor(byte * 3^(n+1) / 256)) and dotted with the activations of digit n,
 * which for qs[0..15] are 16 consecutive bytes (one 16-byte load for four words) and for qs[16..23] 8 (one 8-byte
 * load for two): s1 collects g_{n+1} a_n, s3 collects g_n a_n (the previous digit's g), sum t a = s1 - 3 s3. */
template <int NC>
static __device__ __forceinline__ void block_dot(const uint32_t wd[7], const int8_t *blk, size_t cbytes, float p[NC])
{
    uint32_t even[6], odd[6], prev[6];
#pragma unroll
    for (int j = 0; j < 6; j++) {
        even[j] = wd[j] & 0x00ff00ffu;        /* bytes 0 and 2 in 16-bit lanes */
        odd[j] = (wd[j] >> 8) & 0x00ff00ffu;  /* bytes 1 and 3 */
    }
    int s1[NC][4], s3[NC][4];
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int4 sums = *(const int4 *)(blk + c * cbytes + ACT_SUM);
        s1[c][0] = -sums.x, s1[c][1] = -sums.y, s1[c][2] = -sums.z, s1[c][3] = -sums.w; /* the bias: -sum q */
#pragma unroll
        for (int k = 0; k < 4; k++)
            s3[c][k] = 0;
    }
    uint32_t pw = 1;
#pragma unroll
    for (int n = 0; n < 5; n++) {
        pw *= 3u; /* 3^(n+1): byte * 3^(n+1) < 2^16, so the lanes never carry into each other */
        uint32_t g[6];
#pragma unroll
        for (int j = 0; j < 6; j++)
            g[j] = __byte_perm(even[j] * pw, odd[j] * pw, 0x7351); /* the lanes' high bytes, in byte order */
        const int k0 = n >> 1, k1 = (80 + 8 * n) >> 5; /* the 32-blocks of digit n's weights: 16n + m, 80 + 8n + m */
#pragma unroll
        for (int c = 0; c < NC; c++) {
            const int8_t *a = blk + c * cbytes;
            const int4 a0 = *(const int4 *)(a + 16 * n);      /* weights 16n .. 16n + 15: words 0..3 */
            const int2 a1 = *(const int2 *)(a + 80 + 8 * n);  /* weights 80 + 8n .. + 7: words 4, 5 */
            s1[c][k0] = hsdr_cu_dp4a_us(g[0], a0.x, s1[c][k0]);
            s1[c][k0] = hsdr_cu_dp4a_us(g[1], a0.y, s1[c][k0]);
            s1[c][k0] = hsdr_cu_dp4a_us(g[2], a0.z, s1[c][k0]);
            s1[c][k0] = hsdr_cu_dp4a_us(g[3], a0.w, s1[c][k0]);
            s1[c][k1] = hsdr_cu_dp4a_us(g[4], a1.x, s1[c][k1]);
            s1[c][k1] = hsdr_cu_dp4a_us(g[5], a1.y, s1[c][k1]);
            if (n > 0) {
                s3[c][k0] = hsdr_cu_dp4a_us(prev[0], a0.x, s3[c][k0]);
                s3[c][k0] = hsdr_cu_dp4a_us(prev[1], a0.y, s3[c][k0]);
                s3[c][k0] = hsdr_cu_dp4a_us(prev[2], a0.z, s3[c][k0]);
                s3[c][k0] = hsdr_cu_dp4a_us(prev[3], a0.w, s3[c][k0]);
                s3[c][k1] = hsdr_cu_dp4a_us(prev[4], a1.x, s3[c][k1]);
                s3[c][k1] = hsdr_cu_dp4a_us(prev[5], a1.y, s3[c][k1]);
            }
        }
#pragma unroll
        for (int j = 0; j < 6; j++)
            prev[j] = g[j];
    }
    /* qh[0..1]: raw digits */
    int h0, h1;
    qh_digits(wd[6], &h0, &h1);
    const float dw = __half2float(__ushort_as_half((unsigned short)(wd[6] >> 16)));
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int8_t *a = blk + c * cbytes;
        const int2 ah = *(const int2 *)(a + 120);
        const float4 d8 = *(const float4 *)(a + ACT_D8);
        s1[c][3] = __dp4a(h1, ah.y, __dp4a(h0, ah.x, s1[c][3]));
        /* sum (t + 1) q - sum q = sum t q, exact; then the generic kernel's float sequence */
        float acc = __fmaf_rn(d8.x, (float)(s1[c][0] - 3 * s3[c][0]), 0.0f);
        acc = __fmaf_rn(d8.y, (float)(s1[c][1] - 3 * s3[c][1]), acc);
        acc = __fmaf_rn(d8.z, (float)(s1[c][2] - 3 * s3[c][2]), acc);
        acc = __fmaf_rn(d8.w, (float)(s1[c][3] - 3 * s3[c][3]), acc);
        p[c] = __fmaf_rn(dw, acc, p[c]);
    }
}

/* The mat-vec: L lanes per row, NC columns (y[c * N + row]). */
template <int L, int NC>
__global__ void __launch_bounds__(cta_threads(NC))
    hsdr_cu_cols_rows(const uint8_t *W, const hsdr_cu_q8_1 *q, const int *qsum, int K, int N, float *y)
{
    constexpr int RPW = 32 / L, WARPS = cta_threads(NC) / 32; /* rows per warp item, warps per CTA */
    extern __shared__ int4 smem4[];
    int8_t *smem = (int8_t *)smem4;
    const int G = K / 128;
    const size_t cbytes = (size_t)G * ACT_STRIDE;
    const int lane = threadIdx.x & 31, sub = lane & (L - 1), rw = lane / L;
    /* this CTA's equal share of the warp items */
    const long items = (N + RPW - 1) / RPW;
    const long i1 = items * (blockIdx.x + 1) / gridDim.x;
    long item = items * blockIdx.x / gridDim.x + (threadIdx.x >> 5);
    const size_t row_words = (size_t)G * (HSDR_PTQ1_0_BLOCK / 4);
    /* the first block of the first row, requested before the activations exist */
    uint32_t cur[7];
    {
        const long row = item * RPW + rw;
        if (item < i1 && row < N && sub < G)
            load7((const uint32_t *)W + (size_t)row * row_words + (size_t)sub * 7, cur);
    }
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* the encode has finished and its writes are visible */
#endif
    for (int c = 0; c < NC; c++) {
        int8_t *sq = smem + c * cbytes;
        const hsdr_cu_q8_1 *qc = q + (size_t)c * (K / 32);
        for (int i = threadIdx.x; i < K / 32; i += blockDim.x) { /* Q8_1 block i: 128-block i / 4, part i % 4 */
            int8_t *blk = sq + (size_t)(i >> 2) * ACT_STRIDE;
            ((float *)(blk + ACT_D8))[i & 3] = __half2float(qc[i].d);
            ((int *)(blk + ACT_SUM))[i & 3] = qsum[(size_t)c * (K / 32) + i];
        }
        for (int i = threadIdx.x; i < K / 4; i += blockDim.x) { /* word i: Q8_1 block i / 8, word i % 8 */
            const int qb = i >> 3, w = 4 * (i & 7);
            *(int *)(sq + (size_t)(qb >> 2) * ACT_STRIDE + 32 * (qb & 3) + w) = *(const int *)(qc[qb].qs + w);
        }
    }
    __syncthreads();
    for (bool first = true; item < i1; item += WARPS, first = false) { /* uniform per warp */
        const long row = item * RPW + rw;
        float p[NC];
#pragma unroll
        for (int c = 0; c < NC; c++)
            p[c] = 0.0f;
        if (row < N && sub < G) {
            const uint32_t *wp = (const uint32_t *)W + (size_t)row * row_words + (size_t)sub * 7;
            if (!first)
                load7(wp, cur);
            for (int b = sub; b < G; b += L) {
                uint32_t next[7];
                const bool more = b + L < G;
                if (more)
                    load7(wp + 7 * L, next); /* one block ahead */
                block_dot<NC>(cur, smem + (size_t)b * ACT_STRIDE, cbytes, p);
                wp += 7 * L;
#pragma unroll
                for (int j = 0; j < 7; j++)
                    cur[j] = more ? next[j] : 0u;
            }
        }
#pragma unroll
        for (int c = 0; c < NC; c++)
            for (int o = L / 2; o >= 1; o >>= 1) /* every lane takes part: rows past N add zeros */
                p[c] = __fadd_rn(p[c], __shfl_xor_sync(HSDR_FULL_MASK, p[c], o));
        if (sub == 0 && row < N)
#pragma unroll
            for (int c = 0; c < NC; c++)
                y[(size_t)c * N + row] = p[c];
    }
}

/* ---- launches ---- */

typedef void (*rows_kernel)(const uint8_t *, const hsdr_cu_q8_1 *, const int *, int, int, float *);

template <int L>
static rows_kernel kernel_for_cols(int nc)
{
    switch (nc) {
    case 1: return hsdr_cu_cols_rows<L, 1>;
    case 2: return hsdr_cu_cols_rows<L, 2>;
    case 3: return hsdr_cu_cols_rows<L, 3>;
    case 4: return hsdr_cu_cols_rows<L, 4>;
    case 5: return hsdr_cu_cols_rows<L, 5>;
    case 6: return hsdr_cu_cols_rows<L, 6>;
    case 7: return hsdr_cu_cols_rows<L, 7>;
    default: return hsdr_cu_cols_rows<L, 8>;
    }
}

static rows_kernel kernel_for(int lanes, int nc)
{
    return lanes == 8 ? kernel_for_cols<8>(nc) : lanes == 16 ? kernel_for_cols<16>(nc) : kernel_for_cols<32>(nc);
}

/* One column's activation buffer: its Q8_1 blocks and their exact sums. A run of nc columns has nc of them, laid out
 * as the Q8_1 blocks of every column, then the sums of every column. */
static size_t act_bytes(int K)
{
    return (sizeof(hsdr_cu_q8_1) + sizeof(int)) * (size_t)(K / 32);
}

/* 0 when the kernel takes ncols columns of K x N on this device, else -1 with the reason. */
extern "C" int hsdr_cuda_cols_supported(int K, int N, int ncols, char *err, size_t errlen)
{
    int rc = -1, dev = 0, smem_max = 0;
    if (ncols < 1 || ncols > MAX_COLS || K <= 0 || K % 128 || N <= 0) {
        snprintf(err, errlen, "ncols = %d, K = %d, N = %d: need 1..%d columns, K a positive multiple of 128, N > 0",
                 ncols, K, N, MAX_COLS);
        return -1;
    }
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (col_bytes(K) * (size_t)ncols > (size_t)smem_max) {
        snprintf(err, errlen, "K = %d with %d columns stages %zu bytes of activations; this device allows %d per CTA",
                 K, ncols, col_bytes(K) * (size_t)ncols, smem_max);
        return -1;
    }
    rc = 0;
fail:
    return rc;
}

/* Everything the launch needs from the host, once per run (create), so that the launch path only launches: the
 * case checked against this device (hsdr_cuda_cols_supported's message), the mat-vec kernel for the
 * row's lanes and r->cols, its shared memory allowed, and as many CTAs as fit on the device at once. */
static int prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    if (hsdr_cuda_cols_supported(r->K, r->N, r->cols, err, errlen) != 0)
        return -1;
    const int nc = r->cols, threads = cta_threads(nc), lanes = hsdr_cuda_cols_order(r->K, r->N).lanes;
    const rows_kernel kern = kernel_for(lanes, nc);
    const size_t smem = col_bytes(r->K) * (size_t)nc;
    const long items = (r->N + 32 / lanes - 1) / (32 / lanes);
    int dev = 0, sms = 0, per_sm = 0;
    long fit;
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(hsdr_cu_allow_smem(kern, smem));
    HSDR_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem));
    fit = (long)sms * (per_sm > 0 ? per_sm : 1);
    r->shape.kernel = reinterpret_cast<void (*)(void)>(kern);
    r->shape.ctas = (unsigned)(items < fit ? items : fit);
    r->shape.threads = (unsigned)threads;
    r->shape.smem = smem;
    return 0;
fail:
    return -1;
}

/* The encode of r->cols columns, then the mat-vec released early by it (programmatic dependent launch), in the
 * shape prepare worked out. */
static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    const int K = r->K, nc = r->cols;
    hsdr_cu_q8_1 *q = (hsdr_cu_q8_1 *)r->act;
    int *qsum = (int *)(q + (size_t)nc * (K / 32));
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice); i++)
        hsdr_cu_quantize_q8_1<<<dim3(hsdr_cu_quantize_ctas(K), nc), HSDR_CU_QUANTIZE_THREADS, 0, r->stream>>>(
            r->x, K, q, qsum);
    cudaError_t e = cudaGetLastError();
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, reinterpret_cast<rows_kernel>(r->shape.kernel), W, (const hsdr_cu_q8_1 *)q,
                               (const int *)qsum, K, r->N, r->y);
    return e;
}

static const hsdr_cu_kernels kernels = {MAX_COLS, act_bytes, prepare, launch, NULL, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_cols_ops = HSDR_CU_OPS(kernels);

/* The checking function of the cols axis: the run the harness times (create, set_input, one sample, output), with y
 * poisoned (NaN) first so that an element the kernel leaves unwritten cannot pass. */
extern "C" int hsdr_cuda_cols(const uint8_t *W, const float *X, int K, int N, int ncols, float *Y,
                                         char *err, size_t errlen)
{
    hsdr_exec e = {};
    e.K = K, e.N = N, e.R = 1, e.cols = ncols;
    hsdr_device_run *r = NULL;
    int rc = -1;
    /* supported() first: its message for any size it refuses, as the callers (tests, a cols case of hsdr run) expect */
    if (hsdr_cuda_cols_supported(K, N, ncols, err, errlen) != 0 ||
        hsdr_cu_open(&kernels, "cuda.cols", &e, W, 1, &r, err, errlen) != 0)
        return -1;
    HSDR_CU(cudaMemset(r->y, 0xff, sizeof(float) * (size_t)N * ncols));
    if (hsdr_cu_set_input(r, X, err, errlen) != 0 || hsdr_cu_run_once(r, 0, err, errlen) != 0 ||
        hsdr_cu_output(r, Y, err, errlen) != 0)
        goto fail;
    rc = 0;
fail:
    hsdr_cu_destroy(r);
    return rc;
}
