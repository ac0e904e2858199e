/* The streamed one-column design (issue 18), shared by cuda.ptq1_0_tma (PTQ1_0 as stored, ptq1_0_tma.cu) and
 * cuda.planar2_tma (the predecoded 2-bit form, planar2.cu), with their _fused and _ring forms. One kernel per GEMV, y
 * bit-identical to cuda.production's (hsdr_matvec_q8_1 in hsdr_cuda_soa_order): only where the work runs changes,
 * never an operation on a value.
 *   Idea     a weight-streaming kernel: each CTA bulk-copies whole passes of rows into shared memory a few passes
 *            ahead, and each thread holds its K-block's activations in registers for the whole kernel, so nothing but
 *            weights moves per pass; persistent CTAs, passes dealt round robin.
 *   Layout   weights: the format's rows back to back (F::row_bytes, below). Activations: q[K] (natural order), then
 *            fp32 d8[K / 32] (the fp16 d, widened) and int32 isum[K / 32] (encode, below; FUSED: and a counter).
 *   Stages   encode (its own kernel, or inside the mat-vec: FUSED), reduce (the streamed mat-vec).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.planar2_tma *'
 *            (or cuda.ptq1_0_tma and the _fused, _ring forms); scripts/tma-sweep.sh sweeps the knobs.
 *
 * idea    each CTA copies whole passes of P rows (contiguous bytes) into shared memory with Hopper's bulk copy (one
 *         instruction per pass, completion on an mbarrier), S passes ahead, starting once the activations are there
 *         (or, knob EARLY, before the kernel waits for them: measured no faster, issue 18 step 3).
 * geometry P row slots x G K-blocks of threads, thread t = p G + b on K-block b of rows p, p + P, ... of each pass
 *         (R = P x rows per thread rows a pass; its block's 32 activation words, four fp16 scales and four exact sums
 *         in registers for the whole kernel); persistent CTAs (as many as fit at once, passes dealt round robin, the
 *         grid trimmed so that no CTA has more passes than it must). Knobs: tma_knobs.h (HSDR_TMA).
 * measured on the H200 (docs/perf-notes.md, issue 18 steps 2 and 3): on par with the SOA_ISUM kernels per launch, the
 *         fastest alone per GEMV over a token's GEMVs, but not in one graph.
 * steps   per (row, block): the four exact int32 sums from the format policy, then the fork's acc = fmaf(d8_k,
 *         sumi_k - isum_k, acc), k = 0..3 from +0 (as hsdr_soa_finish), written with the block's scale to shared
 *         memory; one warp per row slot then redoes the fork's row order: lane l chains p = fmaf(d_w, acc, p) over
 *         K-blocks l, l + 32, ... (K/128 < 128), or the four chains l + 32 w (w = 0..3) over step 128 added in warp
 *         order (K/128 >= 128), then the xor butterfly.
 * encode  its own small kernel (stage encode), itself launched programmatically dependent on the kernel before it:
 *         a warp per 32-block, hsdr_cu_q8_1_lane (the bits of cuda.production's quantization), into q[K] (natural
 *         order), then fp32 d8[K / 32] (the fp16 d, widened) and int32 isum[K / 32]. FUSED (the _fused variants):
 *         inside the mat-vec, the grid's first CTAs a K-block per warp, the grid waiting on a counter in the
 *         activation buffer (hsdr_tma_encode_grid). Measured (perf-notes, issue 18 steps 2 and 3): every CTA
 *         quantizing all of x cost 3.1 instructions a weight; a thread-block cluster sharing it cut the CTAs that fit
 *         (1.4-1.8x slower); the grid's own encode is 2-14 % faster than the encode kernel per launch, slower in a
 *         token (0.41 against 0.39 ms).
 *
 * A format supplies F with
 *   static unsigned row_bytes(int G)   bytes per row in its layout (rows back to back; 4-byte multiple)
 *   static __device__ float sums(const uint8_t *row, int G, int b, const int32_t act[32], int sumi[4])
 * sums returns block b's fp32 scale and its four exact sums of raw digits {0, 1, 2} times activations, reading the
 * row from shared memory at `row` (16-byte aligned when row_bytes is a multiple of 16, else 4-byte). */
