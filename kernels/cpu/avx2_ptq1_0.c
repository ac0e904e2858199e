/* cpu.avx2: our own PTQ1_0 x Q8_0 kernel on AVX2, bit-identical to production (spec/ptq1_0.md sections 4 and 7),
 * reading PTQ1_0 as stored (no conversion).
 *   Idea 1, digits by multiplication in 16-bit lanes: a weight byte b placed in the HIGH byte of a 16-bit lane
 *   (x = b << 8, one pshufb from a broadcast load) gives digit n as mulhi_epu16(mullo_epi16(x, 3^n), 3): the mullo
 *   keeps (b 3^n mod 256) << 8 and the mulhi is (3 v) >> 8. No state chain and no masks; every digit vector of a
 *   block is independent (ILP). The pshufb controls put the 128 weights of a block into eight 16-lane vectors,
 *   vector j holding weights 16 j .. 16 j + 15 (spec section 1 read by lane); the two vectors of a sub-block are
 *   packed to 32 bytes (packus) and go into maddubs(t, q) against the activations of that sub-block stored in the
 *   packed order. (t - 1) q = t q - q: the exact sum of q per Q8_0 block is precomputed once per matvec and
 *   subtracted once per sub-block, for eight rows at a time.
 *   Idea 2, eight rows at a time: the fused fp32 sequence is a serial chain per row (sumi over four sub-blocks, sumf
 *   over blocks), so it runs vectorized ACROSS rows: lane l of the sumi/sumf vectors is one row, and every row keeps
 *   its own order, with _mm256_fmadd_ps at exactly the two places of section 7. The integer side reduces each row's
 *   four maddubs vectors with an int16 unpack/add tree (exact: |partial| <= 4064), widens two rows at a time to
 *   [sb0..sb3 | sb0..sb3] int32 and transposes eight rows into four vectors of isum_k. Row-range tails reuse the
 *   same code with the last row repeated (only real rows are stored), so every row takes the same path whatever the
 *   split.
 *   Per block and row (objdump of the inner loop): 2 loads, 3 pshufb, 7 mullo + 8 mulhi, 4 packus + 4 maddubs,
 *   10.5 unpack/add, ~2 widen/add, ~3 address/loop, plus ~5.6 for the transpose and the fp32 part per row (45 per 8 rows):
 *   callgrind counts 0.353 instructions per weight (production: 1.22).
 *   Layout: PTQ1_0 rows as stored. Activations: the production Q8_0 blocks (shared quantizer) permuted to the packed
 *   digit order, the per-block sums of q, and the fp32 scales.
 *   Stages: encode (quantize + permute + sums), decode (digits), reduce (pack, maddubs, hadd tree, transpose,
 *   - sum q), scale (sumi), merge (weight scales and sumf). */
#include "avx2_ptq1_0.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/fp16.h"
#include "../../reference/ptq1_0.h"
#include "../../reference/q8.h"
#include "production_ssse3.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Activations: [int8 q: K, each 32-block in the order the packed digits take: 0..7, 16..23, 8..15, 24..31]
 * [int32 sum of q per Q8_0 block: K/32][fp32 d: K/32][Q8_0 blocks: K/32] */
typedef struct {
    int8_t *q;
    int32_t *qsum;
    float *d;
    hsdr_block_q8_0 *blocks;
} act_t;

static act_t act_of(const hsdr_exec *e)
{
    char *p = e->act;
    size_t nb = (size_t)e->K / 32;
    act_t a;
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
    act_t a = act_of(e);
    hsdr_cpu_q8_0_quantize(e->x, e->K, a.blocks, a.d);
    for (int b = 0; b < e->K / 32; b++) {
        int32_t s = 0;
        for (int j = 0; j < 32; j++) {
            static const uint8_t at[4] = {0, 16, 8, 24}; /* where each run of 8 goes */
            a.q[32 * b + at[j >> 3] + (j & 7)] = a.blocks[b].qs[j];
            s += a.blocks[b].qs[j];
        }
        a.qsum[b] = s;
    }
}

