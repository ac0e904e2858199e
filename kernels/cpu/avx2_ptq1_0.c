/* cpu.avx2: our own PTQ1_0 x Q8_0 kernel on AVX2, bit-identical to production (spec/ptq1_0.md sections 4 and 7),
 * reading PTQ1_0 as stored (no conversion).
 *   Idea     eight rows at a time with ROWS IN LANES: rows r..r+7 transposed so that dword lane l holds row l's
 *            bytes; compare-form digits on 32 bytes into maddubs against broadcast activations: the four sub-block
 *            sums come out with row = lane (no horizontal sums), the fp32 sequence runs vectorized across rows.
 *   Layout   weights: PTQ1_0 rows as stored. Activations: the production Q8_0 blocks (shared quantizer), q in natural
 *            order, the per-block sums of q, and the fp32 scales.
 *   Stages   encode (quantize + sums), decode (load, transpose, digits), reduce (maddubs, adds, madd, - sum q),
 *            scale (sumi), merge (weight scales and sumf).
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.avx2 *'
 *   Loads    two 16-byte loads per block and row (both inside the 28-byte block), transposed so that lane l of every
 *            vector holds four bytes of row l: qs[4j..4j+3] (j = 0..3), qs[16..19], qs[20..23], and qh[0..1] + d.
 *            Lane l keeps row l's own fp32 order (_mm256_fmadd_ps at exactly the two pinned places).
 *   Digits   the compare form on 32 bytes, kept XOR 0x80 so the signed compares work: t = |[s > 85'] + [s > 170']|;
 *            multiplying s by 3 mod 256 stays in the XORed domain (3 * 128 = 128 mod 256), so the next digit's state
 *            costs two adds and the XOR is paid once per source. Digit n of qs[4j + i] is weight 16 n + 4 j + i, of
 *            qs[16 + 4h + i] weight 80 + 8 n + 4 h + i; the qh bytes are laid out [qh0, qh1, 3 qh0, 3 qh1] so one
 *            compare gives weights 120 + 2 n .. 123 + 2 n. Each 32-digit vector covers four consecutive weights of
 *            eight rows, all in one sub-block: maddubs(t, broadcast q[w..w+3]) accumulates in int16 per sub-block
 *            (|.| <= 8 * 508 = 4064), one madd(., 1) per sub-block widens to int32 per row, and (t - 1) q = t q - q
 *            subtracts the exact sum of q per Q8_0 block (precomputed once per matvec).
 *   Cost     per block of eight rows: 16 loads + 8 inserts + 14 unpacks (transpose), 32 digit vectors x (2 cmp, add,
 *            abs) + 27 x 2 adds (states), 32 broadcasts + 32 maddubs + 28 adds, 4 madd + 4 sub, fp32: 4 cvt + 5 fma +
 *            4 for the scales: callgrind counts 0.38 instructions per weight, all but 4.5 per block on the 4 ALU pipes
 *            rather than the multiply pipes (production: 1.22 per weight). Row-range tails repeat the last row (only
 *            real rows are stored), so every row takes the same path whatever the thread split. */
#include "avx2_ptq1_0.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/fp16.h"
#include "../../reference/ptq1_0.h"
#include "../../reference/q8.h"
#include "production_ssse3.h"
#include "../stages.h"
#include "cpu_features.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Activations: [int8 q: K][int32 sum of q per Q8_0 block: K/32][fp32 d: K/32][Q8_0 blocks: K/32] */
hsdr_cpu_q8_act hsdr_cpu_q8_act_of(const hsdr_exec *e)
{
    char *p = e->act;
    size_t nb = (size_t)e->K / 32;
    hsdr_cpu_q8_act a;
    a.q = (int8_t *)p;
    p += align64((size_t)e->K);
    a.qsum = (int32_t *)p;
    p += align64(4 * nb);
    a.d = (float *)p;
    p += align64(4 * nb);
    a.blocks = (hsdr_block_q8_0 *)p;
    return a;
}

