/* Shared host and device helpers of the CUDA kernels: error checking that names the call, the state of a run (a
 * variant's matvec, the streaming read, a captured token) and the device ops that drive it, and the Q8_1 block. */
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

/* What enqueue does with a run: a variant's matvec (hsdr_cu_create), the plain streaming read of one buffer copy
 * (hsdr_cu_read_create), or the replay of a captured token graph (hsdr_cu_token_create). */
enum hsdr_cu_run_kind { HSDR_CU_RUN_MATVEC, HSDR_CU_RUN_READ, HSDR_CU_RUN_TOKEN };

/* A launch worked out once in create (a variant's prepare hook, or read_create), so that enqueue only launches. */
struct hsdr_cu_shape {
    void (*kernel)(void); /* the kernel chosen for the case, cast back by the file that chose it; NULL: fixed */
    unsigned ctas, threads;
    size_t smem;          /* dynamic shared memory, already allowed (hsdr_cu_allow_smem) where it must be */
};

/* One run (kernel.h's opaque hsdr_device_run): rotating weight copies, activations, the variant's activation
 * buffer, y, and the two events of mark(). A read run uses only wblock (the copies it reads), sink and shape; a
 * token run only its graph and its own stream. */
struct hsdr_device_run {
    enum hsdr_cu_run_kind kind;
    int K, N, R, F, b, cols;
    int ncopies;
    size_t wbytes, wstride;  /* bytes of one copy (PTQ1_0, or the variant's converted layout), distance between copies
                                (256-aligned) */
    double convert_ns;       /* the convert stage's device time, 0 for PTQ1_0 as stored */
    uint8_t *wblock;         /* ncopies copies */
    float *x, *y;            /* cols x K activations, cols x N outputs (column c at + c K, + c N) */
    void *act;               /* the variant's encoded activations: cols x act_bytes(K) */
    int32_t *A;              /* checking interface only: A[8] per (row, group) when the variant writes it; else NULL */
    int64_t *qg, *qr;        /* checking interface only (Q15.16 variants): per (row, group) and per row; else NULL */
    void *scratch;           /* a variant's own device memory: its prepare hook may allocate it, destroy frees it */
    cudaEvent_t start, stop; /* mark(0), mark(1), recorded on `stream` */
    /* where the launches and marks go: 0 (the legacy default stream) for matvec and read runs, the token run's own
     * stream, or while a token captures this run, its capture stream */
    cudaStream_t stream;
    const struct hsdr_cu_kernels *k; /* matvec runs */
    hsdr_cu_shape shape;     /* the main launch where create works it out (the mat-vec, the read) */
    unsigned *sink;          /* read runs: the read kernel's never-taken store */
    cudaGraph_t graph;       /* token runs */
    cudaGraphExec_t exec;
};

