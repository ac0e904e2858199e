/* The LNS8 variants of the CUDA backend, in one translation unit so that they share the encoder, its constant tables
 * and the warp helpers: cuda.direct (below), cuda.direct_mma and cuda.q1516 with their _p2 forms on the 2-bit layout
 * (int8 tensor cores, further down), cuda.stateset (ballot state sets, at the end).
 *   Idea     the direct 8-phase reduction of spec/lns8.md with A[8] exact: a warp's lanes own lanes of each group
 *            (cuda.direct); A[p] = sum_h 16^h (t . V)[4p + h], an int8 tensor-core product against V built once per
 *            matvec (_mma, q1516); or the occupied states' ballot masks built once per R rows (cuda.stateset).
 *   Layout   weights: PTQ1_0 as stored (_p2: planar2.cuh's blocks, converted on the device). Activations: K LNS8
 *            codes, then the pre-scale e (an int at a 16-byte boundary), encoded on the device; _mma, q1516: then
 *            per group V's B fragments and column sums (route).
 *   Stages   encode (codes and pre-scale), route (_mma, q1516: V), reduce (decode, phases, scale and merge fused);
 *            convert for the _p2 forms.
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.direct *'
 *            (likewise cuda.direct_mma, cuda.direct_mma_p2, cuda.q1516, cuda.q1516_p2, cuda.stateset)
 *
 * cuda.direct: the direct 8-phase LNS8 reduction, warp-level (the issue's design: lanes own lanes of a group).
 *
 * encode  one CTA per 128-code group, each finding the automatic pre-scale over all of x (largest finite normal |x|
 *         by an integer max over bit patterns, then e = ceil((k(max) - 127) / 8)) and encoding its group by the
 *         reference encoder's integer rules (exact mantissa thresholds, saturation, the half-min underflow rule):
 *         bit-identical to hsdr_lns8_encode. (Until issue 18 step 5 one CTA encoded all of x: 8-16 us a launch.)
 * matvec  one warp per row; for every 128-lane group lane j owns lanes 4j..4j+3: it decodes its four trits from the
 *         one PTQ1_0 word that holds them and adds s * t * 2^q of each nonzero lane into eight per-phase partials
 *         (int32, exact). The warp reduces the 8 x 32 partials with a reduce-scatter butterfly (offsets 16, 8, 4:
 *         halving the phases a lane keeps; then 2, 1), so lane l ends with A[p(l)] exactly; the group's value
 *         d * sum_p A[p] c_p is summed in fp64 over the phases and the groups; y = fp32 of 2^e / 512 times that:
 *         within 2^-20 sum |terms| of y_lns8 (spec/vectors.md's fp32 tolerance). */
#include <stdlib.h>

#include "common.cuh"
#include "planar2.cuh"

extern "C" {
#include "lns8.h"
#include "lns8_const.h"
}

__constant__ uint32_t c_mt[8]; /* the reference's mantissa thresholds (hsdr_lns8_mt), uploaded once */
__constant__ double c_cp[8];   /* c_p = 2^((p - 2) / 8), the reference's nearest doubles */
__constant__ long long c_c31[8]; /* round(c_p 2^31): the Q15.16 constants (hsdr_lns8_c31) */

static cudaError_t upload_constants(void)
{
    static bool done;
    if (done)
        return cudaSuccess;
    cudaError_t e = cudaMemcpyToSymbol(c_mt, hsdr_lns8_mt, sizeof c_mt);
    if (e == cudaSuccess)
        e = cudaMemcpyToSymbol(c_cp, hsdr_lns8_cp_hi, sizeof c_cp);
    if (e == cudaSuccess)
        e = cudaMemcpyToSymbol(c_c31, hsdr_lns8_c31, sizeof c_c31);
    done = e == cudaSuccess;
    return e;
}

/* hsdr_lns8_k_unclamped on the bit pattern of |x|: -1 for zero, subnormal, inf and NaN. */
__device__ __forceinline__ int k_unclamped(uint32_t au, int *k)
{
    const uint32_t biased = au >> 23;
    if (biased == 0 || biased == 0xff)
        return -1;
    const uint32_t m = au & 0x7fffffu;
    int j = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        j += m >= c_mt[i];
    *k = 8 * ((int)biased - 127) + HSDR_LNS8_BIAS + j;
    return 0;
}

/* hsdr_lns8_encode_one */
__device__ __forceinline__ uint8_t encode_one(float x, int e)
{
    const uint32_t u = __float_as_uint(x), neg = (u >> 31) << 7, au = u & 0x7fffffffu;
    if (au == 0x7f800000u)
        return (uint8_t)(neg | HSDR_LNS8_KMAX);
    int k;
    if (k_unclamped(au, &k) != 0)
        return 0;
    const long long ks = (long long)k - 8LL * e;
    if (ks > HSDR_LNS8_KMAX)
        return (uint8_t)(neg | HSDR_LNS8_KMAX);
    if (ks >= 1)
        return (uint8_t)(neg | (uint32_t)ks);
    const long long eshift = (long long)((au >> 23) & 0xff) - 127 - e;
    if (eshift > -11 || (eshift == -11 && (au & 0x7fffffu) >= HSDR_LNS8_HALF_MIN_MT))
        return (uint8_t)(neg | 1u);
    return 0;
}

enum { ENCODE_THREADS = 256, WARPS_PER_CTA = 8 };

/* The activation buffer: K codes, then the pre-scale e (an int at a 16-byte boundary). */
static size_t act_bytes(int K)
{
    return (size_t)((K + 15) & ~15) + 16;
}

__device__ __forceinline__ int *prescale_of(uint8_t *codes, int K)
{
    return (int *)(codes + ((K + 15) & ~15));
}

/* The pre-scale e of x, in every thread of an ENCODE_THREADS CTA: the largest finite normal |x| by an integer max
 * over bit patterns (monotone in magnitude, so any order gives the same), then e = ceil((k(max) - 127) / 8). */
__device__ __forceinline__ int prescale_e(const float *x, int K)
{
    __shared__ uint32_t warp_max[ENCODE_THREADS / 32];
    uint32_t best = 0;
    auto take = [&best](float v) {
        const uint32_t au = __float_as_uint(v) & 0x7fffffffu;
        if ((au >> 23) != 0 && au < 0x7f800000u && au > best)
            best = au;
    };
    int done = 0;
    if (((uintptr_t)x & 15) == 0) { /* 16-byte loads, four in flight a thread (every CTA reads all of x from L2) */
        const float4 *x4 = (const float4 *)x;
        const int n4 = K / 4;
#pragma unroll 4
        for (int i = threadIdx.x; i < n4; i += ENCODE_THREADS) {
            const float4 v = x4[i];
            take(v.x), take(v.y), take(v.z), take(v.w);
        }
        done = 4 * n4;
    }
    for (int i = done + threadIdx.x; i < K; i += ENCODE_THREADS)
        take(x[i]);
    for (int o = 16; o >= 1; o >>= 1)
        best = max(best, __shfl_xor_sync(HSDR_FULL_MASK, best, o));
    if ((threadIdx.x & 31) == 0)
        warp_max[threadIdx.x >> 5] = best;
    __syncthreads();
    uint32_t m = 0;
#pragma unroll
    for (int w = 0; w < ENCODE_THREADS / 32; w++)
        m = max(m, warp_max[w]);
    int k = 0, e = 0;
    if (m != 0 && k_unclamped(m, &k) == 0) {
        const int a = k - HSDR_LNS8_KMAX; /* ceil(a / 8) for either sign */
        e = a >= 0 ? (a + 7) / 8 : -((-a) / 8);
    }
    return e;
}