size_t hsdr_cpu_avx2_act_bytes(int K)
{
    size_t nb = (size_t)K / 32;
    return align64((size_t)K) + 2 * align64(4 * nb) + sizeof(hsdr_block_q8_0) * nb;
}

static void encode_stage(const hsdr_exec *e)
{
    hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    hsdr_cpu_q8_0_quantize(e->x, e->K, a.blocks, a.d);
    for (int b = 0; b < e->K / 32; b++)
        memcpy(a.q + 32 * b, a.blocks[b].qs, 32);
    hsdr_cpu_q8_0_sums(a.blocks, e->K / 32, a.qsum);
}

void hsdr_cpu_avx2_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, encode_stage(e));
}

#define TARGET __attribute__((target("avx2,fma,f16c")))

const char *hsdr_cpu_avx2_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !hsdr_cpu_has_f16c())
        return "needs AVX2, FMA and F16C";
    return NULL;
}

/* One 8-row group at block g, transposed: dword lane l of every vector is row l of the group. */
typedef struct {
    __m256i qs[4]; /* bytes 4j .. 4j + 3 of qs[0..15] */
    __m256i hi[2]; /* qs[16..19], qs[20..23] */
    __m256i tail;  /* qh[0], qh[1], d (fp16) */
} group8;

/* Rows' block pointers p[0..7] -> group8: two 16-byte loads per row (bytes 0..15 and 12..27, both inside the
 * block), rows l and l + 4 in the two halves of a ymm, then a 4x4 dword transpose per half. */
TARGET static inline group8 load_group(const uint8_t *const p[8])
{
    group8 G;
    __m256i y[4], z[4];
    for (int l = 0; l < 4; l++) {
        y[l] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p[l])),
                                       _mm_loadu_si128((const __m128i *)p[l + 4]), 1);
        z[l] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[l] + 12))),
                                       _mm_loadu_si128((const __m128i *)(p[l + 4] + 12)), 1);
    }
    const __m256i t0 = _mm256_unpacklo_epi32(y[0], y[1]), t1 = _mm256_unpackhi_epi32(y[0], y[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(y[2], y[3]), t3 = _mm256_unpackhi_epi32(y[2], y[3]);
    G.qs[0] = _mm256_unpacklo_epi64(t0, t2);
    G.qs[1] = _mm256_unpackhi_epi64(t0, t2);
    G.qs[2] = _mm256_unpacklo_epi64(t1, t3);
    G.qs[3] = _mm256_unpackhi_epi64(t1, t3);
    const __m256i u0 = _mm256_unpacklo_epi32(z[0], z[1]), u1 = _mm256_unpackhi_epi32(z[0], z[1]);
    const __m256i u2 = _mm256_unpacklo_epi32(z[2], z[3]), u3 = _mm256_unpackhi_epi32(z[2], z[3]);
    G.hi[0] = _mm256_unpackhi_epi64(u0, u2); /* bytes 16..19 */
    G.hi[1] = _mm256_unpacklo_epi64(u1, u3); /* bytes 20..23 */
    G.tail = _mm256_unpackhi_epi64(u1, u3);  /* bytes 24..27 */
    return G;
}

/* Compare-form digit of 32 bytes held as s = v ^ 0x80: t = [v >= 86] + [v >= 171] (0..2, as bytes). Multiplying
 * s by 3 mod 256 gives (3 v mod 256) ^ 0x80 (3 * 128 = 128 mod 256), so the XOR is paid once per source. */
typedef struct {
    __m256i k85, k170, flip;
} digit_consts;

/* The thresholds as opaque registers: knowing their values, GCC rewrites one compare as min + cmpeq (2 uops). */
TARGET static inline digit_consts digit_consts_make(void)
{
    digit_consts c = {_mm256_set1_epi8((char)(85 ^ 0x80)), _mm256_set1_epi8((char)(170 ^ 0x80)),
                      _mm256_set1_epi8((char)0x80)};
    __asm__("" : "+x"(c.k85), "+x"(c.k170), "+x"(c.flip));
    return c;
}

TARGET static inline __m256i digit(__m256i s, const digit_consts *c)
{
    return _mm256_abs_epi8(_mm256_add_epi8(_mm256_cmpgt_epi8(s, c->k85), _mm256_cmpgt_epi8(s, c->k170)));
}

TARGET static inline __m256i times3(__m256i s)
{
    return _mm256_add_epi8(_mm256_add_epi8(s, s), s);
}

/* acc += maddubs(t, the four activations at q[w..w+3], the same for every row) */
TARGET static inline __m256i dot4(__m256i acc, __m256i t, const int8_t *q, int w)
{
    int32_t v;
    memcpy(&v, q + w, 4);
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(t, _mm256_set1_epi32(v)));
}

