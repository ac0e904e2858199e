/* cpu.avx512: cpu.avx2 (avx2_ptq1_0.c) widened to AVX-512, bit-identical to production (spec/ptq1_0.md sections 4
 * and 7), reading PTQ1_0 as stored (no conversion).
 *   Idea     sixteen rows at a time with ROWS IN LANES: rows r..r+15 transposed so that dword lane l of a zmm holds
 *            row l's bytes; the digits' two compares go straight into mask registers, and vpdpbusd (VNNI) multiplies
 *            four digits by four broadcast activations and adds them into the row's int32 lane in one instruction
 *            (cpu.avx2 needs maddubs, an int16 add and a madd per sub-block for the same exact integers).
 *   Layout   weights: PTQ1_0 rows as stored. Activations: cpu.avx2's (hsdr_cpu_q8_act: the production Q8_0 blocks,
 *            q in natural order, the exact sum of q per block, fp32 scales), made by cpu.avx2's prologue.
 *   Stages   encode (quantize + sums), decode (load, transpose, digits), reduce (vpdpbusd, - sum q), scale (sumi),
 *            merge (weight scales and sumf); each alone (stage hook) from scratch, as cpu.avx2.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.avx512 *' (on a CPU with AVX-512 VNNI; cpu.ptq1_r16,
 *            the same kernel on the same bytes permuted at convert, with 'variant=cpu.ptq1_r16 *')
 *   Loads    two 16-byte loads per block and row (bytes 0..15 and 12..27), rows l, l + 4, l + 8, l + 12 in the four
 *            128-bit lanes of a zmm, then cpu.avx2's 4x4 dword transpose in every 128-bit lane: dword 4 L + i of
 *            every vector is row 4 L + i.
 *   Digits   cpu.avx2's compare form in the XOR 0x80 domain (t = [s > 85'] + [s > 170'], s x 3 by two byte adds),
 *            with the compares into k registers and t built by two masked moves (k2 implies k1: t = k2 ? 2 : k1);
 *            t in 0..2 is the unsigned operand of vpdpbusd, and (t - 1) q = t q - q subtracts the exact sum of q.
 *   Exact    every int32 lane is the sum of t q over one Q8_0 block of one row: the integers cpu.avx2 and
 *            production compute, so the fp32 sequence (fma(d8_k, isum_k, sumi) from +0, then fma(d_w, sumi, sumf))
 *            run per lane gives production's y bit for bit. */
#include "avx512_ptq1_0.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/ptq1_0.h"
#include "avx2_ptq1_0.h"
#include "cpu_features.h"

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))

const char *hsdr_cpu_avx512_unavailable(void)
{
    __builtin_cpu_init(); /* __builtin_cpu_supports counts AVX-512 only when the OS saves the zmm and k state */
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vnni") ||
        !__builtin_cpu_supports("fma") || !hsdr_cpu_has_f16c())
        return "needs AVX-512 F, BW, VL and VNNI, FMA and F16C";
    return NULL;
}

/* One 16-row group at one block, transposed: dword lane l of every vector is row l of the group. */
typedef struct {
    __m512i qs[4]; /* bytes 4j .. 4j + 3 of qs[0..15] */
    __m512i hi[2]; /* qs[16..19], qs[20..23] */
    __m512i tail;  /* qh[0], qh[1], d (fp16) */
} group16;

/* 16 bytes at a, b, c, d into the four 128-bit lanes of a zmm. */
TARGET static inline __m512i load4x16(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)a));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)b), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)c), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)d), 3);
}