/* Group blockIdx.x of the encode, by an ENCODE_THREADS CTA: e over all of x (K floats from L2: cheaper than a second
 * launch), the group's codes (also into keep[0..127] when given), and e stored by CTA 0. */
__device__ __forceinline__ void encode_group(const float *x, int K, uint8_t *codes, uint8_t *keep)
{
    const int e = prescale_e(x, K), i = 128 * (int)blockIdx.x + (int)threadIdx.x;
    if (threadIdx.x < 128 && i < K) {
        const uint8_t c = encode_one(x[i], e);
        codes[i] = c;
        if (keep)
            keep[threadIdx.x] = c;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *prescale_of(codes, K) = e;
}

/* The encode: one CTA per 128-code group. */
__global__ void __launch_bounds__(ENCODE_THREADS) hsdr_cu_encode_lns8(const float *x, int K, uint8_t *codes)
{
    encode_group(x, K, codes, NULL);
}

/* The four trits of lanes 4j..4j+3 of a PTQ1_0 block, in lane order, as -1/0/+1. */
__device__ __forceinline__ void lane_trits(const uint8_t *blk, int j, int t[4])
{
    if (j < 30) {
        /* j < 20: qs[m..m+3] digit n with 16n + m = 4j; else qs[16 + m..] digit n with 80 + 8n + m = 4j */
        const int byte0 = j < 20 ? 4 * (j & 3) : 16 + 4 * ((j - 20) & 1), n = j < 20 ? j >> 2 : (j - 20) >> 1;
        const uint32_t word = __ldg((const uint32_t *)(blk + byte0));
        const uint32_t pow3 = n == 0 ? 3u : n == 1 ? 9u : n == 2 ? 27u : n == 3 ? 81u : 243u; /* 3^(n + 1) */
#pragma unroll
        for (int u = 0; u < 4; u++) /* digit n of byte v = floor(v * 3^(n + 1) / 256) mod 3 */
            t[u] = (int)((((word >> (8 * u)) & 0xffu) * pow3 >> 8) % 3u) - 1;
    } else {
        /* qh: lanes 120 + 2n + h; lane 30 holds n = 0, 1; lane 31 n = 2, 3 */
        const uint32_t word = __ldg((const uint32_t *)(blk + 24));
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int n = 2 * (j - 30) + (u >> 1), h = u & 1;
            const uint32_t pow3 = n == 0 ? 3u : n == 1 ? 9u : n == 2 ? 27u : 81u;
            t[u] = (int)((((word >> (8 * h)) & 0xffu) * pow3 >> 8) % 3u) - 1;
        }
    }
}

/* Keep half of the values a lane holds, add the partner's other half (reduce-scatter over one butterfly level). */
template <int HALF> __device__ __forceinline__ void scatter_half(int v[2 * HALF], int offset, bool upper)
{
#pragma unroll
    for (int i = 0; i < HALF; i++) {
        const int keep = upper ? v[HALF + i] : v[i], send = upper ? v[i] : v[HALF + i];
        v[i] = keep + __shfl_xor_sync(HSDR_FULL_MASK, send, offset);
    }
}

__global__ void __launch_bounds__(32 * WARPS_PER_CTA)
    hsdr_cu_direct_rows(const uint8_t *W, const uint8_t *codes, int K, int N, float *y, int32_t *A_out)
{
    const int lane = threadIdx.x & 31;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= N) /* uniform per warp */
        return;
    const int G = K / 128;
    const int e = *prescale_of((uint8_t *)codes, K);
    const uint8_t *wrow = W + (size_t)row * G * HSDR_PTQ1_0_BLOCK;
    /* the phase lane l ends with: bits 4, 3, 2 of l choose the upper halves at offsets 16, 8, 4 */
    const int my_phase = ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
    double acc = 0.0;
    for (int g = 0; g < G; g++) {
        const uint8_t *blk = wrow + (size_t)g * HSDR_PTQ1_0_BLOCK;
        int t[4];
        lane_trits(blk, lane, t);
        const uint32_t c4 = __ldg((const uint32_t *)(codes + 128 * g + 4 * lane));
        int part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const uint32_t code = (c4 >> (8 * u)) & 0xffu, k = code & 0x7fu;
            const int v = (k != 0 && t[u] != 0) ? (int)(1u << (k >> 3)) : 0; /* k = 0 is skipped */
            const int c = ((code >> 7) != 0) != (t[u] < 0) ? -v : v;
#pragma unroll
            for (int p = 0; p < 8; p++)
                part[p] += (int)(k & 7u) == p ? c : 0;
        }
        scatter_half<4>(part, 16, (lane >> 4) & 1);
        scatter_half<2>(part, 8, (lane >> 3) & 1);
        scatter_half<1>(part, 4, (lane >> 2) & 1);
        int a = part[0];
        a += __shfl_xor_sync(HSDR_FULL_MASK, a, 2);
        a += __shfl_xor_sync(HSDR_FULL_MASK, a, 1); /* A[my_phase], exact, in every lane of the phase */
        if (A_out && (lane & 3) == 0)
            A_out[((size_t)row * G + g) * 8 + my_phase] = a;
        double s = (double)a * c_cp[my_phase]; /* one lane per phase below: lanes with l & 3 == 0 */
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 4);
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 8);
        s += __shfl_xor_sync(HSDR_FULL_MASK, s, 16); /* sum over the 8 phases */
        const double d = (double)__half2float(__ushort_as_half(*(const unsigned short *)(blk + 26)));
        acc += d * s;
    }
    if (lane == 0)
        y[row] = (float)ldexp(acc, e - 9); /* 2^e / 512 */
}

/* The host side of every LNS8 run, once in create: the constant tables on the device before any launch. */
static int lns8_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    (void)r;
    HSDR_CU(upload_constants());
    return 0;
fail:
    return -1;
}

/* The start of every LNS8 launch: the stage masks, and the encode launches (none when the encode is ablated or
 * another stage runs alone; two when it is doubled). */
static void lns8_prologue(hsdr_device_run *r, unsigned all, int stage, unsigned *skip, unsigned *twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE;
    hsdr_cu_stage_alone(stage, all, skip, twice);
    for (int i = 0; i < hsdr_cu_reps(enc, *skip, *twice); i++)
        hsdr_cu_encode_lns8<<<(r->K + 127) / 128, ENCODE_THREADS, 0, r->stream>>>(r->x, r->K, (uint8_t *)r->act);
}

static cudaError_t launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    uint8_t *codes = (uint8_t *)r->act;
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    lns8_prologue(r, enc | red, stage, &skip, &twice);
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice); i++)
        hsdr_cu_direct_rows<<<(r->N + WARPS_PER_CTA - 1) / WARPS_PER_CTA, 32 * WARPS_PER_CTA, 0, r->stream>>>(
            W, codes, r->K, r->N, r->y, r->A);
    return cudaGetLastError();
}

