/* cpu.direct, cpu.flns, cpu.q1516: the direct 8-phase HSDR reduction on AVX2, vectorized over 16 rows
 * (spec/lns8.md sections 2, 3, 5, 6).
 *   Idea     vectorize over ROWS, not lanes: once per matvec each group's lanes are sorted by phase and paired; per
 *            pair of phase p, two vpmaddwd of the two lanes' 16-row digit columns against their broadcast int16
 *            activations give 16 rows' share of A[p], and the differences of a running prefix give the exact A[8].
 *   Layout   weights (prepare = the convert stage; rows padded to a multiple of 16 with zero blocks): PTQ1_0 bytes
 *            transposed per 16-row block: per (block, group) 26 byte columns of 16 rows, then the 16 fp16 scales in
 *            ROWMAP order (448 bytes: the PTQ1_0 footprint). Activations (prologue): the LNS8 codes and pre-scale,
 *            then per group the pair program (pair_prog). Scratch: the digits D[lane][16 rows] (4 KiB, L1), the
 *            running prefixes, and the stage-alone hand-overs (block_scratch).
 *   Stages   convert, encode (AVX2 LNS8 encoder), route (pair program), decode (digits), reduce (pairs -> A), scale
 *            (phase combination / fLNS tree / S), materialize (q1516), merge. Encode and route (the prologue) are
 *            split by groups over every thread of the matvec (prologue_part), one barrier before the rows.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.direct *'
 *            ./build/hsdr run matrix.yaml --filter 'variant=cpu.flns *'
 *            ./build/hsdr run matrix.yaml --filter 'variant=cpu.q1516 *'
 *   Reduce   A[p] = sum over lanes with k != 0 and phase p of s t 2^q. A lone lane pairs with a zero; an empty phase
 *            gets one zero pair. For a pair (i, j) one vpunpck{l,h}wd of the two lanes' digit columns + two vpmaddwd
 *            against (s 2^(q-1), s 2^(q-1)) give 16 rows of u_i a_i + u_j a_j: ~66 pairs per group replace 64
 *            vpmaddwd PER ROW of the dense form. The running prefix is stored after every pair (sequential
 *            addresses); each phase's last pair gives its slot, A_p / 2 = slot_p - slot_(p-1) - sum(a_p) (digits are
 *            u = t + 1 in {0, 1, 2}; the phase sums are prologue constants). a = s 2^(q-1) because 2^15 does not fit
 *            int16; lanes with q = 0 (codes 1..7) are listed per group and added exactly afterwards. All integer.
 *            Products come out in vpunpck row order (ROWMAP): row positions 8 h .. 8 h + 7 in A[2 p + h].
 *   Decode   per byte column v = byte << 8 in 16-bit lanes, digit n = mulhi_epu16(v, 3), v = mullo_epi16(v, 3).
 *   Encode   the AVX2 LNS8 encoder is bit-identical to the reference (exact mantissa thresholds, saturation,
 *            half_min, automatic pre-scale); Inf/NaN inputs fall back to the reference.
 *   Finishes per group, on each 8-row half: direct: sum_p A_p c_p in fp64 (cvtepi32_pd + fma), times d, summed over
 *            the groups in fp64; flns: the fLNS tree on 8 rows at once (flns_avx2.h: leaf bitlen from the fp32
 *            exponent, LC / kappa by gathers from tables cached per F, int16 kappa), value 2^m * 2^(r/2^(F+3)) from a
 *            table; q1516: per row S = sum A[p] C31[p] (int64) and Q = rint(S d 2^(e+16-31-9)) (the reference
 *            formulas), Q stored per group, an int64 AVX2 sum over the groups.
 *   Rows     any r0..r1: whole 16-row blocks are computed, the rows outside the range are not stored.
 *   Dropped  (slower) one row at a time with the lanes in SIMD: the prologue materialized 8 dense int16 phase vectors
 *            per group (2 KiB), a row did 64 vpmaddwd + 56 vpaddd per group against its digits and an hadd transpose
 *            to A[8]: ~200 instructions per row-group against ~130 here, 1.3-1.7x production instead of 0.5-0.9x. */
#include "direct_avx2.h"
#include "flns_avx2.h"

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
#include "cpu_features.h"

#define QK 128
#define BLK 28

static inline size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- activation buffer ---- */
typedef struct {
    int e;
    int pad[15];
} act_head;

static inline uint8_t *act_codes(void *act)
{
    return (uint8_t *)act + sizeof(act_head);
}

static inline int act_e(const void *act)
{
    return ((const act_head *)act)->e;
}

