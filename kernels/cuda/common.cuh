/* Shared host and device helpers of the CUDA kernels: error checking that names the call, and the Q8_1 block. */
#ifndef HSDR_CUDA_COMMON_CUH
#define HSDR_CUDA_COMMON_CUH
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda.h"

/* Every CUDA call is checked: on failure, write "call: error string" into err and jump to the caller's `fail`. */
#define HSDR_CU(call)                                                                                               \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            snprintf(err, errlen, "%s (%s:%d): %s", #call, __FILE__, __LINE__, cudaGetErrorString(e_));            \
            goto fail;                                                                                             \
        }                                                                                                          \
    } while (0)

/* A kernel launch: the launch error, then (checking interfaces only) the execution error. */
#define HSDR_CU_LAUNCHED() HSDR_CU(cudaGetLastError())

/* Q8_1 activation block (reference/q8.h): fp16 d, fp16 s = fp16(d * sum q), 32 int8. 36 bytes, 4-byte aligned. */
struct hsdr_cu_q8_1 {
    __half d, s;
    int8_t qs[32];
};

#define HSDR_PTQ1_0_BLOCK 28 /* bytes per 128 weights */
#define HSDR_FULL_MASK 0xffffffffu

/* One variant's device state (kernel.h's opaque hsdr_device_run): rotating weight copies, activations, the
 * variant's activation buffer, y, and the two events around the timed launches. */
struct hsdr_device_run {
    int K, N, R, F, b;
    int ncopies;
    size_t wbytes, wstride;  /* bytes of one copy, distance between copies (256-aligned) */
    uint8_t *wblock;         /* ncopies copies */
    float *x, *y;
    void *act;               /* the variant's encoded activations */
    int32_t *A;              /* checking interface only: A[8] per (row, group) when the variant writes it; else NULL */
    int64_t *qg, *qr;        /* checking interface only (Q15.16 variants): per (row, group) and per row; else NULL */
    cudaEvent_t start, stop;
    cudaStream_t stream;     /* where the launches go: 0 (the legacy default stream), or a capture stream */
    const struct hsdr_cu_kernels *k;
};

/* What a CUDA variant adds to the shared host code (device.cu): its activation buffer and its launches. */
struct hsdr_cu_kernels {
    size_t (*act_bytes)(int K);
    /* Enqueue on r->stream: stage < 0, the full matvec on weights W with the ablation masks skip / twice
     * (HSDR_STAGE_BIT); else that stage alone. */
    cudaError_t (*launch)(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice);
    /* Optional (LNS8 variants): put pre-encoded codes with pre-scale e into the activation buffer, for test vectors
     * that give codes instead of x (then the launch runs with the encode stage skipped). */
    cudaError_t (*upload_codes)(hsdr_device_run *r, const uint8_t *codes, int e);
};

/* How many times a stage's kernel runs in one launch: 0 (ablated: skip), 1, or 2 (doubled: twice). */
static inline int hsdr_cu_reps(unsigned bit, unsigned skip, unsigned twice)
{
    return (skip & bit) ? 0 : (twice & bit) ? 2 : 1;
}

/* A stage alone (stage >= 0): every other stage of `all` (HSDR_STAGE_BIT mask) skipped, nothing doubled. */
static inline void hsdr_cu_stage_alone(int stage, unsigned all, unsigned *skip, unsigned *twice)
{
    if (stage >= 0) {
        *skip = all & ~(1u << stage);
        *twice = 0;
    }
}

/* ---- shared by the two production kernels (production.cu, production_cols.cu) ---- */

/* Q8_1 quantization of one or more columns of K values (blockIdx.y = column; x, q, qsum advance by K, K/32 and K/32
 * per column): one warp per 32-block, bit-identical to hsdr_q8_1_quantize; qsum = the exact sum of each block's
 * integers. Launch: hsdr_cu_quantize_ctas(K) x columns CTAs of HSDR_CU_QUANTIZE_THREADS. */
__global__ void hsdr_cu_quantize_q8_1(const float *x, int K, hsdr_cu_q8_1 *q, int *qsum);
#define HSDR_CU_QUANTIZE_THREADS 256
static inline unsigned hsdr_cu_quantize_ctas(int K)
{
    return (unsigned)((K / 32 + HSDR_CU_QUANTIZE_THREADS / 32 - 1) / (HSDR_CU_QUANTIZE_THREADS / 32));
}

/* The four int8 activations of weights w..w+3 of the staged block (w a multiple of 4). */
static __device__ __forceinline__ int act4(const int8_t *blk, int w)
{
    return *(const int *)(blk + w);
}

/* The seven words of one 128-block (streamed once: not kept in L1/L2), or zeros past the row's end. */
static __device__ __forceinline__ void load_block(const uint8_t *wrow, int b, int G, uint32_t wd[7])
{
    const uint32_t *blk = (const uint32_t *)(wrow + (size_t)(b < G ? b : 0) * HSDR_PTQ1_0_BLOCK);
#pragma unroll
    for (int j = 0; j < 7; j++)
        wd[j] = b < G ? __ldcs(blk + j) : 0u;
}

/* The raw digits {0, 1, 2} of a block's two qh bytes (word 6's low half; digit n of qh[h] is weight 120 + 2n + h)
 * by the x3 recurrence, as the two dp4a operands of weights 120..123 (*h0) and 124..127 (*h1), in weight order. */
static __device__ __forceinline__ void qh_digits(uint32_t w6, int *h0, int *h1)
{
    uint32_t even = w6 & 0xffu, odd = (w6 >> 8) & 0xffu;
    int dig[4];
#pragma unroll
    for (int n = 0; n < 4; n++) {
        even *= 3u, odd *= 3u;
        dig[n] = (int)(((even >> 8) & 3u) | (odd & 0x300u)); /* bytes: qh0 digit n, qh1 digit n */
        even &= 0xffu, odd &= 0xffu;
    }
    *h0 = dig[0] | dig[1] << 16;
    *h1 = dig[2] | dig[3] << 16;
}

/* The shared device ops (device.cu); a variant's hsdr_device_ops = these + .impl = its hsdr_cu_kernels. */
extern "C" {
int hsdr_cu_create(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                   hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen);
int hsdr_cu_time(hsdr_device_run *run, const float *x, int copy, int stage, unsigned skip, unsigned twice, double *ns,
                 char *err, size_t errlen);
int hsdr_cu_output(hsdr_device_run *run, float *y, char *err, size_t errlen);
void hsdr_cu_destroy(hsdr_device_run *run);
size_t hsdr_cu_l2_bytes(void);
int hsdr_cu_read_bandwidth(size_t bytes, int cold, double *bytes_per_s, char *err, size_t errlen);
const char *hsdr_cu_describe(void);
int hsdr_cu_token(hsdr_device_run **runs, int n, int reps, double *samples_ns, char *err, size_t errlen);
}

#define HSDR_CU_OPS(kernels)                                                                                        \
    {hsdr_cu_create, hsdr_cu_time, hsdr_cu_output, hsdr_cu_destroy, hsdr_cu_l2_bytes, hsdr_cu_read_bandwidth,      \
     hsdr_cu_describe, hsdr_cu_token, &(kernels)}

#endif
