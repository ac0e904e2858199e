/* cpu.stateset: reusable 128-lane activation state sets + POPCOUNT (spec/lns8.md section 4), with the parts shared
 * with cpu.tile64 (tile64_avx2.c): converted weights, LNS8 prologue, tile analysis, scale and merge.
 *   Idea     once per R rows of a thread's range, every 128-lane activation tile becomes the list of its OCCUPIED
 *            LNS8 states (typically ~42 of 127) with their lane masks S_k; a row then costs, per occupied state, one
 *            pshufb popcount of [S_k | S_k] & [Wp | Wn] and a psadbw, shifted by q into a running sum: no lane work.
 *   Layout   weights (convert, once): [N*G groups x {nz[0], nz[1], neg[0], neg[1]}] (uint64, natural lane order, word 0
 *            = lanes 0..63), then [N*G fp32 scales d] (exact fp16 values): 36 bytes per 128 weights. Activations
 *            (prologue): [int e, padded to 64 bytes][K LNS8 codes] (reference encoder, automatic pre-scale).
 *            Per-thread scratch: the running sums of one group (2 rows x 129 x 32 bytes), per tile a head {N_a, first
 *            entry, entry count, phase ends[8], bias[8]}, one compact pool of entries {S_k & 0x0f.., (S_k >> 4) &
 *            0x0f..} (the nibble split done at build time) with their q (shift count) and k, then A[2][G][8], G_g[G].
 *   Stages   encode (prologue), route (build all G tiles of the block, every R rows), reduce (P_neg = N_a ^ W_neg,
 *            [Wp | Wn], counts, fold -> A[8]), scale (G_g = d_g sum_p A[p] c_p in double), merge (y = 2^(e - 9)
 *            sum_g G_g, rounded to fp32). Each stage is its own loop over per-row buffers in L1 (A, G_g), so each can
 *            run alone, be left out or doubled; the buffers cost far less than the reduce.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.stateset *'
 *   Counts   entries sorted by phase p = k & 7, then octave q = k >> 3; nibble table [pc | 4 - pc] per 128-bit lane,
 *            so one psadbw gives pc(S_k & Wp) + 128 - pc(S_k & Wn) = C[k] + 128 as four int64. A[p] = running sum
 *            across phase p minus the phase's bias 128 sum 2^q. Two rows share each entry load. (Tried first: scalar
 *            POPCNT, four AND + four POPCNT per state and row: ~1.5x slower here, see the report; tile64 keeps that
 *            form, on one word per state.)
 *   Build    without scatter: occupancy = OR of 1 << k (vpsllvd into four 32-code accumulators), transposed to
 *            per-phase 16-bit octave masks m[p] (eight slli + pmovmskb); the eight code-bit lane planes (pmovmskb of
 *            shifted codes) give 8 phase masks and 16 octave masks, and S_k = phase mask & octave mask (one AND per
 *            occupied state). */
#include "stateset_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../stages.h"
#include "../../reference/fp16.h"
#include "../../reference/hsdr.h"
#include "../../reference/lns8.h"
#include "../../reference/lns8_const.h"
#include "../../reference/ptq1_0.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- converted weights ---- */

int hsdr_cpu_ss_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                        size_t errlen)
{
    size_t ng = (size_t)N * (size_t)(K / HSDR_QK);
    size_t n = ng * (4 * sizeof(uint64_t) + sizeof(float));
    uint64_t *m = aligned_alloc(64, align64(n));
    if (!m) {
        snprintf(err, errlen, "out of memory for %zu bytes of planar masks", n);
        return -1;
    }
    float *d = (float *)(m + 4 * ng);
    for (size_t i = 0; i < ng; i++) {
        const uint8_t *blk = ptq1_0 + i * HSDR_PTQ1_0_BYTES;
        hsdr_ptq1_0_to_masks(blk, m + 4 * i, m + 4 * i + 2);
        d[i] = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
    }
    *prepared = m;
    *bytes = n;
    return 0;
}

void hsdr_cpu_ss_release(void *prepared)
{
    free(prepared);
}

/* ---- activations ---- */

size_t hsdr_cpu_ss_act_bytes(int K)
{
    return 64 + align64((size_t)K);
}

