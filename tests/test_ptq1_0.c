/* PTQ1_0 / PQ2_0 codecs: all 243 five-digit and 81 four-digit tuples, all 256 byte decodes in three forms, the
 * non-sequential weight order (a sequential decoder must fail), pack/unpack of fresh random blocks, the quantizer,
 * planar masks, PQ2_0 conversion. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "ptq1_0.h"
#include "rng.h"
#include "testing.h"

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_ptq1_0"));

    /* every digit tuple round-trips through every decode form */
    for (int nd = 4; nd <= 5; nd++) {
        int count = nd == 5 ? 243 : 81;
        for (int q = 0; q < count; q++) {
            uint8_t dig[5] = {0}, got[5];
            for (int n = nd - 1, v = q; n >= 0; n--, v /= 3)
                dig[n] = (uint8_t)(v % 3);
            uint8_t b = hsdr_ptq1_0_encode_byte(dig, nd);
            hsdr_ptq1_0_decode_byte_int(b, got);
            CHECK(memcmp(got, dig, 5) == 0, "int form, tuple %d (%d digits)", q, nd);
            hsdr_ptq1_0_decode_byte_cmp(b, got);
            CHECK(memcmp(got, dig, 5) == 0, "compare form, tuple %d", q);
            hsdr_ptq1_0_decode_byte_float(b, got);
            CHECK(memcmp(got, dig, 5) == 0, "float form, tuple %d", q);
        }
    }
    /* every byte (also the 13 the encoder never produces) decodes to digits 0..2, identically in all forms */
    for (int b = 0; b < 256; b++) {
        uint8_t a[5], c[5], f[5];
        hsdr_ptq1_0_decode_byte_int((uint8_t)b, a);
        hsdr_ptq1_0_decode_byte_cmp((uint8_t)b, c);
        hsdr_ptq1_0_decode_byte_float((uint8_t)b, f);
        CHECK(memcmp(a, c, 5) == 0 && memcmp(a, f, 5) == 0, "forms disagree on byte %d", b);
        for (int n = 0; n < 5; n++) {
            CHECK(a[n] <= 2, "byte %d digit %d = %d", b, n, a[n]);
            /* the defining formula: t_n = (3 * ((byte * 3^n) mod 256)) >> 8 */
            unsigned p3 = 1;
            for (int j = 0; j < n; j++)
                p3 *= 3;
            CHECK(a[n] == ((3u * ((b * p3) & 255u)) >> 8), "formula, byte %d digit %d", b, n);
        }
    }
    /* the spec's worked example */
    {
        uint8_t dig[5] = {0, 1, 2, 2, 0}, got[5];
        CHECK(hsdr_ptq1_0_encode_byte(dig, 5) == 54, "(0,1,2,2,0) -> 54");
        hsdr_ptq1_0_decode_byte_int(54, got);
        CHECK(memcmp(got, dig, 5) == 0, "54 -> (0,1,2,2,0)");
    }
    /* weight order: each weight alone nonzero lands in the byte/digit of the table, and a sequential decoder
     * (five consecutive weights per byte) gets it wrong */
    for (int e = 0; e < 128; e++) {
        int8_t t[128] = {0}, back[128];
        t[e] = 1;
        uint8_t blk[28];
        hsdr_ptq1_0_pack(t, 0x3c00, blk);
        int b, n;
        hsdr_ptq1_0_locate(e, &b, &n);
        int want_b = e < 80 ? (e & 15) : e < 120 ? 16 + ((e - 80) & 7) : 24 + ((e - 120) & 1);
        CHECK(b == want_b, "locate(%d)", e);
        for (int j = 0; j < 26; j++) {
            uint8_t dig[5];
            hsdr_ptq1_0_decode_byte_int(blk[j], dig);
            for (int m = 0; m < (j < 24 ? 5 : 4); m++)
                CHECK(dig[m] == ((j == b && m == n) ? 2 : 1), "weight %d: byte %d digit %d = %d", e, j, m, dig[m]);
        }
        for (int form = 0; form < 3; form++) {
            hsdr_ptq1_0_unpack(blk, back, (enum hsdr_decode_form)form);
            CHECK(memcmp(back, t, 128) == 0, "unpack weight %d form %d", e, form);
        }
    }
    /* a decoder that reads five consecutive weights per byte yields a valid-looking but permuted tensor: the
     * natural-order comparison above must reject it (checked on fresh random blocks) */
    for (int it = 0; it < 100; it++) {
        int8_t t[128], seq[128];
        for (int i = 0; i < 128; i++)
            t[i] = (int8_t)hsdr_rng_below(&rng, 3) - 1;
        uint8_t blk[28];
        hsdr_ptq1_0_pack(t, 0x3c00, blk);
        for (int j = 0; j < 26; j++) {
            uint8_t dig[5];
            hsdr_ptq1_0_decode_byte_int(blk[j], dig);
            for (int m = 0; m < (j < 24 ? 5 : 4); m++)
                seq[j < 24 ? 5 * j + m : 120 + 4 * (j - 24) + m] = (int8_t)(dig[m] - 1);
        }
        CHECK(memcmp(seq, t, 128) != 0, "a sequential decoder went unnoticed");
    }
    /* fresh random blocks: pack -> unpack in three forms, d stored last little-endian, masks */
    for (int it = 0; it < 20000; it++) {
        int8_t t[128], back[128];
        for (int i = 0; i < 128; i++)
            t[i] = (int8_t)hsdr_rng_below(&rng, 3) - 1;
        uint16_t d = (uint16_t)(hsdr_rng_u64(&rng) & 0x7bff);
        uint8_t blk[28];
        hsdr_ptq1_0_pack(t, d, blk);
        CHECK(blk[26] == (d & 0xff) && blk[27] == (d >> 8) && hsdr_ptq1_0_d_bits(blk) == d, "d bytes");
        for (int form = 0; form < 3; form++) {
            hsdr_ptq1_0_unpack(blk, back, (enum hsdr_decode_form)form);
            CHECK(memcmp(back, t, 128) == 0, "random block, form %d", form);
        }
        uint64_t nz[2], neg[2];
        hsdr_ptq1_0_to_masks(blk, nz, neg);
        for (int i = 0; i < 128; i++) {
            CHECK(((nz[i >> 6] >> (i & 63)) & 1) == (t[i] != 0), "nz mask lane %d", i);
            CHECK(((neg[i >> 6] >> (i & 63)) & 1) == (t[i] < 0), "neg mask lane %d", i);
        }
        /* PQ2_0 round trip through the ternary converter */
        uint8_t pq[34];
        hsdr_ptq1_0_to_pq2_0(blk, pq);
        int8_t t2[128];
        uint8_t codes[128];
        uint16_t d2;
        CHECK(hsdr_pq2_0_to_ternary(pq, t2) == -1 && memcmp(t2, t, 128) == 0, "PQ2_0 conversion");
        hsdr_pq2_0_unpack(pq, codes, &d2);
        CHECK(d2 == d && pq[0] == (d & 0xff), "PQ2_0 d first");
    }
    /* PQ2_0: a +2 code is refused with its index; the all-zero block gets code 1 */
    {
        uint8_t codes[128], pq[34];
        memset(codes, 1, sizeof codes);
        codes[77] = 3;
        hsdr_pq2_0_pack(codes, 0x3c00, pq);
        int8_t t[128];
        CHECK(hsdr_pq2_0_to_ternary(pq, t) == 77, "code 3 refused at 77");
        float w[128] = {0};
        hsdr_pq2_0_quantize(w, pq);
        hsdr_pq2_0_unpack(pq, codes, NULL);
        int all1 = 1;
        for (int i = 0; i < 128; i++)
            all1 &= codes[i] == 1;
        CHECK(all1, "all-zero PQ2_0 block");
    }
    /* quantizer: d = fp16(amax); weights at >= amax / 2 (up to the product's rounding) become +-1 */
    for (int it = 0; it < 5000; it++) {
        float w[128];
        for (int i = 0; i < 128; i++)
            w[i] = (float)(hsdr_rng_gaussian(&rng) * 0.02);
        uint8_t blk[28];
        hsdr_ptq1_0_quantize(w, blk);
        float amax = 0.0f;
        for (int i = 0; i < 128; i++)
            amax = fmaxf(amax, fabsf(w[i]));
        CHECK(hsdr_ptq1_0_d_bits(blk) == hsdr_fp32_to_fp16(amax), "d = fp16(amax)");
        int8_t t[128];
        hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
        for (int i = 0; i < 128; i++) {
            float p = w[i] * (1.0f / amax);
            int want = p >= 0.5f ? 1 : p <= -0.5f ? -1 : 0;
            CHECK(t[i] == want, "quantize lane %d: w=%a amax=%a -> %d", i, (double)w[i], (double)amax, t[i]);
        }
    }
    {
        float w[128] = {0};
        uint8_t blk[28];
        int8_t t[128];
        hsdr_ptq1_0_quantize(w, blk);
        hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
        int zero = hsdr_ptq1_0_d_bits(blk) == 0;
        for (int i = 0; i < 128; i++)
            zero &= t[i] == 0;
        CHECK(zero, "all-zero block quantizes to zeros with d = 0");
    }
    return test_finish("test_ptq1_0");
}
