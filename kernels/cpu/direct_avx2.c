/* cpu.direct, cpu.flns, cpu.q1516: the direct 8-phase HSDR reduction on AVX2 (spec/lns8.md sections 2, 3, 5, 6).
 *
 *   Idea: A[p] = sum over lanes with k != 0 and phase p of s t 2^q is a 128 x 8 (lanes x phases) matrix product
 *   with one non-zero per lane. The prologue materializes that matrix densely as eight int16 activation vectors per
 *   group, a_p[i] = s_i 2^(q_i - 1) when lane i has phase p (0 elsewhere, and for k = 0), so every product fits
 *   vpmaddwd (2^15 itself does not fit int16, hence the halving). A row multiplies its raw PTQ1_0 digits
 *   u = t + 1 in {0, 1, 2} (no "- 1" per lane) with vpmaddwd: A[p] / 2 = sum_i u_i a_p[i] - sum_i a_p[i], where the
 *   phase sums sum_i a_p[i] are per-group activation constants of the prologue. Lanes with q = 0 (codes 1..7, which
 *   the halving cannot hold) are flagged per group and added exactly by a scalar fix-up.
 *   Finishes (per group, from the exact int32 A[8] in a register):
 *     direct  G_g = 2^(e-9) d_g sum_p A[p] c_p: cvtepi32_pd + fma into two fp64 vectors, merged at the row end;
 *     flns    the fLNS tree of reference hsdr_flns_tree on cached LC / kappa tables, value from a 2^(r/2^(F+3))
 *             table (no exp2 per group), summed in fp64;
 *     q1516   S = sum_p A[p] C31[p] (int64), Q_g = rint(S d_g 2^(e+16-31-9)) (the reference formula), Q_g stored,
 *             then an int64 AVX2 sum across the groups; y = row 2^-16.
 *   Layouts: weights are the raw PTQ1_0 rows (no conversion). Activations (prologue): header (e, flags), LNS8 codes,
 *   per group the 8 x 128 int16 phase vectors (2 KiB), the 8 int32 phase sums, the q = 0 flags.
 *   Encoder: AVX2, bit-identical to the reference (exact mantissa thresholds, saturation, half_min underflow,
 *   automatic pre-scale); inputs with Inf/NaN fall back to the reference encoder.
 *   Stages: encode (x -> codes), route (codes -> phase vectors, phase sums), decode (compare-form digits, widened to
 *   int16), reduce (64 vpmaddwd + add tree + hadd transpose -> A[8]), scale (phase combination / fLNS tree / S),
 *   materialize (q1516: Q_g), merge (sum over groups). */
#include "direct_avx2.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/fp16.h"
#include "../../reference/hsdr.h"
#include "../../reference/lns8.h"
#include "../../reference/lns8_const.h"

#define QK 128
#define BLK 28

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- activation buffer ---- */
typedef struct {
    int e;
    int pad[15];
} act_head;

typedef struct {
    uint8_t *codes;   /* K */
    int16_t *phase;   /* G x 8 chunks x 8 phases x 16 lanes */
    int32_t *psum;    /* G x 8: sum_i a_p[i] */
    uint8_t *q0;      /* G: number of lanes with k in 1..7 (q = 0) */
    uint8_t *q0lanes; /* G x 128: their lane indices */
} act_view;

static act_view act_of(void *act, int K)
{
    size_t G = (size_t)K / QK;
    char *p = (char *)act + sizeof(act_head);
    act_view a;
    a.codes = (uint8_t *)p;
    p += align64((size_t)K);
    a.phase = (int16_t *)p;
    p += G * 8 * QK * sizeof(int16_t);
    a.psum = (int32_t *)p;
    p += align64(G * 8 * sizeof(int32_t));
    a.q0 = (uint8_t *)p;
    p += align64(G);
    a.q0lanes = (uint8_t *)p;
    return a;
}

size_t hsdr_cpu_direct_act_bytes(int K)
{
    size_t G = (size_t)K / QK;
    return sizeof(act_head) + align64((size_t)K) + G * 8 * QK * sizeof(int16_t) + align64(G * 8 * sizeof(int32_t)) +
           align64(G) + G * QK;
}

static int act_e(const void *act)
{
    return ((const act_head *)act)->e;
}

static double block_d(const uint8_t *blk);

/* ---- fLNS tables: per F, built once (any thread may trigger it; the others wait) ---- */
typedef struct {
    uint16_t *lc;     /* 65536 */
    int32_t *kplus;   /* kplus_len entries, 0 beyond */
    int32_t *kminus;  /* kminus_len entries (index 0 unused), 0 beyond */
    int32_t kplus_len, kminus_len;
    double *pow_frac; /* 2^(r / 2^(F+3)), r = 0 .. 2^(F+3) - 1 */
} flns_tab;

