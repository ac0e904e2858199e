/* cpu.pq2_0: PQ2_0 x Q8_0, the predecoded 2-bit comparison row at 2.125 bits per weight, bit-identical to the
 * production PTQ1_0 x Q8_0 fused sequence (spec/ptq1_0.md sections 2, 4 and 7).
 *   Idea     standard PQ2_0 blocks, converted once from PTQ1_0: one 32-byte load per block and row, and four and/shift
 *            masks give the codes, against activations permuted once to the code byte order so that the raw codes go
 *            straight into maddubs; 8 rows are then transposed into fp32 lanes for the fused sequence.
 *   Layout   weights (prepare = the convert stage): PQ2_0 blocks, row-major, 34 bytes per 128 weights: fp16 d first,
 *            then qs[32]; weight j is bits 2 (j % 4) of qs[j / 4]; code c means c - 1. Activations: Q8_0 of the
 *            shared production quantizer, q permuted (vector j, lane b = q[4b + j]), per Q8_0 block 4 sum q and
 *            d8 / 4 (every sub-block's digits are summed four times too large).
 *   Stages   convert (prepare), encode (quantize, permute, sums), decode (shift/and), reduce (maddubs/add/madd and
 *            the 8-row transpose), scale (subtract sum q, cvt, sumi chain), merge (sumf chain).
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.pq2_0 *'
 *   Sums     v & 3, v & 12, (v >> 4) & 3, (v >> 4) & 12 are the codes of weights 4b, 4b + 1 (x4), 4b + 2, 4b + 3 (x4)
 *            in byte lane b. Lane b belongs to sub-block b / 8, so summing the four maddubs products (the unscaled
 *            pair shifted left by 2, all exact in int16) and one madd leave per row 8 int32 lanes, sub-block k in
 *            lanes 2k, 2k + 1, every sum four times too large. Eight rows are then transposed (4 hadd, 4 shufps, 4
 *            permutes) into four vectors, one per sub-block, lane = row; 4 sum q of each Q8_0 block (exact, once per
 *            matvec) is subtracted, and the fused fp32 sequence runs vectorized across rows with d8 / 4 (exact):
 *            sumi = fma(d8_k / 4, 4 isum_k, sumi) = fma(d8_k, isum_k, sumi) for k = 0..3 from +0, then
 *            sumf = fma(d_w, sumi, sumf) over the blocks in order from +0. Row-range tails repeat the last row in
 *            unused lanes.
 *   Cost     per 8 rows x 128 weights: 8 x (1 load, 1 shift, 4 and, 4 maddubs, 3 add, 1 shift, 1 madd) + 12
 *            transpose ops + 4 sub, 4 cvt, 4 + 1 fma, 8 fp16 scale inserts + 1 cvtph, 4 activation loads, 5
 *            prefetches: 0.19 instructions per weight (callgrind). Memory: the 8 rows of a batch are 8 short
 *            interleaved streams (K/128 x 34 bytes each) that the hardware prefetcher hardly trains on, so the next
 *            batch (contiguous) is software-prefetched in address order while this one is computed. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/fp16.h"
#include "../../reference/ptq1_0.h"
#include "../../reference/q8.h"
#include "planar2_avx2.h"
#include "avx2_ptq1_0.h"
#include "production_ssse3.h"
#include "../stages.h"

#define ROWS 8 /* rows per batch (one fp32 lane each) */

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

int hsdr_cpu_pq2_0_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                           size_t errlen)
{
    const size_t nblocks = (size_t)N * (size_t)(K / HSDR_QK), n = nblocks * HSDR_PQ2_0_BYTES;
    uint8_t *p = aligned_alloc(64, align64(n));
    if (!p) {
        snprintf(err, errlen, "out of memory (%zu bytes)", n);
        return -1;
    }
    for (size_t i = 0; i < nblocks; i++)
        hsdr_ptq1_0_to_pq2_0(ptq1_0 + i * HSDR_PTQ1_0_BYTES, p + i * HSDR_PQ2_0_BYTES);
    memset(p + n, 0, align64(n) - n);
    *prepared = p;
    *bytes = n;
    return 0;
}

void hsdr_cpu_pq2_0_release(void *prepared)
{
    free(prepared);
}

