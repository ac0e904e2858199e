/* The streamed one-column design (issue 18), shared by cuda.ptq1_0_tma (PTQ1_0 as stored, ptq1_0_tma.cu) and
 * cuda.planar2_tma (the predecoded 2-bit form, planar2.cu). One kernel per GEMV, y bit-identical to cuda.production's
 * (hsdr_matvec_q8_1 in hsdr_cuda_soa_order): only where the work runs changes, never an operation on a value.
 *
 * idea    a weight-streaming kernel: each CTA copies whole passes of P rows (contiguous bytes) into shared memory with
 *         Hopper's bulk copy (one instruction per pass, completion on an mbarrier), S passes ahead, starting before
 *         it waits for its activations (programmatic dependent launch); each thread then holds its K-block's
 *         activations in registers for the whole kernel, so nothing but weights moves per pass.
 * geometry P row slots x G K-blocks of threads, thread t = p G + b on K-block b of rows p, p + P, ... of each pass
 *         (R = P x rows per thread rows a pass; its block's 32 activation words, four fp16 scales and four exact sums
 *         in registers for the whole kernel); persistent CTAs (as many as fit at once, passes dealt round robin, the
 *         grid trimmed so that no CTA has more passes than it must). Knobs: tma_knobs.h (HSDR_TMA).
 * time it hsdr run --filter 'variant=cuda.planar2_tma' (or cuda.ptq1_0_tma); scripts/tma-sweep.sh sweeps the knobs.
 *         Measured on the H200 (docs/perf-notes.md, issue 18 step 2): on par with the SOA_ISUM kernels per launch,
 *         the fastest alone per GEMV over a token's GEMVs, but not in one graph.
 * steps   per (row, block): the four exact int32 sums from the format policy, then the fork's acc = fmaf(d8_k,
 *         sumi_k - isum_k, acc), k = 0..3 from +0 (as hsdr_soa_finish), written with the block's scale to shared
 *         memory; one warp per row slot then redoes the fork's row order: lane l chains p = fmaf(d_w, acc, p) over
 *         K-blocks l, l + 32, ... (K/128 < 128), or the four chains l + 32 w (w = 0..3) over step 128 added in warp
 *         order (K/128 >= 128), then the xor butterfly.
 * encode  its own small kernel (stage encode), itself launched programmatically dependent on the kernel before it:
 *         a warp per 32-block, hsdr_cu_q8_1_lane (the bits of cuda.production's quantization), into q[K] (natural
 *         order), then fp32 d8[K / 32] (the fp16 d, widened) and int32 isum[K / 32]. (Fusing it into every CTA was
 *         measured: a few hundred CTAs each quantizing all of x cost more than the weights' own work: perf-notes.)
 *
 * A format supplies F with
 *   static unsigned row_bytes(int G)   bytes per row in its layout (rows back to back; 4-byte multiple)
 *   static __device__ float sums(const uint8_t *row, int G, int b, const int32_t act[32], int sumi[4])
 * sums returns block b's fp32 scale and its four exact sums of raw digits {0, 1, 2} times activations, reading the
 * row from shared memory at `row` (16-byte aligned when row_bytes is a multiple of 16, else 4-byte). */
#ifndef HSDR_CUDA_TMA_CUH
#define HSDR_CUDA_TMA_CUH
#include "common.cuh"
#include "tma_knobs.h"

/* HSDR_TMA_MAX_REGS: 80 registers a thread (the 40 of the activations included) let three 256-thread CTAs share an SM
 * where the compiler's own 92-95 left two; measured no faster alone (perf-notes, issue 18 step 2), kept for the room.
 * The design's measured limit is the chain per pass (wait, compute, barrier, reduce), not the number of warps. */
enum { HSDR_TMA_SMALL_K_BLOCKS = 128, HSDR_TMA_MAX_REGS = 80 };