#ifndef HSDR_CUDA_TMA_CUH
#define HSDR_CUDA_TMA_CUH
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "stream.cuh"
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
    int early;                       /* the first passes requested before the wait for activations (1), or after */
    unsigned row_bytes, stage_bytes; /* one row in the layout; one pass's shared buffer (+ the alignment skew) */
    size_t smem;                     /* dynamic shared memory: stages, mbarriers, block results */
};

static __host__ __device__ __forceinline__ unsigned hsdr_tma_round16(size_t n)
{
    return (unsigned)((n + 15) / 16 * 16);
}

/* The streamed kernels' shared memory: `stages` stages of stage_bytes and their mbarriers, then the block results of
 * rg (rows x K-blocks) double-buffered. */
static inline size_t hsdr_tma_smem(int stages, unsigned stage_bytes, int rg)
{
    return (size_t)stages * stage_bytes + 8 * (size_t)stages + 2 * (size_t)rg * sizeof(float2);
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
    g.early = kn.early;
    g.threads = (g.P * g.G + 31) / 32 * 32;
    g.passes = (N + g.R - 1) / g.R;
    g.row_bytes = row_bytes;
    g.stage_bytes = hsdr_tma_round16((size_t)g.R * row_bytes) + 16; /* + the skew of a pass that starts unaligned */
    g.smem = hsdr_tma_smem(g.stages, g.stage_bytes, g.R * g.G);
    return g;
}

/* One column's encoded activations (r->act, zeroed by create): q[K], then d8[K / 32], then isum[K / 32], then the
 * fused kernels' two grid counters (encoding CTAs arrived, CTAs done; each launch leaves them at 0). */
static inline size_t hsdr_tma_act_bytes(int K)
{
    return (size_t)K + (size_t)K / 32 * 8 + 2 * sizeof(unsigned);
}

struct hsdr_tma_args {
    const uint8_t *w; /* the weights in the format's layout */
    const float *x;    /* fp32 activations (the fused kernels encode them) */
    int8_t *act;       /* the encoded activations (the encode kernel's output, or the fused kernels' own) */
    float *y;
    int K, N;
    hsdr_tma_geometry g;
};

/* Pass `pass`'s rows into the stage buffer at dst, completing on mbarrier bar (one thread). The copy starts at the
 * 16-byte boundary at or below the pass's first byte (the skew) and ends at the one at or above its last: inside the
 * weight allocation, whose copies are 256-byte aligned. */
static __device__ __forceinline__ void hsdr_tma_issue(const hsdr_tma_args &a, int pass, uint8_t *dst, uint64_t *bar)
{
    const int r0 = pass * a.g.R, nr = min(a.g.R, a.N - r0);
    const uintptr_t src = (uintptr_t)(a.w + (size_t)r0 * a.g.row_bytes);
    const unsigned skew = (unsigned)(src & 15u), bytes = hsdr_tma_round16(skew + (size_t)nr * a.g.row_bytes);
    hsdr_bulk_copy(dst, (const void *)(src - skew), bytes, bar);
}

/* The first S passes of this CTA (of `iters`) into the stages (one thread). */
static __device__ __forceinline__ void hsdr_tma_issue_first(const hsdr_tma_args &a, int iters, uint8_t *stage,
                                                            uint64_t *bar)
{
    for (int i = 0; i < a.g.stages && i < iters; i++)
        hsdr_tma_issue(a, (int)blockIdx.x + i * (int)gridDim.x, stage + (size_t)i * a.g.stage_bytes, bar + i);
}