/* ---- Q15.16 (the reference formulas, spec section 6) ---- */
static inline int64_t q_scale(const int32_t A[8])
{
    int64_t S = 0;
    for (int p = 0; p < 8; p++)
        S += (int64_t)A[p] * hsdr_lns8_c31[p];
    return S;
}

static inline int64_t q_materialize(int64_t S, double d, double scale2)
{
    return (int64_t)rint((double)S * d * scale2); /* scale2 = 2^(e+16-31-9): exact power-of-two scaling */
}

enum kind { K_DIRECT, K_FLNS, K_Q1516 };

#define TARGET __attribute__((target("avx2,fma,f16c")))

const char *hsdr_cpu_direct_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !hsdr_cpu_has_f16c())
        return "needs AVX2, FMA and F16C";
    return NULL;
}

/* ---- encode: AVX2 LNS8 encoder, bit-identical to hsdr_lns8_encode / hsdr_lns8_auto_prescale ---- */

/* Returns 0 and the automatic pre-scale, or -1 when an Inf or NaN is present (caller falls back). */
TARGET static int prescale_avx2(const float *x, int K, int *pe)
{
    const __m256i absm = _mm256_set1_epi32(0x7fffffff), expm = _mm256_set1_epi32(0x7f800000);
    __m256i mx = _mm256_setzero_si256(), bad = _mm256_setzero_si256();
    for (int i = 0; i < K; i += 8) {
        __m256i u = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), absm);
        __m256i ex = _mm256_and_si256(u, expm);
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(ex, expm));
        /* subnormals and zeros are ignored: keep only normals */
        __m256i normal = _mm256_cmpgt_epi32(ex, _mm256_setzero_si256());
        mx = _mm256_max_epi32(mx, _mm256_and_si256(u, normal));
    }
    if (!_mm256_testz_si256(bad, bad))
        return -1;
    __m128i m4 = _mm_max_epi32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
    m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0x4e));
    m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0xb1));
    uint32_t m = (uint32_t)_mm_cvtsi128_si32(m4);
    if (m == 0) {
        *pe = 0;
        return 0;
    }
    float f;
    memcpy(&f, &m, 4);
    int k;
    (void)hsdr_lns8_k_unclamped(f, &k);
    int a = k - HSDR_LNS8_KMAX;
    *pe = a >= 0 ? (a + 7) / 8 : -((-a) / 8);
    return 0;
}

/* Codes of 8 finite values with pre-scale e (in the low bytes of the int32 lanes). */
TARGET static inline __m256i encode8(__m256i u, int e8)
{
    const __m256i absm = _mm256_set1_epi32(0x7fffffff);
    __m256i au = _mm256_and_si256(u, absm);
    __m256i biased = _mm256_srli_epi32(au, 23);
    __m256i m = _mm256_and_si256(au, _mm256_set1_epi32(0x7fffff));
    __m256i j = _mm256_setzero_si256();
    for (int i = 0; i < 8; i++) /* m >= MT_i  <=>  m > MT_i - 1 (m < 2^23: signed compare is fine) */
        j = _mm256_sub_epi32(j, _mm256_cmpgt_epi32(m, _mm256_set1_epi32((int)hsdr_lns8_mt[i] - 1)));
    /* ks = 8 (biased - 127) + 74 + j - 8 e */
    __m256i ks = _mm256_add_epi32(_mm256_slli_epi32(biased, 3),
                                  _mm256_add_epi32(j, _mm256_set1_epi32(74 - 8 * 127 - e8)));
    __m256i k = _mm256_min_epi32(ks, _mm256_set1_epi32(HSDR_LNS8_KMAX));
    /* underflow (ks < 1): code 1 iff eshift > -11 or (eshift == -11 and m >= HALF_MIN_MT), eshift = biased - 127 - e
     * <=> biased > 116 + e or (biased == 116 + e and m >= HALF_MIN_MT) */
    __m256i lim = _mm256_set1_epi32(116 + e8 / 8);
    const __m256i half_min = _mm256_set1_epi32((int)HSDR_LNS8_HALF_MIN_MT - 1);
    __m256i one = _mm256_or_si256(_mm256_cmpgt_epi32(biased, lim),
                                  _mm256_and_si256(_mm256_cmpeq_epi32(biased, lim), _mm256_cmpgt_epi32(m, half_min)));
    __m256i under = _mm256_cmpgt_epi32(_mm256_set1_epi32(1), ks);
    k = _mm256_blendv_epi8(k, _mm256_and_si256(one, _mm256_set1_epi32(1)), under);
    /* zeros and subnormals: 0 */
    k = _mm256_andnot_si256(_mm256_cmpeq_epi32(biased, _mm256_setzero_si256()), k);
    /* sign only when k >= 1 */
    __m256i neg = _mm256_and_si256(_mm256_srai_epi32(u, 31), _mm256_set1_epi32(0x80));
    __m256i nz = _mm256_cmpgt_epi32(k, _mm256_setzero_si256());
    return _mm256_or_si256(k, _mm256_and_si256(neg, nz));
}

