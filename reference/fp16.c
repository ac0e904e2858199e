#include "fp16.h"

#include <math.h>
#include <string.h>

uint32_t hsdr_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float hsdr_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t hsdr_fp32_to_fp16(float f)
{
    uint32_t x = hsdr_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;

    if (ax > 0x7f800000u) /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 (the tie above 65504 rounds to even = 2^16): infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        /* Below 2^-14: an fp16 subnormal (or 0, or the smallest normal after rounding up). Scaling by 2^24 is exact,
         * and rint (default rounding mode: nearest even) gives the subnormal's integer significand; 1024 correctly
         * becomes the bit pattern of 2^-14. */
        float scaled = hsdr_f32_from_bits(ax) * 0x1p24f;
        return (uint16_t)(sign | (uint16_t)rintf(scaled));
    }
    uint32_t h = ((((ax >> 23) - 127u + 15u) << 10) | ((ax & 0x7fffffu) >> 13));
    uint32_t rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry out of the significand correctly bumps the exponent */
    return (uint16_t)(sign | h);
}

float hsdr_fp16_to_fp32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f)
        return hsdr_f32_from_bits(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = (float)man * 0x1p-24f; /* exact: man < 2^10 */
        return sign ? -v : v;
    }
    return hsdr_f32_from_bits(sign | ((exp - 15u + 127u) << 23) | (man << 13));
}