/* ---- the fused encode (FUSED kernels): the grid quantizes x once into r->act, then every CTA waits for it ----
 *
 * CTA c's warp w encodes K-blocks c + grid w, c + grid (w + warps), ... (each of the first min(grid, G) CTAs one or
 * more), a warp per K-block, into the encode kernel's layout; each such CTA then counts itself in the first grid
 * counter, and every CTA waits until all have. The wait cannot deadlock: the grid is no larger than what fits at once
 * (prepare), a kernel launched after this one cannot take an SM before every CTA of this one has started (it waits
 * for their trigger), and the kernel before it ends without us. A wait past about a second traps (a launch error,
 * never a hang). The last CTA out resets both counters; the next launch touches them only after its dependency wait,
 * i.e. after this grid has completed. */

/* One K-block by one warp: lane l holds elements 4l .. 4l + 3, so lanes 8i .. 8i + 7 hold Q8_1 block i; the
 * operations are hsdr_cu_q8_1_lane's (amax by max: exact in any order; correctly rounded divisions; the same
 * roundf; exact integer sums), so q, d8 and isum are the encode kernel's bits. */
static __device__ __forceinline__ float4 hsdr_tma_x4(const float *x, int kb, int lane)
{
    return ((const float4 *)(x + 128 * (size_t)kb))[lane];
}

static __device__ __forceinline__ void hsdr_tma_encode_kblock(float4 v, int K, int kb, int8_t *act, int lane)
{
    const float e[4] = {v.x, v.y, v.z, v.w};
    float amax = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    for (int o = 4; o >= 1; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(HSDR_FULL_MASK, amax, o));
    const float d = __fdiv_rn(amax, 127.0f);
    uint32_t word = 0;
    int sum = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int q = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(e[i], d));
        word |= (uint32_t)(q & 0xff) << (8 * i);
        sum += q;
    }
    for (int o = 4; o >= 1; o >>= 1)
        sum += __shfl_xor_sync(HSDR_FULL_MASK, sum, o);
    ((uint32_t *)(act + 128 * (size_t)kb))[lane] = word;
    if ((lane & 7) == 0) {
        ((float *)(act + K))[4 * kb + (lane >> 3)] = __half2float(__float2half_rn(d));
        ((int *)(act + K + K / 32 * 4))[4 * kb + (lane >> 3)] = sum;
    }
}

/* The fused kernels' two grid counters, after the encoded activations: encoding CTAs arrived, CTAs done. */
static __device__ __forceinline__ unsigned *hsdr_tma_counters(int8_t *act, int K)
{
    return (unsigned *)(act + K + K / 32 * 8);
}

/* Wait until *count reaches `want` (one thread), polling with an acquire load; a wait past about a second traps (a
 * grid that could not all be resident: a launch error, never a hang). */
static __device__ __forceinline__ void hsdr_tma_wait_count(const unsigned *count, unsigned want)
{
    const long long t0 = clock64();
    while (hsdr_ld_acquire_gpu(count) < want) {
        if (clock64() - t0 > (1ll << 31))
            __trap();
        __nanosleep(32); /* a few hundred CTAs polling one word: leave the L2 slice to the arrivals */
    }
}

/* The grid's encode and the wait for it (every thread of every CTA). */
static __device__ __forceinline__ void hsdr_tma_encode_grid(const float *x, int K, int8_t *act, int warp, int warps,
                                                            int lane)
{
    const int G = K / 128, grid = (int)gridDim.x, c = (int)blockIdx.x;
    unsigned *arrived = hsdr_tma_counters(act, K);
    for (int kb = c + grid * warp; kb < G; kb += grid * warps)
        hsdr_tma_encode_kblock(hsdr_tma_x4(x, kb, lane), K, kb, act, lane);
    __syncthreads(); /* this CTA's K-blocks are written */
    if (threadIdx.x == 0) {
        const unsigned encoders = (unsigned)(grid < G ? grid : G);
        if (c < G) {
            __threadfence();
            atomicAdd(arrived, 1u);
        }
        hsdr_tma_wait_count(arrived, encoders);
        __threadfence();
    }
    __syncthreads();
}

