/* LNS8 activation code "base74" (S1E4L3), spec/lns8.md sections 1-2.
 * Byte = (neg << 7) | k; k = 0 is zero; |x| = 2^((k-74)/8) = 2^(q-9) * c_p with p = k & 7, q = k >> 3.
 * Encoding is nearest in the log domain, decided with the exact mantissa thresholds (never log2 in floating point),
 * with saturation to 127, the half_min underflow rule, and a power-of-two pre-scale e (encode x * 2^-e). */
#ifndef HSDR_LNS8_H
#define HSDR_LNS8_H
#include <stddef.h>
#include <stdint.h>

#define HSDR_LNS8_KMAX 127
#define HSDR_LNS8_BIAS 74

/* Mantissa thresholds MT_i = ceil((2^((i-0.5)/8) - 1) * 2^23), i = 1..8. */
extern const uint32_t hsdr_lns8_mt[8];
/* Smallest mantissa field m with 1 + m/2^23 >= 2^(7/8): the half_min threshold 2^(-81/8) = 2^-11 * 2^(7/8). */
#define HSDR_LNS8_HALF_MIN_MT 6996167u

enum hsdr_lns8_status {
    HSDR_LNS8_OK = 0,
    HSDR_LNS8_ERR_NAN = -1,          /* a NaN input: never encoded */
    HSDR_LNS8_ERR_INF_ABSMAX = -2,   /* automatic pre-scale asked for an infinite absmax */
};
const char *hsdr_lns8_strerror(int status);

/* k_unclamped = 8E + 74 + j for a normal fp32 |x| (E unbiased exponent, j = #{MT_i <= mantissa}).
 * Returns 0 and sets *k for normal values; returns -1 for zero, subnormal, infinite or NaN input. */
int hsdr_lns8_k_unclamped(float x, int *k);

/* Encode one non-NaN value with pre-scale e (x * 2^-e). NaN input returns 0x00: callers must refuse NaN first
 * (hsdr_lns8_encode does). */
uint8_t hsdr_lns8_encode_one(float x, int e);

/* Encode n values with pre-scale e. On a NaN returns HSDR_LNS8_ERR_NAN and its index in *bad (codes undefined). */
int hsdr_lns8_encode(const float *x, size_t n, int e, uint8_t *codes, size_t *bad);

/* Automatic pre-scale: e = ceil((k_unclamped(absmax) - 127) / 8) over normal values (subnormals ignored; 0 when none
 * is left), so the largest code lands in 120..127. NaN -> ERR_NAN, infinite absmax -> ERR_INF_ABSMAX, index in *bad. */
int hsdr_lns8_auto_prescale(const float *x, size_t n, int *e, size_t *bad);

/* Decoded magnitude with sign, in fp64: (+-)2^((k-74)/8); k = 0 (0x00 or 0x80) decodes to +0. Correctly rounded. */
double hsdr_lns8_decode(uint8_t code);
/* The same rounded to fp32 (for fp32 kernels). */
float hsdr_lns8_decode_f32(uint8_t code);

#endif