static cudaError_t upload_codes(hsdr_device_run *r, const uint8_t *codes, int e)
{
    cudaError_t err = cudaMemcpy(r->act, codes, (size_t)r->K, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy((uint8_t *)r->act + ((r->K + 15) & ~15), &e, sizeof e, cudaMemcpyHostToDevice);
    return err;
}

static const hsdr_cu_kernels kernels = {1, act_bytes, lns8_prepare, launch, upload_codes, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_direct_ops = HSDR_CU_OPS(kernels);

/* ==== cuda.direct_mma: the same A[8] as an int8 tensor-core product ====
 *
 * For one group, A[p] = sum_h 16^h C[p][h] with C = t . V, V a 128 x 32 int8 matrix built once per matvec from the
 * codes (route stage): the column of (phase p, octave group h) holds s * 2^(q & 3) for the lanes of phase p whose
 * octave q has q >> 2 = h (|entries| <= 8, |C| <= 1024: exact). So a warp computes 16 rows x 32 columns of C per
 * group with 16 mma.m16n8k32 (s8 x s8 -> s32): the trits go in as raw digits {0, 1, 2}, and the accumulators start
 * at minus V's column sums (which the digits' +1 adds back). The k order inside a group is free as long as both
 * operands use it: thread t (of the 4 in an mma thread group) supplies the 4-trit units UNIT[t][0..7] (a qs word and
 * a digit step: one multiply-by-3 decode step, or the closed form for the irregular tail), units 2s and 2s + 1 for
 * k-step s. The columns are ordered so that each thread ends with whole phases (mma_col_phase): thread t holds the
 * four octave groups of phases t and t + 4 of its two rows, so A[p] needs no shuffle (issue 18 step 6). The route
 * kernel lays V out in exactly the order the B fragments are loaded. */

enum { MMA_WARPS = 8 };

/* unit (thread t, index j) -> (word w, digit step n); w = 6: the qh pair unit n (weights 120 + 4n ..) */
__constant__ int8_t c_unit_w[4][8] = {{0, 0, 0, 0, 0, 4, 4, 4}, {1, 1, 1, 1, 1, 4, 4, 5}, {2, 2, 2, 2, 2, 5, 5, 5},
                                      {3, 3, 3, 3, 3, 5, 6, 6}};
__constant__ int8_t c_unit_n[4][8] = {{0, 1, 2, 3, 4, 0, 1, 2}, {0, 1, 2, 3, 4, 3, 4, 0}, {0, 1, 2, 3, 4, 1, 2, 3},
                                      {0, 1, 2, 3, 4, 4, 0, 1}};

/* The weight (0..127) of byte e of unit (w, n). */
__device__ __forceinline__ int unit_weight(int w, int n, int e)
{
    return w < 4 ? 16 * n + 4 * w + e : w < 6 ? 80 + 8 * n + 4 * (w - 4) + e : 120 + 4 * n + e;
}

/* The B operand and column sums of every group: Bf[g][s][j][lane] = {b0, b1} for k-step s, n-tile j. */
static size_t mma_act_bytes(int K)
{
    const size_t G = (size_t)K / 128;
    return act_bytes(K) + G * 16 * 32 * sizeof(uint2) + G * 32 * sizeof(int);
}

__device__ __forceinline__ uint2 *mma_bfrag(uint8_t *act, int K)
{
    return (uint2 *)(act + ((K + 15) & ~15) + 16);
}

__device__ __forceinline__ int *mma_colsum(uint8_t *act, int K)
{
    return (int *)(mma_bfrag(act, K) + (size_t)(K / 128) * 16 * 32);
}

/* The phase p and octave group h of column c = 8 j + n of V (n-tile j, column n of it): p = (n >> 1) + 4 (j >> 1),
 * h = 2 (j & 1) + (n & 1). The mma's thread t holds columns 2t and 2t + 1 of each n-tile: phases t (n-tiles 0, 1) and
 * t + 4 (n-tiles 2, 3), octave groups 0..3 in the order (j & 1, n & 1). */
__host__ __device__ __forceinline__ int mma_col_phase(int c)
{
    return ((c & 7) >> 1) + 4 * (c >> 4);
}

__host__ __device__ __forceinline__ int mma_col_octave(int c)
{
    return 2 * ((c >> 3) & 1) + (c & 1);
}

/* V[i][c] for lane i's code and column c */
__device__ __forceinline__ int v_entry(uint32_t code, int c)
{
    const int k = code & 0x7f, q = k >> 3;
    if (k == 0 || (k & 7) != mma_col_phase(c) || (q >> 2) != mma_col_octave(c))
        return 0;
    const int v = 1 << (q & 3);
    return (code & 0x80) ? -v : v;
}

/* The encode and the route of the tensor-core rows in one launch, one CTA per group g: with enc, e over all of x and
 * the group's 128 codes (hsdr_cu_encode_lns8's bits), else the codes already in act (test vectors, or the encode
 * ablated); with route, the group's B fragments (thread f of 512: lane f & 31, n-tile (f >> 5) & 3, k-step f >> 7)
 * and its 32 column sums (8 threads a column, 16 codes each, added by xor shuffles: exact). L: the weight layout's
 * units (mma_ptq1_0, mma_planar2 below). Launched programmatically dependent: it waits for the kernel before it
 * (x), then lets the rows kernel start fetching its weights. */
template <class L>
__global__ void __launch_bounds__(ENCODE_THREADS) hsdr_cu_mma_prep(const float *x, int K, uint8_t *act, int enc,
                                                                   int route)
{
    __shared__ uint8_t cg[128];
    const int g = (int)blockIdx.x, tid = (int)threadIdx.x;
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    if (enc)
        encode_group(x, K, act, cg);
    else if (tid < 128) {
        cg[tid] = act[128 * g + tid];
    }
    __syncthreads();
    if (!route)
        return;
    uint2 *bf = mma_bfrag(act, K) + (size_t)g * 512;
    for (int f = tid; f < 512; f += ENCODE_THREADS) {
        const int lane = f & 31, j = (f >> 5) & 3, s = f >> 7, t = lane & 3, col = 8 * j + (lane >> 2);
        uint32_t half[2];
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            uint32_t word = 0;
#pragma unroll
            for (int e = 0; e < 4; e++)
                word |= (uint32_t)(uint8_t)v_entry(cg[L::unit_weight(t, 2 * s + hf, e)], col) << (8 * e);
            half[hf] = word;
        }
        bf[f] = make_uint2(half[0], half[1]);
    }
    static_assert(ENCODE_THREADS == 256, "the column sums take 8 threads of each of 32 columns");
    const int col = tid >> 3, part = tid & 7;
    int sum = 0;
    for (int i = part; i < 128; i += 8)
        sum += v_entry(cg[i], col);
    for (int o = 4; o >= 1; o >>= 1)
        sum += __shfl_xor_sync(HSDR_FULL_MASK, sum, o);
    if (part == 0)
        mma_colsum(act, K)[32 * g + col] = sum;
}

/* d = a . b + c (m16n8k32, s8 x s8 -> s32) */
__device__ __forceinline__ void mma_s8(int d[4], const uint32_t a[4], uint2 b, const int c[4])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                   "r"(c[3]));
}