/* The end of a fused launch (thread 0 of every CTA): the last CTA out leaves both counters at 0. */
static __device__ __forceinline__ void hsdr_tma_encode_release(int8_t *act, int K)
{
    unsigned *arrived = hsdr_tma_counters(act, K), *done = arrived + 1;
    if (atomicAdd(done, 1u) == gridDim.x - 1) {
        atomicExch(arrived, 0u);
        atomicExch(done, 0u);
    }
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

/* This thread's K-block of the encoded activations (the encode kernel's, or the grid's own when fused): 32 words,
 * four scales, four exact sums, all loads independent; zeros for a thread past the row slots. */
static __device__ __forceinline__ void hsdr_tma_load_act(const hsdr_tma_args &a, bool worker, int b, int32_t act[32],
                                                         float ad[4], int ai[4])
{
    int4 v[8], iv = make_int4(0, 0, 0, 0);
    float4 dv = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    /* fused: written by other SMs in this launch, visible after the grid wait's acquire */
    const int8_t *q = a.act;
    const float *d8 = (const float *)(q + a.K);
    const int *isum = (const int *)(d8 + a.K / 32);
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

/* One pass of rows, staged at `buf` (completing on mbarrier bar with phase parity `parity`): the block results into
 * out, the CTA barrier, refill() (thread 0 requests what the freed stage can take), then a warp per row slot
 * reduces in the fork's order and writes y. Every thread of the CTA calls it. */
template <class F, class Refill>
static __device__ __forceinline__ void hsdr_tma_pass(const hsdr_tma_args &a, int pass, const uint8_t *buf,
                                                     uint64_t *bar, unsigned parity, float2 *out, bool worker,
                                                     int slot, int b, const int32_t act[32], const float ad[4],
                                                     const int ai[4], int warp, int warps, int lane, Refill refill)
{
    const hsdr_tma_geometry &g = a.g;
    const int r0 = pass * g.R, nr = min(g.R, a.N - r0);
    const uint8_t *rows = buf + ((uintptr_t)(a.w + (size_t)r0 * g.row_bytes) & 15u);
    hsdr_bulk_wait(bar, parity);
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
    refill();
    for (int p = warp; p < nr; p += warps) {
        const float v = hsdr_tma_row(out + p * g.G, g.G, lane);
        if (lane == 0)
            a.y[r0 + p] = v;
    }
}

template <class F, bool FUSED>
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

    /* early: S passes requested before anything waits on the encode; else (the default) once the activations are
     * there: requested early, a few hundred CTAs' copies of the whole matrix queued ahead of x's loads and delayed
     * the encode (perf-notes, issue 18 step 3) */
    if (tid == 0) {
        hsdr_bulk_init(bar, g.stages);
        if (g.early)
            hsdr_tma_issue_first(a, iters, stage, bar);
    }
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize(); /* the encode's output, or x (the previous kernel's) */

    const bool worker = tid < g.P * g.G;
    const int slot = tid / g.G, b = tid % g.G;
    int32_t act[32];
    float ad[4];
    int ai[4];
    if (FUSED)
        hsdr_tma_encode_grid(a.x, a.K, a.act, warp, warps, lane); /* also orders the mbarriers' init */
    else
        __syncthreads(); /* the mbarriers are initialized */
    if (tid == 0 && !g.early)
        hsdr_tma_issue_first(a, iters, stage, bar);
    hsdr_tma_load_act(a, worker, b, act, ad, ai);

    for (int i = 0; i < iters; i++) {
        const int s = i % g.stages, pass = (int)blockIdx.x + i * (int)gridDim.x;
        hsdr_tma_pass<F>(a, pass, stage + (size_t)s * g.stage_bytes, bar + s, (unsigned)(i / g.stages) & 1u,
                         res + (i & 1) * g.R * g.G, worker, slot, b, act, ad, ai, warp, warps, lane, [&] {
                             if (tid == 0 && i + g.stages < iters)
                                 hsdr_tma_issue(a, pass + g.stages * (int)gridDim.x,
                                                stage + (size_t)s * g.stage_bytes, bar + s);
                         });
    }
    if (FUSED && tid == 0)
        hsdr_tma_encode_release(a.act, a.K);
#else
    __trap(); /* hsdr_cuda_tma_unavailable refuses devices before sm_90 */
#endif
}

/* ---- the whole token in one persistent kernel (RING variants: cuda.planar2_ring, cuda.ptq1_0_ring) ----
 *
 * The fused kernel above, run over a list of GEMVs by one grid that stays resident for all of them: each CTA walks one
 * sequence of passes (GEMV 0's c, c + grid, ..., then GEMV 1's, ...), and its ring of S stages is refilled across
 * the GEMV boundaries, so GEMV i + 1's first weights are in flight while GEMV i's last passes are consumed. A
 * decoder's dependency is kept: GEMV i + 1's encoding CTAs wait until every CTA has finished GEMV i (its `done`
 * counter), the other CTAs wait for the encode (hsdr_tma_encode_grid's counter). y of every GEMV is the fused
 * kernel's (hsdr_tma_pass: the same operations on the same values), hence cuda.production's. A launch of one GEMV is
 * the per-launch row. Knobs: HSDR_TMA, as the fused kernel (one geometry per GEMV; the stages are the ring's).
 * Measured (perf-notes, issue 18 step 4): slower than a graph of the fused kernels; a GEMV inside the ring costs what
 * it costs alone. */
/* GEMVs per launch (the launch parameters: at most 4 KB), launches per token */
enum { HSDR_TMA_RING_MAX = 40, HSDR_TMA_RING_LAUNCHES = 64 };

struct hsdr_tma_ring_args {
    hsdr_tma_args gemv[HSDR_TMA_RING_MAX]; /* each with its own geometry (K, N, P, R, G); stages: the ring's */
    unsigned *done[HSDR_TMA_RING_MAX];     /* per GEMV: the CTAs that have finished it */
    unsigned *finished;                    /* the CTAs that have finished the launch (the last one resets all) */
    int n;
    unsigned stage_bytes;                  /* one stage: the largest pass of the GEMVs (+ the skew) */
};
static_assert(sizeof(hsdr_tma_ring_args) <= 4096, "the ring's GEMVs must fit in a launch's parameters");

/* Every counter the ring waits on lives after the run's activations: done, then finished (zeroed by create; every
 * launch leaves them at 0). */
static inline size_t hsdr_tma_ring_act_bytes(int K)
{
    return hsdr_tma_act_bytes(K) + 2 * sizeof(unsigned);
}

static inline unsigned *hsdr_tma_ring_counters(int8_t *act, int K)
{
    return (unsigned *)(act + hsdr_tma_act_bytes(K));
}

/* This CTA's passes of a GEMV (passes dealt round robin over the grid). */
static __device__ __forceinline__ int hsdr_tma_iters(const hsdr_tma_geometry &g)
{
    const int p = g.passes - (int)blockIdx.x;
    return p > 0 ? (p + (int)gridDim.x - 1) / (int)gridDim.x : 0;
}

template <class F>
__global__ void __maxnreg__(HSDR_TMA_MAX_REGS) hsdr_tma_ring(const hsdr_tma_ring_args t)
{
#if __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) uint8_t smem[];
    const int S = t.gemv[0].g.stages;
    uint8_t *stage = smem;
    uint64_t *bar = (uint64_t *)(smem + (size_t)S * t.stage_bytes);
    float2 *res = (float2 *)(bar + S);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    /* thread 0's request cursor: GEMV ig, this CTA's pass ii of it; `issued` passes so far */
    int ig = 0, ii = 0;
    long issued = 0, consumed = 0; /* passes requested, passes consumed: stage j % S, phase parity (j / S) & 1 */
    auto refill = [&](long freed) { /* thread 0: fill the stages freed so far, across GEMV boundaries */
        while (issued < freed + S) {
            while (ig < t.n && ii >= hsdr_tma_iters(t.gemv[ig].g))
                ig++, ii = 0;
            if (ig == t.n)
                return;
            hsdr_tma_issue(t.gemv[ig], (int)blockIdx.x + ii * (int)gridDim.x,
                           stage + (size_t)(issued % S) * t.stage_bytes, bar + issued % S);
            ii++, issued++;
        }
    };
    if (tid == 0) {
        hsdr_bulk_init(bar, S);
        if (t.gemv[0].g.early)
            refill(0);
    }
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize(); /* x of the first GEMV (the kernel before) */
    for (int i = 0; i < t.n; i++) {
        const hsdr_tma_args &a = t.gemv[i];
        const int G = a.g.G, iters = hsdr_tma_iters(a.g);
        if (i > 0 && (int)blockIdx.x < G) { /* an encoding CTA: x of GEMV i is GEMV i - 1's output in a decoder */
            if (tid == 0)
                hsdr_tma_wait_count(t.done[i - 1], gridDim.x);
            __syncthreads();
        }
        hsdr_tma_encode_grid(a.x, a.K, a.act, warp, warps, lane); /* (i = 0: also orders the mbarriers' init) */
        if (tid == 0 && i == 0 && !a.g.early)
            refill(0);
        const bool worker = tid < a.g.P * G;
        const int slot = tid / G, b = tid % G;
        int32_t act[32];
        float ad[4];
        int ai[4];
        hsdr_tma_load_act(a, worker, b, act, ad, ai);
        for (int k = 0; k < iters; k++, consumed++) {
            const int s = (int)(consumed % S);
            hsdr_tma_pass<F>(a, (int)blockIdx.x + k * (int)gridDim.x, stage + (size_t)s * t.stage_bytes, bar + s,
                             (unsigned)(consumed / S) & 1u, res + (consumed & 1) * a.g.R * G, worker, slot, b, act,
                             ad, ai, warp, warps, lane, [&] {
                                 if (tid == 0)
                                     refill(consumed + 1); /* the stage just read is free */
                             });
        }
        __syncthreads(); /* this CTA's rows of GEMV i are written */
        if (tid == 0) {
            hsdr_tma_encode_release(a.act, a.K);
            __threadfence();
            atomicAdd(t.done[i], 1u);
        }
    }
    if (tid == 0 && atomicAdd(t.finished, 1u) == gridDim.x - 1) { /* the last CTA out: every counter back to 0 */
        for (int i = 0; i < t.n; i++)
            atomicExch(t.done[i], 0u);
        atomicExch(t.finished, 0u);
    }
#else
    __trap();
#endif
}

/* How many CTAs of kernel (threads, smem bytes of shared memory, allowed here) fit on the device at once, at most
 * the knobs' CTAs per SM; 0, or -1 with err (K: for the message). */
template <class Kern>
static int hsdr_tma_fit(Kern *kernel, int threads, size_t smem, const hsdr_tma_knobs &kn, int K, int *fit, char *err,
                        size_t errlen)
{
    int dev = 0, sms = 0, per_sm = 0;
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(hsdr_cu_allow_smem(kernel, smem));
    HSDR_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    if (kn.ctas_per_sm > 0 && per_sm > kn.ctas_per_sm)
        per_sm = kn.ctas_per_sm;
    *fit = sms * per_sm;
    if (*fit < 1) {
        snprintf(err, errlen, "K = %d: a streamed CTA (%d threads, %zu bytes of shared memory) does not fit", K,
                 threads, smem);
        return -1;
    }
    return 0;
fail:
    return -1;
}

/* The launch of geometry g for kernel: its shared memory allowed, and as many CTAs as fit on the device at once (at
 * most one per pass), trimmed to the fewest that keep the most passes any CTA takes (the fused kernels' wait needs
 * the whole grid resident at once: never more than fit). */
template <class Kern>
static int hsdr_tma_place(hsdr_device_run *r, Kern *kernel, const hsdr_tma_geometry &g, const hsdr_tma_knobs &kn,
                          char *err, size_t errlen)
{
    int fit;
    if (g.G > HSDR_TMA_MAX_THREADS) {
        snprintf(err, errlen, "K = %d: the streamed kernels hold one K-block per thread, at most %d per CTA "
                              "(K <= %d)", r->K, HSDR_TMA_MAX_THREADS, 128 * HSDR_TMA_MAX_THREADS);
        return -1;
    }
    if (hsdr_tma_fit(kernel, g.threads, g.smem, kn, r->K, &fit, err, errlen) != 0)
        return -1;
    const int most = fit < g.passes ? fit : g.passes;
    const int each = (g.passes + most - 1) / most;
    r->shape.kernel = reinterpret_cast<void (*)(void)>(kernel);
    r->shape.ctas = (unsigned)((g.passes + each - 1) / each);
    r->shape.threads = (unsigned)g.threads;
    r->shape.smem = g.smem;
    return 0;
}

/* prepare: kernel hsdr_tma_rows<F, FUSED>, or the ring on one GEMV, placed with the knobs' geometry. */
template <class F, class Kern>
static int hsdr_tma_prepare_for(hsdr_device_run *r, Kern *kernel, char *err, size_t errlen)
{
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, err, errlen) != 0)
        return -1;
    return hsdr_tma_place(r, kernel, hsdr_tma_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn), kn, err,
                          errlen);
}

