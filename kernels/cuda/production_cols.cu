/* cuda.production_cols: the dedicated 1..8-column PTQ1_0 mat-vec (spec/ptq1_0.md section 5), bit-identical per
 * column to hsdr_matvec_q8_1_lanes with hsdr_cuda_cols_lanes(K, N) lanes per row.
 *
 * encode  hsdr_cu_quantize_q8_1 over the columns (Q8_1 blocks and their exact integer sums); it releases the mat-vec
 *         at once (programmatic dependent launch), so the mat-vec's CTAs start and request their first weight blocks
 *         while the activations are still being quantized.
 * matvec  CTAs of 512 threads (256 from 3 columns), as many as fit on the device; each takes an equal share of the
 *         warp items (one item = the 32 / L rows of one warp, L = 8, 16 or 32 lanes per row by the row count), so
 *         every SM gets the same number of rows. The activations of every column are staged in shared memory once
 *         per CTA (132-byte block stride: the L lanes of a row read L different banks). Lane l of a row owns blocks
 *         l, l + L, ... and requests the next block's seven words before decoding the current one.
 * decode  the floor form of the digits: with g_n = floor(byte * 3^n / 256) (g_0 = 0), digit n = g_{n+1} - 3 g_n, so
 *         sum_n t_n a_n = sum_{n>=1} g_n a_{n-1} - 3 sum_{n>=1} g_n a_n. Bytes 0, 2 and 1, 3 of a word sit in 16-bit
 *         lanes; byte * 3^n < 2^16 for n <= 5, so one multiply per lane pair gives g_n of two bytes in their high
 *         halves with nothing to mask, and one byte permute packs the four g_n for dp4a (unsigned digits against
 *         signed activations). Every integer sum is exact; the -3 is applied once per 32-block, and so is the exact
 *         activation sum of the bias. The float sequence is the generic kernel's, with explicit intrinsics only. */
#include <stdlib.h>

#include "common.cuh"
extern "C" {
#include "matvec.h"
}

enum { MAX_COLS = 8, ACT_STRIDE = 132 };

/* CTA size by column count: two columns or fewer fit 64 registers per thread at 512 threads. */
static constexpr __host__ __device__ int cta_threads(int NC)
{
    return NC <= 2 ? 512 : 256;
}

/* Bytes of one column's staged activations: int8 values at b * ACT_STRIDE, then K/32 float scales and K/32 sums. */
static __host__ __device__ size_t col_bytes(int K)
{
    return (size_t)(K / 128) * ACT_STRIDE + (sizeof(float) + sizeof(int)) * (size_t)(K / 32);
}

/* dp4a of four unsigned bytes g (0..242) against four signed activations. */
static __device__ __forceinline__ int dp4a_us(uint32_t g, int a, int c)
{
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(g), "r"(a), "r"(c));
    return d;
}

/* The floor digits of a qs word's four bytes: g[n - 1] = bytes floor(byte * 3^n / 256), n = 1..5, in byte order. */
static __device__ __forceinline__ void floor_digits(uint32_t word, uint32_t g[5])
{
    const uint32_t even = word & 0x00ff00ffu, odd = (word >> 8) & 0x00ff00ffu;
    uint32_t p = 1;
#pragma unroll
    for (int n = 0; n < 5; n++) {
        p *= 3u;
        g[n] = __byte_perm(even * p, odd * p, 0x7351); /* high bytes of the lanes: bytes 0, 1, 2, 3 */
    }
}

/* One qs word into the 32-block sums of one column: s1[k] += sum g_n a_{n-1}, s3[k] += sum g_n a_n (to be multiplied
 * by -3), where digit n of the word's byte m is weight first + step * n + m. */
static __device__ __forceinline__ void qs_word(const uint32_t g[5], int first, int step, const int8_t *a, int s1[4],
                                               int s3[4])
{
    int act[5];
#pragma unroll
    for (int n = 0; n < 5; n++)
        act[n] = act4(a, first + step * n);
#pragma unroll
    for (int n = 0; n < 5; n++) {
        const int w = first + step * n; /* digit n's weights, which a_n (the n-th activations) belong to */
        s1[w >> 5] = dp4a_us(g[n], act[n], s1[w >> 5]); /* g_{n+1} a_n */
        if (n < 4) {
            const int w1 = first + step * (n + 1);
            s3[w1 >> 5] = dp4a_us(g[n], act[n + 1], s3[w1 >> 5]); /* g_{n+1} a_{n+1} */
        }
    }
}