/* The launch of one case, the same on the host (prepare) and in every launch. */
struct hsdr_tma_geometry {
    int G, P, R, stages;             /* K-blocks per row; row slots (threads P G); rows per pass (P x rows per
                                        thread, at most N); passes in flight */
    int threads, passes;             /* threads per CTA, passes (ceil N / R) */
    unsigned row_bytes, stage_bytes; /* one row in the layout; one pass's shared buffer (+ the alignment skew) */
    size_t smem;                     /* dynamic shared memory: stages, mbarriers, block results */
};

static __host__ __device__ __forceinline__ unsigned hsdr_tma_round16(size_t n)
{
    return (unsigned)((n + 15) / 16 * 16);
}

/* P row slots so that P G is near the threads aimed at (never past 512); each slot takes rows_per_thread rows of a
 * pass, strided by P. */
static inline hsdr_tma_geometry hsdr_tma_geometry_of(int K, int N, unsigned row_bytes, hsdr_tma_knobs kn)
{
    hsdr_tma_geometry g;
    g.G = K / 128;
    g.P = (kn.threads + g.G / 2) / g.G;
    g.P = g.P < 1 ? 1 : g.P > N ? N : g.P;
    while (g.P > 1 && g.P * g.G > HSDR_TMA_MAX_THREADS)
        g.P--;
    g.R = g.P * kn.rows_per_thread < N ? g.P * kn.rows_per_thread : N;
    g.stages = kn.stages;
    g.threads = (g.P * g.G + 31) / 32 * 32;
    g.passes = (N + g.R - 1) / g.R;
    g.row_bytes = row_bytes;
    g.stage_bytes = hsdr_tma_round16((size_t)g.R * row_bytes) + 16; /* + the skew of a pass that starts unaligned */
    g.smem = (size_t)g.stages * g.stage_bytes + 8 * (size_t)g.stages /* mbarriers */
             + 2 * (size_t)g.R * g.G * sizeof(float2);               /* block results, double-buffered */
    return g;
}

/* One column's encoded activations (r->act): q[K], then d8[K / 32], then isum[K / 32]. */
static inline size_t hsdr_tma_act_bytes(int K)
{
    return (size_t)K + (size_t)K / 32 * 8;
}

struct hsdr_tma_args {
    const uint8_t *w; /* the weights in the format's layout */
    const int8_t *act; /* the encode's output */
    float *y;
    int K, N;
    hsdr_tma_geometry g;
};

static __device__ __forceinline__ unsigned hsdr_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* Pass `pass`'s rows into the stage buffer at dst, completing on mbarrier bar (one thread). The copy starts at the
 * 16-byte boundary at or below the pass's first byte (the skew) and ends at the one at or above its last: inside the
 * weight allocation, whose copies are 256-byte aligned. */
static __device__ __forceinline__ void hsdr_tma_issue(const hsdr_tma_args &a, int pass, uint8_t *dst, uint64_t *bar)
{
#if __CUDA_ARCH__ >= 900
    const int r0 = pass * a.g.R, nr = min(a.g.R, a.N - r0);
    const uintptr_t src = (uintptr_t)(a.w + (size_t)r0 * a.g.row_bytes);
    const unsigned skew = (unsigned)(src & 15u), bytes = hsdr_tma_round16(skew + (size_t)nr * a.g.row_bytes);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(hsdr_smem_addr(bar)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     hsdr_smem_addr(dst)),
                 "l"(src - skew), "r"(bytes), "r"(hsdr_smem_addr(bar))
                 : "memory");
#endif
}

static __device__ __forceinline__ void hsdr_tma_wait(uint64_t *bar, unsigned parity)
{
#if __CUDA_ARCH__ >= 900
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(hsdr_smem_addr(bar)), "r"(parity)
                     : "memory");
#endif
}