/* The 32 digit vectors of one block of eight rows (D[8k .. 8k + 7]: sub-block k) and the activation offset of each
 * (W[i]: digit bytes 4l .. 4l + 3 of D[i] are weights W[i] .. W[i] + 3 of row l). */
static const int16_t W_OF[32] = {
    /* sb0: qs[0..15] digits 0, 1 */ 0, 4, 8, 12, 16, 20, 24, 28,
    /* sb1: digits 2, 3 */ 32, 36, 40, 44, 48, 52, 56, 60,
    /* sb2: qs[0..15] digit 4, qs[16..23] digits 0, 1 */ 64, 68, 72, 76, 80, 84, 88, 92,
    /* sb3: qs[16..23] digits 2, 3, 4, qh */ 96, 100, 104, 108, 112, 116, 120, 124};

/* Every digit vector i of one block of eight rows, in sub-block order: stored to D[i] (the decode stage alone), or
 * (D == NULL) multiplied at once into acc[i / 8] with maddubs, so the 32 vectors are never spilled. Inlined with a
 * constant D, the branch disappears. */
TARGET static inline void walk_group(const group8 *G, const digit_consts *c, __m256i *D, __m256i acc[4],
                                     const int8_t *q)
{
#define EMIT(i, t)                                                                                                   \
    do {                                                                                                             \
        if (D) {                                                                                                     \
            D[i] = (t);                                                                                              \
        } else {                                                                                                     \
            acc[(i) / 8] = dot4(acc[(i) / 8], (t), q, W_OF[i]);                                                      \
            SEQ(acc[(i) / 8], s);                                                                                    \
        }                                                                                                            \
    } while (0)
    /* Keep the walk in source order: left free, GCC computes the digit vectors far ahead of their maddubs and
     * spills ~28 of them per block (the core reorders by itself anyway). */
#define SEQ(a, b) __asm__ volatile("" : "+x"(a), "+x"(b))
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) { /* digit n of qs[4j + i] is weight 16 n + 4 j + i: sub-blocks 0, 0, 1, 1, 2 */
        __m256i s = _mm256_xor_si256(G->qs[j], c->flip);
#pragma GCC unroll 5
        for (int n = 0; n < 5; n++) {
            EMIT(4 * n + j, digit(s, c));
            s = times3(s);
        }
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) { /* digit n of qs[16 + 4h + i] is weight 80 + 8 n + 4 h + i: 2, 2, 3, 3, 3 */
        __m256i s = _mm256_xor_si256(G->hi[h], c->flip);
#pragma GCC unroll 5
        for (int n = 0; n < 5; n++) {
            EMIT(20 + 2 * n + h, digit(s, c));
            s = times3(s);
        }
    }
    /* qh: bytes [qh0, qh1, 3 qh0, 3 qh1] per row give digits (n, n, n + 1, n + 1): weights 120 + 2n .. 123 + 2n */
    const __m256i u = _mm256_shuffle_epi8(G->tail, _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13,
                                                                    0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12,
                                                                    13));
    __m256i s = _mm256_xor_si256(_mm256_blend_epi16(u, times3(u), 0xAA), c->flip);
    EMIT(30, digit(s, c));
    s = times3(times3(s));
    EMIT(31, digit(s, c));
#undef EMIT
#undef SEQ
}

