/* LNS8 codec: thresholds (+-1 ulp at many exponents, decided independently in long double), the 256 decodes,
 * encode(decode(k)) = k, saturation, half_min underflow, pre-scale, automatic pre-scale, NaN/Inf refusal. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "lns8.h"
#include "lns8_const.h"
#include "rng.h"
#include "testing.h"

/* Independent nearest-in-log code of a normal |x| (no pre-scale): compare |x|^16 with 2^(2k - 147) in long double.
 * 16th powers of 24-bit significands need 384 bits exactly; long double's 64 keep a relative error ~1e-18, far
 * below the >= 2^-30 relative gap between any fp32 value and a threshold (asserted by the MT test below). */
static int model_k(float x)
{
    long double a = fabsl((long double)x);
    int k = (int)floorl(8.0L * log2l(a)) + 74; /* a first guess, corrected exactly below */
    for (int it = 0; it < 4; it++) {
        /* nearest: k if 2^((k-0.5-74)/8) <= a < 2^((k+0.5-74)/8) */
        long double p = powl(a, 16.0L);
        if (p < ldexpl(1.0L, 2 * k - 1 - 148))
            k--;
        else if (p >= ldexpl(1.0L, 2 * k + 1 - 148))
            k++;
        else
            break;
    }
    return k;
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_lns8"));

    /* the thresholds themselves: MT_i is the first mantissa at or above 2^((i-0.5)/8) (checked in long double) */
    for (int i = 1; i <= 8; i++) {
        long double edge = powl(2.0L, (i - 0.5L) / 8.0L);
        long double at = 1.0L + hsdr_lns8_mt[i - 1] / 8388608.0L, below = 1.0L + (hsdr_lns8_mt[i - 1] - 1) / 8388608.0L;
        CHECK(at > edge && below < edge, "MT_%d", i);
        CHECK((at - edge) / edge > 1e-12L && (edge - below) / edge > 1e-12L, "MT_%d not clear of the edge", i);
    }
    {
        long double edge = powl(2.0L, 7.0L / 8.0L);
        CHECK(1.0L + HSDR_LNS8_HALF_MIN_MT / 8388608.0L > edge && 1.0L + (HSDR_LNS8_HALF_MIN_MT - 1) / 8388608.0L < edge,
              "half_min threshold");
    }

    /* +-1 ulp around every threshold at exponents -16..+6 (codes stay in 1..127) */
    for (int E = -16; E <= 6; E++) {
        for (int i = 1; i <= 8; i++) {
            for (int d = -1; d <= 0; d++) {
                uint32_t m = hsdr_lns8_mt[i - 1] + (uint32_t)d;
                float x = hsdr_f32_from_bits(((uint32_t)(E + 127) << 23) | m);
                int want = 8 * E + 74 + i + d;
                if (want < 1 || want > 127)
                    continue;
                CHECK(model_k(x) == want, "model disagrees at E=%d i=%d d=%d", E, i, d);
                for (int s = 0; s < 2; s++) {
                    float xs = s ? -x : x;
                    uint8_t c = hsdr_lns8_encode_one(xs, 0);
                    CHECK(c == (uint8_t)((s << 7) | want), "x=%a: got 0x%02x want k=%d", (double)xs, c, want);
                    /* the same value shifted by a pre-scale: x * 2^(8j) with e = 8j... use e with x * 2^e */
                    float xe = ldexpf(xs, 3);
                    CHECK(hsdr_lns8_encode_one(xe, 3) == c, "pre-scale 3 at x=%a", (double)xs);
                }
            }
        }
    }

    /* fresh random normal values against the model (in range and out of range) */
    for (int n = 0; n < 200000; n++) {
        uint32_t bits = (uint32_t)(hsdr_rng_u64(&rng) & 0x7fffffffu);
        uint32_t ex = 127 - 16 + hsdr_rng_below(&rng, 24); /* |x| in 2^-16 .. 2^8 */
        bits = (ex << 23) | (bits & 0x7fffff);
        float x = hsdr_f32_from_bits(bits);
        int k = model_k(x);
        int want = k > 127 ? 127 : k;
        if (k < 1)
            continue; /* underflow is tested separately */
        int ku;
        CHECK(hsdr_lns8_k_unclamped(x, &ku) == 0 && ku == k, "k_unclamped x=%a", (double)x);
        CHECK(hsdr_lns8_encode_one(x, 0) == want, "x=%a: got %d want %d", (double)x, hsdr_lns8_encode_one(x, 0), want);
    }

    /* every code decodes to 2^((k-74)/8) and encodes back to itself at any pre-scale */
    for (int b = 0; b < 256; b++) {
        int k = b & 0x7f;
        double v = hsdr_lns8_decode((uint8_t)b);
        if (k == 0) {
            CHECK(v == 0.0, "0x%02x decodes to 0", b);
            continue;
        }
        double want = (b & 0x80 ? -1.0 : 1.0) * exp2((k - 74) / 8.0);
        CHECK(fabs(v - want) <= 2e-16 * fabs(want), "decode 0x%02x: %.17g vs %.17g", b, v, want);
        for (int e = -6; e <= 6; e++) {
            float xf = ldexpf(hsdr_lns8_decode_f32((uint8_t)b), e);
            CHECK(hsdr_lns8_encode_one(xf, e) == b, "encode(decode(0x%02x)) at e=%d", b, e);
        }
    }
    CHECK(hsdr_lns8_decode(74) == 1.0 && hsdr_lns8_decode(66) == 0.5 && hsdr_lns8_decode(82) == 2.0, "anchors");
    CHECK(hsdr_lns8_decode(0x80) == 0.0, "0x80 is zero");
    for (int p = 0; p < 8; p++)
        CHECK(hsdr_lns8_c31[p] == (int64_t)llrint(ldexp(exp2((p - 2) / 8.0), 31)), "C31[%d]", p);

    /* saturation and underflow (spec section 2 and the worked edge cases) */
    CHECK(hsdr_lns8_encode_one(103.0f, 0) == 0x7f, "103 saturates");
    CHECK(hsdr_lns8_encode_one(-1e9f, 0) == 0xff, "-1e9");
    CHECK(hsdr_lns8_encode_one(INFINITY, 0) == 0x7f && hsdr_lns8_encode_one(-INFINITY, 5) == 0xff, "inf");
    CHECK(hsdr_lns8_encode_one(0.0012f, 0) == 0x01 && hsdr_lns8_encode_one(0.0009f, 0) == 0x01, "half_min above");
    CHECK(hsdr_lns8_encode_one(0.0008f, 0) == 0x00 && hsdr_lns8_encode_one(1e-30f, 0) == 0x00, "half_min below");
    CHECK(hsdr_lns8_encode_one(-0.0009f, 0) == 0x81, "negative underflow to code 1 keeps its sign");
    CHECK(hsdr_lns8_encode_one(-0.0008f, 0) == 0x00, "no sign on zero");
    CHECK(hsdr_lns8_encode_one(-0.0f, 0) == 0x00 && hsdr_lns8_encode_one(0x1p-140f, -200) == 0x00, "zero, subnormal");
    CHECK(hsdr_lns8_encode_one(1.044f, 0) == 0x4a && hsdr_lns8_encode_one(1.045f, 0) == 0x4b, "log-domain rule");
    {
        /* half_min +-1 ulp, also under pre-scales: |x| 2^-e >= 2^(-81/8) */
        for (int e = -8; e <= 8; e++) {
            float at = ldexpf(hsdr_f32_from_bits(((uint32_t)(127 - 11) << 23) | HSDR_LNS8_HALF_MIN_MT), e);
            float below = ldexpf(hsdr_f32_from_bits(((uint32_t)(127 - 11) << 23) | (HSDR_LNS8_HALF_MIN_MT - 1)), e);
            CHECK(hsdr_lns8_encode_one(at, e) == 1 && hsdr_lns8_encode_one(below, e) == 0, "half_min at e=%d", e);
        }
    }

    /* NaN is an error with its index; the automatic pre-scale refuses NaN and Inf */
    {
        float x[5] = {1.0f, 2.0f, NAN, 3.0f, INFINITY};
        uint8_t codes[5];
        size_t bad = 99;
        int e;
        CHECK(hsdr_lns8_encode(x, 5, 0, codes, &bad) == HSDR_LNS8_ERR_NAN && bad == 2, "NaN index");
        CHECK(hsdr_lns8_auto_prescale(x, 5, &e, &bad) == HSDR_LNS8_ERR_NAN && bad == 2, "auto NaN");
        CHECK(hsdr_lns8_auto_prescale(x + 3, 2, &e, &bad) == HSDR_LNS8_ERR_INF_ABSMAX && bad == 1, "auto Inf");
        float sub[3] = {0x1p-140f, -0.0f, 0x1p-130f};
        CHECK(hsdr_lns8_auto_prescale(sub, 3, &e, &bad) == 0 && e == 0, "only subnormals: e = 0");
    }
    /* the spec's pre-scale example, and the automatic choice puts the largest code in 120..127 */
    {
        float x[5] = {1000.0f, -3.0f, 0.01f, 0.0f, 62.0f};
        uint8_t codes[5];
        int e;
        size_t bad;
        CHECK(hsdr_lns8_auto_prescale(x, 5, &e, &bad) == 0 && e == 4, "example e");
        CHECK(hsdr_lns8_encode(x, 5, e, codes, &bad) == 0 && codes[0] == 0x7a && codes[1] == 0xb7 && codes[2] == 0 &&
                  codes[3] == 0 && codes[4] == 0x5a,
              "example bytes");
    }
    for (int n = 0; n < 20000; n++) {
        float x[16];
        double scale = ldexp(1.0, (int)hsdr_rng_below(&rng, 60) - 30);
        for (int i = 0; i < 16; i++)
            x[i] = (float)(hsdr_rng_gaussian(&rng) * scale);
        int e;
        size_t bad;
        uint8_t codes[16];
        CHECK(hsdr_lns8_auto_prescale(x, 16, &e, &bad) == 0, "auto");
        hsdr_lns8_encode(x, 16, e, codes, &bad);
        int kmax = 0;
        for (int i = 0; i < 16; i++)
            kmax = (codes[i] & 0x7f) > kmax ? (codes[i] & 0x7f) : kmax;
        CHECK(kmax >= 120 && kmax <= 127, "largest code %d outside 120..127 (e=%d)", kmax, e);
    }
    /* monotone in |x|: a sweep of consecutive fp32 values never decreases the code */
    {
        int prev = 0;
        for (uint32_t b = 0x3a000000u; b < 0x43000000u; b += 977) {
            int c = hsdr_lns8_encode_one(hsdr_f32_from_bits(b), 0);
            CHECK(c >= prev, "monotone at 0x%08x", b);
            prev = c;
        }
    }
    return test_finish("test_lns8");
}