TARGET static inline group16 load_group(const uint8_t *const p[16], size_t o)
{
    group16 G;
    __m512i y[4], z[4];
    for (int l = 0; l < 4; l++) {
        y[l] = load4x16(p[l] + o, p[l + 4] + o, p[l + 8] + o, p[l + 12] + o);
        z[l] = load4x16(p[l] + o + 12, p[l + 4] + o + 12, p[l + 8] + o + 12, p[l + 12] + o + 12);
    }
    const __m512i t0 = _mm512_unpacklo_epi32(y[0], y[1]), t1 = _mm512_unpackhi_epi32(y[0], y[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(y[2], y[3]), t3 = _mm512_unpackhi_epi32(y[2], y[3]);
    G.qs[0] = _mm512_unpacklo_epi64(t0, t2);
    G.qs[1] = _mm512_unpackhi_epi64(t0, t2);
    G.qs[2] = _mm512_unpacklo_epi64(t1, t3);
    G.qs[3] = _mm512_unpackhi_epi64(t1, t3);
    const __m512i u0 = _mm512_unpacklo_epi32(z[0], z[1]), u1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i u2 = _mm512_unpacklo_epi32(z[2], z[3]), u3 = _mm512_unpackhi_epi32(z[2], z[3]);
    G.hi[0] = _mm512_unpackhi_epi64(u0, u2); /* bytes 16..19 */
    G.hi[1] = _mm512_unpacklo_epi64(u1, u3); /* bytes 20..23 */
    G.tail = _mm512_unpackhi_epi64(u1, u3);  /* bytes 24..27 */
    return G;
}

typedef struct {
    __m512i k85, k170, flip, one, two;
} digit_consts;

/* Opaque registers, as in cpu.avx2: GCC would otherwise rematerialize or rewrite them inside the walk. */
TARGET static inline digit_consts digit_consts_make(void)
{
    digit_consts c = {_mm512_set1_epi8((char)(85 ^ 0x80)), _mm512_set1_epi8((char)(170 ^ 0x80)),
                      _mm512_set1_epi8((char)0x80), _mm512_set1_epi8(1), _mm512_set1_epi8(2)};
    __asm__("" : "+v"(c.k85), "+v"(c.k170), "+v"(c.flip), "+v"(c.one), "+v"(c.two));
    return c;
}

/* t = [v >= 86] + [v >= 171] of 64 bytes held as s = v ^ 0x80 (signed compares; the second implies the first). */
TARGET static inline __m512i digit(__m512i s, const digit_consts *c)
{
    const __mmask64 k1 = _mm512_cmpgt_epi8_mask(s, c->k85), k2 = _mm512_cmpgt_epi8_mask(s, c->k170);
    return _mm512_mask_mov_epi8(_mm512_maskz_mov_epi8(k1, c->one), k2, c->two);
}

TARGET static inline __m512i times3(__m512i s)
{
    return _mm512_add_epi8(_mm512_add_epi8(s, s), s);
}

/* acc += t . the four activations at q[w..w+3] (the same for every row), per dword lane: |lane| <= 32 x 2 x 128. */
TARGET static inline __m512i dot4(__m512i acc, __m512i t, const int8_t *q, int w)
{
    int32_t v;
    memcpy(&v, q + w, 4);
    return _mm512_dpbusd_epi32(acc, t, _mm512_set1_epi32(v));
}

/* Every digit vector i of one block of sixteen rows (cpu.avx2's walk, in the same order: vector i holds weights
 * 4 i .. 4 i + 3 of each row, so sub-block i / 8): stored to D[i] (the decode stage alone), or (D == NULL)
 * multiplied at once into acc[i / 8]. Inlined with a constant D, the branch disappears. */
TARGET static inline void walk_group(const group16 *G, const digit_consts *c, __m512i *D, __m512i acc[4],
                                     const int8_t *q)
{
    /* Source order, as in cpu.avx2: left free, GCC computes digit vectors far ahead of their use and spills them. */
#define SEQ(a, b) __asm__ volatile("" : "+v"(a), "+v"(b))
#define EMIT(i, t)                                                                                                   \
    do {                                                                                                             \
        if (D) {                                                                                                     \
            D[i] = (t);                                                                                              \
        } else {                                                                                                     \
            acc[(i) / 8] = dot4(acc[(i) / 8], (t), q, 4 * (i));                                                       \
            SEQ(acc[(i) / 8], s);                                                                                    \
        }                                                                                                            \
    } while (0)
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) { /* digit n of qs[4j + i] is weight 16 n + 4 j + i */
        __m512i s = _mm512_xor_si512(G->qs[j], c->flip);
#pragma GCC unroll 5
        for (int n = 0; n < 5; n++) {
            EMIT(4 * n + j, digit(s, c));
            s = times3(s);
        }
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) { /* digit n of qs[16 + 4h + i] is weight 80 + 8 n + 4 h + i */
        __m512i s = _mm512_xor_si512(G->hi[h], c->flip);
#pragma GCC unroll 5
        for (int n = 0; n < 5; n++) {
            EMIT(20 + 2 * n + h, digit(s, c));
            s = times3(s);
        }
    }
    /* qh: bytes [qh0, qh1, 3 qh0, 3 qh1] per row give digits (n, n, n + 1, n + 1): weights 120 + 2n .. 123 + 2n */
    const __m512i u = _mm512_shuffle_epi8(
        G->tail, _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13)));
    __m512i s = _mm512_xor_si512(_mm512_mask_blend_epi16((__mmask32)0xAAAAAAAAu, u, times3(u)), c->flip);
    EMIT(30, digit(s, c));
    s = times3(times3(s));
    EMIT(31, digit(s, c));