static flns_tab flns_tabs[9];
static atomic_int flns_state[9]; /* 0 not built, 1 building, 2 ready, 3 failed */

static const flns_tab *flns_tables(int F)
{
    if (F < 0 || F > 8)
        return NULL;
    int st = atomic_load_explicit(&flns_state[F], memory_order_acquire);
    if (st == 2)
        return &flns_tabs[F];
    int expected = 0;
    if (atomic_compare_exchange_strong(&flns_state[F], &expected, 1)) {
        flns_tab *t = &flns_tabs[F];
        int32_t n = 1;
        while (hsdr_flns_kplus_at(F, n) != 0)
            n++;
        t->kplus_len = n;
        n = 1;
        while (hsdr_flns_kminus_at(F, n) != 0)
            n++;
        t->kminus_len = n;
        int nf = 8 << F;
        t->lc = malloc(sizeof(uint16_t) * 65536);
        t->kplus = malloc(sizeof(int32_t) * (size_t)t->kplus_len);
        t->kminus = malloc(sizeof(int32_t) * (size_t)t->kminus_len);
        t->pow_frac = malloc(sizeof(double) * (size_t)nf);
        if (!t->lc || !t->kplus || !t->kminus || !t->pow_frac) {
            atomic_store_explicit(&flns_state[F], 3, memory_order_release);
            return NULL;
        }
        t->lc[0] = 0;
        for (uint32_t c = 1; c < 65536; c++)
            t->lc[c] = (uint16_t)hsdr_flns_lc_at(F, c);
        for (int32_t d = 0; d < t->kplus_len; d++)
            t->kplus[d] = hsdr_flns_kplus_at(F, d);
        t->kminus[0] = 0;
        for (int32_t d = 1; d < t->kminus_len; d++)
            t->kminus[d] = hsdr_flns_kminus_at(F, d);
        for (int r = 0; r < nf; r++)
            t->pow_frac[r] = exp2((double)r / (double)nf);
        atomic_store_explicit(&flns_state[F], 2, memory_order_release);
        return t;
    }
    while ((st = atomic_load_explicit(&flns_state[F], memory_order_acquire)) == 1)
        ;
    return st == 2 ? &flns_tabs[F] : NULL;
}

typedef struct {
    int32_t lambda;
    int32_t sign;
} fl;

static inline fl fl_leaf(const flns_tab *t, int32_t a, int p, int F, int b)
{
    if (a == 0)
        return (fl){0, 0};
    uint32_t n = a < 0 ? 0u - (uint32_t)a : (uint32_t)a;
    int z = (32 - __builtin_clz(n)) - b;
    uint32_t c = n;
    if (z > 0) {
        c = (n + (1u << (z - 1))) >> z;
        if (c == (1u << b)) {
            c >>= 1;
            z++;
        }
    } else {
        z = 0;
    }
    return (fl){((p + 8 * z) << F) + t->lc[c], a < 0 ? -1 : 1};
}

static inline fl fl_combine(const flns_tab *t, fl x, fl y)
{
    if (x.sign == 0)
        return y;
    if (y.sign == 0)
        return x;
    fl hi = x, lo = y;
    if (y.lambda > x.lambda) {
        hi = y;
        lo = x;
    }
    int32_t d = hi.lambda - lo.lambda;
    if (hi.sign == lo.sign)
        return (fl){hi.lambda + (d < t->kplus_len ? t->kplus[d] : 0), hi.sign};
    if (d == 0)
        return (fl){0, 0};
    return (fl){hi.lambda + (d < t->kminus_len ? t->kminus[d] : 0), hi.sign};
}

static inline fl fl_tree(const flns_tab *t, const int32_t A[8], int F, int b)
{
    fl l[8];
    for (int p = 0; p < 8; p++)
        l[p] = fl_leaf(t, A[p], p, F, b);
    fl m0 = fl_combine(t, l[0], l[1]), m1 = fl_combine(t, l[2], l[3]);
    fl m2 = fl_combine(t, l[4], l[5]), m3 = fl_combine(t, l[6], l[7]);
    return fl_combine(t, fl_combine(t, m0, m1), fl_combine(t, m2, m3));
}

/* sign 2^((lambda / 2^F - 74) / 8) * d * 2^e, with base2 = 2^(e - 74/8) folded by the caller:
 * lambda = m 2^(F+3) + r -> 2^m * pow_frac[r]. */