/* q in code byte order: per 128-weight group 4 x 32 bytes, weight w at 32 (w % 4) + w / 4 */
static void order_codes(const hsdr_cpu_q2_act *a, int K)
{
    for (int g = 0; g < K / HSDR_QK; g++) {
        const hsdr_block_q8_0 *y = a->q + 4 * g;
        int8_t *qp = a->qs + HSDR_QK * g;
        for (int w = 0; w < HSDR_QK; w++)
            qp[32 * (w % 4) + w / 4] = y[w / 32].qs[w % 32];
    }
}

static void encode_stage(const hsdr_exec *e)
{
    hsdr_cpu_q2_encode(e, 0xf /* every sub-block */, order_codes);
}

void hsdr_cpu_pq2_0_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, encode_stage(e));
}

#define TARGET __attribute__((target("avx2,fma,f16c")))

/* decode: the four code vectors of one block's qs (weights 4b + j in lane b; j = 1, 3 four times too large). */
TARGET static inline void codes4(const uint8_t *blk, __m256i t[4])
{
    const __m256i m3 = _mm256_set1_epi8(3), m12 = _mm256_set1_epi8(12);
    const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 2));
    const __m256i v4 = _mm256_srli_epi16(v, 4);
    t[0] = _mm256_and_si256(v, m3);
    t[1] = _mm256_and_si256(v, m12);
    t[2] = _mm256_and_si256(v4, m3);
    t[3] = _mm256_and_si256(v4, m12);
}

/* reduce, per row: 8 int32 lanes, sub-block k in lanes 2k and 2k + 1, all four times the sum of c.q. */
TARGET static inline __m256i row_sums(const __m256i t[4], const __m256i Q[4])
{
    const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(t[0], Q[0]), _mm256_maddubs_epi16(t[2], Q[2]));
    const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(t[1], Q[1]), _mm256_maddubs_epi16(t[3], Q[3]));
    return _mm256_madd_epi16(_mm256_add_epi16(_mm256_slli_epi16(a, 2), b), _mm256_set1_epi16(1));
}

/* reduce, 8 rows: S[r] -> I[k] with lane r = 4 (c.q) of sub-block k of row r. */
TARGET static inline void transpose8(const __m256i S[8], __m256i I[4])
{
    /* H = [r k0, r k1, r' k0, r' k1 | r k2, r k3, r' k2, r' k3] for the row pairs (0,1) (2,3) (4,5) (6,7) */
    const __m256 h01 = _mm256_castsi256_ps(_mm256_hadd_epi32(S[0], S[1]));
    const __m256 h23 = _mm256_castsi256_ps(_mm256_hadd_epi32(S[2], S[3]));
    const __m256 h45 = _mm256_castsi256_ps(_mm256_hadd_epi32(S[4], S[5]));
    const __m256 h67 = _mm256_castsi256_ps(_mm256_hadd_epi32(S[6], S[7]));
    const __m256 a = _mm256_shuffle_ps(h01, h23, _MM_SHUFFLE(2, 0, 2, 0)); /* k0 rows 0-3 | k2 rows 0-3 */
    const __m256 b = _mm256_shuffle_ps(h01, h23, _MM_SHUFFLE(3, 1, 3, 1)); /* k1 | k3 */
    const __m256 c = _mm256_shuffle_ps(h45, h67, _MM_SHUFFLE(2, 0, 2, 0)); /* k0 rows 4-7 | k2 rows 4-7 */
    const __m256 d = _mm256_shuffle_ps(h45, h67, _MM_SHUFFLE(3, 1, 3, 1));
    I[0] = _mm256_castps_si256(_mm256_permute2f128_ps(a, c, 0x20));
    I[1] = _mm256_castps_si256(_mm256_permute2f128_ps(b, d, 0x20));
    I[2] = _mm256_castps_si256(_mm256_permute2f128_ps(a, c, 0x31));
    I[3] = _mm256_castps_si256(_mm256_permute2f128_ps(b, d, 0x31));
}

/* scale: isum_k = I[k] - 4 sum q (exact), sumi = fma(d8_k / 4, 4 isum_k, sumi) for k = 0..3 from +0. */
TARGET static inline __m256 scale_block(const __m256i I[4], const hsdr_cpu_q2_act *a, int g)
{
    __m256 sumi = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) {
        const __m256i is = _mm256_sub_epi32(I[k], _mm256_set1_epi32(a->sq[4 * g + k]));
        sumi = _mm256_fmadd_ps(_mm256_set1_ps(a->dk[4 * g + k]), _mm256_cvtepi32_ps(is), sumi);
    }
    return sumi;
}