TARGET static inline void decode_group(const group8 *G, __m256i D[32], const digit_consts *c)
{
    walk_group(G, c, D, NULL, NULL);
}

/* Sub-block sums of eight rows: F[k] lane l = sum t q of sub-block k of row l, minus the sum of q. */
TARGET static inline void reduce_group(const __m256i D[32], const int8_t *q, const int32_t *qsum, __m256i F[4])
{
    const __m256i ones = _mm256_set1_epi16(1);
    for (int k = 0; k < 4; k++) {
        __m256i acc = _mm256_setzero_si256(); /* |lane| <= 8 * 2 * 2 * 127 = 4064 */
        for (int i = 0; i < 8; i++)
            acc = dot4(acc, D[8 * k + i], q, W_OF[8 * k + i]);
        F[k] = _mm256_sub_epi32(_mm256_madd_epi16(acc, ones), _mm256_set1_epi32(qsum[k]));
    }
}

/* decode + reduce fused (the rows path): the same walk and the same reduction, so the same exact integers. */
TARGET static inline void block_sums(const group8 *G, const int8_t *q, const int32_t *qsum, __m256i F[4],
                                     const digit_consts *c)
{
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
    walk_group(G, c, NULL, acc, q);
    const __m256i ones = _mm256_set1_epi16(1);
    for (int k = 0; k < 4; k++)
        F[k] = _mm256_sub_epi32(_mm256_madd_epi16(acc[k], ones), _mm256_set1_epi32(qsum[k]));
}

/* Section 7 step 3 for eight rows: sumi = fma(d8_k, isum_k, sumi), k = 0..3, from +0. */
TARGET static inline __m256 scale_rows(const __m256i F[4], const float *d8)
{
    __m256 sumi = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++)
        sumi = _mm256_fmadd_ps(_mm256_set1_ps(d8[k]), _mm256_cvtepi32_ps(F[k]), sumi);
    return sumi;
}

/* The fp16 weight scales of the eight rows (bytes 2, 3 of each dword of the tail vector), as fp32. */
TARGET static inline __m256 row_scales(__m256i tail)
{
    const char Z = (char)0x80;
    const __m256i h = _mm256_shuffle_epi8(tail, _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z, 2,
                                                                 3, 6, 7, 10, 11, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z));
    return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(h, 0x08)));
}

/* Block pointers of rows r .. r + 7 at block 0 (rows past r_end - 1 repeat row r_end - 1). */
static void group_rows(const hsdr_exec *e, int r, int r_end, const uint8_t *p[8])
{
    const size_t stride = (size_t)(e->K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
    for (int l = 0; l < 8; l++)
        p[l] = (const uint8_t *)e->weights + (size_t)(r + l < r_end ? r + l : r_end - 1) * stride;
}

TARGET static void store_rows(const hsdr_exec *e, int r, int r_end, __m256 sumf)
{
    float out[8];
    _mm256_storeu_ps(out, sumf);
    for (int l = 0; l < 8 && r + l < r_end; l++)
        e->y[r + l] = out[l];
}

/* Rows r .. r + 7 (only real rows are stored). */
TARGET static void eight_rows(const hsdr_exec *e, const hsdr_cpu_q8_act *a, int r, int r_end)
{
    const int G = e->K / HSDR_QK;
    const uint8_t *p[8];
    group_rows(e, r, r_end, p);
    const digit_consts dc = digit_consts_make();
    /* The next group's rows are one contiguous range: prefetch it, spread over this group's blocks. Without it the
     * eight row streams, each advancing 28 bytes per ~400-instruction iteration, leave the out-of-order window with
     * almost no memory-level parallelism: 12-18 Gweights/s from DRAM against 26-30 in cache (docs/perf-notes.md).
     * Prefetching into L2 or L3 instead, or each row stream's own lines ahead, measured no better. */
    const size_t stride = (size_t)G * HSDR_PTQ1_0_BYTES;
    const char *next = (const char *)e->weights + (size_t)(r + 8) * stride;
    const size_t next_bytes = r + 8 < r_end ? (size_t)(r_end - r - 8 < 8 ? r_end - r - 8 : 8) * stride : 0;
    const size_t per_block = (next_bytes / (size_t)G + 63) & ~(size_t)63;
    size_t pf = 0;
    __m256 sumf = _mm256_setzero_ps();
    for (int g = 0; g < G; g++) {
        for (size_t end = pf + per_block; pf < end && pf < next_bytes; pf += 64)
            _mm_prefetch(next + pf, _MM_HINT_T0);
        const group8 grp = load_group(p);
        for (int l = 0; l < 8; l++)
            p[l] += HSDR_PTQ1_0_BYTES;
        __m256i F[4];
        block_sums(&grp, a->q + (size_t)g * HSDR_QK, a->qsum + 4 * g, F, &dc);
        sumf = _mm256_fmadd_ps(row_scales(grp.tail), scale_rows(F, a->d + 4 * g), sumf); /* step 4 */
    }
    store_rows(e, r, r_end, sumf);
}

void hsdr_cpu_avx2_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    for (int r = r0; r < r1; r += 8)
        eight_rows(e, &a, r, r1);
}

