/* cpu.planar2: PTQ1_0 x Q8_0 on a predecoded 2-bit planar form, bit-identical to the production fused sequence
 * (spec/ptq1_0.md sections 4 and 7).
 *   Idea     the digits t in {0, 1, 2}, converted once and interleaved across 8 rows, come out of one shift + and per
 *            sub-block and go straight into maddubs(t, q); (t - 1).q = t.q - sum q with the exact sum of q per Q8_0
 *            block; the sums come out lane = row, and the fused fp32 sequence runs vectorized across the 8 rows.
 *   Layout   weights (prepare = the convert stage; rows padded to a multiple of 8 with zero rows): per group of 8 rows,
 *            per 128-weight block, 256 bytes of codes = 8 vectors u (0..7) of 32 bytes; byte 4r + i of vector u
 *            belongs to row r of the group and holds the digits of weights 4u + i + 32j of that block in bit pairs 2j
 *            (j = 0..3); after all codes of the group, the 8 fp16 scales of each block (16 bytes per block). 2.125
 *            bits per weight. Activations: Q8_0 of the shared production quantizer, q copied contiguous (one dword
 *            broadcast per maddubs), per Q8_0 block the exact sum of q (x4 for odd sub-blocks) and d8 as fp32 (/4 for
 *            odd sub-blocks).
 *   Stages   convert (prepare), encode (quantize + sums), decode (shift/and), reduce (maddubs/add/madd), scale
 *            (subtract sum q, cvt, sumi chain), merge (sumf chain).
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.planar2 *'
 *   Digits   t0 = v & 3, 4 t1 = v & 12, t2 = (v >> 4) & 3, 4 t3 = (v >> 4) & 12 (one shift, four ands); sub-blocks 1
 *            and 3 are summed four times too large, which is exact in int16/int32, and are paired with d8 / 4 and
 *            4 sum q (exact in fp32 and int32), so fma(d8 / 4, 4 isum, .) is the very same fma as fma(d8, isum, .).
 *            Each row's 32 code bytes are "byte b holds lanes b, b+32, b+64, b+96 in bit pairs 0,2,4,6", interleaved
 *            dword by dword across the 8 rows, so one shift + and extracts sub-block j for all 8 rows.
 *   Cost     per 8 rows x 128 weights: 8 code loads, 8 shifts, 32 ands, 32 q broadcasts, 32 maddubs, 28 int16 adds,
 *            4 madd, 4 subs, 4 cvt, 4 + 1 fma, 1 cvtph, 4 prefetches: 0.176 instructions per weight (callgrind). The
 *            running int16 sums are pinned to registers (an empty asm) so the compiler does not reassociate them
 *            into a tree that spills. Memory: one sequential stream per group of 8 rows (plus its small scale
 *            stream); codes are software-prefetched 8 blocks (2 KB) ahead, which the cold runs need to approach the
 *            DRAM read ceiling. */
#include "planar2_avx2.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/fp16.h"
#include "../../reference/ptq1_0.h"
#include "../../reference/q8.h"
#include "avx2_ptq1_0.h"
#include "production_ssse3.h"
#include "../stages.h"

#define ROWS 8                    /* rows per interleaved group */
#define GROUP_BLOCK_CODES 256     /* code bytes per (group, block) */
#define PF_BLOCKS 8               /* software prefetch distance in (group, block) units: 2 KB ahead */

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Prepared weights: [codes: N8 x G x 256][scales: N8 x G x 8 fp16] */
static size_t codes_bytes(int K, int N)
{
    return (size_t)((N + ROWS - 1) / ROWS) * (size_t)(K / HSDR_QK) * GROUP_BLOCK_CODES;
}

static size_t prepared_bytes(int K, int N)
{
    return codes_bytes(K, N) + (size_t)((N + ROWS - 1) / ROWS) * (size_t)(K / HSDR_QK) * ROWS * sizeof(uint16_t);
}

/* Digits of one PTQ1_0 block in natural order (0..2), integer decode form; loc_b/loc_n: where weight e lives. */
static void block_digits(const uint8_t *blk, const uint8_t *loc_b, const uint8_t *loc_n, uint8_t t[HSDR_QK])
{
    uint8_t dig[26][5];
    for (int b = 0; b < 26; b++) {
        unsigned v = blk[b];
        for (int n = 0; n < 5; n++) {
            unsigned w = 3 * v;
            dig[b][n] = (uint8_t)(w >> 8);
            v = w & 255;
        }
    }
    for (int e = 0; e < HSDR_QK; e++)
        t[e] = dig[loc_b[e]][loc_n[e]];
}