/* One row slot's reduction in the fork's order (soa.cuh's kernels), by one warp: res holds (d_w, acc) per K-block. */
static __device__ __forceinline__ float hsdr_tma_row(const float2 *res, int G, int lane)
{
    float p;
    if (G < HSDR_TMA_SMALL_K_BLOCKS) {
        p = 0.0f;
        for (int kb = lane; kb < G; kb += 32)
            p = __fmaf_rn(res[kb].x, res[kb].y, p);
    } else {
#pragma unroll
        for (int w = 0; w < 4; w++) {
            float q = 0.0f;
            for (int kb = lane + 32 * w; kb < G; kb += 128)
                q = __fmaf_rn(res[kb].x, res[kb].y, q);
            p = w == 0 ? q : __fadd_rn(p, q); /* warp 0's partial, then warps 1..3's from shared memory */
        }
    }
    for (int o = 16; o >= 1; o >>= 1)
        p = __fadd_rn(p, __shfl_xor_sync(HSDR_FULL_MASK, p, o));
    return p;
}

template <class F>
__global__ void __maxnreg__(HSDR_TMA_MAX_REGS) hsdr_tma_rows(const hsdr_tma_args a)
{
#if __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) uint8_t smem[];
    const hsdr_tma_geometry &g = a.g;
    uint8_t *stage = smem;
    uint64_t *bar = (uint64_t *)(smem + (size_t)g.stages * g.stage_bytes);
    float2 *res = (float2 *)(bar + g.stages);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const int iters = (g.passes - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;

    /* the weights first: S passes requested before anything waits on the encode */
    if (tid == 0) {
        for (int s = 0; s < g.stages; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(hsdr_smem_addr(bar + s)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int i = 0; i < g.stages && i < iters; i++)
            hsdr_tma_issue(a, (int)blockIdx.x + i * (int)gridDim.x, stage + (size_t)i * g.stage_bytes, bar + i);
    }
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize(); /* the encode's output */
    __syncthreads();                 /* the mbarriers are initialized */

    /* this thread's K-block: 32 activation words, four scales, four exact sums (all loads independent) */
    const bool worker = tid < g.P * g.G;
    const int slot = tid / g.G, b = tid % g.G;
    const int8_t *q = a.act;
    const float *d8 = (const float *)(q + a.K);
    const int *isum = (const int *)(d8 + a.K / 32);
    int32_t act[32];
    float ad[4];
    int ai[4];
    {
        int4 v[8];
        float4 dv = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        int4 iv = make_int4(0, 0, 0, 0);
#pragma unroll
        for (int i = 0; i < 8; i++)
            v[i] = worker ? ((const int4 *)(q + 128 * b))[i] : make_int4(0, 0, 0, 0);
        if (worker)
            dv = ((const float4 *)d8)[b], iv = ((const int4 *)isum)[b];
#pragma unroll
        for (int i = 0; i < 8; i++)
            act[4 * i] = v[i].x, act[4 * i + 1] = v[i].y, act[4 * i + 2] = v[i].z, act[4 * i + 3] = v[i].w;
        ad[0] = dv.x, ad[1] = dv.y, ad[2] = dv.z, ad[3] = dv.w;
        ai[0] = iv.x, ai[1] = iv.y, ai[2] = iv.z, ai[3] = iv.w;
    }

    for (int i = 0; i < iters; i++) {
        const int s = i % g.stages, pass = (int)blockIdx.x + i * (int)gridDim.x;
        const int r0 = pass * g.R, nr = min(g.R, a.N - r0);
        float2 *out = res + (i & 1) * g.R * g.G;
        const uint8_t *rows = stage + (size_t)s * g.stage_bytes + ((uintptr_t)(a.w + (size_t)r0 * g.row_bytes) & 15u);
        hsdr_tma_wait(bar + s, (unsigned)(i / g.stages) & 1u);
        if (worker)
            for (int r = slot; r < nr; r += g.P) {
                int sumi[4] = {0, 0, 0, 0};
                const float dw = F::sums(rows + (size_t)r * g.row_bytes, g.G, b, act, sumi);
                float acc = 0.0f;
#pragma unroll
                for (int k = 0; k < 4; k++)
                    acc = __fmaf_rn(ad[k], (float)(sumi[k] - ai[k]), acc);
                out[r * g.G + b] = make_float2(dw, acc);
            }
        __syncthreads(); /* the stage is read and the block results are written */
        if (tid == 0 && i + g.stages < iters)
            hsdr_tma_issue(a, pass + g.stages * (int)gridDim.x, stage + (size_t)s * g.stage_bytes, bar + s);
        for (int p = warp; p < nr; p += warps) {
            const float v = hsdr_tma_row(out + p * g.G, g.G, lane);
            if (lane == 0)
                a.y[r0 + p] = v;
        }
    }
#else
    __trap(); /* hsdr_cuda_tma_unavailable refuses devices before sm_90 */
#endif
}

/* prepare: the geometry's shared memory allowed, and as many CTAs as fit on the device at once (at most one per
 * pass), trimmed to the fewest that keep the most passes any CTA takes. */
template <class F>
static int hsdr_tma_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, err, errlen) != 0)
        return -1;
    const hsdr_tma_geometry g = hsdr_tma_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn);
    int dev = 0, sms = 0, per_sm = 0;
    if (g.G > HSDR_TMA_MAX_THREADS) {
        snprintf(err, errlen, "K = %d: the streamed kernels hold one K-block per thread, at most %d per CTA "
                              "(K <= %d)", r->K, HSDR_TMA_MAX_THREADS, 128 * HSDR_TMA_MAX_THREADS);
        return -1;
    }
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(hsdr_cu_allow_smem(hsdr_tma_rows<F>, g.smem));
    HSDR_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hsdr_tma_rows<F>, g.threads, g.smem));
    if (kn.ctas_per_sm > 0 && per_sm > kn.ctas_per_sm)
        per_sm = kn.ctas_per_sm;
    if (per_sm < 1) {
        snprintf(err, errlen, "K = %d: a streamed CTA (%d threads, %zu bytes of shared memory) does not fit", r->K,
                 g.threads, g.smem);
        return -1;
    }
    {
        const int most = sms * per_sm < g.passes ? sms * per_sm : g.passes;
        const int each = (g.passes + most - 1) / most;
        r->shape.kernel = reinterpret_cast<void (*)(void)>(hsdr_tma_rows<F>);
        r->shape.ctas = (unsigned)((g.passes + each - 1) / each);
        r->shape.threads = (unsigned)g.threads;
        r->shape.smem = g.smem;
    }
    return 0;