const uint8_t *hsdr_cpu_ss_codes(const hsdr_exec *e)
{
    return (const uint8_t *)e->act + 64;
}

int hsdr_cpu_ss_prescale(const hsdr_exec *e)
{
    return *(const int *)e->act;
}

void hsdr_cpu_ss_encode(const hsdr_exec *e)
{
    size_t bad;
    int pe = 0;
    /* the harness draws finite inputs: no error path */
    (void)hsdr_lns8_auto_prescale(e->x, (size_t)e->K, &pe, &bad);
    (void)hsdr_lns8_encode(e->x, (size_t)e->K, pe, (uint8_t *)e->act + 64, &bad);
    *(int *)e->act = pe;
}

void hsdr_cpu_ss_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, hsdr_cpu_ss_encode(e));
}

/* Part `part` of `parts` of the prologue: the codes of groups g0..g1 (the reference encoder is per element). Every
 * part finds the pre-scale itself (one max over the K inputs), part 0 stores it; a non-finite input (an error of the
 * reference encoder, which stops there; never drawn by the harness) leaves the whole prologue to part 0. */
static void ss_encode_part(const hsdr_exec *e, int part, int g0, int g1, int pe)
{
    size_t bad;
    (void)hsdr_lns8_encode(e->x + (size_t)g0 * HSDR_QK, (size_t)(g1 - g0) * HSDR_QK, pe,
                           (uint8_t *)e->act + 64 + (size_t)g0 * HSDR_QK, &bad);
    if (part == 0)
        *(int *)e->act = pe;
}

void hsdr_cpu_ss_prologue_part(const hsdr_exec *e, int part, int parts)
{
    size_t bad;
    int pe = 0;
    if (parts <= 1 || hsdr_lns8_auto_prescale(e->x, (size_t)e->K, &pe, &bad) != HSDR_LNS8_OK) {
        if (part == 0)
            hsdr_cpu_ss_prologue(e);
        return;
    }
    const int G = e->K / HSDR_QK, g0 = (int)((long)G * part / parts), g1 = (int)((long)G * (part + 1) / parts);
    STAGE(e, ENCODE, ss_encode_part(e, part, g0, g1, pe));
}

/* ---- scale and merge (plain C: a few operations per group against ~150 cycles of reduce) ---- */

void hsdr_cpu_ss_scale_row(const hsdr_exec *e, int r, const int32_t *A, double *g)
{
    const int G = e->K / HSDR_QK;
    const float *d = (const float *)((const uint64_t *)e->weights + 4 * (size_t)e->N * G) + (size_t)r * G;
    for (int i = 0; i < G; i++) {
        const int32_t *a = A + 8 * i;
        /* two independent 4-term chains, then their sum: depth 5 */
        double s0 = a[0] * hsdr_lns8_cp_hi[0], s1 = a[4] * hsdr_lns8_cp_hi[4];
        for (int p = 1; p < 4; p++) {
            s0 += a[p] * hsdr_lns8_cp_hi[p];
            s1 += a[p + 4] * hsdr_lns8_cp_hi[p + 4];
        }
        g[i] = (double)d[i] * (s0 + s1);
    }
}

void hsdr_cpu_ss_merge_row(const hsdr_exec *e, int r, const double *g)
{
    const int G = e->K / HSDR_QK;
    double y = 0.0;
    for (int i = 0; i < G; i++)
        y += g[i];
    e->y[r] = (float)ldexp(y, hsdr_cpu_ss_prescale(e) - 9);
}

#define TARGET __attribute__((target("avx2,bmi")))

const char *hsdr_cpu_ss_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("popcnt") || !__builtin_cpu_supports("bmi"))
        return "needs AVX2, POPCNT and BMI1";
    return NULL;
}

/* ---- the 128-lane tiles ---- */

typedef struct {
    uint64_t neg[2];  /* N_a */
    uint32_t off;     /* first entry in the pool */
    uint32_t n;       /* occupied states */
    uint8_t end[8];   /* entries of phases 0..p (the entries are sorted by phase, then q) */
    int64_t bias[8];  /* pshufb reduce: 128 * sum of 2^q over the phase's entries */
} tile_head;