void hsdr_cpu_avx2_prologue(const hsdr_exec *e)
{
    if (!(e->skip & HSDR_STAGE_BIT(HSDR_STAGE_ENCODE)))
        encode_stage(e);
    if (e->twice & HSDR_STAGE_BIT(HSDR_STAGE_ENCODE))
        encode_stage(e);
}

#if defined(__x86_64__)
#include <immintrin.h>
#define TARGET __attribute__((target("avx2,fma,f16c")))

const char *hsdr_cpu_avx2_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c"))
        return "needs AVX2, FMA and F16C";
    return NULL;
}

/* Lane l of the 8-row vectors holds row LANE_ROW[l] of the group (the order the transpose leaves them in). */
static const int LANE_ROW[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/* The multipliers 3^n of the digit extraction, made opaque once per call: GCC otherwise strength-reduces mullo by
 * 9, 27 or 81 into shift/add sequences (2-4 instructions each instead of one multiply). */
typedef struct {
    __m256i m3, m9, m27, m81, m5, m6, m7;
} pow3;

TARGET static inline __m256i opaque(__m256i v)
{
    __asm__("" : "+x"(v));
    return v;
}

TARGET static inline pow3 pow3_make(void)
{
    return (pow3){opaque(_mm256_set1_epi16(3)), opaque(_mm256_set1_epi16(9)), opaque(_mm256_set1_epi16(27)),
                  opaque(_mm256_set1_epi16(81)),
                  opaque(_mm256_setr_epi16(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3)),
                  opaque(_mm256_setr_epi16(9, 9, 9, 9, 9, 9, 9, 9, 27, 27, 27, 27, 27, 27, 27, 27)),
                  opaque(_mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27))};
}

/* The eight 16-lane digit vectors of a block: D[j] = digits t (0..2) of weights 16 j .. 16 j + 15, as uint16. */
TARGET static inline void decode_block(const uint8_t *blk, __m256i D[8], const pow3 *c)
{
    /* bytes 0..15 (qs[0..15]) and bytes 12..27 (qs[12..23], qh[0..1], d) in both 128-bit halves */
    const __m256i a = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)blk));
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(blk + 12)));
    const char Z = (char)0x80; /* pshufb: zero */
    /* s0: qs[0..15] << 8 (low half bytes 0..7, high half bytes 8..15) */
    const __m256i s0 = _mm256_shuffle_epi8(a, _mm256_setr_epi8(Z, 0, Z, 1, Z, 2, Z, 3, Z, 4, Z, 5, Z, 6, Z, 7, Z, 8, Z,
                                                               9, Z, 10, Z, 11, Z, 12, Z, 13, Z, 14, Z, 15));
    /* s1: qs[16..23] << 8 in both halves (offsets 4..11 of the second load) */
    const __m256i s1 = _mm256_shuffle_epi8(b, _mm256_setr_epi8(Z, 4, Z, 5, Z, 6, Z, 7, Z, 8, Z, 9, Z, 10, Z, 11, Z, 4,
                                                               Z, 5, Z, 6, Z, 7, Z, 8, Z, 9, Z, 10, Z, 11));
    /* s2: qs[16..23] << 8, then qh0, qh1 alternating four times (offsets 12, 13) */
    const __m256i s2 = _mm256_shuffle_epi8(b, _mm256_setr_epi8(Z, 4, Z, 5, Z, 6, Z, 7, Z, 8, Z, 9, Z, 10, Z, 11, Z,
                                                               12, Z, 13, Z, 12, Z, 13, Z, 12, Z, 13, Z, 12, Z, 13));
    const __m256i three = _mm256_set1_epi16(3);
    /* digit n of byte m of qs[0..15] is weight 16 n + m */
    D[0] = _mm256_mulhi_epu16(s0, three);
