#include "ptq1_0.h"

#include <math.h>
#include <string.h>

#include "fp16.h"

uint8_t hsdr_ptq1_0_encode_byte(const uint8_t *digits, int ndigits)
{
    unsigned q = 0;
    for (int n = 0; n < 5; n++)
        q = 3 * q + (n < ndigits ? digits[n] : 0u);
    return (uint8_t)((256u * q + 242u) / 243u); /* ceil(q * 256 / 243) */
}

void hsdr_ptq1_0_decode_byte_int(uint8_t byte, uint8_t digits[5])
{
    unsigned v = byte;
    for (int n = 0; n < 5; n++) {
        unsigned w = 3u * v;
        digits[n] = (uint8_t)(w >> 8);
        v = w & 255u;
    }
}

void hsdr_ptq1_0_decode_byte_cmp(uint8_t byte, uint8_t digits[5])
{
    unsigned v = byte;
    for (int n = 0; n < 5; n++) {
        digits[n] = (uint8_t)((v >= 86u) + (v >= 171u));
        v = (3u * v) & 255u;
    }
}

void hsdr_ptq1_0_decode_byte_float(uint8_t byte, uint8_t digits[5])
{
    /* u = byte / 256 is exact; g_k = floor(3^k * u) with 3^k * u exact in fp32 (at most 8 + 8 significant bits). */
    float u = (float)byte / 256.0f;
    float pow3 = 1.0f, g_prev = 0.0f; /* g_0 = floor(u) = 0 */
    for (int n = 0; n < 5; n++) {
        pow3 *= 3.0f;
        float g = floorf(pow3 * u);
        digits[n] = (uint8_t)(g - 3.0f * g_prev);
        g_prev = g;
    }
}

void hsdr_ptq1_0_locate(int e, int *byte_index, int *digit)
{
    if (e < 80) {
        *byte_index = e & 15;
        *digit = e >> 4;
    } else if (e < 120) {
        int s = e - 80;
        *byte_index = 16 + (s & 7);
        *digit = s >> 3;
    } else {
        int s = e - 120;
        *byte_index = 24 + (s & 1);
        *digit = s >> 1;
    }
}

void hsdr_ptq1_0_pack(const int8_t t[HSDR_QK], uint16_t d_bits, uint8_t block[HSDR_PTQ1_0_BYTES])
{
    uint8_t digits[26][5];
    memset(digits, 0, sizeof digits);
    for (int e = 0; e < HSDR_QK; e++) {
        int b, n;
        hsdr_ptq1_0_locate(e, &b, &n);
        digits[b][n] = (uint8_t)(t[e] + 1);
    }
    for (int b = 0; b < 26; b++)
        block[b] = hsdr_ptq1_0_encode_byte(digits[b], b < 24 ? 5 : 4);
    block[26] = (uint8_t)(d_bits & 0xff);
    block[27] = (uint8_t)(d_bits >> 8);
}

void hsdr_ptq1_0_unpack(const uint8_t block[HSDR_PTQ1_0_BYTES], int8_t t[HSDR_QK], enum hsdr_decode_form form)
{
    uint8_t digits[26][5];
    for (int b = 0; b < 26; b++) {
        switch (form) {
        case HSDR_DECODE_CMP: hsdr_ptq1_0_decode_byte_cmp(block[b], digits[b]); break;
        case HSDR_DECODE_FLOAT: hsdr_ptq1_0_decode_byte_float(block[b], digits[b]); break;
        default: hsdr_ptq1_0_decode_byte_int(block[b], digits[b]); break;
        }
    }
    for (int e = 0; e < HSDR_QK; e++) {
        int b, n;
        hsdr_ptq1_0_locate(e, &b, &n);
        t[e] = (int8_t)(digits[b][n] - 1);
    }
}

uint16_t hsdr_ptq1_0_d_bits(const uint8_t block[HSDR_PTQ1_0_BYTES])
{
    return (uint16_t)(block[26] | (block[27] << 8));
}