/* The eight raw-digit units (4 trits each, bytes {0, 1, 2}) thread t supplies for one row's block. */
__device__ __forceinline__ void row_units(const uint8_t *blk, int t, uint32_t u[8])
{
    /* units 0..4: qs word t, digit steps 0..4 (byte pairs in 16-bit halves, x3 per step) */
    const uint32_t word = __ldcs((const uint32_t *)(blk + 4 * t));
    uint32_t even = word & 0x00ff00ffu, odd = (word >> 8) & 0x00ff00ffu;
#pragma unroll
    for (int n = 0; n < 5; n++) {
        even *= 3u, odd *= 3u;
        u[n] = ((even >> 8) & 0x00030003u) | (odd & 0x03000300u);
        even &= 0x00ff00ffu, odd &= 0x00ff00ffu;
    }
    /* units 5..7: the tail (qs words 4, 5 and the qh pair), closed form: digit n of byte b = floor(b 3^(n+1) / 256)
     * mod 3 */
#pragma unroll
    for (int j = 5; j < 8; j++) {
        const int w = c_unit_w[t][j], n = c_unit_n[t][j];
        const uint32_t src = __ldcs((const uint32_t *)(blk + (w < 6 ? 4 * w : 24)));
        uint32_t out = 0;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int ne = w < 6 ? n : 2 * n + (e >> 1);                 /* the qh pair: steps 2n, 2n, 2n+1, 2n+1 */
            const uint32_t b = (src >> (8 * (w < 6 ? e : (e & 1)))) & 0xffu; /* qh0, qh1, qh0, qh1 */
            const uint32_t p3 = ne == 0 ? 3u : ne == 1 ? 9u : ne == 2 ? 27u : ne == 3 ? 81u : 243u;
            const uint32_t x = (b * p3) >> 8;
            out |= (x - 3u * ((x * 171u) >> 9)) << (8 * e); /* x mod 3, x <= 242 */
        }
        u[j] = out;
    }
}

/* The weight layouts the tensor-core rows read, as units: unit_weight(t, j, e) is the weight (0..127) of byte e of
 * thread t's unit j (units 2s and 2s + 1 feed k-step s); units() loads and decodes thread t's eight units of one
 * row's K-block g; scale() is that block's fp16 scale. */
struct mma_ptq1_0 { /* PTQ1_0 as stored (cuda.direct_mma, cuda.q1516) */
    static __device__ __forceinline__ int unit_weight(int t, int j, int e)
    {
        return ::unit_weight(c_unit_w[t][j], c_unit_n[t][j], e);
    }
    static __device__ __forceinline__ const uint8_t *block(const uint8_t *W, int row, int G, int g)
    {
        return W + ((size_t)row * G + g) * HSDR_PTQ1_0_BLOCK;
    }
    /* where the block is: the base-3 decode reads it in place */
    typedef const uint8_t *raw;
    static __device__ __forceinline__ raw load(const uint8_t *W, int row, int G, int g, int t)
    {
        (void)t;
        return block(W, row, G, g);
    }
    static __device__ __forceinline__ void units(raw blk, int t, uint32_t u[8])
    {
        row_units(blk, t, u);
    }
    static __device__ __forceinline__ float scale(const uint8_t *W, int row, int G, int g)
    {
        return __half2float(__ushort_as_half(*(const unsigned short *)(block(W, row, G, g) + 26)));
    }
};

/* The 2-bit code bytes (planar2.cuh): thread t takes code words 2t and 2t + 1 of the block (8 bytes, one load; the
 * split kernel below fetches them), unit j = word 2t + (j & 1) shifted by 2 (j >> 1) and masked: the digits of
 * weights 32 (j >> 1) + 4 (2t + (j & 1)) .. + 3. */
struct mma_planar2 {
    static __device__ __forceinline__ int unit_weight(int t, int j, int e)
    {
        return 32 * (j >> 1) + 4 * (2 * t + (j & 1)) + e;
    }
    static __device__ __forceinline__ void units(uint2 w, uint32_t u[8])
    {
#pragma unroll
        for (int j = 0; j < 8; j++)
            u[j] = (((j & 1) ? w.y : w.x) >> (2 * (j >> 1))) & 0x03030303u;
    }
};

union mma_partial {
    double f;
    long long q;
};

/* Group g's B fragments (16 pairs of words, lane `lane`'s of each) and, for thread t's phases t and t + 4, the
 * column sums folded as A[p] folds C: kp[i] = sum_h 16^h colsum[p][h], p = t + 4 i (the columns of mma_col_phase),
 * from the prep's output. */
__device__ __forceinline__ void mma_group_operands(const uint8_t *act, int K, int g, int lane, int t, uint2 (&b)[4][4],
                                                   int (&kp)[2])
{
    const uint2 *bf = mma_bfrag((uint8_t *)act, K) + (size_t)g * 512;
    const int *colsum = mma_colsum((uint8_t *)act, K) + 32 * g;
#pragma unroll
    for (int i = 0; i < 16; i++)
        b[i >> 2][i & 3] = bf[32 * i + lane];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        kp[i] = 0;
#pragma unroll
        for (int h = 0; h < 4; h++)
            kp[i] += colsum[8 * (2 * i + (h >> 1)) + 2 * t + (h & 1)] * (1 << (4 * h)); /* sums may be negative */
    }
}

/* What the epilogue of thread t needs, once per kernel: c_p (or Q1516's C31[p]) of its phases t and t + 4, and
 * Q1516's 2^(e + 16 - 31 - 9) (a power of two: multiplying by it is ldexp, exactly). */
struct mma_consts {
    double cp[2];
    long long c31[2];
    double qscale;
};

__device__ __forceinline__ mma_consts mma_consts_of(int t, int e)
{
    mma_consts k;
    k.cp[0] = c_cp[t], k.cp[1] = c_cp[t + 4];
    k.c31[0] = c_c31[t], k.c31[1] = c_c31[t + 4];
    k.qscale = ldexp(1.0, e + 16 - 31 - 9);
    return k;
}

/* One 16-row tile of one group, by one warp: the 16 mma of units u0 (row row0) and u1 (row row0 + 8) against the
 * group's fragments b, so thread t ends with C[p][h] of phases t and t + 4 (digits, not trits); A[p] =
 * sum_h 16^h C[p][h] - kp (the digits' +1 taken back; exact; into A_out when asked), then
 * d * sum_p A[p] c_p (or Q1516's Q_g, into qg when asked) per row, the four threads' phases added by two xor
 * shuffles, into p[0] and p[8] (added when ADD, else stored) by the threads with t == 0. Rows past N compute on
 * whatever their units hold and are neither stored here nor read by the callers. scales(d0, d1) gives the rows'
 * scales, asked for after the mma. */