static inline double fl_value(const flns_tab *t, fl r, int F, double d_scaled)
{
    if (r.sign == 0)
        return 0.0;
    int32_t m = r.lambda >> (F + 3);
    int32_t fr = r.lambda & ((8 << F) - 1);
    double v = ldexp(t->pow_frac[fr], m) * d_scaled;
    return r.sign < 0 ? -v : v;
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

static double block_d(const uint8_t *blk)
{
    uint16_t h;
    memcpy(&h, blk + 26, 2);
    return (double)hsdr_fp16_to_fp32(h);
}

enum kind { K_DIRECT, K_FLNS, K_Q1516 };

#if defined(__x86_64__)
#include <immintrin.h>
#define TARGET __attribute__((target("avx2,fma,f16c")))

const char *hsdr_cpu_direct_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c"))
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
    __m256i ks = _mm256_add_epi32(_mm256_slli_epi32(biased, 3), _mm256_add_epi32(j, _mm256_set1_epi32(74 - 8 * 127 - e8)));
    __m256i k = _mm256_min_epi32(ks, _mm256_set1_epi32(HSDR_LNS8_KMAX));
    /* underflow (ks < 1): code 1 iff eshift > -11 or (eshift == -11 and m >= HALF_MIN_MT), eshift = biased - 127 - e
     * <=> biased > 116 + e or (biased == 116 + e and m >= HALF_MIN_MT) */
    __m256i lim = _mm256_set1_epi32(116 + e8 / 8);
    __m256i one = _mm256_or_si256(_mm256_cmpgt_epi32(biased, lim),
                                  _mm256_and_si256(_mm256_cmpeq_epi32(biased, lim),
                                                   _mm256_cmpgt_epi32(m, _mm256_set1_epi32((int)HSDR_LNS8_HALF_MIN_MT - 1))));
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
    act_view a = act_of(ex->act, ex->K);
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

/* ---- route: codes -> eight int16 phase vectors per group, their sums, the q = 0 flags ---- */

/* 2^(q-1) for q = 1..15 as int16 (q = 0 -> 0: fixed up separately); low and high bytes for pshufb */
TARGET static void route_codes(const uint8_t *codes, int K, act_view a)
{
    const int G = K / QK;
    const __m256i pow_lo = _mm256_setr_epi8(0, 1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8,
                                            16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0);
    const __m256i pow_hi = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0, 1, 2, 4, 8, 16, 32, 64);
    for (int g = 0; g < G; g++) {
        const uint8_t *c = codes + (size_t)g * QK;
        int16_t *ph = a.phase + (size_t)g * 8 * QK;
        __m256i sums[8];
        for (int p = 0; p < 8; p++)
            sums[p] = _mm256_setzero_si256();
        __m256i q0any = _mm256_setzero_si256();
        for (int ch = 0; ch < 8; ch++) {
            __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(c + 16 * ch)));
            __m256i k = _mm256_and_si256(b, _mm256_set1_epi16(0x7f));
            __m256i q = _mm256_srli_epi16(k, 3);
            __m256i p = _mm256_and_si256(k, _mm256_set1_epi16(7));
            /* 2^(q-1): pshufb on the byte lanes (q < 16 sits in the low byte; high byte of each lane is 0) */
            __m256i lo = _mm256_shuffle_epi8(pow_lo, q), hi = _mm256_shuffle_epi8(pow_hi, q);
            __m256i v = _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi16(0xff)),
                                        _mm256_slli_epi16(_mm256_and_si256(hi, _mm256_set1_epi16(0xff)), 8));
            __m256i negm = _mm256_cmpgt_epi16(b, _mm256_set1_epi16(0x7f));
            v = _mm256_sub_epi16(_mm256_xor_si256(v, negm), negm); /* conditional negate */
            __m256i isq0 = _mm256_and_si256(_mm256_cmpeq_epi16(q, _mm256_setzero_si256()),
                                            _mm256_cmpgt_epi16(k, _mm256_setzero_si256()));
            q0any = _mm256_or_si256(q0any, isq0);
            for (int pp = 0; pp < 8; pp++) {
                __m256i sel = _mm256_and_si256(v, _mm256_cmpeq_epi16(p, _mm256_set1_epi16((short)pp)));
                _mm256_store_si256((__m256i *)(ph + (size_t)(8 * ch + pp) * 16), sel); /* [chunk][phase][16] */
                sums[pp] = _mm256_add_epi32(sums[pp], _mm256_madd_epi16(sel, _mm256_set1_epi16(1)));
            }
        }
        for (int pp = 0; pp < 8; pp++) {
            __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sums[pp]), _mm256_extracti128_si256(sums[pp], 1));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
            a.psum[8 * g + pp] = _mm_cvtsi128_si32(s4);
        }
        int nq0 = 0;
        if (!_mm256_testz_si256(q0any, q0any))
            for (int i = 0; i < QK; i++)
                if ((c[i] & 0x7f) >= 1 && (c[i] & 0x7f) < 8)
                    a.q0lanes[(size_t)g * QK + nq0++] = (uint8_t)i;
        a.q0[g] = (uint8_t)(nq0 > 255 ? 255 : nq0);
    }
}

