/* The warp-rows consumer (cuda.planar2_wr; issue 18 step 5): tma.cuh's streamed passes without a CTA barrier in the
 * loop. y is bit-identical to cuda.production's (hsdr_matvec_q8_1 in hsdr_cuda_soa_order): the same operations on
 * the same values as hsdr_tma_rows, only where they run changes.
 *   Idea     each warp takes whole rows of a pass and reduces them itself, so a pass needs no CTA barrier: the warps
 *            release a stage by arriving on its "empty" mbarrier, and one producer warp refills it (bulk copies,
 *            completion on the stage's "full" mbarrier).
 *   Layout   weights: the format's rows (planar2.cuh's rows). Activations: tma.cuh's q[K], d8, isum, copied into
 *            shared memory once per CTA (below).
 *   Stages   encode (tma.cuh's encode kernel, launched programmatically dependent), reduce (this consumer).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.planar2_wr *'
 *
 * geometry HSDR_WR_WARPS consumer warps and one producer warp; a pass is R = warps x RW rows (RW: the rows a warp
 *          takes that keep a pass near HSDR_WR_PASS_BYTES, 1..4); warp w takes rows w RW .. w RW + RW - 1; stages
 *          from HSDR_TMA's first field; persistent CTAs as tma.cuh places them.
 * layout   shared memory: the stages, then q[K] with chunk c (16 bytes) of K-block b at chunk c ^ (b & 7) (a
 *          quarter-warp reading eight consecutive blocks' chunk c hits 32 distinct banks), d8[K / 32], isum[K / 32],
 *          the full and empty mbarriers, each warp's block results.
 * steps    per warp and pass: its (row, K-block) items dealt over its lanes (item e: row e / G, block e % G; lane
 *          L takes e = L, L + 32, ...): F::sums (the four exact sums and the block's scale), the fork's
 *          acc = fmaf(d8_k, sumi_k - isum_k, acc) from +0, (d_w, acc) into the warp's slots; __syncwarp; the stage
 *          released; per row hsdr_tma_row (the fork's lane order) and lane 0 writes y. */
#ifndef HSDR_CUDA_WARP_ROWS_CUH
#define HSDR_CUDA_WARP_ROWS_CUH
#include "tma.cuh"

/* HSDR_WR_CTA_SMEM: the shared memory a CTA keeps under so that two share an SM (the stages are cut to fit, at
 * least two) */
enum {
    HSDR_WR_WARPS = 8,
    HSDR_WR_THREADS = 32 * (HSDR_WR_WARPS + 1),
    HSDR_WR_PASS_BYTES = 24576,
    HSDR_WR_CTA_SMEM = 113 * 1024
};

/* tma.cuh's geometry with P = the consumer warps, R = P x RW (possibly past N: the last pass is short). */
static inline hsdr_tma_geometry hsdr_wr_geometry_of(int K, int N, unsigned row_bytes, const hsdr_tma_knobs &kn)
{
    hsdr_tma_geometry g;
    int rw = (int)(HSDR_WR_PASS_BYTES / ((size_t)HSDR_WR_WARPS * row_bytes));
    rw = rw < 1 ? 1 : rw > 4 ? 4 : rw;
    g.G = K / 128;
    g.P = HSDR_WR_WARPS;
    g.R = HSDR_WR_WARPS * rw;
    g.early = 0;
    g.threads = HSDR_WR_THREADS;
    g.passes = (N + g.R - 1) / g.R;
    g.row_bytes = row_bytes;
    g.stage_bytes = hsdr_tma_round16((size_t)g.R * row_bytes) + 16; /* + the skew of a pass that starts unaligned */
    const size_t rest = (size_t)K + (size_t)K / 32 * 8          /* q, d8, isum */
                        + (size_t)g.R * g.G * sizeof(float2);   /* every warp's block results */
    const size_t room = rest < HSDR_WR_CTA_SMEM ? (HSDR_WR_CTA_SMEM - rest) / (g.stage_bytes + 16) : 0;
    g.stages = (size_t)kn.stages < room ? kn.stages : room < 2 ? 2 : (int)room;
    g.smem = (size_t)g.stages * (g.stage_bytes + 16) + rest; /* the stages and their full and empty mbarriers */
    return g;
}