#undef EMIT
#undef SEQ
}

/* The fp16 weight scales of the sixteen rows (the high half of each dword of the tail vector), as fp32. */
TARGET static inline __m512 row_scales(__m512i tail)
{
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(tail, 16)));
}

/* Section 7 step 3 for sixteen rows of block g: sumi = fma(d8_k, acc_k - sum q_k, sumi), k = 0..3, from +0. */
TARGET static inline __m512 scale_rows(const __m512i acc[4], const hsdr_cpu_q8_act *a, int g)
{
    __m512 sumi = _mm512_setzero_ps();
    for (int k = 0; k < 4; k++) {
        const __m512i isum = _mm512_sub_epi32(acc[k], _mm512_set1_epi32(a->qsum[4 * g + k]));
        sumi = _mm512_fmadd_ps(_mm512_set1_ps(a->d[4 * g + k]), _mm512_cvtepi32_ps(isum), sumi);
    }
    return sumi;
}

/* One block of sixteen rows into sumf (section 7 steps 3 and 4 per lane). */
TARGET static inline __m512 block_rows(const group16 *grp, const digit_consts *dc, const hsdr_cpu_q8_act *a, int g,
                                       __m512 sumf)
{
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    walk_group(grp, dc, NULL, acc, a->q + (size_t)g * HSDR_QK);
    return _mm512_fmadd_ps(row_scales(grp->tail), scale_rows(acc, a, g), sumf); /* step 4 */
}

/* y of rows r .. r + 15 from lanes 0..15, only those inside [r_lo, r_end). */
TARGET static void store_rows(const hsdr_exec *e, int r, int r_lo, int r_end, __m512 sumf)
{
    float out[16];
    _mm512_storeu_ps(out, sumf);
    for (int l = 0; l < 16 && r + l < r_end; l++)
        if (r + l >= r_lo)
            e->y[r + l] = out[l];
}

/* Pointers of the stored rows r .. r + 15 at block 0 (rows past r_end - 1 repeat row r_end - 1). */
static void rows_at(const hsdr_exec *e, int r, int r_end, const uint8_t *p[16])
{
    const size_t stride = (size_t)(e->K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
    for (int l = 0; l < 16; l++)
        p[l] = (const uint8_t *)e->weights + (size_t)(r + l < r_end ? r + l : r_end - 1) * stride;
}

/* Rows r .. r + 15 of PTQ1_0 as stored (only real rows are stored). */
TARGET static void sixteen_rows(const hsdr_exec *e, const hsdr_cpu_q8_act *a, int r, int r_end)
{
    const int G = e->K / HSDR_QK;
    const size_t stride = (size_t)G * HSDR_PTQ1_0_BYTES;
    const uint8_t *p[16];
    rows_at(e, r, r_end, p);
    const digit_consts dc = digit_consts_make();
    /* cpu.avx2's prefetch: the next group's rows (one contiguous range), spread over this group's blocks */
    const char *next = (const char *)e->weights + (size_t)(r + 16) * stride;
    const size_t next_bytes = r + 16 < r_end ? (size_t)(r_end - r - 16 < 16 ? r_end - r - 16 : 16) * stride : 0;
    const size_t per_block = (next_bytes / (size_t)G + 63) & ~(size_t)63;
    size_t pf = 0;
    __m512 sumf = _mm512_setzero_ps();
    for (int g = 0; g < G; g++) {
        for (size_t end = pf + per_block; pf < end && pf < next_bytes; pf += 64)
            _mm_prefetch(next + pf, _MM_HINT_T0);
        /* the rows' pointers stay put (16 scalar loads from the stack per block): advancing them, GCC keeps them in
         * zmm lanes and pays ~40 extracts per block */
        const group16 grp = load_group(p, (size_t)g * HSDR_PTQ1_0_BYTES);
        sumf = block_rows(&grp, &dc, a, g, sumf);
    }
    store_rows(e, r, r, r_end, sumf);
}

void hsdr_cpu_avx512_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    for (int r = r0; r < r1; r += 16)
        sixteen_rows(e, &a, r, r1);
}