static void route_stage(const hsdr_exec *ex)
{
    act_view a = act_of(ex->act, ex->K);
    route_codes(a.codes, ex->K, a);
}

void hsdr_cpu_direct_prologue(const hsdr_exec *e)
{
    if (!(e->skip & HSDR_STAGE_BIT(HSDR_STAGE_ENCODE)))
        encode_stage(e);
    if (e->twice & HSDR_STAGE_BIT(HSDR_STAGE_ENCODE))
        encode_stage(e);
    if (!(e->skip & HSDR_STAGE_BIT(HSDR_STAGE_ROUTE)))
        route_stage(e);
    if (e->twice & HSDR_STAGE_BIT(HSDR_STAGE_ROUTE))
        route_stage(e);
}

/* ---- decode + reduce, interleaved per 16-lane chunk ----
 * Digits in int16 lanes without byte compares: with v = (b 3^n mod 256) << 8 in a 16-bit lane, digit n is
 * mulhi_epu16(v, 3) and the next v is mullo_epi16(v, 3). Chunk j (weights 16 j .. 16 j + 15) is digit j of qs[0..15]
 * for j < 5; chunk 5 = lanes [b, 3b] of qs[16..23], chunk 6 = [9b, 27b], chunk 7 = [81b | qh lanes q0 q1 3q0 3q1 9q0
 * 9q1 27q0 27q1]. Each chunk is multiplied with the eight phase vectors of that chunk right away (vpmaddwd), so the
 * digits never leave registers: 8 accumulators + the decode state. */

TARGET static inline void chunk_acc(__m256i d, const __m256i *ap, __m256i acc[8], int first)
{
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) {
        __m256i m = _mm256_madd_epi16(d, _mm256_load_si256(ap + p));
        acc[p] = first ? m : _mm256_add_epi32(acc[p], m);
    }
    /* keep the eight running sums in registers chunk by chunk: without this barrier the compiler re-associates the
     * 8 x 8 products into per-phase trees, computes all 64 products first and spills them */
    __asm__("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]), "+x"(acc[4]), "+x"(acc[5]), "+x"(acc[6]),
            "+x"(acc[7]));
}

/* The eight digit chunks of a block (u = t + 1 in 0..2, int16). With ap != NULL each chunk is also accumulated. */
TARGET static inline void decode_acc(const uint8_t *blk, __m256i U[8], const __m256i *ap, __m256i acc[8])
{
    const __m256i three = _mm256_set1_epi16(3), nine = _mm256_set1_epi16(9);
    __m256i v = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)blk)), 8);
#pragma GCC unroll 5
    for (int n = 0; n < 5; n++) {
        __m256i d = _mm256_mulhi_epu16(v, three);
        if (n < 4)
            v = _mm256_mullo_epi16(v, three);
        if (U)
            U[n] = d;
        if (ap)
            chunk_acc(d, ap + 8 * n, acc, n == 0);
    }
    uint64_t tail;
    memcpy(&tail, blk + 16, 8);
    __m256i b = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_set1_epi64x((long long)tail)), 8); /* [b | b] */
    __m256i v5 = _mm256_mullo_epi16(b, _mm256_setr_epi16(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3));
    __m256i d5 = _mm256_mulhi_epu16(v5, three);
    if (U)
        U[5] = d5;
    if (ap)
        chunk_acc(d5, ap + 40, acc, 0);
    __m256i v6 = _mm256_mullo_epi16(v5, nine);
    __m256i d6 = _mm256_mulhi_epu16(v6, three);
    if (U)
        U[6] = d6;
    if (ap)
        chunk_acc(d6, ap + 48, acc, 0);
    uint16_t qh;
    memcpy(&qh, blk + 24, 2);
    /* every 16-bit lane j: (q_(j & 1)) << 8, then times 3^((j >> 1) & 3) */
    __m256i qv = _mm256_shuffle_epi8(_mm256_set1_epi16((short)qh),
                                     _mm256_setr_epi8(-128, 0, -128, 1, -128, 0, -128, 1, -128, 0, -128, 1, -128, 0, -128, 1,
                                                      -128, 0, -128, 1, -128, 0, -128, 1, -128, 0, -128, 1, -128, 0, -128, 1));
    qv = _mm256_mullo_epi16(qv, _mm256_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27, 1, 1, 3, 3, 9, 9, 27, 27));
    __m256i v7 = _mm256_blend_epi32(_mm256_mullo_epi16(v6, nine), qv, 0xf0);
    __m256i d7 = _mm256_mulhi_epu16(v7, three);
    if (U)
        U[7] = d7;
    if (ap)
        chunk_acc(d7, ap + 56, acc, 0);
}