TARGET static void encode_avx2(const float *x, int K, int e, uint8_t *codes)
{
    const __m256i pk = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int i = 0; i < K; i += 32) {
        __m256i c[4];
        for (int j = 0; j < 4; j++)
            c[j] = encode8(_mm256_loadu_si256((const __m256i *)(x + i + 8 * j)), 8 * e);
        __m256i w = _mm256_packus_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
        _mm256_storeu_si256((__m256i *)(codes + i), _mm256_permutevar8x32_epi32(w, pk));
    }
}

static void encode_stage(const hsdr_exec *ex)
{
    struct {
        uint8_t *codes;
    } a = {act_codes(ex->act)};
    int pe = 0;
    if (prescale_avx2(ex->x, ex->K, &pe) == 0) {
        encode_avx2(ex->x, ex->K, pe, a.codes);
    } else {
        size_t bad;
        (void)hsdr_lns8_auto_prescale(ex->x, (size_t)ex->K, &pe, &bad);
        (void)hsdr_lns8_encode(ex->x, (size_t)ex->K, pe, a.codes, &bad);
    }
    ((act_head *)ex->act)->e = pe;
}

/* ---- finishes ---- */

typedef struct {
    enum kind kind;
    int F, b;
    const flns_tab *ft;
    double scale2;  /* direct: 2^(e-9); flns: 2^(e - 74/8), applied after vvalue4; q1516: 2^(e+16-31-9) */
} finish;

static finish finish_of(const hsdr_exec *ex, enum kind kind)
{
    finish f = {.kind = kind, .F = ex->flns_F, .b = ex->flns_b};
    int e = act_e(ex->act);
    if (kind == K_DIRECT)
        f.scale2 = ldexp(1.0, e - 9);
    else if (kind == K_FLNS) {
        f.ft = hsdr_cpu_flns_tables(f.F);
        f.scale2 = ldexp(exp2(-74.0 / 8.0), e);
    } else
        f.scale2 = ldexp(1.0, e + 16 - 31 - 9);
    return f;
}

/* ==== cpu.direct / cpu.flns / cpu.q1516: 16 rows per pass (RB), vectorized over rows, lane pairs of one phase ==== */

/* Converted weights: blocks of RB = 16 rows; per (row block, group) 448 bytes, byte-transposed so that a 32-byte
 * vector holds two PTQ1_0 byte positions x 16 rows: [0, 256) qs[m] of rows 0..15 at 16 m, [256, 384) qs[16 + m] at
 * 256 + 16 m, [384, 416) qh[h] at 384 + 16 h, [416, 448) the 16 fp16 scales. Rows past N are zero blocks. Same
 * footprint as PTQ1_0 (rounded up to 16 rows). */
#define RB 16
#define CB (28 * RB)
/* The pair products come out with rows in the order of vpunpck{l,h}wd: position i (0..15) of the two 8-row halves
 * holds row ROWMAP[i]; ROWPOS is the inverse. The fp16 scales are stored in that order. */
static const int ROWMAP[RB] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
static const int ROWPOS[RB] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};

int hsdr_cpu_direct_prepare(const uint8_t *w, int K, int N, void **prepared, size_t *bytes, char *err, size_t errlen)
{
    const int G = K / QK, NB = (N + RB - 1) / RB;
    size_t n = (size_t)NB * G * CB;
    uint8_t *c = aligned_alloc(64, align64(n > 0 ? n : 64));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(c, 0, align64(n > 0 ? n : 64));
    for (int rb = 0; rb < NB; rb++)
        for (int g = 0; g < G; g++) {
            uint8_t *o = c + ((size_t)rb * G + g) * CB;
            for (int r = 0; r < RB && RB * rb + r < N; r++) {
                const uint8_t *blk = w + ((size_t)(RB * rb + r) * G + g) * BLK;
                for (int m = 0; m < 26; m++)
                    o[RB * m + r] = blk[m];
                memcpy(o + 26 * RB + 2 * ROWPOS[r], blk + 26, 2);
            }
        }
    *prepared = c;
    *bytes = n;
    return 0;
}

void hsdr_cpu_direct_release(void *prepared)
{
    free(prepared);
}