/* ---- cpu.ptq1_r16: the same bytes, sixteen rows interleaved by dword (a permutation, the convert stage) ---- */

#define R16_GROUP_BLOCK (16 * HSDR_PTQ1_0_BYTES) /* 448 bytes: seven 64-byte vectors, dword j of rows 0..15 */
/* Software prefetch distance in blocks of the thread's stream (1792 bytes): measured on ffn_gate, cold, on the 2-core
 * VM (docs/perf-notes.md): 4 gave 8.1-8.8 GB/s on one thread against 6.9-7.6 with none and 7.9-9.7 with 8 or 16. */
#define PF_BLOCKS 4

/* One block of sixteen interleaved rows at b: seven aligned loads, already in the lanes load_group transposes to. */
TARGET static inline group16 load_r16(const uint8_t *b)
{
    return (group16){.qs = {_mm512_load_si512(b), _mm512_load_si512(b + 64), _mm512_load_si512(b + 128),
                            _mm512_load_si512(b + 192)},
                     .hi = {_mm512_load_si512(b + 256), _mm512_load_si512(b + 320)},
                     .tail = _mm512_load_si512(b + 384)};
}

static size_t r16_bytes(int K, int N)
{
    return (size_t)((N + 15) / 16) * (size_t)(K / HSDR_QK) * R16_GROUP_BLOCK;
}

int hsdr_cpu_ptq1_r16_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                              size_t errlen)
{
    const int G = K / HSDR_QK;
    const size_t n = r16_bytes(K, N);
    uint8_t *p = aligned_alloc(64, n); /* a multiple of 64 */
    if (!p) {
        snprintf(err, errlen, "out of memory (%zu bytes)", n);
        return -1;
    }
    memset(p, 0, n); /* the last group's missing rows: zero bytes (digits 0, scale +0), never stored */
    for (int r = 0; r < N; r++)
        for (int g = 0; g < G; g++) {
            const uint8_t *blk = ptq1_0 + ((size_t)r * G + g) * HSDR_PTQ1_0_BYTES;
            uint8_t *dst = p + ((size_t)(r / 16) * G + g) * R16_GROUP_BLOCK + 4 * (r % 16);
            for (int j = 0; j < 7; j++)
                memcpy(dst + 64 * j, blk + 4 * j, 4);
        }
    *prepared = p;
    *bytes = n;
    return 0;
}

void hsdr_cpu_ptq1_r16_release(void *prepared)
{
    free(prepared);
}

TARGET void hsdr_cpu_ptq1_r16_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const int G = e->K / HSDR_QK;
    const hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    const digit_consts dc = digit_consts_make();
    for (int rg = r0 / 16; rg * 16 < r1; rg++) {
        const uint8_t *p = (const uint8_t *)e->weights + (size_t)rg * G * R16_GROUP_BLOCK;
        __m512 sumf = _mm512_setzero_ps();
        for (int g = 0; g < G; g++, p += R16_GROUP_BLOCK) {
            const uintptr_t ahead = (uintptr_t)p + PF_BLOCKS * R16_GROUP_BLOCK; /* past the end: never dereferenced */
            for (int j = 0; j < 7; j++)
                _mm_prefetch((const char *)(ahead + 64 * (unsigned)j), _MM_HINT_T0);
            const group16 grp = load_r16(p);
            sumf = block_rows(&grp, &dc, &a, g, sumf);
        }
        store_rows(e, 16 * rg, r0, r1, sumf);
    }
}

/* ---- stages alone (both variants): each reads what the previous stage of the fused kernel would hand it, kept in
 * scratch for the thread's first group of sixteen rows (cpu.avx2's scheme) ---- */

typedef struct {
    unsigned ready; /* HSDR_STAGE_BIT of the stages whose outputs below are valid */
    unsigned pad[15];
    __m512i sink; /* keeps decode-alone work observable */
} stage_head;

