/* Fuzz target: the PTQ1_0 decoder (reference/ptq1_0.c) and the weight conversions of every variant that has one
 * (the `prepare` hook of kernels/kernel.h, found in the registry).
 *   Input: byte 0 picks N (1..40 rows: past one and two 16-row blocks, so every padding rule is hit), byte 1 the
 *   groups per row G (1..4), then raw PTQ1_0 blocks of 28 bytes: any byte values, so non-canonical digit bytes (those
 *   encode_byte never writes) and fp16 scales that are Inf, NaN or subnormal all occur.
 *   Every block: the three decode forms agree digit for digit on all 26 bytes (all 5 digits, the unused fifth of qh
 *   too) and every digit is 0..2; unpack agrees in every form; masks, PTQ1_0 -> PQ2_0 and pack(unpack) give back the
 *   same trits and scale; a packed block is a fixed point of unpack + pack.
 *   The first N x G blocks as an N x K matrix: every variant with a prepare hook that can run here converts it; the
 *   converted buffer is copied for its whole claimed footprint (what cold runs do with memcpy, so ASan checks the
 *   footprint), and a layout this file knows (those of kernels/cpu/ and the reference state sets, documented in
 *   their files) is decoded back and must give every row's trits and scale bits, with zero padding rows; a variant
 *   whose layout is not known here is checked for crashes only (listed at start-up). */
#include <stdbool.h>
#include <string.h>

#include "cpu/direct_avx2.h"
#include "cpu/planar2_avx2.h"
#include "cpu/stateset_avx2.h"
#include "fp16.h"
#include "fuzz.h"
#include "kernel.h"
#include "ptq1_0.h"
#include "reference_timed.h"

#define MAX_N 40
#define MAX_G 4
#define MAX_BLOCKS (MAX_N * MAX_G)

/* ---- one block ---- */

static void check_block(const uint8_t *blk)
{
    for (int b = 0; b < 26; b++) {
        uint8_t di[5], dc[5], df[5];
        hsdr_ptq1_0_decode_byte_int(blk[b], di);
        hsdr_ptq1_0_decode_byte_cmp(blk[b], dc);
        hsdr_ptq1_0_decode_byte_float(blk[b], df);
        for (int n = 0; n < 5; n++)
            FUZZ_REQUIRE(di[n] <= 2 && di[n] == dc[n] && di[n] == df[n],
                         "byte 0x%02x digit %d: int %d, cmp %d, float %d", blk[b], n, di[n], dc[n], df[n]);
        /* re-encoding the digits gives a byte that decodes to the same digits (the canonical byte) */
        int nd = b < 24 ? 5 : 4;
        uint8_t again[5];
        hsdr_ptq1_0_decode_byte_int(hsdr_ptq1_0_encode_byte(di, nd), again);
        for (int n = 0; n < nd; n++)
            FUZZ_REQUIRE(again[n] == di[n], "byte 0x%02x digit %d: %d after re-encoding, %d before", blk[b], n,
                         again[n], di[n]);
    }
    int8_t t[HSDR_QK], tc[HSDR_QK], tf[HSDR_QK];
    hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
    hsdr_ptq1_0_unpack(blk, tc, HSDR_DECODE_CMP);
    hsdr_ptq1_0_unpack(blk, tf, HSDR_DECODE_FLOAT);
    FUZZ_REQUIRE(memcmp(t, tc, sizeof t) == 0 && memcmp(t, tf, sizeof t) == 0, "unpack forms disagree");
    uint64_t nz[2], neg[2];
    hsdr_ptq1_0_to_masks(blk, nz, neg);
    for (int i = 0; i < HSDR_QK; i++) {
        FUZZ_REQUIRE(t[i] >= -1 && t[i] <= 1, "weight %d = %d is not ternary", i, t[i]);
        int m = (int)(nz[i >> 6] >> (i & 63) & 1), s = (int)(neg[i >> 6] >> (i & 63) & 1);
        FUZZ_REQUIRE(m == (t[i] != 0) && s == (t[i] < 0), "weight %d = %d: masks nz %d neg %d", i, t[i], m, s);
    }
    uint8_t pq[HSDR_PQ2_0_BYTES];
    int8_t tq[HSDR_QK];
    uint16_t pq_d;
    hsdr_ptq1_0_to_pq2_0(blk, pq);
    FUZZ_REQUIRE(hsdr_pq2_0_to_ternary(pq, tq) == -1 && memcmp(t, tq, sizeof t) == 0, "PQ2_0 trits differ");
    uint8_t codes[HSDR_QK];
    hsdr_pq2_0_unpack(pq, codes, &pq_d);
    FUZZ_REQUIRE(pq_d == hsdr_ptq1_0_d_bits(blk), "PQ2_0 scale 0x%04x, PTQ1_0 0x%04x", pq_d, hsdr_ptq1_0_d_bits(blk));
    uint8_t packed[HSDR_PTQ1_0_BYTES], repacked[HSDR_PTQ1_0_BYTES];
    int8_t tp[HSDR_QK];
    hsdr_ptq1_0_pack(t, hsdr_ptq1_0_d_bits(blk), packed);
    hsdr_ptq1_0_unpack(packed, tp, HSDR_DECODE_INT);
    FUZZ_REQUIRE(memcmp(t, tp, sizeof t) == 0 && hsdr_ptq1_0_d_bits(packed) == hsdr_ptq1_0_d_bits(blk),
                 "pack(unpack(block)) decodes differently");
    hsdr_ptq1_0_pack(tp, hsdr_ptq1_0_d_bits(packed), repacked);
    FUZZ_REQUIRE(memcmp(packed, repacked, sizeof packed) == 0, "a packed block is not a fixed point of unpack + pack");
}

