/* The fractional-LNS finish of cpu.flns on AVX2 (spec/lns8.md section 5), on top of cpu.direct's exact A[8]
 * (direct_avx2.c calls it in its scale stage).
 *   Idea     the tree of the reference (hsdr_flns_from_phase / hsdr_flns_combine / hsdr_flns_tree) on 8 rows at once,
 *            lanes = rows, with the same integer steps, branch-free (blends), its table lookups as gathers: the roots
 *            equal the reference's.
 *   Layout   the LC / kappa tables of one F as compact arrays (flns_tab below, built once per F by flns_avx2.c); the
 *            phase sums as direct_avx2.c hands them over, A[2 p + h] for the row positions 8 h .. 8 h + 7.
 *   Stages   scale of cpu.flns: a leaf per phase (bitlen, LC), three levels of combines (kappa), the value.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.flns *' */
#ifndef HSDR_CPU_FLNS_AVX2_H
#define HSDR_CPU_FLNS_AVX2_H
#include <immintrin.h>
#include <stdint.h>

/* The tables of one F (0..8), built on first use by any thread (the others wait); NULL for a bad F or out of
 * memory. */
typedef struct {
    uint16_t *lc;     /* 65536 */
    int16_t *kplus;   /* kplus_len entries, 0 beyond (|kappa| < 2^15 for every F: int16 halves the cache footprint) */
    int16_t *kminus;  /* kminus_len entries (index 0 unused), 0 beyond */
    int32_t kplus_len, kminus_len; /* kplus[kplus_len] = kminus[kminus_len] = 0 */
    double *pow_frac; /* 2^(r / 2^(F+3)), r = 0 .. 2^(F+3) - 1 */
} flns_tab;
const flns_tab *hsdr_cpu_flns_tables(int F);

#define HSDR_FLNS_TARGET __attribute__((target("avx2,fma,f16c")))
/* (Lambda, sign) of 8 rows */
typedef struct {
    __m256i lam, sg;
} vfl;

HSDR_FLNS_TARGET static inline __m256i gather16s(const int16_t *tab, __m256i idx)
{
    __m256i v = _mm256_i32gather_epi32((const int *)(const void *)tab, idx, 2);
    return _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
}

HSDR_FLNS_TARGET static inline vfl vleaf(const flns_tab *t, __m256i a, int p, int F, int b)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i n = _mm256_abs_epi32(a); /* |a| <= 2^22: exact in fp32, so the exponent gives bitlen */
    __m256i ex = _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(n)), 23);
    __m256i bl = _mm256_max_epi32(_mm256_sub_epi32(ex, _mm256_set1_epi32(126)), zero);
    __m256i z = _mm256_max_epi32(_mm256_sub_epi32(bl, _mm256_set1_epi32(b)), zero);
    __m256i half = _mm256_srli_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), z), 1);
    __m256i c = _mm256_srlv_epi32(_mm256_add_epi32(n, half), z);
    __m256i ovf = _mm256_srl_epi32(c, _mm_cvtsi32_si128(b));
    c = _mm256_srlv_epi32(c, ovf);
    z = _mm256_add_epi32(z, ovf);
    __m256i lc = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)t->lc, c, 2),
                                  _mm256_set1_epi32(0xffff));
    __m256i lam = _mm256_add_epi32(
        _mm256_sll_epi32(_mm256_add_epi32(_mm256_set1_epi32(p), _mm256_slli_epi32(z, 3)), _mm_cvtsi32_si128(F)), lc);
    __m256i isz = _mm256_cmpeq_epi32(a, zero);
    return (vfl){_mm256_andnot_si256(isz, lam), _mm256_sign_epi32(_mm256_set1_epi32(1), a)};
}

HSDR_FLNS_TARGET static inline vfl vcombine(const flns_tab *t, vfl x, vfl y)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i swap = _mm256_cmpgt_epi32(y.lam, x.lam);
    __m256i hl = _mm256_blendv_epi8(x.lam, y.lam, swap), ll = _mm256_blendv_epi8(y.lam, x.lam, swap);
    __m256i hs = _mm256_blendv_epi8(x.sg, y.sg, swap), ls = _mm256_blendv_epi8(y.sg, x.sg, swap);
    __m256i d = _mm256_sub_epi32(hl, ll);
    __m256i kp = gather16s(t->kplus, _mm256_min_epu32(d, _mm256_set1_epi32(t->kplus_len)));
    __m256i km = gather16s(t->kminus, _mm256_min_epu32(d, _mm256_set1_epi32(t->kminus_len)));
    __m256i same = _mm256_cmpeq_epi32(hs, ls);
    __m256i lam = _mm256_add_epi32(hl, _mm256_blendv_epi8(km, kp, same));
    __m256i absent = _mm256_andnot_si256(same, _mm256_cmpeq_epi32(d, zero));
    vfl r = {_mm256_andnot_si256(absent, lam), _mm256_andnot_si256(absent, hs)};
    __m256i xa = _mm256_cmpeq_epi32(x.sg, zero), ya = _mm256_cmpeq_epi32(y.sg, zero);
    r.lam = _mm256_blendv_epi8(_mm256_blendv_epi8(r.lam, y.lam, xa), x.lam, ya);
    r.sg = _mm256_blendv_epi8(_mm256_blendv_epi8(r.sg, y.sg, xa), x.sg, ya);
    return r;
}

/* root of the 8 rows at positions 8 h .. 8 h + 7 */
HSDR_FLNS_TARGET static inline vfl vtree(const flns_tab *t, const __m256i A[16], int h, int F, int b)
{
    vfl l[8];
    for (int p = 0; p < 8; p++)
        l[p] = vleaf(t, A[2 * p + h], p, F, b);
    vfl m0 = vcombine(t, l[0], l[1]), m1 = vcombine(t, l[2], l[3]);
    vfl m2 = vcombine(t, l[4], l[5]), m3 = vcombine(t, l[6], l[7]);
    return vcombine(t, vcombine(t, m0, m1), vcombine(t, m2, m3));
}

/* sign 2^(lambda / 2^(F+3)) (times d 2^(e - 74/8), applied by the caller) for 4 rows (lanes 4 k .. 4 k + 3) */
HSDR_FLNS_TARGET static inline __m256d vvalue4(const flns_tab *t, vfl r, int F, int k)
{
    __m128i lam = k ? _mm256_extracti128_si256(r.lam, 1) : _mm256_castsi256_si128(r.lam);
    __m128i sg = k ? _mm256_extracti128_si256(r.sg, 1) : _mm256_castsi256_si128(r.sg);
    __m128i m = _mm_sra_epi32(lam, _mm_cvtsi32_si128(F + 3));
    __m128i fr = _mm_and_si128(lam, _mm_set1_epi32((8 << F) - 1));
    __m256d pf = _mm256_i32gather_pd(t->pow_frac, fr, 8);
    __m256d p2 = _mm256_castsi256_pd(
        _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(m), _mm256_set1_epi64x(1023)), 52));
    return _mm256_mul_pd(_mm256_mul_pd(pf, p2), _mm256_cvtepi32_pd(sg)); /* sign 0 (absent) gives 0 */
}

#endif