/* exact A[p] contributions of the lanes with k in 1..7 (q = 0), which the halved phase vectors leave out: each such
 * lane's digit is read straight from its byte (spec/ptq1_0.md section 1, inverse map) */
static void q0_fixup(const uint8_t *codes, const uint8_t *lanes, int n, const uint8_t *blk, int32_t A[8])
{
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    for (int j = 0; j < n; j++) {
        int e = lanes[j], byte, dn;
        if (e < 80)
            byte = blk[e & 15], dn = e >> 4;
        else if (e < 120)
            byte = blk[16 + ((e - 80) & 7)], dn = (e - 80) >> 3;
        else
            byte = blk[24 + ((e - 120) & 1)], dn = (e - 120) >> 1;
        int v = (byte * pow3[dn]) & 255;
        int t = ((3 * v) >> 8) - 1;
        A[codes[e] & 7] += (codes[e] & 0x80) ? -t : t;
    }
}

/* A[8] from the eight phase accumulators: hadd transpose, minus the phase sums, times 2, q = 0 fix-up */
TARGET static inline __m256i finish_A(const __m256i acc[8], const act_view *a, int g, const uint8_t *blk)
{
    __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
    __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[4], acc[5]), _mm256_hadd_epi32(acc[6], acc[7]));
    __m256i s = _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                                 _mm256_permute2x128_si256(h0123, h4567, 0x31));
    s = _mm256_sub_epi32(s, _mm256_load_si256((const __m256i *)(a->psum + 8 * g)));
    s = _mm256_add_epi32(s, s);
    if (__builtin_expect(a->q0[g], 0)) {
        int32_t A[8];
        _mm256_storeu_si256((__m256i *)A, s);
        q0_fixup(a->codes + (size_t)g * QK, a->q0lanes + (size_t)g * QK, a->q0[g], blk, A);
        s = _mm256_loadu_si256((const __m256i *)A);
    }
    return s;
}

static inline const __m256i *phase_of(const act_view *a, int g)
{
    return (const __m256i *)(a->phase + (size_t)g * 8 * QK);
}

/* fused decode + reduce of one group */
TARGET static inline __m256i group_A(const uint8_t *blk, const act_view *a, int g)
{
    __m256i acc[8];
    decode_acc(blk, NULL, phase_of(a, g), acc);
    return finish_A(acc, a, g, blk);
}

/* reduce alone, from stored digits */
TARGET static inline __m256i reduce_U(const __m256i U[8], const act_view *a, int g, const uint8_t *blk)
{
    __m256i acc[8];
    const __m256i *ap = phase_of(a, g);
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++)
        chunk_acc(U[c], ap + 8 * c, acc, c == 0);
    return finish_A(acc, a, g, blk);
}

/* ---- finishes ---- */

typedef struct {
    enum kind kind;
    int F, b;
    const flns_tab *ft;
    double scale2;  /* direct: 2^(e-9); flns: 2^(e - 74/8) folded in fl_value; q1516: 2^(e+16-31-9) */
    __m256d c_lo, c_hi;
} finish;

static finish finish_of(const hsdr_exec *ex, enum kind kind)
{
    finish f = {.kind = kind, .F = ex->flns_F, .b = ex->flns_b};
    int e = act_e(ex->act);
    if (kind == K_DIRECT)
        f.scale2 = ldexp(1.0, e - 9);
    else if (kind == K_FLNS) {
        f.ft = flns_tables(f.F);
        f.scale2 = ldexp(exp2(-74.0 / 8.0), e);
    } else
        f.scale2 = ldexp(1.0, e + 16 - 31 - 9);
    return f;
}

TARGET static void set_c(finish *f)
{
    f->c_lo = _mm256_loadu_pd(hsdr_lns8_cp_hi);
    f->c_hi = _mm256_loadu_pd(hsdr_lns8_cp_hi + 4);
}