/* What a CUDA variant adds to the shared host code (device.cu): its activation buffer and its launches. */
struct hsdr_cu_kernels {
    int max_cols; /* activation columns one launch takes; create refuses more (0 or 1: one) */
    size_t (*act_bytes)(int K); /* one column's activation buffer; create allocates cols of them, back to back */
    /* Optional: everything on the host that the launches need and that does not change between them (launch shapes,
     * occupancy, kernel attributes, constant tables), into r->shape; device memory of its own in r->scratch. Called
     * by create with r's sizes set and nothing else allocated; 0, or -1 with err. */
    int (*prepare)(hsdr_device_run *r, char *err, size_t errlen);
    /* Enqueue on r->stream, launches only (no host queries, no waiting): stage < 0, the full matvec on weights W
     * with the ablation masks skip / twice (HSDR_STAGE_BIT); else that stage alone. */
    cudaError_t (*launch)(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice);
    /* Optional (LNS8 variants): put pre-encoded codes with pre-scale e into the activation buffer, for test vectors
     * that give codes instead of x (then the launch runs with the encode stage skipped). */
    cudaError_t (*upload_codes)(hsdr_device_run *r, const uint8_t *codes, int e);
    /* Optional (baselines on a converted weight layout; NULL: the kernels read PTQ1_0 as stored): the bytes of one
     * converted copy of the K x N matrix, and the convert stage, enqueued on r->stream: the PTQ1_0 blocks at src
     * (device memory) into that layout at dst. create converts once (timed: the run's convert_ns) and copies. */
    size_t (*layout_bytes)(int K, int N);
    cudaError_t (*convert)(hsdr_device_run *r, const uint8_t *src, uint8_t *dst);
    /* Optional (NULL: the token is every run's own launches, captured one after the other): the whole token of
     * runs[0..n) (all of this variant, each on its copy 0) as the variant's own launches, captured on tok->stream
     * into tok->graph; 0, or -1 with err. hsdr_cu_token_create checks every run's y against its own launch. */
    int (*token)(hsdr_device_run *tok, hsdr_device_run *const *runs, int n, char *err, size_t errlen);
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

/* ---- shared by the Q8_1 kernels (production.cu, production_pt.cu, planar2.cu, lanes8.cu, cols.cu) ---- */

/* The Q8_1 quantization of one 32-block held by a warp (lane i: value v, every lane taking part): amax by xor max
 * (exact in any order), d = amax / 127 and q = roundf(v / d) with correctly rounded divisions (hsdr_q8_1_quantize;
 * the fork's fast-math build divides approximately: docs/cuda-production.md section 2), isum = the exact sum of the
 * block's q. */
static __device__ __forceinline__ void hsdr_cu_q8_1_lane(float v, float &d, int &q, int &isum)
{
    float amax = fabsf(v);
    for (int o = 16; o >= 1; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(HSDR_FULL_MASK, amax, o));
    d = __fdiv_rn(amax, 127.0f);
    q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d));
    isum = q;
    for (int o = 16; o >= 1; o >>= 1)
        isum += __shfl_xor_sync(HSDR_FULL_MASK, isum, o); /* integers: exact */
}

/* The half2 word of the fork's SOA_ISUM and PT layouts: fp16 d in the low half, the exact int16 sum's bits high. */
static __device__ __forceinline__ uint32_t hsdr_cu_d_isum(float d, int isum)
{
    return (uint32_t)__half_as_ushort(__float2half_rn(d)) | (uint32_t)(uint16_t)isum << 16;
}

/* dp4a of four unsigned bytes (digits, or digits times a power of 4, at most 255) against four signed activations. */
static __device__ __forceinline__ int hsdr_cu_dp4a_us(uint32_t g, int a, int c)
{
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(g), "r"(a), "r"(c));
    return d;
}

/* One digit step of four PTQ1_0 bytes spread into 16-bit lanes (lo: bytes 0, 1; hi: bytes 2, 3): x3, the digits
 * {0, 1, 2} are bits 8..9 of each lane, packed by one byte permute in byte order; lo and hi keep the remainders. */
static __device__ __forceinline__ int hsdr_cu_digits_step(uint32_t &lo, uint32_t &hi)
{
    const uint32_t wl = lo * 3u, wh = hi * 3u;
    lo = wl & 0x00ff00ffu, hi = wh & 0x00ff00ffu;
    return (int)__byte_perm(wl, wh, 0x7531);
}

/* The fork's decode of one PTQ1_0 block (vec_dot_ptq1_0_q8_1_multi; docs/cuda-production.md section 3) into four
 * exact int32 sums of raw digits times activations, one per 32-block: act(e) is the word of the int8 activations of
 * elements e .. e + 3 (e a multiple of 4), in whatever layout the caller reads. */