/* Activations: header, codes, then per group: the q = 0 lane count and lanes, and the pair program: for each phase
 * p in order, its lanes (k != 0, q >= 1) two at a time (a lone lane is paired with a zero), at least one (possibly
 * empty) pair per phase; a pair carries the two lanes' byte offsets in the digit buffer and the two int16
 * activations s 2^(q-1) as one int32; kend[p] is the phase's last pair, whose running prefix is its slot. */
#define MAXP 72

typedef struct {
    int32_t a[MAXP];
    uint16_t oi[MAXP], oj[MAXP];
    int32_t n;
    int32_t psum[8]; /* sum of the activations of phase p (digits are u = t + 1) */
    uint8_t kend[8]; /* index of the last pair of phase p */
    uint8_t nq0, q0lane[QK], q0code[QK];
} pair_prog;

/* The activation buffer as the pair kernel reads it: the codes (encode) and each group's pair program (route). */
typedef struct {
    uint8_t *codes;
    pair_prog *prog; /* G */
} pair_act;

static pair_act pair_act_of(void *act, int K)
{
    pair_act a;
    a.codes = (uint8_t *)act + sizeof(act_head);
    a.prog = (pair_prog *)(a.codes + align64((size_t)K));
    return a;
}

size_t hsdr_cpu_direct_act_bytes(int K)
{
    return sizeof(act_head) + align64((size_t)K) + sizeof(pair_prog) * (size_t)(K / QK);
}

/* The pair programs of groups g0..g1 (each reads only its own group's codes). */
static void route_pairs(const uint8_t *codes, int g0, int g1, pair_act a)
{
    for (int g = g0; g < g1; g++) {
        const uint8_t *c = codes + (size_t)g * QK;
        pair_prog *pp = &a.prog[g];
        int n = 0, nq0 = 0;
        for (int p = 0; p < 8; p++) {
            int first = n, half = 0;
            int32_t psum = 0;
            for (int i = 0; i < QK; i++) {
                int k = c[i] & 0x7f;
                if (k == 0 || (k & 7) != p)
                    continue;
                if (k < 8) {
                    pp->q0code[nq0] = c[i];
                    pp->q0lane[nq0++] = (uint8_t)i;
                    continue;
                }
                int32_t v = (int32_t)1 << ((k >> 3) - 1);
                if (c[i] & 0x80)
                    v = -v;
                psum += v;
                if (!half) {
                    pp->oi[n] = pp->oj[n] = (uint16_t)(2 * RB * i);
                    pp->a[n] = (int32_t)(uint16_t)(int16_t)v;
                    half = 1;
                } else {
                    pp->oj[n] = (uint16_t)(2 * RB * i);
                    pp->a[n] = (int32_t)((uint32_t)pp->a[n] | (uint32_t)(uint16_t)(int16_t)v << 16);
                    n++;
                    half = 0;
                }
            }
            if (half)
                n++;
            pp->psum[p] = psum;
            if (n == first) { /* empty phase: one zero pair so that its slot is written */
                pp->oi[n] = pp->oj[n] = 0;
                pp->a[n] = 0;
                n++;
            }
            pp->kend[p] = (uint8_t)(n - 1);
        }
        pp->n = n;
        pp->nq0 = (uint8_t)nq0;
    }
}

static void route_stage(const hsdr_exec *ex)
{
    pair_act a = pair_act_of(ex->act, ex->K);
    route_pairs(a.codes, 0, ex->K / QK, a);
}

void hsdr_cpu_direct_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, encode_stage(e));
    STAGE(e, ROUTE, route_stage(e));
}

/* Part `part` of `parts` of the prologue: groups g0..g1 encoded and routed by this part alone. Every part finds the
 * pre-scale itself (a max over all K inputs: one read of K floats, against the 8 x 128 lane passes a group's route
 * costs), so the parts need no barrier between encode and route; part 0 stores it. A non-finite input (the
 * reference encoder's fallback, never drawn by the harness) leaves the whole prologue to part 0. */
static void encode_part(const hsdr_exec *ex, int part, int g0, int g1, int pe)
{
    encode_avx2(ex->x + (size_t)g0 * QK, (g1 - g0) * QK, pe, act_codes(ex->act) + (size_t)g0 * QK);
    if (part == 0)
        ((act_head *)ex->act)->e = pe;
}

void hsdr_cpu_direct_prologue_part(const hsdr_exec *e, int part, int parts)
{
    int pe = 0;
    if (parts <= 1 || prescale_avx2(e->x, e->K, &pe) != 0) {
        if (part == 0)
            hsdr_cpu_direct_prologue(e);
        return;
    }
    const int G = e->K / QK, g0 = (int)((long)G * part / parts), g1 = (int)((long)G * (part + 1) / parts);
    STAGE(e, ENCODE, encode_part(e, part, g0, g1, pe));
    STAGE(e, ROUTE, route_pairs(act_codes(e->act), g0, g1, pair_act_of(e->act, e->K)));
}