/* The fused row: decode, reduce, finish per group; merge at the end. Also writes A / fLNS / Q outputs when given. */
TARGET static void rows_fused(const hsdr_exec *ex, int r0, int r1, enum kind kind, int32_t *Aout, int32_t *lam_out,
                              int8_t *sign_out, int64_t *qg_out, int64_t *qrow_out, int64_t *qbuf)
{
    const int G = ex->K / QK;
    const act_view a = act_of(ex->act, ex->K);
    finish f = finish_of(ex, kind);
    set_c(&f);
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)ex->weights + (size_t)r * G * BLK;
        __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
        double accs = 0.0;
        for (int g = 0; g < G; g++) {
            const uint8_t *blk = row + (size_t)g * BLK;
            __m256i A = group_A(blk, &a, g);
            uint16_t hb;
            memcpy(&hb, blk + 26, 2);
            if (kind == K_DIRECT) {
                __m256d dv = _mm256_set1_pd((double)_cvtsh_ss(hb));
                acc0 = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(A)), _mm256_mul_pd(f.c_lo, dv), acc0);
                acc1 = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(A, 1)), _mm256_mul_pd(f.c_hi, dv),
                                       acc1);
                if (Aout)
                    _mm256_storeu_si256((__m256i *)(Aout + ((size_t)r * G + g) * 8), A);
            } else {
                int32_t Av[8];
                _mm256_storeu_si256((__m256i *)Av, A);
                if (Aout)
                    memcpy(Aout + ((size_t)r * G + g) * 8, Av, sizeof Av);
                double d = (double)_cvtsh_ss(hb);
                if (kind == K_FLNS) {
                    fl root = fl_tree(f.ft, Av, f.F, f.b);
                    if (lam_out) {
                        lam_out[(size_t)r * G + g] = root.lambda;
                        sign_out[(size_t)r * G + g] = (int8_t)root.sign;
                    }
                    accs += fl_value(f.ft, root, f.F, d * f.scale2);
                } else {
                    int64_t q = q_materialize(q_scale(Av), d, f.scale2);
                    qbuf[g] = q;
                    if (qg_out)
                        qg_out[(size_t)r * G + g] = q;
                }
            }
        }
        if (kind == K_DIRECT) {
            __m256d s = _mm256_add_pd(acc0, acc1);
            __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
            s2 = _mm_add_sd(s2, _mm_unpackhi_pd(s2, s2));
            ex->y[r] = (float)(_mm_cvtsd_f64(s2) * f.scale2);
        } else if (kind == K_FLNS) {
            ex->y[r] = (float)accs;
        } else {
            /* integer SIMD merge across the materialized groups */
            __m256i s = _mm256_setzero_si256();
            int g = 0;
            for (; g + 4 <= G; g += 4)
                s = _mm256_add_epi64(s, _mm256_loadu_si256((const __m256i *)(qbuf + g)));
            int64_t l[4];
            _mm256_storeu_si256((__m256i *)l, s);
            int64_t y = l[0] + l[1] + l[2] + l[3];
            for (; g < G; g++)
                y += qbuf[g];
            if (qrow_out)
                qrow_out[r] = y;
            ex->y[r] = (float)ldexp((double)y, -16);
        }
    }
}

/* ---- per-thread scratch: stage head, Q buffer, and the stage-alone intermediates of row r0 ---- */
typedef struct {
    unsigned ready;
    int pad;
    __m256i sink;
} stage_head;

typedef struct {
    stage_head *h;
    int64_t *qbuf;  /* G */
    __m256i *U;     /* G x 8: digits of row r0 */
    int32_t *A;     /* G x 8 */
    double *gv;     /* G: group values (direct, flns) */
    int64_t *S;     /* G (q1516) */
} scratch_view;

static scratch_view scratch_of(void *scratch, int K)
{
    size_t G = (size_t)K / QK;
    char *p = scratch;
    scratch_view s;
    s.h = (stage_head *)p;
    p += align64(sizeof(stage_head));
    s.qbuf = (int64_t *)p;
    p += align64(8 * G);
    s.U = (__m256i *)p;
    p += 8 * 32 * G;
    s.A = (int32_t *)p;
    p += align64(32 * G);
    s.gv = (double *)p;
    p += align64(8 * G);
    s.S = (int64_t *)p;
    return s;
}

size_t hsdr_cpu_direct_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / QK;
    return align64(sizeof(stage_head)) + align64(8 * G) + 8 * 32 * G + align64(32 * G) + align64(8 * G) +
           align64(8 * G) + 64;
}

static void rows_kind(const hsdr_exec *e, int r0, int r1, void *scratch, enum kind kind)
{
    scratch_view s = scratch_of(scratch, e->K);
    rows_fused(e, r0, r1, kind, NULL, NULL, NULL, NULL, NULL, s.qbuf);
}

void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_kind(e, r0, r1, scratch, K_DIRECT);
}
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_kind(e, r0, r1, scratch, K_FLNS);
}
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_kind(e, r0, r1, scratch, K_Q1516);
}