/* An occupied state in the pool, nibble-split at build time for the pshufb reduce: lo = S_k & 0x0f.., hi =
 * (S_k >> 4) & 0x0f.. per byte (S_k = lo | hi << 4). */
typedef struct {
    uint64_t lo[2], hi[2];
} nentry;

typedef struct {
    tile_head *head; /* G */
    nentry *E;       /* pool: up to 128 G entries (odd counts padded) */
    uint64_t *q;     /* octave q = k >> 3 of each entry (a shift count) */
    uint8_t *k;      /* code of each entry (checking interface) */
    __m256i *P;      /* running sums of one group: 2 rows x 129, interleaved */
    int32_t *A;      /* 2 rows x G x 8 */
    double *g;       /* G */
} ss_scratch;

static ss_scratch ss_layout(void *scratch, int K)
{
    size_t G = (size_t)K / HSDR_QK;
    ss_scratch s;
    char *p = scratch;
    s.P = (__m256i *)p;
    p += 2 * 129 * 32;
    s.head = (tile_head *)p;
    p += align64(sizeof(tile_head) * G);
    s.E = (nentry *)p;
    p += align64(32 * 128 * G);
    s.q = (uint64_t *)p;
    p += align64(8 * 128 * G);
    s.k = (uint8_t *)p;
    p += align64(128 * G);
    s.A = (int32_t *)p;
    p += align64(2 * 32 * G);
    s.g = (double *)p;
    return s;
}

size_t hsdr_cpu_stateset_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return 2 * 129 * 32 + align64(sizeof(tile_head) * G) + align64(32 * 128 * G) +
           align64(8 * 128 * G) + align64(128 * G) + align64(2 * 32 * G) + align64(8 * G);
}

/* Occupancy of a tile without a scatter: OR of 1 << k over the lanes, in four 32-bit-lane accumulators (vpsllvd
 * gives 0 for shift counts >= 32, so accumulator j only sees codes 32j..32j+31). */
TARGET static inline __attribute__((always_inline)) void occupancy(const uint8_t *c, int lanes, uint64_t occ[2])
{
    const __m256i one = _mm256_set1_epi32(1), c32 = _mm256_set1_epi32(32), m7 = _mm256_set1_epi32(127);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < lanes; i += 8) {
        __m256i k = _mm256_and_si256(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(c + i))), m7);
        a0 = _mm256_or_si256(a0, _mm256_sllv_epi32(one, k));
        k = _mm256_sub_epi32(k, c32);
        a1 = _mm256_or_si256(a1, _mm256_sllv_epi32(one, k));
        k = _mm256_sub_epi32(k, c32);
        a2 = _mm256_or_si256(a2, _mm256_sllv_epi32(one, k));
        k = _mm256_sub_epi32(k, c32);
        a3 = _mm256_or_si256(a3, _mm256_sllv_epi32(one, k));
    }
    /* horizontal OR of each accumulator: dword j of the result = accumulator j */
    const __m256i t01 = _mm256_or_si256(_mm256_unpacklo_epi32(a0, a1), _mm256_unpackhi_epi32(a0, a1));
    const __m256i t23 = _mm256_or_si256(_mm256_unpacklo_epi32(a2, a3), _mm256_unpackhi_epi32(a2, a3));
    const __m256i u = _mm256_or_si256(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23));
    const __m128i v = _mm_or_si128(_mm256_castsi256_si128(u), _mm256_extracti128_si256(u, 1));
    occ[0] = (uint64_t)_mm_cvtsi128_si64(v) & ~1ull; /* k = 0 (zero) is never a state */
    occ[1] = (uint64_t)_mm_extract_epi64(v, 1);
}

/* Lane masks of code bit b (b = 0..7, bit 7 = sign): movemask of the codes shifted left by 7 - b in 16-bit lanes
 * (the top bit of each byte then comes from bit b of that same byte). */
TARGET static inline __attribute__((always_inline)) uint64_t plane64(const uint8_t *c, int b)
{
    const __m128i sh = _mm_cvtsi32_si128(7 - b);
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)c), v1 = _mm256_loadu_si256((const __m256i *)(c + 32));
    return (uint32_t)_mm256_movemask_epi8(_mm256_sll_epi16(v0, sh)) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_sll_epi16(v1, sh)) << 32;
}