/* ---- stages alone: each reads what the previous stage of the fused kernel would hand it, kept in scratch ---- */

typedef struct {
    unsigned ready; /* HSDR_STAGE_BIT of the stages whose outputs below are valid */
    int pad[7];
    __m256i sink; /* keeps decode-alone work observable */
} stage_head;

size_t hsdr_cpu_avx2_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    /* for one 8-row group: digits (32 vectors per block), isums (4 per block), sumi (1 per block) */
    return sizeof(stage_head) + 32 * G * (32 + 4 + 1);
}

TARGET static void stage_alone(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    stage_head *h = scratch;
    __m256i *digits = (__m256i *)(h + 1);
    __m256i *isum = digits + 32 * G;
    __m256 *sumi = (__m256 *)(isum + 4 * G);
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            encode_stage(e);
        return;
    }
    if (r0 >= r1)
        return;
    /* inputs of the later stages, produced once from rows r0.. (scratch starts zeroed: nothing ready) */
    const int need_digits = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    const uint8_t *p[8];
    const digit_consts dc = digit_consts_make();
    if (need_digits && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        group_rows(e, r0, r1, p);
        for (int g = 0; g < G; g++) {
            const group8 grp = load_group(p);
            for (int l = 0; l < 8; l++)
                p[l] += HSDR_PTQ1_0_BYTES;
            decode_group(&grp, digits + 32 * g, &dc);
        }
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++)
            reduce_group(digits + 32 * g, a.q + (size_t)g * HSDR_QK, a.qsum + 4 * g, isum + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_rows(isum + 4 * g, a.d + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int r = r0; r < r1; r += 8) {
        group_rows(e, r, r1, p);
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m256i acc = _mm256_setzero_si256();
            for (int g = 0; g < G; g++) {
                const group8 grp = load_group(p);
                for (int l = 0; l < 8; l++)
                    p[l] += HSDR_PTQ1_0_BYTES;
                __m256i D[32];
                decode_group(&grp, D, &dc);
                for (int j = 0; j < 32; j++)
                    acc = _mm256_xor_si256(acc, D[j]);
            }
            h->sink = _mm256_xor_si256(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                reduce_group(digits + 32 * g, a.q + (size_t)g * HSDR_QK, a.qsum + 4 * g, isum + 4 * g);
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_rows(isum + 4 * g, a.d + 4 * g);
            break;
        case HSDR_STAGE_MERGE: {
            __m256 sumf = _mm256_setzero_ps();
            for (int g = 0; g < G; g++) {
                const group8 grp = load_group(p);
                for (int l = 0; l < 8; l++)
                    p[l] += HSDR_PTQ1_0_BYTES;
                sumf = _mm256_fmadd_ps(row_scales(grp.tail), sumi[g], sumf);
            }
            store_rows(e, r, r1, sumf);
            break;
        }
        default:
            return;
        }
    }
}

void hsdr_cpu_avx2_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch);
}