fail:
    return -1;
}

/* The encode: K / 32 warps, 8 per CTA. Launched programmatically dependent on the kernel before it (in a token, the
 * previous GEMV), it lets the mat-vec launch at once and waits before reading x. */
__global__ void __launch_bounds__(256) hsdr_tma_quantize(const float *x, int K, int8_t *q);

/* The encode (stage encode), then the mat-vec (stage reduce), each programmatically dependent on the one before. */
template <class F>
static cudaError_t hsdr_tma_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    hsdr_tma_args a;
    a.w = w, a.act = (const int8_t *)r->act, a.y = r->y, a.K = r->K, a.N = r->N;
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, NULL, 0) != 0) /* prepare took them: they cannot fail here */
        return cudaErrorInvalidValue;
    a.g = hsdr_tma_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn);
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    cudaError_t e = cudaSuccess;
    const dim3 mv_grid = cfg.gridDim, mv_block = cfg.blockDim;
    const size_t mv_smem = cfg.dynamicSmemBytes;
    cfg.gridDim = dim3((unsigned)((r->K / 32 + 7) / 8)), cfg.blockDim = dim3(256), cfg.dynamicSmemBytes = 0;
    for (int i = 0; i < hsdr_cu_reps(enc, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, hsdr_tma_quantize, (const float *)r->x, r->K, (int8_t *)r->act);
    cfg.gridDim = mv_grid, cfg.blockDim = mv_block, cfg.dynamicSmemBytes = mv_smem;
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, hsdr_tma_rows<F>, a);
    return e;
}

#endif