#ifdef HSDR_AVX2_ADDCHAIN
    const __m256i x1 = _mm256_add_epi16(_mm256_add_epi16(s0, s0), s0);
    const __m256i x2 = _mm256_add_epi16(_mm256_add_epi16(x1, x1), x1);
    const __m256i x3 = _mm256_add_epi16(_mm256_add_epi16(x2, x2), x2);
    const __m256i x4 = _mm256_add_epi16(_mm256_add_epi16(x3, x3), x3);
    D[1] = _mm256_mulhi_epu16(x1, three);
    D[2] = _mm256_mulhi_epu16(x2, three);
    D[3] = _mm256_mulhi_epu16(x3, three);
    D[4] = _mm256_mulhi_epu16(x4, three);
#else
    D[1] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s0, c->m3), three);
    D[2] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s0, c->m9), three);
    D[3] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s0, c->m27), three);
    D[4] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s0, c->m81), three);
#endif
    /* digit n of qs[16 + m] is weight 80 + 8 n + m: digits 0,1 -> 80..95, 2,3 -> 96..111, 4 -> 112..119 */
    D[5] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s1, c->m5), three);
    D[6] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s1, c->m6), three);
    /* ... and digit n of qh[h] is weight 120 + 2 n + h */
    D[7] = _mm256_mulhi_epu16(_mm256_mullo_epi16(s2, c->m7), three);
}

/* sum t q of the block's sub-blocks as int16 partial sums, per 128-bit half: [sb0 sb1 sb2 sb3 sb0 sb1 sb2 sb3].
 * Digits of sub-block k (D[2k], D[2k+1]) are packed to bytes and multiplied with maddubs against the activations
 * of that sub-block in the packed order (|pair| <= 2 * 2 * 127, |partial| <= 2032: no saturation, no wrap). The
 * reduction uses unpack + add (one fast uop each) instead of hadd (3 uops; measured 4x slower here). */
TARGET static inline __m256i reduce_block(const __m256i D[8], const int8_t *q)
{
    __m256i m[4];
    for (int k = 0; k < 4; k++)
        m[k] = _mm256_maddubs_epi16(_mm256_packus_epi16(D[2 * k], D[2 * k + 1]),
                                    _mm256_loadu_si256((const __m256i *)(q + 32 * k)));
    /* [sb0 sb1 sb0 sb1 ...] and [sb2 sb3 sb2 sb3 ...] */
    const __m256i a = _mm256_add_epi16(_mm256_unpacklo_epi16(m[0], m[1]), _mm256_unpackhi_epi16(m[0], m[1]));
    const __m256i b = _mm256_add_epi16(_mm256_unpacklo_epi16(m[2], m[3]), _mm256_unpackhi_epi16(m[2], m[3]));
    return _mm256_add_epi16(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
}

/* Rows a and b: [sb0..sb3 of a | sb0..sb3 of b] as int32 (all partial sums added) */
TARGET static inline __m256i pair_rows(__m256i ha, __m256i hb)
{
    /* per half: a sb0..3, b sb0..3 (|.| <= 4 * 2 * 508 = 4064) */
    const __m256i p = _mm256_add_epi16(_mm256_unpacklo_epi64(ha, hb), _mm256_unpackhi_epi64(ha, hb));
    return _mm256_add_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(p)),
                            _mm256_cvtepi16_epi32(_mm256_extracti128_si256(p, 1)));
}