/* ---- stages alone: each reads what the previous stage of the fused kernel hands it (row r0's, kept in scratch) ---- */
TARGET static void stage_alone(const hsdr_exec *ex, hsdr_stage st, int r0, int r1, void *scratch, enum kind kind)
{
    const int G = ex->K / QK;
    const act_view a = act_of(ex->act, ex->K);
    scratch_view s = scratch_of(scratch, ex->K);
    const uint8_t *W = ex->weights;
    if (st == HSDR_STAGE_ENCODE || st == HSDR_STAGE_ROUTE) {
        if (r0 == 0)
            (st == HSDR_STAGE_ENCODE ? encode_stage : route_stage)(ex);
        return;
    }
    if (r0 >= r1)
        return;
    finish f = finish_of(ex, kind);
    set_c(&f);
    const unsigned B_DEC = HSDR_STAGE_BIT(HSDR_STAGE_DECODE), B_RED = HSDR_STAGE_BIT(HSDR_STAGE_REDUCE),
                   B_SC = HSDR_STAGE_BIT(HSDR_STAGE_SCALE), B_MAT = HSDR_STAGE_BIT(HSDR_STAGE_MATERIALIZE);
    const int need_U = st != HSDR_STAGE_DECODE;
    const int need_A = st == HSDR_STAGE_SCALE || st == HSDR_STAGE_MATERIALIZE || st == HSDR_STAGE_MERGE;
    const int need_S = kind == K_Q1516 && (st == HSDR_STAGE_MATERIALIZE || st == HSDR_STAGE_MERGE);
    const int need_gv = kind != K_Q1516 && st == HSDR_STAGE_MERGE;
    const int need_Q = kind == K_Q1516 && st == HSDR_STAGE_MERGE;
    const uint8_t *row0 = W + (size_t)r0 * G * BLK;
    if (need_U && !(s.h->ready & B_DEC)) {
        for (int g = 0; g < G; g++)
            decode_acc(row0 + (size_t)g * BLK, s.U + 8 * g, NULL, NULL);
        s.h->ready |= B_DEC;
    }
    if (need_A && !(s.h->ready & B_RED)) {
        for (int g = 0; g < G; g++)
            _mm256_storeu_si256((__m256i *)(s.A + 8 * g), reduce_U(s.U + 8 * g, &a, g, row0 + (size_t)g * BLK));
        s.h->ready |= B_RED;
    }
    if ((need_S || need_gv) && !(s.h->ready & B_SC)) {
        for (int g = 0; g < G; g++) {
            if (kind == K_Q1516)
                s.S[g] = q_scale(s.A + 8 * g);
            else if (kind == K_FLNS)
                s.gv[g] = fl_value(f.ft, fl_tree(f.ft, s.A + 8 * g, f.F, f.b), f.F,
                                   block_d(row0 + (size_t)g * BLK) * f.scale2);
            else
                s.gv[g] = hsdr_group_sum(s.A + 8 * g, block_d(row0 + (size_t)g * BLK), act_e(ex->act));
        }
        s.h->ready |= B_SC;
    }
    if (need_Q && !(s.h->ready & B_MAT)) {
        for (int g = 0; g < G; g++)
            s.qbuf[g] = q_materialize(s.S[g], block_d(row0 + (size_t)g * BLK), f.scale2);
        s.h->ready |= B_MAT;
    }
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = W + (size_t)r * G * BLK;
        switch (st) {
        case HSDR_STAGE_DECODE: {
            __m256i acc = _mm256_setzero_si256();
            for (int g = 0; g < G; g++) {
                __m256i U[8];
                decode_acc(row + (size_t)g * BLK, U, NULL, NULL);
                for (int j = 0; j < 8; j++)
                    acc = _mm256_xor_si256(acc, U[j]);
            }
            s.h->sink = _mm256_xor_si256(s.h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                _mm256_storeu_si256((__m256i *)(s.A + 8 * g), reduce_U(s.U + 8 * g, &a, g, row0 + (size_t)g * BLK));
            break;
        case HSDR_STAGE_SCALE:
            if (kind == K_DIRECT) {
                __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
                for (int g = 0; g < G; g++) {
                    __m256i A = _mm256_loadu_si256((const __m256i *)(s.A + 8 * g));
                    uint16_t hb;
                    memcpy(&hb, row + (size_t)g * BLK + 26, 2);
                    __m256d dv = _mm256_set1_pd((double)_cvtsh_ss(hb));
                    acc0 = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(A)), _mm256_mul_pd(f.c_lo, dv),
                                           acc0);
                    acc1 = _mm256_fmadd_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(A, 1)),
                                           _mm256_mul_pd(f.c_hi, dv), acc1);
                }
                s.h->sink = _mm256_xor_si256(s.h->sink, _mm256_castpd_si256(_mm256_add_pd(acc0, acc1)));
            } else if (kind == K_FLNS) {
                for (int g = 0; g < G; g++)
                    s.gv[g] = fl_value(f.ft, fl_tree(f.ft, s.A + 8 * g, f.F, f.b), f.F,
                                       block_d(row + (size_t)g * BLK) * f.scale2);
            } else {
                for (int g = 0; g < G; g++)
                    s.S[g] = q_scale(s.A + 8 * g);
            }
            break;
        case HSDR_STAGE_MATERIALIZE:
            for (int g = 0; g < G; g++)
                s.qbuf[g] = q_materialize(s.S[g], block_d(row + (size_t)g * BLK), f.scale2);
            break;
        case HSDR_STAGE_MERGE:
            if (kind == K_Q1516) {
                __m256i acc = _mm256_setzero_si256();
                int g = 0;
                for (; g + 4 <= G; g += 4)
                    acc = _mm256_add_epi64(acc, _mm256_loadu_si256((const __m256i *)(s.qbuf + g)));
                int64_t l[4];
                _mm256_storeu_si256((__m256i *)l, acc);
                int64_t y = l[0] + l[1] + l[2] + l[3];
                for (; g < G; g++)
                    y += s.qbuf[g];
                ex->y[r] = (float)ldexp((double)y, -16);
            } else {
                double y = 0.0;
                for (int g = 0; g < G; g++)
                    y += s.gv[g];
                ex->y[r] = (float)y;
            }
            break;
        default:
            return;
        }
    }
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