/* digits u = t + 1 of one 16-row column: v = (b 3^n mod 256) << 8 per 16-bit lane; digit n = mulhi(v, 3) */
TARGET static inline void column_digits(const uint8_t *col, int16_t *D, int lane0, int stride, int ndig)
{
    const __m256i three = _mm256_set1_epi16(3);
    __m256i v = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_load_si128((const __m128i *)col)), 8);
    for (int n = 0; n < ndig; n++) {
        _mm256_store_si256((__m256i *)(D + (size_t)(lane0 + stride * n) * RB), _mm256_mulhi_epu16(v, three));
        v = _mm256_mullo_epi16(v, three);
    }
}

TARGET static inline void block_digits(const uint8_t *cb, int16_t *D)
{
#pragma GCC unroll 16
    for (int m = 0; m < 16; m++)
        column_digits(cb + RB * m, D, m, 16, 5);
#pragma GCC unroll 8
    for (int m = 0; m < 8; m++)
        column_digits(cb + RB * (16 + m), D, 80 + m, 8, 5);
    column_digits(cb + RB * 24, D, 120, 2, 4);
    column_digits(cb + RB * 25, D, 121, 2, 4);
}

/* reduce: the pair program over 16 rows; slot p (two vectors) ends as the prefix sum through phase p. Then
 * A[2 p + h] = A_p at row positions 8 h .. 8 h + 7 (rows ROWMAP[.]). */
TARGET static inline void block_reduce(const int16_t *D, const pair_prog *pp, __m256i *slots, __m256i A[16])
{
    __m256i S0 = _mm256_setzero_si256(), S1 = _mm256_setzero_si256();
    const int n = pp->n;
    const char *Db = (const char *)D;
    for (int k = 0; k < n; k++) {
        const __m256i di = _mm256_load_si256((const __m256i *)(Db + pp->oi[k]));
        const __m256i dj = _mm256_load_si256((const __m256i *)(Db + pp->oj[k]));
        const __m256i av = _mm256_set1_epi32(pp->a[k]);
        S0 = _mm256_add_epi32(S0, _mm256_madd_epi16(_mm256_unpacklo_epi16(di, dj), av));
        S1 = _mm256_add_epi32(S1, _mm256_madd_epi16(_mm256_unpackhi_epi16(di, dj), av));
        /* the running prefix after every pair, at a position known early (a store to a loaded slot address makes
         * the next pairs' loads wait for it); each phase's end is picked afterwards */
        _mm256_store_si256(slots + 2 * k, S0);
        _mm256_store_si256(slots + 2 * k + 1, S1);
    }
    __m256i prev0 = _mm256_setzero_si256(), prev1 = _mm256_setzero_si256();
    for (int p = 0; p < 8; p++) {
        const int ke = pp->kend[p];
        __m256i s0 = _mm256_load_si256(slots + 2 * ke), s1 = _mm256_load_si256(slots + 2 * ke + 1);
        const __m256i ps = _mm256_set1_epi32(pp->psum[p]);
        __m256i d0 = _mm256_sub_epi32(_mm256_sub_epi32(s0, prev0), ps);
        __m256i d1 = _mm256_sub_epi32(_mm256_sub_epi32(s1, prev1), ps);
        A[2 * p] = _mm256_add_epi32(d0, d0);
        A[2 * p + 1] = _mm256_add_epi32(d1, d1);
        prev0 = s0;
        prev1 = s1;
    }
    for (int j = 0; j < pp->nq0; j++) { /* lanes with k in 1..7 (left out by the halving): value +-1, phase k */
        const int code = pp->q0code[j], p = code & 7;
        const int16_t *u = D + (size_t)RB * pp->q0lane[j];
        for (int h = 0; h < 2; h++) { /* positions 8 h .. 8 h + 7 are rows 4 h .. 4 h + 3 and 8 + 4 h .. 11 + 4 h */
            __m128i uu = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(u + 4 * h)),
                                            _mm_loadl_epi64((const __m128i *)(u + 8 + 4 * h)));
            __m256i t = _mm256_sub_epi32(_mm256_cvtepi16_epi32(uu), _mm256_set1_epi32(1));
            A[2 * p + h] = (code & 0x80) ? _mm256_sub_epi32(A[2 * p + h], t) : _mm256_add_epi32(A[2 * p + h], t);
        }
    }
}