template <class F, bool FUSED>
static int hsdr_tma_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    return hsdr_tma_prepare_for<F>(r, hsdr_tma_rows<F, FUSED>, err, errlen);
}

/* The encode: K / 32 warps, 8 per CTA. Launched programmatically dependent on the kernel before it (in a token, the
 * previous GEMV), it lets the mat-vec launch at once and waits before reading x. */
__global__ void __launch_bounds__(256) hsdr_tma_quantize(const float *x, int K, int8_t *q);

/* The encode kernel (stage encode), then the mat-vec kernel mv on a (stage reduce), each programmatically dependent
 * on the one before, with the ablation masks (HSDR_STAGE_BIT). */
template <class Kern>
static cudaError_t hsdr_tma_encode_then(hsdr_device_run *r, Kern *mv, const hsdr_tma_args &a, unsigned skip,
                                        unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
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
        e = cudaLaunchKernelEx(&cfg, mv, a);
    return e;
}

/* The encode, then the mat-vec; fused, the one mat-vec launch (the encode inside it has no launch of its own: a
 * stage alone, or an ablation, is refused). */
template <class F, bool FUSED>
static cudaError_t hsdr_tma_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    if (FUSED && (stage >= 0 || skip || twice))
        return cudaErrorNotSupported;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    hsdr_tma_args a;
    a.w = w, a.x = (const float *)r->x, a.act = (int8_t *)r->act, a.y = r->y, a.K = r->K, a.N = r->N;
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, NULL, 0) != 0) /* prepare took them: they cannot fail here */
        return cudaErrorInvalidValue;
    a.g = hsdr_tma_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn);
    if (FUSED) {
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
        return cudaLaunchKernelEx(&cfg, hsdr_tma_rows<F, true>, a);
    }
    return hsdr_tma_encode_then(r, hsdr_tma_rows<F, false>, a, skip, twice);
}