static inline int load16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* The fp16 d of block offset off in the 8 rows, as fp32 lanes. */
TARGET static inline __m256 block_scales(const uint8_t *const rp[ROWS], size_t off)
{
    __m128i d = _mm_cvtsi32_si128(load16(rp[0] + off));
    d = _mm_insert_epi16(d, load16(rp[1] + off), 1);
    d = _mm_insert_epi16(d, load16(rp[2] + off), 2);
    d = _mm_insert_epi16(d, load16(rp[3] + off), 3);
    d = _mm_insert_epi16(d, load16(rp[4] + off), 4);
    d = _mm_insert_epi16(d, load16(rp[5] + off), 5);
    d = _mm_insert_epi16(d, load16(rp[6] + off), 6);
    d = _mm_insert_epi16(d, load16(rp[7] + off), 7);
    return _mm256_cvtph_ps(d);
}

TARGET static inline void load_q(const hsdr_cpu_q2_act *a, int g, __m256i Q[4])
{
    for (int j = 0; j < 4; j++)
        Q[j] = _mm256_loadu_si256((const __m256i *)(a->qs + HSDR_QK * g + 32 * j));
}

/* Software prefetch of the next batch (see batch_rows): its 8 x 34 bytes per block, in address order. */
static inline void prefetch_next(const uint8_t *next, size_t next_len, int g)
{
    const size_t po = (size_t)g * ROWS * HSDR_PQ2_0_BYTES;
    if (po + 320 <= next_len)
        for (int l = 0; l < 5; l++)
            _mm_prefetch((const char *)(next + po + 64 * l), _MM_HINT_T0);
}

/* y of 8 rows (row pointers rp). */
TARGET static __m256 batch_dot(const uint8_t *const rp[ROWS], const uint8_t *next, size_t next_len, int G,
                               const hsdr_cpu_q2_act *a)
{
    __m256 sumf = _mm256_setzero_ps();
    for (int g = 0; g < G; g++) {
        const size_t off = (size_t)g * HSDR_PQ2_0_BYTES;
        __m256i Q[4], S[ROWS], I[4];
        load_q(a, g, Q);
        for (int r = 0; r < ROWS; r++) {
            __m256i t[4];
            codes4(rp[r] + off, t);
            S[r] = row_sums(t, Q);
        }
        transpose8(S, I);
        prefetch_next(next, next_len, g);
        sumf = _mm256_fmadd_ps(block_scales(rp, off), scale_block(I, a, g), sumf);
    }
    return sumf;
}

/* Row pointers of the batch starting at r (rows past r1 repeat row r1 - 1; their lanes are not stored), and the
 * next batch (rows r + 8 ..., contiguous) with the bytes of it inside the matrix: the 8 rows are short interleaved
 * streams (K/128 x 34 bytes each) that the hardware prefetcher barely trains on, so the next batch is prefetched in
 * address order, 5 lines per block, while this one is used. */
static int batch_rows(const hsdr_exec *e, int r, int r1, const uint8_t *rp[ROWS], const uint8_t **next,
                      size_t *next_len)
{
    const size_t row_bytes = (size_t)(e->K / HSDR_QK) * HSDR_PQ2_0_BYTES;
    const int n = r1 - r < ROWS ? r1 - r : ROWS;
    for (int i = 0; i < ROWS; i++)
        rp[i] = (const uint8_t *)e->weights + (size_t)(r + (i < n ? i : n - 1)) * row_bytes;
    const int nn = e->N - (r + ROWS); /* rows of the next batch that exist */
    *next = nn > 0 ? (const uint8_t *)e->weights + (size_t)(r + ROWS) * row_bytes : rp[0];
    *next_len = nn > 0 ? (size_t)(nn < ROWS ? nn : ROWS) * row_bytes : 0;
    return n;
}

TARGET static inline void store_rows(const hsdr_exec *e, int r, int n, __m256 y)
{
    if (n == ROWS) {
        _mm256_storeu_ps(e->y + r, y);
        return;
    }
    float t[ROWS];
    _mm256_storeu_ps(t, y);
    for (int i = 0; i < n; i++)
        e->y[r + i] = t[i];
}