/* Per-thread scratch of one 16-row block (RB rows; 16 values a group are in row position order, ROWMAP). */
typedef struct {
    int16_t *D;     /* 128 lanes x 16 rows, digits u */
    __m256i *slots; /* MAXP x 2 running prefixes */
    __m256i *A;     /* 16 vectors: A[2 p + h] = phase p of row positions 8 h .. 8 h + 7 (stage-alone hand-over) */
    double *gv;     /* G x 16 group values (stage-alone hand-over) */
    int64_t *S;     /* G x 16 S of q1516 (stage-alone hand-over) */
    int64_t *qb;    /* 16 x G materialized Q (q1516) */
} block_scratch;

static block_scratch block_scratch_of(void *scratch, int K)
{
    size_t G = (size_t)K / QK;
    char *p = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    block_scratch s;
    s.D = (int16_t *)p;
    p += 2 * QK * RB;
    s.slots = (__m256i *)p;
    p += 64 * MAXP;
    s.A = (__m256i *)p;
    p += 512;
    s.gv = (double *)p;
    p += 8 * RB * G;
    s.S = (int64_t *)p;
    p += 8 * RB * G;
    s.qb = (int64_t *)p;
    return s;
}

size_t hsdr_cpu_direct_scratch_bytes(int K, int R)
{
    (void)R;
    return 64 + 2 * QK * RB + 64 * MAXP + 512 + 3 * 8 * RB * (size_t)(K / QK);
}

/* The integer outputs the checking interface asks for (hsdr_matvec_io; NULL: not wanted). */
typedef struct {
    int32_t *A;
    int32_t *lambda;
    int8_t *sign;
    int64_t *qg, *qrow;
} check_outs;

/* row positions 8 h .. 8 h + 7 of the phase vectors A[2 p + h] -> At[position][p] */
TARGET static inline void transpose_A8(const __m256i A[16], int h, int32_t At[8][8])
{
    int32_t t[8][8];
    for (int p = 0; p < 8; p++)
        _mm256_storeu_si256((__m256i *)t[p], A[2 * p + h]);
    for (int r = 0; r < 8; r++)
        for (int p = 0; p < 8; p++)
            At[r][p] = t[p][r];
}

/* Rows r0 .. r1 of the fused kernel of `kind`, 16-row block by block (the rows of a block outside the range are
 * computed and not stored): only = 0 runs every stage from decode on, else the stage of that bit alone on the
 * scratch a full run left; o: the checking interface's outputs, or NULL. */