template <class F>
__global__ void __launch_bounds__(HSDR_WR_THREADS) hsdr_wr_rows(const hsdr_tma_args a)
{
#if __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) uint8_t smem[];
    const hsdr_tma_geometry &g = a.g;
    const int S = g.stages, G = g.G, K = a.K, rw = g.R / HSDR_WR_WARPS;
    uint8_t *stage = smem;
    int8_t *q = (int8_t *)(smem + (size_t)S * g.stage_bytes);
    float *d8 = (float *)(q + K);
    int *isum = (int *)(d8 + K / 32);
    uint64_t *full = (uint64_t *)(isum + K / 32), *empty = full + S;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float2 *res = (float2 *)(empty + S) + (size_t)warp * rw * G;
    const int iters = (g.passes - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    if (tid == 0) {
        hsdr_mbar_init(full, S, 1);
        hsdr_mbar_init(empty, S, HSDR_WR_WARPS);
    }
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize(); /* the encode's output */
    for (int i = tid; i < K / 16; i += (int)blockDim.x) { /* q, swizzled */
        const int b = i >> 3, c = i & 7;
        ((uint4 *)q)[8 * b + (c ^ (b & 7))] = ((const uint4 *)a.act)[i];
    }
    for (int i = tid; i < K / 64; i += (int)blockDim.x) /* d8 and isum, as the encode wrote them */
        ((uint4 *)d8)[i] = ((const uint4 *)(a.act + K))[i];
    __syncthreads(); /* the activations and the mbarriers */
    if (warp == HSDR_WR_WARPS) { /* the producer: a pass into a stage once every warp has released it */
        if (lane == 0)
            for (int i = 0; i < iters; i++) {
                const int s = i % S;
                if (i >= S)
                    hsdr_bulk_wait(empty + s, (unsigned)(i / S - 1) & 1u);
                hsdr_tma_issue(a, (int)blockIdx.x + i * (int)gridDim.x, stage + (size_t)s * g.stage_bytes,
                               full + s);
            }
        return;
    }
    for (int i = 0, s = 0, phase = 0; i < iters; i++) {
        const int pass = (int)blockIdx.x + i * (int)gridDim.x;
        const int r0 = pass * g.R, nr = min(g.R, a.N - r0);
        const int first = warp * rw, mine = max(0, min(rw, nr - first)); /* this warp's rows of the pass */
        const uint8_t *rows = stage + (size_t)s * g.stage_bytes + ((uintptr_t)(a.w + (size_t)r0 * g.row_bytes) & 15u);
        hsdr_bulk_wait(full + s, (unsigned)phase);
        for (int e = lane, j = 0, b = lane; e < mine * G; e += 32) {
            while (b >= G) /* item e is (row j, block b) */
                b -= G, j++;
            int32_t act[32];
            const uint4 *qa = (const uint4 *)(q + 128 * b);
#pragma unroll
            for (int c = 0; c < 8; c++) {
                const uint4 v = qa[c ^ (b & 7)];
                act[4 * c] = (int)v.x, act[4 * c + 1] = (int)v.y, act[4 * c + 2] = (int)v.z, act[4 * c + 3] = (int)v.w;
            }
            const float4 dv = ((const float4 *)d8)[b];
            const int4 iv = ((const int4 *)isum)[b];
            const float ad[4] = {dv.x, dv.y, dv.z, dv.w};
            const int ai[4] = {iv.x, iv.y, iv.z, iv.w};
            int sumi[4] = {0, 0, 0, 0};
            const float dw = F::sums(rows + (size_t)(first + j) * g.row_bytes, G, b, act, sumi);
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < 4; k++)
                acc = __fmaf_rn(ad[k], (float)(sumi[k] - ai[k]), acc);
            res[e] = make_float2(dw, acc);
            b += 32;
        }
        __syncwarp(); /* the warp's block results are written and its reads of the stage done */
        if (lane == 0)
            hsdr_mbar_arrive(empty + s);
        for (int j = 0; j < mine; j++) {
            const float v = hsdr_tma_row(res + j * G, G, lane);
            if (lane == 0)
                a.y[r0 + first + j] = v;
        }
        __syncwarp(); /* the results are read before the next pass writes them */
        if (++s == S)
            s = 0, phase ^= 1;
    }
#else
    __trap(); /* hsdr_cuda_tma_unavailable refuses devices before sm_90 */
#endif
}

template <class F>
static int hsdr_wr_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, err, errlen) != 0)
        return -1;
    return hsdr_tma_place(r, hsdr_wr_rows<F>, hsdr_wr_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn), kn, err,
                          errlen);
}

/* The encode (stage encode), then the mat-vec (stage reduce), each programmatically dependent on the one before. */
template <class F>
static cudaError_t hsdr_wr_launch(hsdr_device_run *r, const uint8_t *w, int stage, unsigned skip, unsigned twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | red, &skip, &twice);
    hsdr_tma_knobs kn;
    if (hsdr_tma_knobs_of(&kn, NULL, 0) != 0) /* prepare took them: they cannot fail here */
        return cudaErrorInvalidValue;
    hsdr_tma_args a;
    a.w = w, a.x = (const float *)r->x, a.act = (int8_t *)r->act, a.y = r->y, a.K = r->K, a.N = r->N;
    a.g = hsdr_wr_geometry_of(r->K, r->N, F::row_bytes(r->K / 128), kn);
    return hsdr_tma_encode_then(r, hsdr_wr_rows<F>, a, skip, twice);
}

#endif