/* ---- converted layouts, decoded back: the trits of (row r, group g) and its scale as stored (the fp16 bits, or the
 * bits of the fp32 / fp64 value it was widened to). Each follows the layout comment of the file that writes it. ---- */

typedef struct {
    const uint8_t *p; /* the converted buffer */
    int K, N, G;
} converted;

typedef void (*decode_fn)(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale);

static uint64_t scale_fp16(uint16_t d)
{
    return d;
}

static uint64_t scale_fp32(uint16_t d)
{
    return hsdr_f32_bits(hsdr_fp16_to_fp32(d));
}

static uint64_t scale_fp64(uint16_t d)
{
    double v = hsdr_fp16_to_fp32(d); /* widened the way the converter widens it */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* kernels/cpu/planar2_avx2.c: rows padded to a multiple of 8 with zero rows; per 8-row group and block 256 code
 * bytes, byte 32u + 4rr + i holding the digits of weights b, b+32, b+64, b+96 (b = 4u + i) in bit pairs 0, 2, 4, 6;
 * after all codes, per 8-row group and block the 8 fp16 scales. */
static int planar2_rows(int N)
{
    return (N + 7) / 8 * 8;
}

static void planar2_decode(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale)
{
    const int rg = r / 8, rr = r % 8;
    const uint8_t *codes = c->p + ((size_t)rg * c->G + g) * 256;
    for (int b = 0; b < 32; b++) {
        uint8_t v = codes[32 * (b / 4) + 4 * rr + b % 4];
        for (int j = 0; j < 4; j++) {
            int digit = v >> (2 * j) & 3;
            FUZZ_REQUIRE(digit <= 2, "planar2 row %d group %d lane %d: digit 3", r, g, b + 32 * j);
            t[b + 32 * j] = (int8_t)(digit - 1);
        }
    }
    const uint8_t *s = c->p + (size_t)planar2_rows(c->N) / 8 * c->G * 256 + (((size_t)rg * c->G + g) * 8 + rr) * 2;
    *scale = (uint64_t)(s[0] | s[1] << 8);
}

/* kernels/cpu/pq2_0_avx2.c: PQ2_0 blocks, row-major. */
static void pq2_0_decode(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale)
{
    const uint8_t *blk = c->p + ((size_t)r * c->G + g) * HSDR_PQ2_0_BYTES;
    FUZZ_REQUIRE(hsdr_pq2_0_to_ternary(blk, t) == -1, "pq2_0 row %d group %d: code 3", r, g);
    *scale = (uint64_t)(blk[0] | blk[1] << 8);
}

/* kernels/cpu/direct_avx2.c: rows padded to a multiple of 16 with zero blocks; per 16-row block and group 448 bytes:
 * PTQ1_0 byte m of row i at 16m + i, the 16 fp16 scales at 416 in vpunpck row order (row i at ROWPOS[i]). */
static int direct_rows(int N)
{
    return (N + 15) / 16 * 16;
}

static void direct_decode(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale)
{
    static const int rowpos[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
    const uint8_t *o = c->p + ((size_t)(r / 16) * c->G + g) * 448;
    uint8_t blk[HSDR_PTQ1_0_BYTES];
    for (int m = 0; m < 26; m++)
        blk[m] = o[16 * m + r % 16];
    memcpy(blk + 26, o + 416 + 2 * rowpos[r % 16], 2);
    hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
    *scale = hsdr_ptq1_0_d_bits(blk);
}

/* Planar masks {nz[2], neg[2]} per block, row-major (natural lane order), then one widened scale per block. */
static void masks_decode(const converted *c, int r, int g, int8_t t[HSDR_QK])
{
    const uint8_t *m8 = c->p + 32 * ((size_t)r * c->G + g);
    uint64_t m[4];
    memcpy(m, m8, sizeof m);
    for (int i = 0; i < HSDR_QK; i++) {
        int nz = (int)(m[i >> 6] >> (i & 63) & 1), neg = (int)(m[2 + (i >> 6)] >> (i & 63) & 1);
        FUZZ_REQUIRE(nz || !neg, "masks row %d group %d lane %d: negative but zero", r, g, i);
        t[i] = (int8_t)(nz ? (neg ? -1 : 1) : 0);
    }
}

/* kernels/cpu/stateset_avx2.c: the masks, then fp32 scales. */
static void ss_decode(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale)
{
    masks_decode(c, r, g, t);
    uint32_t bits;
    memcpy(&bits, c->p + (size_t)c->N * c->G * 32 + ((size_t)r * c->G + g) * sizeof bits, sizeof bits);
    *scale = bits;
}

/* kernels/reference_timed.c (ref.stateset, ref.tile64): the masks, then fp64 scales. */
static void reft_decode(const converted *c, int r, int g, int8_t t[HSDR_QK], uint64_t *scale)
{
    masks_decode(c, r, g, t);
    memcpy(scale, c->p + (size_t)c->N * c->G * 32 + ((size_t)r * c->G + g) * sizeof *scale, sizeof *scale);
}

typedef int (*prepare_fn)(const uint8_t *, int, int, void **, size_t *, char *, size_t);
typedef struct {
    prepare_fn prepare;
    decode_fn decode;
    uint64_t (*scale_of)(uint16_t d_bits); /* the stored scale of a block with these fp16 bits */
    int (*padded_rows)(int N);             /* rows the layout pads to with zero blocks; NULL: none */
} layout;

static const layout known_layouts[] = {
    {hsdr_cpu_planar2_prepare, planar2_decode, scale_fp16, planar2_rows},
    {hsdr_cpu_pq2_0_prepare, pq2_0_decode, scale_fp16, NULL},
    {hsdr_cpu_direct_prepare, direct_decode, scale_fp16, direct_rows},
    {hsdr_cpu_ss_prepare, ss_decode, scale_fp32, NULL},
    {hsdr_reft_masks_prepare, reft_decode, scale_fp64, NULL},
};

static const layout *layout_of(prepare_fn p)
{
    for (size_t i = 0; i < sizeof known_layouts / sizeof known_layouts[0]; i++)
        if (known_layouts[i].prepare == p)
            return &known_layouts[i];
    return NULL;
}

/* Variants whose conversion runs here, one per distinct prepare function (the registry shares some). */
static const hsdr_variant *converters[64];
static size_t nconverters;
static bool converters_found;

static void find_converters(void)
{
    if (converters_found)
        return;
    converters_found = true;
    for (size_t i = 0; i < hsdr_registry_count && nconverters < 64; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if (!v->prepare || v->device || hsdr_variant_unavailable(v))
            continue;
        bool seen = false;
        for (size_t j = 0; j < nconverters; j++)
            seen |= converters[j]->prepare == v->prepare;
        if (seen)
            continue;
        converters[nconverters++] = v;
        fprintf(stderr, "fuzz_ptq1_0: conversion of %s: %s\n", v->name,
                layout_of(v->prepare) ? "decoded back and compared" : "crash checks only (layout not known here)");
    }
}

/* Row r of the converted matrix against PTQ1_0 block row w (a zero block for padding rows). */
static void compare_row(const hsdr_variant *v, const layout *l, const converted *c, const uint8_t *w, int r)
{
    static const uint8_t zero_block[HSDR_PTQ1_0_BYTES];
    for (int g = 0; g < c->G; g++) {
        const uint8_t *blk = r < c->N ? w + ((size_t)r * c->G + g) * HSDR_PTQ1_0_BYTES : zero_block;
        int8_t want[HSDR_QK], got[HSDR_QK];
        uint64_t scale = 0;
        hsdr_ptq1_0_unpack(blk, want, HSDR_DECODE_INT);
        l->decode(c, r, g, got, &scale);
        for (int e = 0; e < HSDR_QK; e++)
            FUZZ_REQUIRE(got[e] == want[e], "%s: row %d%s group %d weight %d: converted %d, PTQ1_0 %d", v->name, r,
                         r < c->N ? "" : " (padding)", g, e, got[e], want[e]);
        FUZZ_REQUIRE(scale == l->scale_of(hsdr_ptq1_0_d_bits(blk)), "%s: row %d group %d: scale 0x%llx, want 0x%llx",
                     v->name, r, g, (unsigned long long)scale,
                     (unsigned long long)l->scale_of(hsdr_ptq1_0_d_bits(blk)));
    }
}

static void check_conversions(const uint8_t *w, int N, int G)
{
    find_converters();
    const int K = G * HSDR_QK;
    for (size_t i = 0; i < nconverters; i++) {
        const hsdr_variant *v = converters[i];
        void *prepared = NULL;
        size_t bytes = 0;
        char err[256] = "";
        FUZZ_REQUIRE(v->prepare(w, K, N, &prepared, &bytes, err, sizeof err) == 0, "%s: prepare failed: %s", v->name,
                     err);
        uint8_t *copy = malloc(bytes ? bytes : 1);
        FUZZ_REQUIRE(copy, "out of memory");
        memcpy(copy, prepared, bytes);
        const layout *l = layout_of(v->prepare);
        if (l) {
            const converted c = {copy, K, N, G};
            const int rows = l->padded_rows ? l->padded_rows(N) : N;
            for (int r = 0; r < rows; r++)
                compare_row(v, l, &c, w, r);
        }
        free(copy);
        v->release(prepared);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t *blocks = data + 2;
    const size_t nblocks = (size - 2) / HSDR_PTQ1_0_BYTES;
    for (size_t i = 0; i < nblocks && i < MAX_BLOCKS; i++)
        check_block(blocks + i * HSDR_PTQ1_0_BYTES);
    int G = 1 + data[1] % MAX_G, N = 1 + data[0] % MAX_N;
    if ((size_t)G > nblocks)
        G = (int)(nblocks ? nblocks : 1);
    if ((size_t)N * G > nblocks)
        N = (int)(nblocks / (size_t)G);
    if (N >= 1)
        check_conversions(blocks, N, G);
    return 0;
}