TARGET static void row_blocks(const hsdr_exec *ex, int r0, int r1, void *scratch, enum kind kind, unsigned only,
                              const check_outs *o)
{
    const int G = ex->K / QK, N = ex->N;
    if (r0 >= r1)
        return;
    const pair_act a = pair_act_of(ex->act, ex->K);
    const block_scratch s = block_scratch_of(scratch, ex->K);
    const finish f = finish_of(ex, kind);
    const unsigned DEC = HSDR_STAGE_BIT(HSDR_STAGE_DECODE), RED = HSDR_STAGE_BIT(HSDR_STAGE_REDUCE),
                   SC = HSDR_STAGE_BIT(HSDR_STAGE_SCALE), MAT = HSDR_STAGE_BIT(HSDR_STAGE_MATERIALIZE),
                   MER = HSDR_STAGE_BIT(HSDR_STAGE_MERGE);
    const int do_dec = !only || only == DEC, do_red = !only || only == RED, do_sc = !only || only == SC,
              do_mat = !only || only == MAT, do_mer = !only || only == MER;
    __m256d cph[8];
    for (int p = 0; p < 8; p++)
        cph[p] = _mm256_set1_pd(hsdr_lns8_cp_hi[p]);
    for (int rb = r0 / RB; RB * rb < r1; rb++) {
        const uint8_t *cbrow = (const uint8_t *)ex->weights + (size_t)rb * G * CB;
        __m256d yacc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
        for (int g = 0; g < G; g++) {
            const uint8_t *cb = cbrow + (size_t)g * CB;
            if (do_dec)
                block_digits(cb, s.D);
            if (do_red)
                block_reduce(s.D, &a.prog[g], s.slots, s.A);
            if (o && o->A)
                for (int p = 0; p < 8; p++)
                    for (int h = 0; h < 2; h++) {
                        int32_t t[8];
                        _mm256_storeu_si256((__m256i *)t, s.A[2 * p + h]);
                        for (int r = 0; r < 8; r++)
                            if (RB * rb + ROWMAP[8 * h + r] < N)
                                o->A[((size_t)(RB * rb + ROWMAP[8 * h + r]) * G + g) * 8 + p] = t[r];
                    }
            if (kind == K_DIRECT) {
                for (int h = 0; h < 2; h++) {
                    __m256d glo, ghi;
                    double *gv = s.gv + (size_t)RB * g + 8 * h;
                    if (do_sc) {
                        glo = _mm256_setzero_pd(), ghi = _mm256_setzero_pd();
                        for (int p = 0; p < 8; p++) {
                            const __m256i Ap = s.A[2 * p + h];
                            glo = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(Ap)), cph[p], glo);
                            ghi = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(Ap, 1)), cph[p], ghi);
                        }
                        __m256 d8 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(cb + 26 * RB + 16 * h)));
                        glo = _mm256_mul_pd(glo, _mm256_cvtps_pd(_mm256_castps256_ps128(d8)));
                        ghi = _mm256_mul_pd(ghi, _mm256_cvtps_pd(_mm256_extractf128_ps(d8, 1)));
                        if (only) {
                            _mm256_storeu_pd(gv, glo);
                            _mm256_storeu_pd(gv + 4, ghi);
                        }
                    } else {
                        glo = _mm256_loadu_pd(gv);
                        ghi = _mm256_loadu_pd(gv + 4);
                    }
                    if (do_mer) {
                        yacc[2 * h] = _mm256_add_pd(yacc[2 * h], glo);
                        yacc[2 * h + 1] = _mm256_add_pd(yacc[2 * h + 1], ghi);
                    }
                }
            } else if (kind == K_FLNS) {
                for (int h = 0; h < 2; h++) {
                    double *gv = s.gv + (size_t)RB * g + 8 * h;
                    if (do_sc) {
                        vfl root = vtree(f.ft, s.A, h, f.F, f.b);
                        __m256 d8 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(cb + 26 * RB + 16 * h)));
                        __m256d sc = _mm256_set1_pd(f.scale2);
                        __m256d dlo = _mm256_cvtps_pd(_mm256_castps256_ps128(d8));
                        __m256d dhi = _mm256_cvtps_pd(_mm256_extractf128_ps(d8, 1));
                        _mm256_storeu_pd(gv, _mm256_mul_pd(vvalue4(f.ft, root, f.F, 0), _mm256_mul_pd(dlo, sc)));
                        _mm256_storeu_pd(gv + 4, _mm256_mul_pd(vvalue4(f.ft, root, f.F, 1), _mm256_mul_pd(dhi, sc)));
                        if (o && o->lambda) {
                            int32_t lv[8], sv[8];
                            _mm256_storeu_si256((__m256i *)lv, root.lam);
                            _mm256_storeu_si256((__m256i *)sv, root.sg);
                            for (int r = 0; r < 8; r++) {
                                const int row = RB * rb + ROWMAP[8 * h + r];
                                if (row < N) {
                                    o->lambda[(size_t)row * G + g] = lv[r];
                                    o->sign[(size_t)row * G + g] = (int8_t)sv[r];
                                }
                            }
                        }
                    }
                    if (do_mer) {
                        yacc[2 * h] = _mm256_add_pd(yacc[2 * h], _mm256_loadu_pd(gv));
                        yacc[2 * h + 1] = _mm256_add_pd(yacc[2 * h + 1], _mm256_loadu_pd(gv + 4));
                    }
                }
            } else {
                uint16_t dh[RB];
                memcpy(dh, cb + 26 * RB, sizeof dh);
                for (int h = 0; h < 2; h++) {
                    int32_t At[8][8];
                    if (do_sc || do_mat)
                        transpose_A8(s.A, h, At);
                    for (int r = 0; r < 8; r++) {
                        const int rr = 8 * h + r, row = ROWMAP[rr]; /* rr: position, row: row in the block */
                        double d = (double)_cvtsh_ss(dh[rr]);
                        size_t og = (size_t)(RB * rb + row) * G + g;
                        if (do_sc)
                            s.S[(size_t)RB * g + rr] = q_scale(At[r]);
                        if (do_mat) {
                            int64_t q = q_materialize(s.S[(size_t)RB * g + rr], d, f.scale2);
                            s.qb[(size_t)rr * G + g] = q;
                            if (o && o->qg && RB * rb + row < N)
                                o->qg[og] = q;
                        }
                    }
                }
            }
        }
        if (!do_mer)
            continue;
        double yv[RB];
        if (kind == K_DIRECT) {
            for (int v = 0; v < 4; v++)
                _mm256_storeu_pd(yv + 4 * v, _mm256_mul_pd(yacc[v], _mm256_set1_pd(f.scale2)));
        } else if (kind == K_FLNS) {
            for (int v = 0; v < 4; v++)
                _mm256_storeu_pd(yv + 4 * v, yacc[v]);
        } else {
            for (int r = 0; r < RB; r++) { /* r: position */
                const int64_t *q = s.qb + (size_t)r * G;
                __m256i acc = _mm256_setzero_si256();
                int g = 0;
                for (; g + 4 <= G; g += 4)
                    acc = _mm256_add_epi64(acc, _mm256_loadu_si256((const __m256i *)(q + g)));
                int64_t l[4];
                _mm256_storeu_si256((__m256i *)l, acc);
                int64_t y = l[0] + l[1] + l[2] + l[3];
                for (; g < G; g++)
                    y += q[g];
                if (o && o->qrow && RB * rb + ROWMAP[r] < N)
                    o->qrow[RB * rb + ROWMAP[r]] = y;
                yv[r] = ldexp((double)y, -16);
            }
        }
        for (int r = 0; r < RB; r++) { /* yv is in position order */
            int row = RB * rb + ROWMAP[r];
            if (row >= r0 && row < r1 && row < N)
                ex->y[row] = (float)yv[r];
        }
    }
}