size_t hsdr_cpu_avx512_scratch_bytes(int K, int R)
{
    (void)R;
    const size_t G = (size_t)K / HSDR_QK;
    return sizeof(stage_head) + 64 * G * (32 + 4 + 1); /* per block: 32 digit vectors, 4 sums, sumi */
}

/* Block g of the group of rows r.. (r a multiple of 16 for the interleaved form; p: the stored rows' pointers). */
TARGET static inline group16 group_at(const hsdr_exec *e, int interleaved, const uint8_t *const p[16], int r, int g)
{
    if (!interleaved)
        return load_group(p, (size_t)g * HSDR_PTQ1_0_BYTES);
    return load_r16((const uint8_t *)e->weights +
                    ((size_t)(r / 16) * (size_t)(e->K / HSDR_QK) + (size_t)g) * R16_GROUP_BLOCK);
}

/* The reduce stage of block g alone: the raw sums of sub-blocks k = 0..3 from its 32 digit vectors D (scale_rows
 * subtracts the sum of q). */
TARGET static inline void reduce_group(const __m512i D[32], const int8_t *q, __m512i isum[4])
{
    for (int k = 0; k < 4; k++) {
        __m512i acc = _mm512_setzero_si512();
        for (int i = 0; i < 8; i++)
            acc = dot4(acc, D[8 * k + i], q, 4 * (8 * k + i));
        isum[k] = acc;
    }
}

TARGET static void stage_alone(const hsdr_exec *e, int interleaved, hsdr_stage s, int r0, int r1, void *scratch)
{
    if (s == HSDR_STAGE_ENCODE) { /* cpu.avx2's encode (on the thread with r0 == 0) */
        hsdr_cpu_avx2_stage(e, s, r0, r1, scratch);
        return;
    }
    if (r0 >= r1)
        return;
    const int G = e->K / HSDR_QK;
    const int first = interleaved ? r0 / 16 * 16 : r0;
    const hsdr_cpu_q8_act a = hsdr_cpu_q8_act_of(e);
    const digit_consts dc = digit_consts_make();
    stage_head *h = scratch;
    __m512i *digits = (__m512i *)(h + 1), *isum = digits + 32 * (size_t)G;
    __m512 *sumi = (__m512 *)(isum + 4 * (size_t)G);
    const uint8_t *p[16] = {NULL}; /* the stored rows' pointers (interleaved: unused) */
    /* inputs of the later stages, produced once from the first group (scratch starts zeroed: nothing ready) */
    const int need_digits = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    if (need_digits && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        if (!interleaved)
            rows_at(e, first, r1, p);
        for (int g = 0; g < G; g++) {
            const group16 grp = group_at(e, interleaved, p, first, g);
            walk_group(&grp, &dc, digits + 32 * g, NULL, NULL);
        }
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++)
            reduce_group(digits + 32 * g, a.q + (size_t)g * HSDR_QK, isum + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_rows(isum + 4 * g, &a, g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int r = first; r < r1; r += 16) {
        if (!interleaved)
            rows_at(e, r, r1, p);
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m512i acc = _mm512_setzero_si512();
            for (int g = 0; g < G; g++) {
                const group16 grp = group_at(e, interleaved, p, r, g);
                __m512i D[32];
                walk_group(&grp, &dc, D, NULL, NULL);
                for (int j = 0; j < 32; j++)
                    acc = _mm512_xor_si512(acc, D[j]);
            }
            h->sink = _mm512_xor_si512(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                reduce_group(digits + 32 * g, a.q + (size_t)g * HSDR_QK, isum + 4 * g);
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_rows(isum + 4 * g, &a, g);
            break;
        case HSDR_STAGE_MERGE: {
            __m512 sumf = _mm512_setzero_ps();
            for (int g = 0; g < G; g++)
                sumf = _mm512_fmadd_ps(row_scales(group_at(e, interleaved, p, r, g).tail), sumi[g], sumf);
            store_rows(e, r, r0, r1, sumf);
            break;
        }
        default:
            return;
        }
    }
}

void hsdr_cpu_avx512_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, 0, s, r0, r1, scratch);
}

void hsdr_cpu_ptq1_r16_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, 1, s, r0, r1, scratch);
}