/* ---- checking interface: codes come pre-encoded (io->codes, io->prescale_e); route, then the fused rows ---- */
static int matvec_kind(hsdr_matvec_io *io, enum kind kind, char *err, size_t errlen)
{
    if (!io->codes) {
        snprintf(err, errlen, "needs LNS8 codes");
        return -1;
    }
    if (kind == K_FLNS && (!hsdr_flns_params_ok(io->flns_F, io->flns_b) || !flns_tables(io->flns_F))) {
        snprintf(err, errlen, "fLNS parameters F=%d b=%d outside F 0..8, b 4..16", io->flns_F, io->flns_b);
        return -1;
    }
    const int G = io->K / QK;
    void *act = aligned_alloc(64, align64(hsdr_cpu_direct_act_bytes(io->K)));
    void *scr = aligned_alloc(64, align64(hsdr_cpu_direct_scratch_bytes(io->K, 1)));
    float *y = malloc(sizeof(float) * (size_t)(io->N > 0 ? io->N : 1));
    if (!act || !scr || !y) {
        free(act), free(scr), free(y);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(scr, 0, hsdr_cpu_direct_scratch_bytes(io->K, 1));
    act_view a = act_of(act, io->K);
    memcpy(a.codes, io->codes, (size_t)io->K);
    ((act_head *)act)->e = io->prescale_e;
    route_codes(a.codes, io->K, a);
    hsdr_exec ex = {.K = io->K, .N = io->N, .R = 1, .flns_F = io->flns_F, .flns_b = io->flns_b,
                    .weights = io->weights, .act = act, .y = io->y_f32 ? io->y_f32 : y};
    scratch_view s = scratch_of(scr, io->K);
    rows_fused(&ex, 0, io->N, kind, io->A, io->flns_lambda, io->flns_sign, io->q_group, io->q_row, s.qbuf);
    (void)G;
    free(act), free(scr), free(y);
    return 0;
}

#else /* not x86-64 */

const char *hsdr_cpu_direct_unavailable(void)
{
    return "x86-64 only (AVX2, FMA, F16C)";
}
void hsdr_cpu_direct_prologue(const hsdr_exec *e)
{
    (void)e;
}
size_t hsdr_cpu_direct_scratch_bytes(int K, int R)
{
    (void)R;
    return (size_t)K;
}
static void rows_none(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)e, (void)r0, (void)r1, (void)scratch;
}
void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_none(e, r0, r1, scratch);
}
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_none(e, r0, r1, scratch);
}
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    rows_none(e, r0, r1, scratch);
}
void hsdr_cpu_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    (void)s;
    rows_none(e, r0, r1, scratch);
}
void hsdr_cpu_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    (void)s;
    rows_none(e, r0, r1, scratch);
}
void hsdr_cpu_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    (void)s;
    rows_none(e, r0, r1, scratch);
}
static int matvec_kind(hsdr_matvec_io *io, enum kind kind, char *err, size_t errlen)
{
    (void)io, (void)kind;
    snprintf(err, errlen, "x86-64 only");
    return -1;
}
#endif

int hsdr_cpu_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return matvec_kind(io, K_DIRECT, err, errlen);
}
int hsdr_cpu_flns_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return matvec_kind(io, K_FLNS, err, errlen);
}
int hsdr_cpu_q1516_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return matvec_kind(io, K_Q1516, err, errlen);
}