template <bool Q1516, bool ADD, class Scales>
__device__ __forceinline__ void mma_tile(const uint32_t (&u0)[8], const uint32_t (&u1)[8], const uint2 (&b)[4][4],
                                         const int (&kp)[2], int t, int row0, int N, int G, int g,
                                         const mma_consts &k, Scales scales, int32_t *A_out, long long *qg,
                                         mma_partial *p)
{
    const int row1 = row0 + 8;
    int c[4][4];
    const int zero[4] = {0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t a[4] = {u0[0], u1[0], u0[1], u1[1]};
        mma_s8(c[j], a, b[0][j], zero);
    }
#pragma unroll
    for (int s = 1; s < 4; s++) {
        const uint32_t a[4] = {u0[2 * s], u1[2 * s], u0[2 * s + 1], u1[2 * s + 1]};
#pragma unroll
        for (int j = 0; j < 4; j++)
            mma_s8(c[j], a, b[s][j], c[j]);
    }
    /* c[j][0..1]: row0, c[j][2..3]: row1; n-tiles 0, 1: phase t, 2, 3: phase t + 4; octave group 2 (j & 1) + i */
    int A[2][2]; /* [row][phase t, t + 4] */
#pragma unroll
    for (int r = 0; r < 2; r++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            A[r][h] = c[2 * h][2 * r] + 16 * c[2 * h][2 * r + 1] + 256 * c[2 * h + 1][2 * r] +
                      4096 * c[2 * h + 1][2 * r + 1] - kp[h];
    if (A_out) {
        if (row0 < N)
            A_out[((size_t)row0 * G + g) * 8 + t] = A[0][0], A_out[((size_t)row0 * G + g) * 8 + t + 4] = A[0][1];
        if (row1 < N)
            A_out[((size_t)row1 * G + g) * 8 + t] = A[1][0], A_out[((size_t)row1 * G + g) * 8 + t + 4] = A[1][1];
    }
    double d0, d1;
    scales(d0, d1);
    if (Q1516) {
        long long S0 = (long long)A[0][0] * k.c31[0] + (long long)A[0][1] * k.c31[1];
        long long S1 = (long long)A[1][0] * k.c31[0] + (long long)A[1][1] * k.c31[1];
        S0 += __shfl_xor_sync(HSDR_FULL_MASK, S0, 1); /* all eight phases: |S| <= 2^54, exact */
        S1 += __shfl_xor_sync(HSDR_FULL_MASK, S1, 1);
        S0 += __shfl_xor_sync(HSDR_FULL_MASK, S0, 2);
        S1 += __shfl_xor_sync(HSDR_FULL_MASK, S1, 2);
        const long long q0 = (long long)rint(__dmul_rn((double)S0, d0) * k.qscale);
        const long long q1 = (long long)rint(__dmul_rn((double)S1, d1) * k.qscale);
        if (qg && t == 0) {
            if (row0 < N)
                qg[(size_t)row0 * G + g] = q0;
            if (row1 < N)
                qg[(size_t)row1 * G + g] = q1;
        }
        if (t == 0) {
            if (ADD)
                p[0].q += q0, p[8].q += q1;
            else
                p[0].q = q0, p[8].q = q1;
        }
    } else {
        double s0 = fma((double)A[0][1], k.cp[1], (double)A[0][0] * k.cp[0]);
        double s1 = fma((double)A[1][1], k.cp[1], (double)A[1][0] * k.cp[0]);
        s0 += __shfl_xor_sync(HSDR_FULL_MASK, s0, 1); /* all eight phases */
        s1 += __shfl_xor_sync(HSDR_FULL_MASK, s1, 1);
        s0 += __shfl_xor_sync(HSDR_FULL_MASK, s0, 2);
        s1 += __shfl_xor_sync(HSDR_FULL_MASK, s1, 2);
        if (t == 0) {
            if (ADD)
                p[0].f += d0 * s0, p[8].f += d1 * s1;
            else
                p[0].f = d0 * s0, p[8].f = d1 * s1;
        }
    }
}

/* One CTA: MMA_TILES tiles of 16 rows; its MMA_WARPS warps split the groups (warp w takes g = w, w + 8, ...), each
 * loading a group's B fragments once into registers for all the tiles and decoding PTQ1_0 in place (cuda.direct_mma,
 * cuda.q1516; the 2-bit layout has the split kernel below). The per-row fp64 (or int64) partials of each warp sit in
 * shared memory and are added in warp order at the end (a fixed order: y does not depend on timing). */
/* Q1516 = false: cuda.direct_mma (fp64 group sums); true: cuda.q1516, the same exact A[8], then per group
 * S = sum_p A[p] C31[p] (int64, exact) and Q_g = rint(fp64(S) * d * 2^(e + 16 - 31 - 9)) as hsdr_q1516_group does,
 * summed over the groups in int64 (exact, so the split-K merge order does not matter); y = q_row * 2^-16. */
enum { MMA_TILES = 2, MMA_ROWS = 16 * MMA_TILES };

template <bool Q1516, class L>
__global__ void __launch_bounds__(32 * MMA_WARPS, 2) /* at most 128 registers: two CTAs per SM */
    hsdr_cu_direct_mma_rows(const uint8_t *W, uint8_t *act, int K, int N, float *y, int32_t *A_out, long long *qg,
                            long long *qr)
{
    __shared__ mma_partial partial[MMA_WARPS][MMA_ROWS];
    const int G = K / 128, lane = threadIdx.x & 31, gid = lane >> 2, t = lane & 3, warp = threadIdx.x >> 5;
    const int base = blockIdx.x * MMA_ROWS;
    for (int i = lane; i < MMA_ROWS; i += 32)
        partial[warp][i].q = 0; /* also +0.0 */
    __syncwarp();
    cudaGridDependencySynchronize(); /* the prep's B fragments, column sums and e */
    const int e = *prescale_of(act, K);
    const mma_consts kc = mma_consts_of(t, e);
    for (int g = warp; g < G; g += MMA_WARPS) {
        uint2 b[4][4];
        int kp[2];
        mma_group_operands(act, K, g, lane, t, b, kp);
#pragma unroll 1
        for (int tile = 0; tile < MMA_TILES; tile++) {
            const int row0 = base + 16 * tile + gid, r0 = row0 < N ? row0 : 0, r1 = row0 + 8 < N ? row0 + 8 : 0;
            uint32_t u0[8], u1[8];
            L::units(L::load(W, r0, G, g, t), t, u0);
            L::units(L::load(W, r1, G, g, t), t, u1);
            mma_tile<Q1516, true>(
                u0, u1, b, kp, t, row0, N, G, g, kc,
                [&](double &d0, double &d1) { d0 = (double)L::scale(W, r0, G, g), d1 = (double)L::scale(W, r1, G, g); },
                A_out, qg, &partial[warp][16 * tile + gid]);
        }
    }
    __syncthreads();
    if (threadIdx.x < MMA_ROWS && base + (int)threadIdx.x < N) {
        double sum = 0.0;
        long long qsum = 0;
        for (int w = 0; w < MMA_WARPS; w++) { /* warp order: a fixed sum */
            if (Q1516)
                qsum += partial[w][threadIdx.x].q;
            else
                sum += partial[w][threadIdx.x].f;
        }
        if (Q1516) {
            if (qr)
                qr[base + threadIdx.x] = qsum;
            y[base + threadIdx.x] = (float)ldexp((double)qsum, -16);
        } else {
            y[base + threadIdx.x] = (float)ldexp(sum, e - 9);
        }
    }
}

/* The encode and route (one launch, hsdr_cu_mma_prep: with the encode ablated or alone, the flags say which part
 * runs; doubled, the second launch runs only the doubled part), programmatically dependent on the kernel before;
 * stage < 0 or a stage alone, with the masks (HSDR_STAGE_BIT) set for the rows launch after it. */
template <class L>
static cudaError_t mma_prep_launch(hsdr_device_run *r, int stage, unsigned *skip, unsigned *twice)
{
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, route = 1u << HSDR_STAGE_ROUTE, red = 1u << HSDR_STAGE_REDUCE;
    hsdr_cu_stage_alone(stage, enc | route | red, skip, twice);
    const int ne = hsdr_cu_reps(enc, *skip, *twice), nr = hsdr_cu_reps(route, *skip, *twice);
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    cfg.gridDim = dim3((unsigned)(r->K / 128)), cfg.blockDim = dim3(ENCODE_THREADS), cfg.dynamicSmemBytes = 0;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < (ne > nr ? ne : nr) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, hsdr_cu_mma_prep<L>, (const float *)r->x, r->K, (uint8_t *)r->act, (int)(i < ne),
                               (int)(i < nr));
    return e;
}