void hsdr_ptq1_0_quantize(const float w[HSDR_QK], uint8_t block[HSDR_PTQ1_0_BYTES])
{
    float amax = 0.0f;
    for (int i = 0; i < HSDR_QK; i++)
        amax = fmaxf(amax, fabsf(w[i]));
    float id = amax != 0.0f ? 1.0f / amax : 0.0f;
    int8_t t[HSDR_QK];
    for (int i = 0; i < HSDR_QK; i++) {
        float prod = w[i] * id; /* one fp32 rounding; lroundf then rounds half away from zero */
        long r = lroundf(prod);
        t[i] = (int8_t)(r < -1 ? -1 : r > 1 ? 1 : r); /* |prod| <= 1 up to rounding: the clamp never changes a value */
    }
    hsdr_ptq1_0_pack(t, hsdr_fp32_to_fp16(amax), block);
}

void hsdr_ptq1_0_to_masks(const uint8_t block[HSDR_PTQ1_0_BYTES], uint64_t nz[2], uint64_t neg[2])
{
    int8_t t[HSDR_QK];
    hsdr_ptq1_0_unpack(block, t, HSDR_DECODE_INT);
    nz[0] = nz[1] = neg[0] = neg[1] = 0;
    for (int i = 0; i < HSDR_QK; i++) {
        uint64_t bit = 1ull << (i & 63);
        if (t[i] != 0)
            nz[i >> 6] |= bit;
        if (t[i] < 0)
            neg[i >> 6] |= bit;
    }
}

void hsdr_pq2_0_pack(const uint8_t codes[HSDR_QK], uint16_t d_bits, uint8_t block[HSDR_PQ2_0_BYTES])
{
    block[0] = (uint8_t)(d_bits & 0xff);
    block[1] = (uint8_t)(d_bits >> 8);
    memset(block + 2, 0, 32);
    for (int j = 0; j < HSDR_QK; j++)
        block[2 + j / 4] |= (uint8_t)((codes[j] & 3u) << (2 * (j % 4)));
}

void hsdr_pq2_0_unpack(const uint8_t block[HSDR_PQ2_0_BYTES], uint8_t codes[HSDR_QK], uint16_t *d_bits)
{
    if (d_bits)
        *d_bits = (uint16_t)(block[0] | (block[1] << 8));
    for (int j = 0; j < HSDR_QK; j++)
        codes[j] = (uint8_t)((block[2 + j / 4] >> (2 * (j % 4))) & 3u);
}

void hsdr_pq2_0_quantize(const float w[HSDR_QK], uint8_t block[HSDR_PQ2_0_BYTES])
{
    float amax = 0.0f;
    for (int i = 0; i < HSDR_QK; i++)
        amax = fmaxf(amax, fabsf(w[i]));
    uint8_t codes[HSDR_QK];
    for (int i = 0; i < HSDR_QK; i++) {
        if (amax == 0.0f) {
            codes[i] = 1;
            continue;
        }
        float c = roundf(w[i] / amax) + 1.0f;
        codes[i] = (uint8_t)(c < 0.0f ? 0 : c > 3.0f ? 3 : c);
    }
    hsdr_pq2_0_pack(codes, hsdr_fp32_to_fp16(amax), block);
}

int hsdr_pq2_0_to_ternary(const uint8_t block[HSDR_PQ2_0_BYTES], int8_t t[HSDR_QK])
{
    uint8_t codes[HSDR_QK];
    hsdr_pq2_0_unpack(block, codes, NULL);
    for (int j = 0; j < HSDR_QK; j++) {
        if (codes[j] == 3)
            return j;
        t[j] = (int8_t)(codes[j] - 1);
    }
    return -1;
}

void hsdr_ptq1_0_to_pq2_0(const uint8_t in[HSDR_PTQ1_0_BYTES], uint8_t out[HSDR_PQ2_0_BYTES])
{
    int8_t t[HSDR_QK];
    uint8_t codes[HSDR_QK];
    hsdr_ptq1_0_unpack(in, t, HSDR_DECODE_INT);
    for (int j = 0; j < HSDR_QK; j++)
        codes[j] = (uint8_t)(t[j] + 1);
    hsdr_pq2_0_pack(codes, hsdr_ptq1_0_d_bits(in), out);
}