void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    row_blocks(e, r0, r1, scratch, K_DIRECT, 0, NULL);
}
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    row_blocks(e, r0, r1, scratch, K_FLNS, 0, NULL);
}
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    row_blocks(e, r0, r1, scratch, K_Q1516, 0, NULL);
}

/* One stage alone: encode and route once per matvec (the call with r0 == 0), the others over the thread's rows. */
static void stage_alone(const hsdr_exec *e, hsdr_stage st, int r0, int r1, void *scratch, enum kind kind)
{
    if (st == HSDR_STAGE_ENCODE || st == HSDR_STAGE_ROUTE) {
        if (r0 == 0)
            (st == HSDR_STAGE_ENCODE ? encode_stage : route_stage)(e);
        return;
    }
    if (st == HSDR_STAGE_CONVERT)
        return;
    row_blocks(e, r0, r1, scratch, kind, HSDR_STAGE_BIT(st), NULL);
}

void hsdr_cpu_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch, K_DIRECT);
}
void hsdr_cpu_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch, K_FLNS);
}
void hsdr_cpu_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch, K_Q1516);
}

/* The checking interface: the caller's codes and pre-scale, the pair program, then every row with every output. */
static int check_matvec(hsdr_matvec_io *io, enum kind kind, char *err, size_t errlen)
{
    if (!io->codes) {
        snprintf(err, errlen, "needs LNS8 codes");
        return -1;
    }
    if (kind == K_FLNS && (!hsdr_flns_params_ok(io->flns_F, io->flns_b) || !hsdr_cpu_flns_tables(io->flns_F))) {
        snprintf(err, errlen, "fLNS parameters F=%d b=%d outside F 0..8, b 4..16", io->flns_F, io->flns_b);
        return -1;
    }
    void *w = NULL;
    size_t wb;
    if (hsdr_cpu_direct_prepare(io->weights, io->K, io->N, &w, &wb, err, errlen) != 0)
        return -1;
    size_t sb = hsdr_cpu_direct_scratch_bytes(io->K, 1);
    void *act = aligned_alloc(64, align64(hsdr_cpu_direct_act_bytes(io->K)));
    void *scr = aligned_alloc(64, align64(sb));
    float *y = malloc(sizeof(float) * (size_t)(io->N > 0 ? io->N : 1));
    if (!act || !scr || !y) {
        free(w), free(act), free(scr), free(y);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(scr, 0, align64(sb));
    pair_act a = pair_act_of(act, io->K);
    memcpy(a.codes, io->codes, (size_t)io->K);
    ((act_head *)act)->e = io->prescale_e;
    route_pairs(a.codes, 0, io->K / QK, a);
    hsdr_exec ex = {.K = io->K, .N = io->N, .R = 1, .flns_F = io->flns_F, .flns_b = io->flns_b, .weights = w,
                    .act = act, .y = io->y_f32 ? io->y_f32 : y};
    check_outs o = {io->A, io->flns_lambda, io->flns_sign, io->q_group, io->q_row};
    row_blocks(&ex, 0, io->N, scr, kind, 0, &o);
    free(w), free(act), free(scr), free(y);
    return 0;
}

int hsdr_cpu_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return check_matvec(io, K_DIRECT, err, errlen);
}
int hsdr_cpu_flns_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return check_matvec(io, K_FLNS, err, errlen);
}
int hsdr_cpu_q1516_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return check_matvec(io, K_Q1516, err, errlen);
}