TARGET void hsdr_cpu_ss_analyze(const uint8_t *c, int lanes, hsdr_cpu_ss_tile *t)
{
    const int words = lanes / 64;
    uint64_t occ[2];
    occupancy(c, lanes, occ);
    /* transpose the 16 x 8 occupancy bits (byte q = octave q, bit p = phase p) into 8 x 16: m[p] bit q */
    const __m128i x = _mm_set_epi64x((long long)occ[1], (long long)occ[0]);
    t->m[0] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 7));
    t->m[1] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 6));
    t->m[2] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 5));
    t->m[3] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 4));
    t->m[4] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 3));
    t->m[5] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 2));
    t->m[6] = (uint16_t)_mm_movemask_epi8(_mm_slli_epi64(x, 1));
    t->m[7] = (uint16_t)_mm_movemask_epi8(x);
    uint64_t P[8][2] = {{0}};
    for (int w = 0; w < words; w++)
        for (int b = 0; b < 8; b++)
            P[b][w] = plane64(c + 64 * w, b);
    for (int w = 0; w < words; w++) {
        t->neg[w] = P[7][w];
        /* phase masks from code bits 0..2, octave masks from bits 3..6: a binary split per bit */
        for (int p = 0; p < 8; p++)
            t->ph[p][w] = (p & 1 ? P[0][w] : ~P[0][w]) & (p & 2 ? P[1][w] : ~P[1][w]) &
                          (p & 4 ? P[2][w] : ~P[2][w]);
        uint64_t o2[4];
        for (int j = 0; j < 4; j++)
            o2[j] = (j & 1 ? P[3][w] : ~P[3][w]) & (j & 2 ? P[4][w] : ~P[4][w]);
        for (int q = 0; q < 16; q++)
            t->oc[q][w] = o2[q & 3] & (q & 4 ? P[5][w] : ~P[5][w]) & (q & 8 ? P[6][w] : ~P[6][w]);
    }
}

/* Build one tile: occupancy and the phase / octave lane masks (hsdr_cpu_ss_analyze), then one entry per occupied
 * state in (phase, q) order, S_k = phase mask & octave mask, stored nibble-split. Returns the pool entries used
 * (odd counts padded with an empty state). */
TARGET static uint32_t build_tile(const uint8_t *c, tile_head *h, nentry *E, uint64_t *Q, uint8_t *kk)
{
    hsdr_cpu_ss_tile t;
    hsdr_cpu_ss_analyze(c, 128, &t);
    h->neg[0] = t.neg[0];
    h->neg[1] = t.neg[1];
    const __m128i m4 = _mm_set1_epi8(0x0f);
    uint32_t n = 0;
    for (int p = 0; p < 8; p++) {
        const __m128i ph = _mm_loadu_si128((const __m128i *)t.ph[p]);
        for (unsigned b = t.m[p]; b; b &= b - 1) {
            const unsigned q = (unsigned)__builtin_ctz(b);
            const __m128i sk = _mm_and_si128(ph, _mm_loadu_si128((const __m128i *)t.oc[q]));
            _mm_store_si128((__m128i *)E[n].lo, _mm_and_si128(sk, m4));
            _mm_store_si128((__m128i *)E[n].hi, _mm_and_si128(_mm_srli_epi16(sk, 4), m4));
            Q[n] = q;
            kk[n++] = (uint8_t)(8 * q + (unsigned)p);
        }
        h->end[p] = (uint8_t)n;
        h->bias[p] = (int64_t)128 * t.m[p]; /* 128 sum 2^q over the phase's states */
    }
    h->n = n;
    if (n & 1) { /* pad to an even count with an empty state: after the last phase end, it changes no A */
        memset(&E[n], 0, sizeof E[n]);
        Q[n] = 0;
        kk[n++] = 0;
    }
    return n;
}

TARGET static void ss_route(const hsdr_exec *e, ss_scratch *s)
{
    const uint8_t *c = hsdr_cpu_ss_codes(e);
    uint32_t off = 0;
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        s->head[g].off = off;
        off += build_tile(c + (size_t)g * HSDR_QK, &s->head[g], s->E + off, s->q + off, s->k + off);
    }
}