int hsdr_cpu_planar2_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                             size_t errlen)
{
    const int G = K / HSDR_QK;
    const size_t n = prepared_bytes(K, N);
    uint8_t *p = aligned_alloc(64, align64(n));
    if (!p) {
        snprintf(err, errlen, "out of memory (%zu bytes)", n);
        return -1;
    }
    memset(p, 0, align64(n));
    uint8_t loc_b[HSDR_QK], loc_n[HSDR_QK];
    for (int e = 0; e < HSDR_QK; e++) {
        int b, d;
        hsdr_ptq1_0_locate(e, &b, &d);
        loc_b[e] = (uint8_t)b;
        loc_n[e] = (uint8_t)d;
    }
    uint16_t *scales = (uint16_t *)(p + codes_bytes(K, N));
    for (int r = 0; r < N; r++) {
        const int rg = r / ROWS, rr = r % ROWS;
        for (int g = 0; g < G; g++) {
            const uint8_t *blk = ptq1_0 + ((size_t)r * G + g) * HSDR_PTQ1_0_BYTES;
            uint8_t t[HSDR_QK];
            block_digits(blk, loc_b, loc_n, t);
            uint8_t *c = p + ((size_t)rg * G + g) * GROUP_BLOCK_CODES;
            for (int b = 0; b < 32; b++) {
                const int u = b / 4, i = b % 4;
                c[32 * u + 4 * rr + i] = (uint8_t)(t[b] | t[b + 32] << 2 | t[b + 64] << 4 | t[b + 96] << 6);
            }
            scales[((size_t)rg * G + g) * ROWS + rr] = hsdr_ptq1_0_d_bits(blk);
        }
    }
    *prepared = p;
    *bytes = n;
    return 0;
}

void hsdr_cpu_planar2_release(void *prepared)
{
    free(prepared);
}

hsdr_cpu_q2_act hsdr_cpu_q2_act_of(const hsdr_exec *e)
{
    const size_t nb = (size_t)e->K / 32;
    char *p = e->act;
    hsdr_cpu_q2_act a;
    a.q = (hsdr_block_q8_0 *)p;
    p += align64(sizeof(hsdr_block_q8_0) * nb);
    a.d = (float *)p;
    p += align64(sizeof(float) * nb);
    a.qs = (int8_t *)p;
    p += align64((size_t)e->K);
    a.dk = (float *)p;
    p += align64(sizeof(float) * nb);
    a.sq = (int32_t *)p;
    return a;
}

size_t hsdr_cpu_q2_act_bytes(int K)
{
    const size_t nb = (size_t)K / 32;
    return align64(sizeof(hsdr_block_q8_0) * nb) + 2 * align64(sizeof(float) * nb) + align64((size_t)K) +
           align64(sizeof(int32_t) * nb);
}

void hsdr_cpu_q2_encode(const hsdr_exec *e, unsigned times4, void (*order)(const hsdr_cpu_q2_act *a, int K))
{
    const hsdr_cpu_q2_act a = hsdr_cpu_q2_act_of(e);
    hsdr_cpu_q8_0_quantize(e->x, e->K, a.q, a.d);
    order(&a, e->K);
    hsdr_cpu_q8_0_sums(a.q, e->K / 32, a.sq);
    for (int b = 0; b < e->K / 32; b++) {
        if (times4 >> (b & 3) & 1) {
            a.sq[b] *= 4;
            a.dk[b] = a.d[b] * 0.25f; /* a power of two: exact (fp16 values are far from fp32 underflow) */
        } else {
            a.dk[b] = a.d[b];
        }
    }
}

/* q contiguous: one dword broadcast per maddubs */
static void order_contiguous(const hsdr_cpu_q2_act *a, int K)
{
    for (int b = 0; b < K / 32; b++)
        memcpy(a->qs + 32 * b, a->q[b].qs, 32);
}

static void encode_stage(const hsdr_exec *e)
{
    hsdr_cpu_q2_encode(e, 0xa /* sub-blocks 1 and 3 */, order_contiguous);
}

void hsdr_cpu_planar2_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, encode_stage(e));
}

#define TARGET __attribute__((target("avx2,fma,f16c")))

