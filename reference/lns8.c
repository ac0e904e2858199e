#include "lns8.h"

#include <math.h>

#include "fp16.h"
#include "lns8_const.h"

const uint32_t hsdr_lns8_mt[8] = {371396u, 1164244u, 2028851u, 2971711u, 3999908u, 5121165u, 6343903u, 7677310u};

const char *hsdr_lns8_strerror(int status)
{
    switch (status) {
    case HSDR_LNS8_OK: return "ok";
    case HSDR_LNS8_ERR_NAN: return "NaN input (LNS8 refuses to encode NaN)";
    case HSDR_LNS8_ERR_INF_ABSMAX: return "infinite absmax (automatic pre-scale undefined)";
    default: return "unknown LNS8 error";
    }
}

int hsdr_lns8_k_unclamped(float x, int *k)
{
    uint32_t u = hsdr_f32_bits(x) & 0x7fffffffu;
    uint32_t biased = u >> 23;
    if (biased == 0 || biased == 0xff)
        return -1; /* zero, subnormal, inf, NaN */
    uint32_t m = u & 0x7fffffu;
    int j = 0;
    while (j < 8 && m >= hsdr_lns8_mt[j])
        j++;
    *k = 8 * ((int)biased - 127) + HSDR_LNS8_BIAS + j;
    return 0;
}

uint8_t hsdr_lns8_encode_one(float x, int e)
{
    uint32_t u = hsdr_f32_bits(x);
    uint8_t neg = (uint8_t)((u >> 31) << 7);
    uint32_t au = u & 0x7fffffffu;
    if (au == 0x7f800000u)
        return (uint8_t)(neg | HSDR_LNS8_KMAX); /* +-Inf saturates whatever e is */
    int k;
    if (hsdr_lns8_k_unclamped(x, &k) != 0)
        return 0; /* +-0, subnormals (and NaN, refused by callers) */
    /* Shift by the pre-scale in 64-bit to be safe against absurd e. */
    long long ks = (long long)k - 8LL * e;
    if (ks > HSDR_LNS8_KMAX)
        return (uint8_t)(neg | HSDR_LNS8_KMAX);
    if (ks >= 1)
        return (uint8_t)(neg | (uint8_t)ks);
    /* Underflow: code 1 iff |x| * 2^-e >= 2^(-81/8) = 2^-11 * 2^(7/8). With E' = E - e the unbiased exponent of the
     * shifted value: E' > -11 always qualifies, E' = -11 needs the mantissa threshold, E' < -11 never does. */
    long long eshift = (long long)((au >> 23) & 0xff) - 127 - e;
    uint32_t m = au & 0x7fffffu;
    if (eshift > -11 || (eshift == -11 && m >= HSDR_LNS8_HALF_MIN_MT))
        return (uint8_t)(neg | 1u);
    return 0;
}

int hsdr_lns8_encode(const float *x, size_t n, int e, uint8_t *codes, size_t *bad)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            if (bad)
                *bad = i;
            return HSDR_LNS8_ERR_NAN;
        }
        codes[i] = hsdr_lns8_encode_one(x[i], e);
    }
    return HSDR_LNS8_OK;
}

/* ceil(a / 8) for any sign of a. */
static int ceil_div8(int a)
{
    return a >= 0 ? (a + 7) / 8 : -((-a) / 8);
}

int hsdr_lns8_auto_prescale(const float *x, size_t n, int *e, size_t *bad)
{
    uint32_t best = 0; /* largest |x| bit pattern among normal values: monotone in magnitude */
    for (size_t i = 0; i < n; i++) {
        uint32_t au = hsdr_f32_bits(x[i]) & 0x7fffffffu;
        if (au > 0x7f800000u || au == 0x7f800000u) {
            if (bad)
                *bad = i;
            return au > 0x7f800000u ? HSDR_LNS8_ERR_NAN : HSDR_LNS8_ERR_INF_ABSMAX;
        }
        if ((au >> 23) != 0 && au > best)
            best = au;
    }
    if (best == 0) {
        *e = 0;
        return HSDR_LNS8_OK;
    }
    int k = 0;
    (void)hsdr_lns8_k_unclamped(hsdr_f32_from_bits(best), &k); /* best is normal: always succeeds */
    *e = ceil_div8(k - HSDR_LNS8_KMAX);
    return HSDR_LNS8_OK;
}

double hsdr_lns8_decode(uint8_t code)
{
    int k = code & 0x7f;
    if (k == 0)
        return 0.0;
    /* c_p rounded to double is correctly rounded; scaling by 2^(q-9) is exact. */
    double v = ldexp(hsdr_lns8_cp_hi[k & 7], (k >> 3) - 9);
    return (code & 0x80) ? -v : v;
}

float hsdr_lns8_decode_f32(uint8_t code)
{
    int k = code & 0x7f;
    if (k == 0)
        return 0.0f;
    /* Round c_p from its double-double form so the fp32 value is correctly rounded (no double rounding issue:
     * c_p is irrational except for p = 2, so hi is never exactly halfway between two floats' midpoint). */
    float v = ldexpf((float)hsdr_lns8_cp_hi[k & 7], (k >> 3) - 9);
    return (code & 0x80) ? -v : v;
}