/* pshufb reduce: one entry per ymm, [S_k | S_k] & [Wp | Wn]; nibble table [popcount | 4 - popcount] per 128-bit
 * lane, so psadbw gives the four 64-lane sums {pc(Wp lo), pc(Wp hi), 64 - pc(Wn lo), 64 - pc(Wn hi)}, whose total
 * is C[k] + 128; shifted by q into a running 4 x int64 sum stored after every entry. A[p] = horizontal sum of the
 * running sums' difference across phase p, minus the phase's bias 128 sum 2^q. NR (1 or 2) rows share each entry
 * load and the loop; the entry list is padded to an even length with empty states (after the last phase end). */
typedef struct {
    __m256i lo, hi; /* [Wp | Wn] and its bytes shifted right by 4 */
} wpair;

TARGET static inline __attribute__((always_inline)) wpair weight_pair(const tile_head *h, const uint64_t *W)
{
    const __m128i na = _mm_loadu_si128((const __m128i *)h->neg);
    const __m128i nz = _mm_loadu_si128((const __m128i *)W), ng = _mm_loadu_si128((const __m128i *)(W + 2));
    const __m128i pn = _mm_xor_si128(na, ng);
    const __m256i ww =
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_andnot_si128(pn, nz)), _mm_and_si128(pn, nz), 1);
    return (wpair){ww, _mm256_srli_epi16(ww, 4)}; /* bits above each nibble are cut by the entry's hi nibbles */
}

/* [S_k | S_k] & [Wp | Wn] per nibble -> 4 x int64 {pc(Wp lo), pc(Wp hi), 64 - pc(Wn lo), 64 - pc(Wn hi)} */
TARGET static inline __attribute__((always_inline)) __m256i count_entry(__m256i slo, __m256i shi, wpair w)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, /* popcount */
                                         4, 3, 3, 2, 3, 2, 2, 1, 3, 2, 2, 1, 2, 1, 1, 0  /* 4 - popcount */);
    const __m256i lo = _mm256_and_si256(slo, w.lo), hi = _mm256_and_si256(shi, w.hi);
    return _mm256_sad_epu8(_mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi)),
                           _mm256_setzero_si256());
}

/* A[p] from the running sums P[0..n] (P[0] = 0) at the phase ends */
TARGET static inline __attribute__((always_inline)) void fold_phases(const tile_head *h, const __m256i *P, int stride,
                                                                     int32_t *A)
{
    __m256i D[8], prev = _mm256_setzero_si256();
    for (int p = 0; p < 8; p++) {
        const __m256i cur = P[stride * h->end[p]];
        D[p] = _mm256_sub_epi64(cur, prev);
        prev = cur;
    }
    __m256i s[2];
    for (int half = 0; half < 2; half++) {
        const __m256i *d = D + 4 * half;
        const __m256i u01 = _mm256_add_epi64(_mm256_unpacklo_epi64(d[0], d[1]), _mm256_unpackhi_epi64(d[0], d[1]));
        const __m256i u23 = _mm256_add_epi64(_mm256_unpacklo_epi64(d[2], d[3]), _mm256_unpackhi_epi64(d[2], d[3]));
        const __m256i t = _mm256_add_epi64(_mm256_permute2x128_si256(u01, u23, 0x20),
                                           _mm256_permute2x128_si256(u01, u23, 0x31));
        s[half] = _mm256_sub_epi64(t, _mm256_loadu_si256((const __m256i *)(h->bias + 4 * half)));
    }
    /* the low 32 bits of each int64 (|A| <= 2^22) */
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i a = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(s[0], idx),
                                         _mm256_permutevar8x32_epi32(s[1], idx), 0xf0);
    _mm256_storeu_si256((__m256i *)A, a);
}