/* One 128-block of one row (words wd) against NC columns: p[c] = fmaf(d_w, the fmaf chain of d8_k * isum_k, p[c]). */
template <int NC>
static __device__ __forceinline__ void block_dot(const uint32_t wd[7], const int8_t *smem, size_t cbytes, int b, int G,
                                                 float p[NC])
{
    int s1[NC][4], s3[NC][4];
#pragma unroll
    for (int c = 0; c < NC; c++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            s1[c][k] = s3[c][k] = 0;
    /* qs[0..15]: digit n of qs[m] is weight 16n + m; qs[16..23]: digit n of qs[16 + m] is weight 80 + 8n + m */
#pragma unroll
    for (int j = 0; j < 6; j++) {
        uint32_t g[5];
        floor_digits(wd[j], g);
#pragma unroll
        for (int c = 0; c < NC; c++)
            qs_word(g, j < 4 ? 4 * j : 80 + 4 * (j - 4), j < 4 ? 16 : 8, smem + c * cbytes + (size_t)b * ACT_STRIDE,
                    s1[c], s3[c]);
    }
    /* qh[0..1] (4 digits each: digit n of qh[h] is weight 120 + 2n + h), raw digits, then the fp16 scale */
    uint32_t even = wd[6] & 0xffu, odd = (wd[6] >> 8) & 0xffu;
    int dig[4];
#pragma unroll
    for (int n = 0; n < 4; n++) {
        even *= 3u, odd *= 3u;
        dig[n] = (int)(((even >> 8) & 3u) | (odd & 0x300u));
        even &= 0xffu, odd &= 0xffu;
    }
    const float dw = __half2float(__ushort_as_half((unsigned short)(wd[6] >> 16)));
#pragma unroll
    for (int c = 0; c < NC; c++) {
        const int8_t *a = smem + c * cbytes + (size_t)b * ACT_STRIDE;
        const float *sd = (const float *)(smem + c * cbytes + (size_t)G * ACT_STRIDE); /* K/32 = 4G scales */
        const int *ss = (const int *)(sd + 4 * G);                                      /* then K/32 sums */
        const float *d8 = sd + 4 * b;
        const int *qs = ss + 4 * b;
        s1[c][3] = __dp4a(dig[0] | dig[1] << 16, act4(a, 120), s1[c][3]);
        s1[c][3] = __dp4a(dig[2] | dig[3] << 16, act4(a, 124), s1[c][3]);
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; k++) /* sum (t + 1) q - sum q = sum t q, exact */
            acc = __fmaf_rn(d8[k], (float)(s1[c][k] - 3 * s3[c][k] - qs[k]), acc);
        p[c] = __fmaf_rn(dw, acc, p[c]);
    }
}