/* Four row pairs (rows 0..7) -> F[k] = sum t q of sub-block k for the rows in LANE_ROW order, minus sum q. */
TARGET static inline void transpose_isum(const __m256i P[4], const int32_t *qsum, __m256i F[4])
{
    const __m256i t0 = _mm256_unpacklo_epi32(P[0], P[1]), t1 = _mm256_unpackhi_epi32(P[0], P[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(P[2], P[3]), t3 = _mm256_unpackhi_epi32(P[2], P[3]);
    F[0] = _mm256_sub_epi32(_mm256_unpacklo_epi64(t0, t2), _mm256_set1_epi32(qsum[0]));
    F[1] = _mm256_sub_epi32(_mm256_unpackhi_epi64(t0, t2), _mm256_set1_epi32(qsum[1]));
    F[2] = _mm256_sub_epi32(_mm256_unpacklo_epi64(t1, t3), _mm256_set1_epi32(qsum[2]));
    F[3] = _mm256_sub_epi32(_mm256_unpackhi_epi64(t1, t3), _mm256_set1_epi32(qsum[3]));
}

/* Section 7 step 3 for eight rows: sumi = fma(d8_k, isum_k, sumi), k = 0..3, from +0. */
TARGET static inline __m256 scale_rows(const __m256i F[4], const float *d8)
{
    __m256 sumi = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++)
        sumi = _mm256_fmadd_ps(_mm256_set1_ps(d8[k]), _mm256_cvtepi32_ps(F[k]), sumi);
    return sumi;
}

/* The fp16 weight scales of block g of the eight rows (bytes 24..27 gathered, d in the upper half), as fp32. */
TARGET static inline __m256 row_scales(const uint8_t *base, __m256i offsets)
{
    const __m256i v = _mm256_i32gather_epi32((const int *)base, offsets, 1);
    const char Z = (char)0x80;
    const __m256i h = _mm256_shuffle_epi8(v, _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z, 2, 3,
                                                              6, 7, 10, 11, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z));
    return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(h, 0x08)));
}

/* Rows r .. r + 7 (rows past r_end - 1 repeat row r_end - 1; only real rows are stored). */
TARGET static void eight_rows(const hsdr_exec *e, const act_t *a, int r, int r_end)
{
    const int G = e->K / HSDR_QK;
    const size_t stride = (size_t)G * HSDR_PTQ1_0_BYTES;
    const uint8_t *W = (const uint8_t *)e->weights + (size_t)r * stride;
    int off[8];
    for (int l = 0; l < 8; l++) {
        int row = r + LANE_ROW[l] < r_end ? LANE_ROW[l] : r_end - 1 - r;
        off[l] = row * (int)stride;
    }
    const uint8_t *row[8];
    for (int i = 0; i < 8; i++)
        row[i] = W + (size_t)(r + i < r_end ? i : r_end - 1 - r) * stride;
    const __m256i offsets = _mm256_loadu_si256((const __m256i *)off);
    const pow3 c = pow3_make();
    __m256 sumf = _mm256_setzero_ps();
    for (int g = 0; g < G; g++) {
        const size_t bo = (size_t)g * HSDR_PTQ1_0_BYTES;
        const int8_t *q = a->q + (size_t)g * HSDR_QK;
        __m256i P[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m256i D[8];
            decode_block(row[2 * i] + bo, D, &c);
            const __m256i h0 = reduce_block(D, q);
            decode_block(row[2 * i + 1] + bo, D, &c);
            P[i] = pair_rows(h0, reduce_block(D, q));
        }
        __m256i F[4];
        transpose_isum(P, a->qsum + 4 * g, F);
        const __m256 sumi = scale_rows(F, a->d + 4 * g);
        sumf = _mm256_fmadd_ps(row_scales(W + bo + 24, offsets), sumi, sumf); /* step 4 */
    }
    float out[8];
    _mm256_storeu_ps(out, sumf);
    for (int l = 0; l < 8; l++)
        if (r + LANE_ROW[l] < r_end)
            e->y[r + LANE_ROW[l]] = out[l];
}

void hsdr_cpu_avx2_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const act_t a = act_of(e);
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
    /* digits of one row (8 vectors per block), isums of eight rows (4 vectors per block), sumi (1 per block) */
    return sizeof(stage_head) + 32 * G * (8 + 4 + 1);
}