template <class Act>
static __device__ __forceinline__ void hsdr_cu_ptq1_0_sums(const uint8_t *blk, Act act, int sumi[4])
{
    /* qs[0..15]: digit t of qs[m] is weight 16 t + m */
#pragma unroll
    for (int g = 0; g < 4; g++) {
        const uint32_t packed = ((const uint32_t *)blk)[g];
        uint32_t lo = __byte_perm(packed, 0, 0x4140), hi = __byte_perm(packed, 0, 0x4342);
#pragma unroll
        for (int t = 0; t < 5; t++) {
            const int e = 16 * t + 4 * g;
            sumi[e >> 5] = __dp4a(hsdr_cu_digits_step(lo, hi), act(e), sumi[e >> 5]);
        }
    }
    /* qs[16..23]: digit t of qs[16 + m] is weight 80 + 8 t + m */
#pragma unroll
    for (int g = 0; g < 2; g++) {
        const uint32_t packed = ((const uint32_t *)blk)[4 + g];
        uint32_t lo = __byte_perm(packed, 0, 0x4140), hi = __byte_perm(packed, 0, 0x4342);
#pragma unroll
        for (int t = 0; t < 5; t++) {
            const int e = 80 + 8 * t + 4 * g;
            sumi[e >> 5] = __dp4a(hsdr_cu_digits_step(lo, hi), act(e), sumi[e >> 5]);
        }
    }
    /* qh[0..1]: digit t of qh[h] is weight 120 + 2 t + h; one 16-bit lane per byte, two steps per dp4a word */
    uint32_t v = (uint32_t)blk[24] | (uint32_t)blk[25] << 16;
#pragma unroll
    for (int t = 0; t < 4; t += 2) {
        const uint32_t w0 = v * 3u;
        v = w0 & 0x00ff00ffu;
        const uint32_t w1 = v * 3u;
        v = w1 & 0x00ff00ffu;
        sumi[3] = __dp4a((int)__byte_perm(w0, w1, 0x7531), act(120 + 2 * t), sumi[3]);
    }
}

/* Let kernel take `bytes` of dynamic shared memory. The attribute is the kernel's, shared by every run of it (runs
 * of different sizes are prepared before any of them launches), so it is only ever raised, never lowered. */
template <class Kernel> static inline cudaError_t hsdr_cu_allow_smem(Kernel *kernel, size_t bytes)
{
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, kernel);
    if (e == cudaSuccess && (size_t)fa.maxDynamicSharedSizeBytes < bytes)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    return e;
}

/* A launch in r->shape on r->stream, programmatically dependent on the kernel before it (it may start while that one
 * runs and waits for it with cudaGridDependencySynchronize); attr: the caller's storage for the attribute. */
static inline cudaLaunchConfig_t hsdr_cu_pdl_config(const hsdr_device_run *r, cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(r->shape.ctas);
    cfg.blockDim = dim3(r->shape.threads);
    cfg.dynamicSmemBytes = r->shape.smem;
    cfg.stream = r->stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

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
int hsdr_cu_set_input(hsdr_device_run *run, const float *x, char *err, size_t errlen);
int hsdr_cu_enqueue(hsdr_device_run *run, int copy, int stage, unsigned skip, unsigned twice, char *err,
                    size_t errlen);
int hsdr_cu_mark(hsdr_device_run *run, int end, char *err, size_t errlen);
int hsdr_cu_elapsed(hsdr_device_run *run, double *ns, char *err, size_t errlen);
int hsdr_cu_output(hsdr_device_run *run, float *y, char *err, size_t errlen);
void hsdr_cu_destroy(hsdr_device_run *run);
size_t hsdr_cu_l2_bytes(void);
const char *hsdr_cu_describe(void);
int hsdr_cu_read_create(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen);
int hsdr_cu_token_create(hsdr_device_run *const *runs, int n, hsdr_device_run **token, char *err, size_t errlen);
}

/* hsdr_cu_create for a kernel table without its registry entry (name: for messages): the checking functions that
 * take their sizes directly (hsdr_cuda_cols) go through the same run. */
int hsdr_cu_open(const hsdr_cu_kernels *k, const char *name, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                 hsdr_device_run **run, char *err, size_t errlen);

/* One sample as the harness takes it: mark, enqueue(copy 0, stage -1, skip, no twice), mark, elapsed. */
int hsdr_cu_run_once(hsdr_device_run *r, unsigned skip, char *err, size_t errlen);

#define HSDR_CU_OPS(kernels)                                                                                        \
    {hsdr_cu_create, hsdr_cu_set_input, hsdr_cu_enqueue, hsdr_cu_mark, hsdr_cu_elapsed, hsdr_cu_output,             \
     hsdr_cu_destroy, hsdr_cu_l2_bytes, hsdr_cu_describe, hsdr_cu_read_create, hsdr_cu_token_create, &(kernels)}

#endif