/* The prep, then the rows, programmatically dependent on it. */
template <bool Q1516, class L>
static cudaError_t mma_launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    uint8_t *act = (uint8_t *)r->act;
    const unsigned red = 1u << HSDR_STAGE_REDUCE;
    cudaError_t e = mma_prep_launch<L>(r, stage, &skip, &twice);
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    cfg.gridDim = dim3((unsigned)((r->N + MMA_ROWS - 1) / MMA_ROWS)), cfg.blockDim = dim3(32 * MMA_WARPS);
    cfg.dynamicSmemBytes = 0;
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, hsdr_cu_direct_mma_rows<Q1516, L>, W, act, r->K, r->N, r->y, r->A,
                               (long long *)r->qg, (long long *)r->qr);
    return e;
}

/* ---- cuda.direct_mma_p2 and cuda.q1516_p2: split K, each warp's B fragments held in registers (issue 18 steps 5-7)
 *
 * grid (X, KS): slice s = blockIdx.y holds groups 8 s .. 8 s + 7, one per warp, whose B fragments and column sums
 * stay in that warp's registers for the whole kernel (read once, not once per 32 rows). The CTA walks rows
 * [x0, x0 + rpc) in 16-row tiles of the 2-bit blocks layout (planar2.cuh; until issue 18 step 7 the rows layout of
 * cuda.planar2_tma, whose 16-byte halves left every code sector half-used by a warp), each thread reading its two
 * code words and the scale of its two rows MS_AHEAD tiles ahead through pointers that step 16 rows a tile (the first
 * ones before the wait for the prep; a ring of bulk copies instead was slower: perf-notes, issue 18 step 5). Per
 * tile, mma_tile gives the group's fp64 d * sum_p A[p] c_p (or Q1516's Q_g) per row into shared memory, MS_CHUNK
 * tiles at a time; after each chunk the CTA adds its groups per row in group order and stores the slice's partial in
 * r->scratch; the CTA that finishes a row range last (a counter per range, reset by it) adds the KS slices in slice
 * order and writes y. Fixed orders throughout: y does not depend on timing. X: one wave of the resident CTAs
 * (ms_split), so a large N (the output head) loads each warp's B once and keeps its fetch ring running across chunks
 * instead of starting ten waves of CTAs. */
enum { MS_WARPS = 8, MS_AHEAD = 4, MS_CHUNK = 32, MS_MAX_ROWS = 16 * MS_CHUNK };

/* the slices of K: MS_WARPS groups each */
static int ms_slices(int K)
{
    return (K / 128 + MS_WARPS - 1) / MS_WARPS;
}

/* rows per CTA and X for N rows, KS slices and `resident` CTAs on the device at once: one wave, each CTA a range of
 * whole tiles (more rows than MS_MAX_ROWS go through shared memory a chunk at a time) */
static void ms_split(int N, int KS, int resident, int *rpc, int *X)
{
    const int x = resident / KS > 0 ? resident / KS : 1;
    *rpc = ((N + x - 1) / x + 15) / 16 * 16;
    *X = (N + *rpc - 1) / *rpc;
}