TARGET static inline __m256i bcast_q(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* decode: the four digit vectors of code vector v (sub-blocks 1 and 3 four times too large). */
TARGET static inline void digits4(__m256i v, __m256i t[4])
{
    const __m256i m3 = _mm256_set1_epi8(3), m12 = _mm256_set1_epi8(12);
    const __m256i v4 = _mm256_srli_epi16(v, 4);
    t[0] = _mm256_and_si256(v, m3);
    t[1] = _mm256_and_si256(v, m12);
    t[2] = _mm256_and_si256(v4, m3);
    t[3] = _mm256_and_si256(v4, m12);
}

/* decode + reduce of one (group, block), fused: I[k] = int32 t.q of sub-block k per row lane (x4 for odd k). */
TARGET static inline void block_sums(const uint8_t *P, const int8_t *qb, __m256i I[4])
{
    const __m256i ones16 = _mm256_set1_epi16(1);
    __m256i acc[4];
    for (int u = 0; u < 8; u++) {
        __m256i t[4];
        digits4(_mm256_loadu_si256((const __m256i *)(P + 32 * u)), t);
        for (int k = 0; k < 4; k++) {
            const __m256i m = _mm256_maddubs_epi16(t[k], bcast_q(qb + 32 * k + 4 * u));
            acc[k] = u ? _mm256_add_epi16(acc[k], m) : m;
            __asm__("" : "+x"(acc[k])); /* keep the running sums in registers (no reassociated tree with spills) */
        }
    }
    for (int k = 0; k < 4; k++)
        I[k] = _mm256_madd_epi16(acc[k], ones16);
}

/* reduce alone, on stored digits T[32] (T[4u + k]). */
TARGET static inline void reduce_digits(const __m256i *T, const int8_t *qb, __m256i I[4])
{
    const __m256i ones16 = _mm256_set1_epi16(1);
    __m256i acc[4];
    for (int u = 0; u < 8; u++)
        for (int k = 0; k < 4; k++) {
            const __m256i m = _mm256_maddubs_epi16(_mm256_loadu_si256(T + 4 * u + k), bcast_q(qb + 32 * k + 4 * u));
            acc[k] = u ? _mm256_add_epi16(acc[k], m) : m;
        }
    for (int k = 0; k < 4; k++)
        I[k] = _mm256_madd_epi16(acc[k], ones16);
}

/* scale: isum_k = I[k] - sum q (exact), sumi = fma(d8_k, isum_k, sumi) for k = 0..3 from +0 (per row lane). */
TARGET static inline __m256 scale_block(const __m256i I[4], const hsdr_cpu_q2_act *a, int g)
{
    __m256 sumi = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        const __m256i is = _mm256_sub_epi32(I[k], _mm256_set1_epi32(a->sq[4 * g + k]));
        sumi = _mm256_fmadd_ps(_mm256_set1_ps(a->dk[4 * g + k]), _mm256_cvtepi32_ps(is), sumi);
    }
    return sumi;
}

TARGET static inline __m256 block_scales(const uint16_t *s)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)s));
}

typedef struct {
    const uint8_t *codes;   /* group's codes: G x 256 bytes */
    const uint16_t *scales; /* group's scales: G x 8 */
    int pf_limit;           /* blocks g < pf_limit may prefetch block g + PF_BLOCKS (still inside the codes) */
} group_ptrs;

static group_ptrs group_of(const hsdr_exec *e, int rg)
{
    const int G = e->K / HSDR_QK;
    const uint8_t *w = e->weights;
    const long blocks = (long)((e->N + ROWS - 1) / ROWS) * G; /* (group, block) units in the buffer */
    const long limit = blocks - PF_BLOCKS - (long)rg * G;
    return (group_ptrs){w + (size_t)rg * G * GROUP_BLOCK_CODES,
                        (const uint16_t *)(w + codes_bytes(e->K, e->N)) + (size_t)rg * G * ROWS,
                        (int)(limit < 0 ? 0 : limit < G ? limit : G)};
}

/* Software prefetch of the codes PF_BLOCKS blocks (2 KB) ahead, running on into the next group (contiguous). */
static inline void prefetch_ahead(group_ptrs gp, int g)
{
    if (g < gp.pf_limit) {
        const char *pf = (const char *)(gp.codes + (size_t)(g + PF_BLOCKS) * GROUP_BLOCK_CODES);
        _mm_prefetch(pf, _MM_HINT_T0);
        _mm_prefetch(pf + 64, _MM_HINT_T0);
        _mm_prefetch(pf + 128, _MM_HINT_T0);
        _mm_prefetch(pf + 192, _MM_HINT_T0);
    }
}