TARGET static inline __attribute__((always_inline)) void reduce_groups(const tile_head *h, const nentry *E,
                                                                       const uint64_t *Q, const uint8_t *kk,
                                                                       const uint64_t *W0, const uint64_t *W1,
                                                                       const int NR, __m256i *P, int32_t *A0,
                                                                       int32_t *A1, int16_t *C)
{
    const wpair ww0 = weight_pair(h, W0), ww1 = NR > 1 ? weight_pair(h, W1) : ww0;
    const __m256i zero = _mm256_setzero_si256();
    if (C)
        memset(C, 0, sizeof(int16_t) * HSDR_NSTATES);
    const uint32_t n = (h->n + 1) & ~1u;
    __m256i run0 = zero, run1 = zero;
    P[0] = zero;
    if (NR > 1)
        P[1] = zero;
    __m256i *out = P + NR;
    for (uint32_t j = 0; j < n; j += 2, out += 2 * NR) /* n is even: two entries per iteration */
        for (int u = 0; u < 2; u++) {
            const __m256i slo = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)E[j + u].lo));
            const __m256i shi = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)E[j + u].hi));
            const __m128i q = _mm_loadl_epi64((const __m128i *)&Q[j + u]);
            const __m256i sad0 = count_entry(slo, shi, ww0);
            run0 = _mm256_add_epi64(run0, _mm256_sll_epi64(sad0, q));
            out[NR * u] = run0;
            if (NR > 1) {
                run1 = _mm256_add_epi64(run1, _mm256_sll_epi64(count_entry(slo, shi, ww1), q));
                out[NR * u + 1] = run1;
            }
            if (C && j + u < h->n) {
                int64_t t[4];
                _mm256_storeu_si256((__m256i *)t, sad0);
                C[kk[j + u]] = (int16_t)(t[0] + t[1] + t[2] + t[3] - 128);
            }
        }
    fold_phases(h, P, NR, A0);
    if (NR > 1)
        fold_phases(h, P + 1, NR, A1);
}

TARGET static inline __attribute__((always_inline)) void reduce_group(const tile_head *h, const nentry *E,
                                                                      const uint64_t *Q, const uint8_t *kk,
                                                                      const uint64_t *W, __m256i *P, int32_t *A,
                                                                      int16_t *C)
{
    reduce_groups(h, E, Q, kk, W, W, 1, P, A, A, C);
}

TARGET static void ss_reduce_row2(const hsdr_exec *e, int r, const ss_scratch *s)
{
    const int G = e->K / HSDR_QK;
    const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
    for (int g = 0; g < G; g++) {
        const tile_head *h = &s->head[g];
        reduce_groups(h, s->E + h->off, s->q + h->off, s->k + h->off, W + 4 * g, W + 4 * ((size_t)G + g), 2, s->P,
                      s->A + 8 * g, s->A + 8 * ((size_t)G + g), NULL);
    }
}

TARGET static void ss_reduce_row(const hsdr_exec *e, int r, const ss_scratch *s)
{
    const int G = e->K / HSDR_QK;
    const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
    for (int g = 0; g < G; g++) {
        const tile_head *h = &s->head[g];
        reduce_group(h, s->E + h->off, s->q + h->off, s->k + h->off, W + 4 * g, s->P, s->A + 8 * g, NULL);
    }
}


void hsdr_cpu_ss_rows(const hsdr_exec *e, int r0, int r1, unsigned only, const hsdr_cpu_ss_loop *L)
{
    const int R = e->R > 0 ? e->R : 1;
    const size_t G = (size_t)(e->K / HSDR_QK);
    for (int b = r0; b < r1; b += R) {
        DO(e, only, ROUTE, L->route(e, L->s)); /* one built tile set serves R rows */
        const int bend = r1 - b > R ? b + R : r1;
        for (int r = b; r < bend; r += 2) { /* two rows per pass share the entry loads */
            const int nr = bend - r < 2 ? bend - r : 2;
            DO(e, only, REDUCE, L->reduce(e, r, nr, L->s));
            for (int i = 0; i < nr; i++) {
                DO(e, only, SCALE, hsdr_cpu_ss_scale_row(e, r + i, L->A + 8 * (size_t)i * G, L->g));
                DO(e, only, MERGE, hsdr_cpu_ss_merge_row(e, r + i, L->g));
            }
        }
    }
}