TARGET void hsdr_cpu_pq2_0_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q2_act a = hsdr_cpu_q2_act_of(e);
    for (int r = r0; r < r1; r += ROWS) {
        const uint8_t *rp[ROWS], *next;
        size_t next_len;
        const int n = batch_rows(e, r, r1, rp, &next, &next_len);
        store_rows(e, r, n, batch_dot(rp, next, next_len, G, &a));
    }
}

/* ---- stages alone: each reads what the previous stage of the fused kernel would hand it, kept in scratch ---- */

typedef struct {
    unsigned ready; /* HSDR_STAGE_BIT of the stages whose outputs below are valid */
    unsigned pad[7];
    __m256i sink; /* keeps decode-alone work observable */
} stage_head;

size_t hsdr_cpu_pq2_0_scratch_bytes(int K, int R)
{
    (void)R;
    const size_t G = (size_t)K / HSDR_QK;
    return sizeof(stage_head) + 32 * 32 * G + 4 * 32 * G + 32 * G; /* codes, isums, sumi of one batch of 8 rows */
}

TARGET static void reduce_stored(const __m256i *T, const hsdr_cpu_q2_act *a, int g, __m256i I[4])
{
    __m256i Q[4], S[ROWS];
    load_q(a, g, Q);
    for (int r = 0; r < ROWS; r++)
        S[r] = row_sums(T + 4 * r, Q);
    transpose8(S, I);
}

TARGET static void stage_alone(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q2_act a = hsdr_cpu_q2_act_of(e);
    stage_head *h = scratch;
    __m256i *codes = (__m256i *)(h + 1);
    __m256i *isum = codes + 32 * (size_t)G;
    __m256 *sumi = (__m256 *)(isum + 4 * (size_t)G);
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            encode_stage(e);
        return;
    }
    if (r0 >= r1)
        return;
    /* inputs of the later stages, produced once from the batch at row r0 (scratch starts zeroed: nothing ready) */
    const int need_codes = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    if (need_codes && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        const uint8_t *rp[ROWS], *next;
        size_t next_len;
        batch_rows(e, r0, r1, rp, &next, &next_len);
        for (int g = 0; g < G; g++)
            for (int r = 0; r < ROWS; r++)
                codes4(rp[r] + (size_t)g * HSDR_PQ2_0_BYTES, codes + 32 * (size_t)g + 4 * r);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++)
            reduce_stored(codes + 32 * (size_t)g, &a, g, isum + 4 * (size_t)g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_block(isum + 4 * (size_t)g, &a, g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int r = r0; r < r1; r += ROWS) {
        const uint8_t *rp[ROWS], *next;
        size_t next_len;
        const int n = batch_rows(e, r, r1, rp, &next, &next_len);
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m256i acc = _mm256_setzero_si256();
            for (int g = 0; g < G; g++) {
                prefetch_next(next, next_len, g); /* the stage that streams the codes, as in the fused kernel */
                for (int i = 0; i < ROWS; i++) {
                    __m256i t[4];
                    codes4(rp[i] + (size_t)g * HSDR_PQ2_0_BYTES, t);
                    acc = _mm256_xor_si256(acc, _mm256_xor_si256(_mm256_xor_si256(t[0], t[1]),
                                                                 _mm256_xor_si256(t[2], t[3])));
                }
            }
            h->sink = _mm256_xor_si256(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                reduce_stored(codes + 32 * (size_t)g, &a, g, isum + 4 * (size_t)g);
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_block(isum + 4 * (size_t)g, &a, g);
            break;
        case HSDR_STAGE_MERGE: {
            __m256 sumf = _mm256_setzero_ps();
            for (int g = 0; g < G; g++) {
                prefetch_next(next, next_len, g); /* the scales sit in every code line: it streams the matrix too */
                sumf = _mm256_fmadd_ps(block_scales(rp, (size_t)g * HSDR_PQ2_0_BYTES), sumi[g], sumf);
            }
            store_rows(e, r, n, sumf);
            break;
        }
        default:
            return;
        }
    }
}

void hsdr_cpu_pq2_0_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch);
}