/* y of the 8 rows of one group. */
TARGET static __m256 group_dot(group_ptrs gp, int G, const hsdr_cpu_q2_act *a)
{
    __m256 sumf = _mm256_setzero_ps();
    for (int g = 0; g < G; g++) {
        __m256i I[4];
        prefetch_ahead(gp, g);
        block_sums(gp.codes + (size_t)g * GROUP_BLOCK_CODES, a->qs + HSDR_QK * g, I);
        sumf = _mm256_fmadd_ps(block_scales(gp.scales + (size_t)ROWS * g), scale_block(I, a, g), sumf);
    }
    return sumf;
}

/* Store the lanes of y that fall in [r0, r1) (a full group in range: one vector store). */
TARGET static inline void store_group(const hsdr_exec *e, int rg, int r0, int r1, __m256 y)
{
    const int base = rg * ROWS;
    const int lo = base < r0 ? r0 : base, hi = base + ROWS < r1 ? base + ROWS : r1;
    if (lo == base && hi == base + ROWS) {
        _mm256_storeu_ps(e->y + base, y);
        return;
    }
    float t[ROWS];
    _mm256_storeu_ps(t, y);
    for (int r = lo; r < hi; r++)
        e->y[r] = t[r - base];
}

TARGET void hsdr_cpu_planar2_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q2_act a = hsdr_cpu_q2_act_of(e);
    for (int rg = r0 / ROWS; rg * ROWS < r1; rg++)
        store_group(e, rg, r0, r1, group_dot(group_of(e, rg), G, &a));
}

/* ---- stages alone: each reads what the previous stage of the fused kernel would hand it, kept in scratch ---- */

typedef struct {
    unsigned ready; /* HSDR_STAGE_BIT of the stages whose outputs below are valid */
    unsigned pad[7];
    __m256i sink; /* keeps decode-alone work observable */
} stage_head;

size_t hsdr_cpu_planar2_scratch_bytes(int K, int R)
{
    (void)R;
    const size_t G = (size_t)K / HSDR_QK;
    return sizeof(stage_head) + 32 * 32 * G + 4 * 32 * G + 32 * G; /* digits, isums, sumi of one group */
}

TARGET static void stage_alone(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q2_act a = hsdr_cpu_q2_act_of(e);
    stage_head *h = scratch;
    __m256i *digits = (__m256i *)(h + 1);
    __m256i *isum = digits + 32 * (size_t)G;
    __m256 *sumi = (__m256 *)(isum + 4 * (size_t)G);
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            encode_stage(e);
        return;
    }
    if (r0 >= r1)
        return;
    /* inputs of the later stages, produced once from the group of row r0 (scratch starts zeroed: nothing ready) */
    const int need_digits = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    if (need_digits && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        const group_ptrs gp = group_of(e, r0 / ROWS);
        for (int g = 0; g < G; g++)
            for (int u = 0; u < 8; u++)
                digits4(_mm256_loadu_si256((const __m256i *)(gp.codes + (size_t)g * GROUP_BLOCK_CODES + 32 * u)),
                        digits + 32 * (size_t)g + 4 * u);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++)
            reduce_digits(digits + 32 * (size_t)g, a.qs + HSDR_QK * g, isum + 4 * (size_t)g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_block(isum + 4 * (size_t)g, &a, g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int rg = r0 / ROWS; rg * ROWS < r1; rg++) {
        const group_ptrs gp = group_of(e, rg);
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m256i acc = _mm256_setzero_si256();
            for (int g = 0; g < G; g++) {
                prefetch_ahead(gp, g); /* the stage that streams the codes from memory, as in the fused kernel */
                for (int u = 0; u < 8; u++) {
                    __m256i t[4];
                    digits4(_mm256_loadu_si256((const __m256i *)(gp.codes + (size_t)g * GROUP_BLOCK_CODES + 32 * u)),
                            t);
                    acc = _mm256_xor_si256(acc, _mm256_xor_si256(_mm256_xor_si256(t[0], t[1]),
                                                                 _mm256_xor_si256(t[2], t[3])));
                }
            }
            h->sink = _mm256_xor_si256(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                reduce_digits(digits + 32 * (size_t)g, a.qs + HSDR_QK * g, isum + 4 * (size_t)g);
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_block(isum + 4 * (size_t)g, &a, g);
            break;
        case HSDR_STAGE_MERGE: {
            __m256 sumf = _mm256_setzero_ps();
            for (int g = 0; g < G; g++)
                sumf = _mm256_fmadd_ps(block_scales(gp.scales + (size_t)ROWS * g), sumi[g], sumf);
            store_group(e, rg, r0, r1, sumf);
            break;
        }
        default:
            return;
        }
    }
}

void hsdr_cpu_planar2_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch);
}