/* The mat-vec: L lanes per row, NC columns (y[c * N + row]). */
template <int L, int NC>
__global__ void __launch_bounds__(cta_threads(NC))
    hsdr_cu_production_cols_rows(const uint8_t *W, const hsdr_cu_q8_1 *q, const int *qsum, int K, int N, float *y)
{
    constexpr int RPW = 32 / L, WARPS = cta_threads(NC) / 32; /* rows per warp item, warps per CTA */
    extern __shared__ uint32_t smem32[];
    int8_t *smem = (int8_t *)smem32;
    const int G = K / 128;
    const size_t cbytes = col_bytes(K);
    const int lane = threadIdx.x & 31, sub = lane & (L - 1), rw = lane / L;
    /* this CTA's equal share of the warp items */
    const long items = (N + RPW - 1) / RPW;
    const long i1 = items * (blockIdx.x + 1) / gridDim.x;
    long item = items * blockIdx.x / gridDim.x + (threadIdx.x >> 5);
    /* the first block of the first row, requested before the activations exist */
    uint32_t cur[7];
    {
        const long row = item * RPW + rw;
        const bool live = item < i1 && row < N;
        load_block(W + (size_t)(live ? row : 0) * G * HSDR_PTQ1_0_BLOCK, live ? sub : G, G, cur);
    }
#if __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize(); /* the encode has finished and its writes are visible */
#endif
    for (int c = 0; c < NC; c++) {
        int8_t *sq = smem + c * cbytes;
        float *sd = (float *)(sq + (size_t)G * ACT_STRIDE);
        int *ss = (int *)(sd + K / 32);
        const hsdr_cu_q8_1 *qc = q + (size_t)c * (K / 32);
        for (int i = threadIdx.x; i < K / 32; i += blockDim.x) {
            sd[i] = __half2float(qc[i].d);
            ss[i] = qsum[(size_t)c * (K / 32) + i];
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
        if (row < N) {
            const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
            if (!first)
                load_block(wrow, sub, G, cur);
            for (int b = sub; b < G; b += L) {
                uint32_t next[7];
                load_block(wrow, b + L, G, next); /* one block ahead */
                block_dot<NC>(cur, smem, cbytes, b, G, p);
#pragma unroll
                for (int j = 0; j < 7; j++)
                    cur[j] = next[j];
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
    case 1: return hsdr_cu_production_cols_rows<L, 1>;
    case 2: return hsdr_cu_production_cols_rows<L, 2>;
    case 3: return hsdr_cu_production_cols_rows<L, 3>;
    case 4: return hsdr_cu_production_cols_rows<L, 4>;
    case 5: return hsdr_cu_production_cols_rows<L, 5>;
    case 6: return hsdr_cu_production_cols_rows<L, 6>;
    case 7: return hsdr_cu_production_cols_rows<L, 7>;
    default: return hsdr_cu_production_cols_rows<L, 8>;
    }
}

static rows_kernel kernel_for(int lanes, int nc)
{
    return lanes == 8 ? kernel_for_cols<8>(nc) : lanes == 16 ? kernel_for_cols<16>(nc) : kernel_for_cols<32>(nc);
}

/* The activation buffer of nc columns: the Q8_1 blocks of every column, then their exact sums. */
static size_t act_bytes_cols(int K, int nc)
{
    return (sizeof(hsdr_cu_q8_1) + sizeof(int)) * (size_t)(K / 32) * (size_t)nc;
}

static size_t act_bytes(int K)
{
    return act_bytes_cols(K, 1);
}

/* Enqueue the encode (encode_reps times) and the mat-vec (rows_reps times) of nc columns on stream s. The mat-vec's
 * launch shape is worked out first, so nothing on the host stands between the two launches. */
static cudaError_t enqueue(cudaStream_t s, const uint8_t *W, const float *x, void *act, int K, int N, int nc, float *y,
                           int encode_reps, int rows_reps)
{
    hsdr_cu_q8_1 *q = (hsdr_cu_q8_1 *)act;
    int *qsum = (int *)(q + (size_t)nc * (K / 32));
    const int lanes = hsdr_cuda_cols_lanes(K, N), threads = cta_threads(nc);
    const rows_kernel kern = kernel_for(lanes, nc);
    const size_t smem = col_bytes(K) * (size_t)nc;
    int dev = 0, sms = 0, per_sm = 0, smem_max = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess)
        return e;
    if (smem > (size_t)smem_max)
        return cudaErrorInvalidValue; /* K x columns too large to stage (hsdr_cuda_production_cols says so first) */
    if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem)) != cudaSuccess)
        return e;
    const long items = (N + 32 / lanes - 1) / (32 / lanes), fit = (long)sms * (per_sm > 0 ? per_sm : 1);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(items < fit ? items : fit));
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    for (int i = 0; i < encode_reps; i++)
        hsdr_cu_quantize_q8_1<<<dim3(hsdr_cu_quantize_ctas(K), nc), HSDR_CU_QUANTIZE_THREADS, 0, s>>>(x, K, q, qsum);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    for (int i = 0; i < rows_reps && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, kern, W, (const hsdr_cu_q8_1 *)q, (const int *)qsum, K, N, y);
    return e;
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    return enqueue(r->stream, W, r->x, r->act, r->K, r->N, 1, r->y, hsdr_cu_reps(enc, skip, twice),
                   hsdr_cu_reps(red, skip, twice));
}

static const hsdr_cu_kernels kernels = {act_bytes, launch, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_production_cols_ops = HSDR_CU_OPS(kernels);

extern "C" int hsdr_cuda_production_cols(const uint8_t *W, const float *X, int K, int N, int ncols, float *Y,
                                         char *err, size_t errlen)
{
    uint8_t *dw = NULL;
    float *dx = NULL, *dy = NULL;
    void *act = NULL;
    int rc = -1, dev = 0, smem_max = 0;
    const size_t wbytes = (size_t)N * (K / 128) * HSDR_PTQ1_0_BLOCK;
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
    HSDR_CU(cudaMalloc((void **)&dw, wbytes));
    HSDR_CU(cudaMalloc((void **)&dx, sizeof(float) * (size_t)K * ncols));
    HSDR_CU(cudaMalloc((void **)&dy, sizeof(float) * (size_t)N * ncols));
    HSDR_CU(cudaMalloc(&act, act_bytes_cols(K, ncols)));
    HSDR_CU(cudaMemcpy(dw, W, wbytes, cudaMemcpyHostToDevice));
    HSDR_CU(cudaMemcpy(dx, X, sizeof(float) * (size_t)K * ncols, cudaMemcpyHostToDevice));
    HSDR_CU(cudaMemset(dy, 0xff, sizeof(float) * (size_t)N * ncols)); /* poison: NaN where nothing is written */
    HSDR_CU(enqueue(0, dw, dx, act, K, N, ncols, dy, 1, 1));
    HSDR_CU(cudaDeviceSynchronize());
    HSDR_CU(cudaMemcpy(Y, dy, sizeof(float) * (size_t)N * ncols, cudaMemcpyDeviceToHost));
    rc = 0;
fail:
    cudaFree(dw);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(act);
    return rc;
}