void hsdr_cpu_ss_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch,
                       void (*rows)(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only))
{
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            hsdr_cpu_ss_encode(e);
        return;
    }
    rows(e, r0, r1, scratch, HSDR_STAGE_BIT(s));
}

int hsdr_cpu_ss_matvec(hsdr_matvec_io *io, size_t scratch_bytes,
                       void (*counts)(const hsdr_exec *e, void *scratch, int32_t *A, int16_t *C), char *err,
                       size_t errlen)
{
    const int K = io->K, N = io->N, G = K / HSDR_QK;
    void *w = NULL, *act = NULL, *scr = NULL;
    int32_t *A = NULL;
    int16_t *C = NULL;
    size_t bytes, ng = (size_t)N * G;
    int rc = -1;
    if (hsdr_cpu_ss_prepare(io->weights, K, N, &w, &bytes, err, errlen) != 0)
        return -1;
    act = aligned_alloc(64, align64(hsdr_cpu_ss_act_bytes(K)));
    scr = aligned_alloc(64, align64(scratch_bytes));
    A = malloc(sizeof(int32_t) * 8 * ng);
    C = malloc(sizeof(int16_t) * HSDR_NSTATES * ng);
    double *g = malloc(sizeof(double) * (size_t)G);
    float *y = malloc(sizeof(float) * (size_t)N);
    if (!act || !scr || !A || !C || !g || !y) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    memset(scr, 0, scratch_bytes);
    *(int *)act = io->prescale_e;
    memcpy((uint8_t *)act + 64, io->codes, (size_t)K);
    hsdr_exec e = {.K = K, .N = N, .R = N, .weights = w, .act = act, .y = y};
    counts(&e, scr, A, C);
    for (int r = 0; r < N; r++) {
        hsdr_cpu_ss_scale_row(&e, r, A + 8 * (size_t)r * G, g);
        hsdr_cpu_ss_merge_row(&e, r, g);
    }
    if (io->y_f32)
        memcpy(io->y_f32, y, sizeof(float) * (size_t)N);
    if (io->A)
        memcpy(io->A, A, sizeof(int32_t) * 8 * ng);
    if (io->C)
        memcpy(io->C, C, sizeof(int16_t) * HSDR_NSTATES * ng);
    rc = 0;
out:
    free(y);
    free(g);
    free(C);
    free(A);
    free(scr);
    free(act);
    hsdr_cpu_ss_release(w);
    return rc;
}

static void ss_route_v(const hsdr_exec *e, void *s)
{
    ss_route(e, s);
}

static void ss_reduce_v(const hsdr_exec *e, int r, int nr, void *s)
{
    if (nr > 1)
        ss_reduce_row2(e, r, s);
    else
        ss_reduce_row(e, r, s);
}

static void ss_rows(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only)
{
    ss_scratch s = ss_layout(scratch, e->K);
    const hsdr_cpu_ss_loop L = {&s, s.A, s.g, ss_route_v, ss_reduce_v};
    hsdr_cpu_ss_rows(e, r0, r1, only, &L);
}

void hsdr_cpu_stateset_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    ss_rows(e, r0, r1, scratch, 0);
}

void hsdr_cpu_stateset_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    hsdr_cpu_ss_stage(e, s, r0, r1, scratch, ss_rows);
}

/* Checking interface: the same tiles and reduce kernel (with C), one tile set for all rows. */
TARGET static void ss_counts(const hsdr_exec *e, void *scratch, int32_t *A, int16_t *C)
{
    ss_scratch s = ss_layout(scratch, e->K);
    ss_route(e, &s);
    const int G = e->K / HSDR_QK;
    for (int r = 0; r < e->N; r++) {
        const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
        for (int g = 0; g < G; g++) {
            const tile_head *h = &s.head[g];
            size_t rg = (size_t)r * G + g;
            reduce_group(h, s.E + h->off, s.q + h->off, s.k + h->off, W + 4 * g, s.P, A + 8 * rg,
                         C + HSDR_NSTATES * rg);
        }
    }
}

int hsdr_cpu_stateset_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return hsdr_cpu_ss_matvec(io, hsdr_cpu_stateset_scratch_bytes(io->K, 1), ss_counts, err, errlen);
}