TARGET static void stage_alone(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    const int G = e->K / HSDR_QK;
    const size_t stride = (size_t)G * HSDR_PTQ1_0_BYTES;
    const act_t a = act_of(e);
    stage_head *h = scratch;
    __m256i *digits = (__m256i *)(h + 1);
    __m256i *isum = digits + 8 * G;
    __m256 *sumi = (__m256 *)(isum + 4 * G);
    const uint8_t *W = e->weights;
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            encode_stage(e);
        return;
    }
    if (r0 >= r1)
        return;
    const pow3 c = pow3_make();
    /* inputs of the later stages, produced once from rows r0.. (scratch starts zeroed: nothing ready) */
    const int need_digits = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    if (need_digits && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        for (int g = 0; g < G; g++)
            decode_block(W + (size_t)r0 * stride + (size_t)g * HSDR_PTQ1_0_BYTES, digits + 8 * g, &c);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++) {
            __m256i P[4];
            for (int i = 0; i < 4; i++) {
                const __m256i hr = reduce_block(digits + 8 * g, a.q + (size_t)g * HSDR_QK);
                P[i] = pair_rows(hr, hr);
            }
            transpose_isum(P, a.qsum + 4 * g, isum + 4 * g);
        }
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_rows(isum + 4 * g, a.d + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int r = r0; r < r1; r += 8) {
        const uint8_t *rw = W + (size_t)r * stride;
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m256i acc = _mm256_setzero_si256();
            for (int i = 0; i < 8 && r + i < r1; i++)
                for (int g = 0; g < G; g++) {
                    __m256i D[8];
                    decode_block(rw + (size_t)i * stride + (size_t)g * HSDR_PTQ1_0_BYTES, D, &c);
                    for (int j = 0; j < 8; j++)
                        acc = _mm256_xor_si256(acc, D[j]);
                }
            h->sink = _mm256_xor_si256(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++) {
                __m256i P[4];
                for (int i = 0; i < 4; i++) {
                    const __m256i h0 = reduce_block(digits + 8 * g, a.q + (size_t)g * HSDR_QK);
                    P[i] = pair_rows(h0, reduce_block(digits + 8 * g, a.q + (size_t)g * HSDR_QK));
                }
                transpose_isum(P, a.qsum + 4 * g, isum + 4 * g);
            }
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_rows(isum + 4 * g, a.d + 4 * g);
            break;
        case HSDR_STAGE_MERGE: {
            int off[8];
            for (int l = 0; l < 8; l++)
                off[l] = (r + LANE_ROW[l] < r1 ? LANE_ROW[l] : r1 - 1 - r) * (int)stride;
            const __m256i offsets = _mm256_loadu_si256((const __m256i *)off);
            __m256 sumf = _mm256_setzero_ps();
            for (int g = 0; g < G; g++)
                sumf = _mm256_fmadd_ps(row_scales(rw + (size_t)g * HSDR_PTQ1_0_BYTES + 24, offsets), sumi[g], sumf);
            float out[8];
            _mm256_storeu_ps(out, sumf);
            for (int l = 0; l < 8; l++)
                if (r + LANE_ROW[l] < r1)
                    e->y[r + LANE_ROW[l]] = out[l];
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

#else /* not x86-64 */

const char *hsdr_cpu_avx2_unavailable(void)
{
    return "x86-64 only (AVX2 + FMA + F16C)";
}
size_t hsdr_cpu_avx2_scratch_bytes(int K, int R)
{
    (void)R;
    return (size_t)K;
}
void hsdr_cpu_avx2_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)e, (void)r0, (void)r1, (void)scratch;
}
void hsdr_cpu_avx2_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    (void)e, (void)s, (void)r0, (void)r1, (void)scratch;
}
#endif

int hsdr_cpu_avx2_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    if (hsdr_cpu_avx2_unavailable()) {
        snprintf(err, errlen, "%s", hsdr_cpu_avx2_unavailable());
        return -1;
    }
    if (!io->x) {
        snprintf(err, errlen, "needs fp32 activations");
        return -1;
    }
    void *act = aligned_alloc(64, align64(hsdr_cpu_avx2_act_bytes(io->K)));
    if (!act) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hsdr_exec e = {.K = io->K, .N = io->N, .R = 1, .weights = io->weights, .x = io->x, .act = act, .y = io->y_f32};
    encode_stage(&e);
    hsdr_cpu_avx2_rows(&e, 0, io->N, NULL);
    free(act);
    return 0;
}