/* ---- the ring's host side: a launch of one GEMV (the per-launch row), and the whole token ---- */

template <class F>
static int hsdr_tma_ring_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    return hsdr_tma_prepare_for<F>(r, hsdr_tma_ring<F>, err, errlen);
}

/* GEMV i of the ring's arguments: run r's weights (copy `w`), x, activations, y and geometry; its done counter. */
template <class F>
static void hsdr_tma_ring_gemv(hsdr_tma_ring_args *t, int i, const hsdr_device_run *r, const uint8_t *w,
                               const hsdr_tma_knobs &kn)
{
    hsdr_tma_args &a = t->gemv[i];
    a.w = w, a.x = (const float *)r->x, a.act = (int8_t *)r->act, a.y = r->y, a.K = r->K, a.N = r->N;
    a.g = hsdr_tma_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn);
    t->done[i] = hsdr_tma_ring_counters((int8_t *)r->act, r->K);
}

/* One GEMV: the ring of one, programmatically dependent on the kernel before it (no stage alone, no ablation: the
 * encode is inside). */
template <class F>
static cudaError_t hsdr_tma_ring_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip,
                                        unsigned twice)
{
    if (stage >= 0 || skip || twice)
        return cudaErrorNotSupported;
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, NULL, 0) != 0) /* prepare took them: they cannot fail here */
        return cudaErrorInvalidValue;
    hsdr_tma_ring_args t;
    memset(&t, 0, sizeof t);
    hsdr_tma_ring_gemv<F>(&t, 0, r, w, kn);
    t.finished = t.done[0] + 1;
    t.n = 1;
    t.stage_bytes = t.gemv[0].g.stage_bytes;
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    return cudaLaunchKernelEx(&cfg, hsdr_tma_ring<F>, t);
}