template <bool Q1516, bool FULL>
__global__ void __launch_bounds__(32 * MS_WARPS, 2) /* at most 128 registers: two CTAs per SM */
    hsdr_cu_mma_split_rows(const uint8_t *W, uint8_t *act, int K, int N, int rpc, float *y, int32_t *A_out,
                           long long *qg, long long *qr, mma_partial *slices, unsigned *counters)
{
    __shared__ mma_partial part[MS_WARPS][MS_MAX_ROWS];
    __shared__ int last;
    const int G = K / 128, KS = (int)gridDim.y, s = (int)blockIdx.y;
    const int lane = threadIdx.x & 31, gid = lane >> 2, t = lane & 3, warp = threadIdx.x >> 5;
    const int g = MS_WARPS * s + warp, groups = min(MS_WARPS, G - MS_WARPS * s); /* this warp's; the slice's */
    const bool has = g < G;                                                       /* uniform per warp */
    const int x0 = (int)blockIdx.x * rpc, nrows = min(rpc, N - x0), tiles = (nrows + 15) / 16;
    /* thread t's code words 2t, 2t + 1 of block (x0 + gid, g) (planar2.cuh's blocks layout: the four threads of a row
     * read its 32 code bytes, one whole sector), and the block's scale (after all the codes; the slice's eight warps
     * read the same 16 bytes of a row, so through L1); row + 8 is 8 G blocks on, the next tile 16 G */
    const size_t cstep = (size_t)G * 32, sstep = (size_t)G * 2; /* a row's codes; its scales */
    const uint8_t *next = W + ((size_t)(x0 + gid) * G + g) * 32 + 8 * t;
    const uint8_t *next_s = W + (size_t)N * cstep + ((size_t)(x0 + gid) * G + g) * 2;
    int next_row = x0 + gid;
    uint2 wv[MS_AHEAD][2];
    unsigned short sv[MS_AHEAD][2];
    /* the next tile, in tile order; FULL: N is a multiple of 16, so every tile's rows exist (else rows past N read
     * nothing and hold zeros) */
    auto fetch = [&](uint2 (&w)[2], unsigned short (&d)[2]) {
        const bool ok0 = FULL || next_row < N, ok1 = FULL || next_row + 8 < N;
        w[0] = ok0 ? __ldcs((const uint2 *)next) : make_uint2(0, 0);
        d[0] = ok0 ? __ldg((const unsigned short *)next_s) : (unsigned short)0;
        w[1] = ok1 ? __ldcs((const uint2 *)(next + 8 * cstep)) : make_uint2(0, 0);
        d[1] = ok1 ? __ldg((const unsigned short *)(next_s + 8 * sstep)) : (unsigned short)0;
        next += 16 * cstep, next_s += 16 * sstep, next_row += 16;
    };
    if (has)
#pragma unroll
        for (int k = 0; k < MS_AHEAD; k++)
            if (k < tiles)
                fetch(wv[k], sv[k]); /* before the wait: the weights do not depend on the kernel before */
    cudaGridDependencySynchronize(); /* the prep's B fragments, column sums and e */
    const int e = *prescale_of(act, K);
    const mma_consts kc = mma_consts_of(t, e);
    uint2 b[4][4];
    int kp[2];
    if (has)
        mma_group_operands(act, K, g, lane, t, b, kp);
    static_assert(MS_CHUNK % MS_AHEAD == 0, "a chunk starts at ring slot 0");
    for (int t0 = 0; t0 < tiles; t0 += MS_CHUNK) { /* a chunk of rows at a time in shared memory */
        const int t1 = min(tiles, t0 + MS_CHUNK);
        for (int i0 = t0; has && i0 < t1; i0 += MS_AHEAD) {
#pragma unroll
            for (int k = 0; k < MS_AHEAD; k++) {
                const int tile = i0 + k;
                if (tile >= t1)
                    break;
                uint32_t u0[8], u1[8];
                mma_planar2::units(wv[k][0], u0);
                mma_planar2::units(wv[k][1], u1);
                const double d0 = (double)__half2float(__ushort_as_half(sv[k][0]));
                const double d1 = (double)__half2float(__ushort_as_half(sv[k][1]));
                if (tile + MS_AHEAD < tiles)
                    fetch(wv[k], sv[k]); /* the slot is free once decoded; the ring runs on across chunks */
                mma_tile<Q1516, false>(
                    u0, u1, b, kp, t, x0 + 16 * tile + gid, N, G, g, kc,
                    [&](double &a0, double &a1) { a0 = d0, a1 = d1; }, A_out, qg, &part[warp][16 * (tile - t0) + gid]);
            }
        }
        __syncthreads();
        const int r1 = min(nrows, 16 * t1);
        for (int r = 16 * t0 + (int)threadIdx.x; r < r1; r += blockDim.x) { /* the slice's partial: groups in order */
            mma_partial v;
            v.q = 0;
            for (int k = 0; k < groups; k++) {
                if (Q1516)
                    v.q += part[k][r - 16 * t0].q;
                else
                    v.f += part[k][r - 16 * t0].f;
            }
            slices[(size_t)s * N + x0 + r] = v;
        }
        __syncthreads(); /* part is the next chunk's */
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(&counters[blockIdx.x], 1u) == (unsigned)KS - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence(); /* the other slices' partials, seen through the counter */
    for (int r = threadIdx.x; r < nrows; r += blockDim.x) {
        double sum = 0.0;
        long long qsum = 0;
        for (int k = 0; k < KS; k++) { /* slice order: a fixed sum */
            const long long v = __ldcg((const long long *)&slices[(size_t)k * N + x0 + r]);
            if (Q1516)
                qsum += v;
            else
                sum += __longlong_as_double(v);
        }
        if (Q1516) {
            if (qr)
                qr[x0 + r] = qsum;
            y[x0 + r] = (float)ldexp((double)qsum, -16);
        } else {
            y[x0 + r] = (float)ldexp(sum, e - 9);
        }
    }
    if (threadIdx.x == 0)
        counters[blockIdx.x] = 0; /* for the next launch (stream-ordered after this one) */
}

/* The split's host side: lns8_prepare, the resident CTAs (r->shape.ctas) and the scratch: KS x N partials, then X
 * counters (zero). */
template <bool Q1516>
static int ms_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    int dev, sms, per_sm, rpc, X;
    const int KS = ms_slices(r->K);
    if (lns8_prepare(r, err, errlen) != 0)
        return -1;
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hsdr_cu_mma_split_rows<Q1516, false>,
                                                          32 * MS_WARPS, 0));
    r->shape.ctas = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
    ms_split(r->N, KS, (int)r->shape.ctas, &rpc, &X);
    HSDR_CU(cudaMalloc(&r->scratch, sizeof(mma_partial) * (size_t)KS * r->N + sizeof(unsigned) * (size_t)X));
    HSDR_CU(cudaMemset((uint8_t *)r->scratch + sizeof(mma_partial) * (size_t)KS * r->N, 0, sizeof(unsigned) * X));
    return 0;
fail:
    return -1;
}

template <bool Q1516>
static cudaError_t ms_launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    uint8_t *act = (uint8_t *)r->act;
    const unsigned red = 1u << HSDR_STAGE_REDUCE;
    cudaError_t e = mma_prep_launch<mma_planar2>(r, stage, &skip, &twice);
    const int KS = ms_slices(r->K);
    int rpc, X;
    ms_split(r->N, KS, (int)r->shape.ctas, &rpc, &X);
    mma_partial *slices = (mma_partial *)r->scratch;
    unsigned *counters = (unsigned *)(slices + (size_t)KS * r->N);
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = hsdr_cu_pdl_config(r, &attr);
    cfg.gridDim = dim3((unsigned)X, (unsigned)KS), cfg.blockDim = dim3(32 * MS_WARPS), cfg.dynamicSmemBytes = 0;
    auto kernel = r->N % 16 == 0 ? hsdr_cu_mma_split_rows<Q1516, true> : hsdr_cu_mma_split_rows<Q1516, false>;
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice) && e == cudaSuccess; i++)
        e = cudaLaunchKernelEx(&cfg, kernel, W, act, r->K, r->N, rpc, r->y, r->A, (long long *)r->qg,
                               (long long *)r->qr, slices, counters);
    return e;
}