/* The token (hsdr_cu_kernels.token): runs[0..n) as HSDR_TMA_RING_MAX GEMVs per launch, every launch one grid of as
 * many CTAs as fit, sized for the largest pass, block-result buffer and row slots of its GEMVs; captured on
 * tok->stream into tok->graph. */
template <class F>
static int hsdr_tma_ring_token(hsdr_device_run *tok, hsdr_device_run *const *runs, int n, char *err, size_t errlen)
{
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, err, errlen) != 0)
        return -1;
    const int launches = (n + HSDR_TMA_RING_MAX - 1) / HSDR_TMA_RING_MAX;
    hsdr_tma_ring_args *t = (hsdr_tma_ring_args *)calloc((size_t)launches, sizeof *t);
    hsdr_cu_shape shape[HSDR_TMA_RING_LAUNCHES]; /* per launch, set as tok->shape for hsdr_cu_pdl_config */
    cudaError_t launched = cudaSuccess, ended;
    int failed = -1;
    if (!t || launches > HSDR_TMA_RING_LAUNCHES) {
        snprintf(err, errlen, "token of %d GEMVs: %s", n, t ? "more than the ring takes" : "out of host memory");
        free(t);
        return -1;
    }
    for (int l = 0; l < launches; l++) {
        const int first = l * HSDR_TMA_RING_MAX, count = n - first < HSDR_TMA_RING_MAX ? n - first : HSDR_TMA_RING_MAX;
        int threads = 32, most_rg = 0, fit;
        unsigned stage_bytes = 16;
        for (int i = 0; i < count; i++) {
            const hsdr_device_run *r = runs[first + i];
            hsdr_tma_ring_gemv<F>(&t[l], i, r, r->wblock, kn);
            const hsdr_tma_geometry &g = t[l].gemv[i].g;
            threads = g.threads > threads ? g.threads : threads;
            stage_bytes = g.stage_bytes > stage_bytes ? g.stage_bytes : stage_bytes;
            most_rg = g.R * g.G > most_rg ? g.R * g.G : most_rg;
        }
        t[l].n = count;
        t[l].finished = t[l].done[0] + 1;
        t[l].stage_bytes = stage_bytes;
        shape[l].smem = hsdr_tma_smem(kn.stages, stage_bytes, most_rg);
        if (hsdr_tma_fit(hsdr_tma_ring<F>, threads, shape[l].smem, kn, runs[first]->K, &fit, err, errlen) != 0) {
            free(t);
            return -1;
        }
        shape[l].ctas = (unsigned)fit, shape[l].threads = (unsigned)threads;
    }
    HSDR_CU(cudaStreamBeginCapture(tok->stream, cudaStreamCaptureModeThreadLocal));
    for (int l = 0; l < launches && launched == cudaSuccess; l++) {
        cudaLaunchAttribute attr;
        tok->shape = shape[l];
        const cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(tok, &attr);
        launched = cudaLaunchKernelEx(&cfg, hsdr_tma_ring<F>, t[l]);
        if (launched != cudaSuccess)
            failed = l;
    }
    ended = cudaStreamEndCapture(tok->stream, &tok->graph); /* ends the capture also after a failed launch */
    free(t);
    t = NULL;
    if (launched != cudaSuccess) {
        snprintf(err, errlen, "token: launch %d of the ring: %s", failed, cudaGetErrorString(launched));
        return -1;
    }
    HSDR_CU(ended);
    return 0;
fail:
    free(t);
    return -1;
}

#endif