/* pre-encoded codes (test vectors): the launch then runs the route and the reduce on them */
static const hsdr_cu_kernels mma_kernels = {1,    mma_act_bytes, lns8_prepare, mma_launch<false, mma_ptq1_0>,
                                             upload_codes, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_direct_mma_ops = HSDR_CU_OPS(mma_kernels);
static const hsdr_cu_kernels q1516_kernels = {1,    mma_act_bytes, lns8_prepare, mma_launch<true, mma_ptq1_0>,
                                               upload_codes, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_q1516_ops = HSDR_CU_OPS(q1516_kernels);
/* the same on the 2-bit layout, converted once on the device (planar2.cuh; issue 18 item 4) */
static const hsdr_cu_kernels mma_p2_kernels = {1,
                                               mma_act_bytes,
                                               ms_prepare<false>,
                                               ms_launch<false>,
                                               upload_codes,
                                               hsdr_planar2_blocks_layout_bytes,
                                               hsdr_planar2_blocks_convert,
                                               NULL};
extern "C" const hsdr_device_ops hsdr_cuda_direct_mma_p2_ops = HSDR_CU_OPS(mma_p2_kernels);
static const hsdr_cu_kernels q1516_p2_kernels = {1,
                                                 mma_act_bytes,
                                                 ms_prepare<true>,
                                                 ms_launch<true>,
                                                 upload_codes,
                                                 hsdr_planar2_blocks_layout_bytes,
                                                 hsdr_planar2_blocks_convert,
                                                 NULL};
extern "C" const hsdr_device_ops hsdr_cuda_q1516_p2_ops = HSDR_CU_OPS(q1516_p2_kernels);

/* ==== cuda.stateset: ballot state sets, reused over R rows ====
 *
 * A CTA owns a tile of R rows (its 8 warps take rows w, w + 8, ...). Per group, warp 0 builds the group's state set
 * once for the tile (route): which codes k occur (flags in shared memory, compacted in increasing k), then per
 * occupied k four __ballot_sync masks of the lanes holding k, in ballot order (word u, bit j = lane 4j + u), and the
 * activations' sign masks. Per row, the warp decodes its trits (lane j: lanes 4j..4j+3), ballots the nonzero and
 * negative masks, and its lanes split the occupied states: count = popc(S_k & positive products) - popc(S_k &
 * negative products), added as count * 2^q into phase p (k = 8q + p); the same reduce-scatter as cuda.direct gives
 * A[8] exactly, then d * sum_p A[p] c_p in fp64. */

enum { SS_WARPS = 8 };

struct ss_set {
    int n;                 /* occupied codes */
    uint8_t k[128];        /* the occupied codes, increasing */
    uint32_t S[128][4];    /* their lane masks, ballot order */
    uint32_t neg[4];       /* activation signs, ballot order */
    uint8_t present[128];
};

__global__ void __launch_bounds__(32 * SS_WARPS)
    hsdr_cu_stateset_rows(const uint8_t *W, const uint8_t *codes, int K, int N, int R, float *y, int32_t *A_out)
{
    __shared__ ss_set set;
    const int G = K / 128, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tile0 = blockIdx.x * R;
    const int e = *prescale_of((uint8_t *)codes, K);
    const int my_phase = ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
    double acc[4] = {0.0, 0.0, 0.0, 0.0}; /* rows warp, warp + 8, ... of the tile (R <= 32) */
    for (int g = 0; g < G; g++) {
        if (warp == 0) { /* the state set of group g, for the whole tile */
            const uint32_t c4 = __ldg((const uint32_t *)(codes + 128 * g + 4 * lane));
            for (int i = lane; i < 128; i += 32)
                set.present[i] = 0;
            __syncwarp();
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const uint32_t kk = (c4 >> (8 * u)) & 0x7fu;
                if (kk)
                    set.present[kk] = 1; /* every writer writes 1 */
            }
            __syncwarp();
            int base = 0;
#pragma unroll
            for (int part = 0; part < 4; part++) { /* k = 32 part + lane, in increasing order */
                const int kk = 32 * part + lane;
                const unsigned has = __ballot_sync(HSDR_FULL_MASK, set.present[kk] != 0);
                if (set.present[kk])
                    set.k[base + __popc(has & ((1u << lane) - 1u))] = (uint8_t)kk;
                base += __popc(has);
            }
            __syncwarp();
            for (int i = 0; i < base; i++) {
                const uint32_t kk = set.k[i];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const unsigned m = __ballot_sync(HSDR_FULL_MASK, ((c4 >> (8 * u)) & 0x7fu) == kk);
                    if (lane == 0)
                        set.S[i][u] = m;
                }
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const unsigned m = __ballot_sync(HSDR_FULL_MASK, ((c4 >> (8 * u + 7)) & 1u) != 0);
                if (lane == 0)
                    set.neg[u] = m;
            }
            if (lane == 0)
                set.n = base;
        }
        __syncthreads();
        for (int ri = 0, r = warp; r < R; ri++, r += SS_WARPS) {
            const int row = tile0 + r;
            if (row >= N) /* uniform per warp */
                break;
            const uint8_t *blk = W + ((size_t)row * G + g) * HSDR_PTQ1_0_BLOCK;
            int t[4];
            lane_trits(blk, lane, t);
            uint32_t wp[4], wn[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const uint32_t nz = __ballot_sync(HSDR_FULL_MASK, t[u] != 0);
                const uint32_t tneg = __ballot_sync(HSDR_FULL_MASK, t[u] < 0);
                const uint32_t pneg = set.neg[u] ^ tneg; /* the product is negative */
                wp[u] = nz & ~pneg;
                wn[u] = nz & pneg;
            }
            int part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int i = lane; i < set.n; i += 32) {
                const int kk = set.k[i];
                int c = 0;
#pragma unroll
                for (int u = 0; u < 4; u++)
                    c += __popc(set.S[i][u] & wp[u]) - __popc(set.S[i][u] & wn[u]);
                const int v = c * (1 << (kk >> 3));
#pragma unroll
                for (int p = 0; p < 8; p++)
                    part[p] += (kk & 7) == p ? v : 0;
            }
            scatter_half<4>(part, 16, (lane >> 4) & 1);
            scatter_half<2>(part, 8, (lane >> 3) & 1);
            scatter_half<1>(part, 4, (lane >> 2) & 1);
            int a = part[0];
            a += __shfl_xor_sync(HSDR_FULL_MASK, a, 2);
            a += __shfl_xor_sync(HSDR_FULL_MASK, a, 1);
            if (A_out && (lane & 3) == 0)
                A_out[((size_t)row * G + g) * 8 + my_phase] = a;
            double s = (double)a * c_cp[my_phase];
            s += __shfl_xor_sync(HSDR_FULL_MASK, s, 4);
            s += __shfl_xor_sync(HSDR_FULL_MASK, s, 8);
            s += __shfl_xor_sync(HSDR_FULL_MASK, s, 16);
            acc[ri] += (double)__half2float(__ushort_as_half(*(const unsigned short *)(blk + 26))) * s;
        }
        __syncthreads(); /* the set is rebuilt for the next group */
    }
    for (int ri = 0, r = warp; r < R; ri++, r += SS_WARPS)
        if (lane == 0 && tile0 + r < N)
            y[tile0 + r] = (float)ldexp(acc[ri], e - 9);
}

/* lns8_prepare, and R within what a tile keeps in registers (4 rows per warp). */
static int ss_prepare(hsdr_device_run *r, char *err, size_t errlen)
{
    if (r->R > 4 * SS_WARPS) {
        snprintf(err, errlen, "cuda.stateset: R = %d; a tile keeps at most %d rows (4 per warp)", r->R, 4 * SS_WARPS);
        return -1;
    }
    return lns8_prepare(r, err, errlen);
}

static cudaError_t ss_launch(hsdr_device_run *r, const uint8_t *W, int stage, unsigned skip, unsigned twice)
{
    uint8_t *codes = (uint8_t *)r->act;
    const unsigned enc = 1u << HSDR_STAGE_ENCODE, red = 1u << HSDR_STAGE_REDUCE;
    lns8_prologue(r, enc | red, stage, &skip, &twice);
    const int R = r->R < 1 ? 1 : r->R;
    for (int i = 0; i < hsdr_cu_reps(red, skip, twice); i++)
        hsdr_cu_stateset_rows<<<(r->N + R - 1) / R, 32 * SS_WARPS, 0, r->stream>>>(W, codes, r->K, r->N, R, r->y,
                                                                                   r->A);
    return cudaGetLastError();
}

static const hsdr_cu_kernels ss_kernels = {1, act_bytes, ss_prepare, ss_launch, upload_codes, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_stateset_ops = HSDR_CU_OPS(ss_kernels);
