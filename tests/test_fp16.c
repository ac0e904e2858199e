/* fp16 <-> fp32: every fp16 value round-trips; fp32 -> fp16 agrees with an independent double-precision rounding
 * model and (where the CPU has it) with the F16C instruction, over structured and fresh random inputs. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "rng.h"
#include "testing.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "cpu/cpu_features.h"
__attribute__((target("f16c"))) static uint16_t f16c_convert(float f)
{
    return (uint16_t)_cvtss_sh(f, 0); /* rounding immediate 0: nearest even */
}
#endif

/* Independent model: nearest fp16 by exact scaling in double (every step below is exact), ties to even. */
static uint16_t model_fp16(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double a = fabs((double)f);
    if (isnan(f))
        return 0x7e00;
    if (a >= 65520.0)
        return sign | 0x7c00;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int q = e - 1 < -14 ? -14 : e - 1; /* exponent of the fp16 binade (subnormals share -14) */
    double scaled = ldexp(a, 10 - q);  /* the significand in units of the last fp16 place */
    double r = rint(scaled);           /* nearest even */
    double v = ldexp(r, q - 10);
    /* re-encode v (exactly an fp16 value or 65536 -> inf, excluded above) */
    if (v == 0.0)
        return sign;
    frexp(v, &e);
    if (e - 1 < -14)
        return sign | (uint16_t)ldexp(v, 24);
    return sign | (uint16_t)(((e - 1 + 15) << 10) | ((uint16_t)ldexp(v, 10 - (e - 1)) & 0x3ff));
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_fp16"));

    /* every fp16 bit pattern: fp16 -> fp32 exact (compared with ldexp), and back unchanged (NaN stays NaN) */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = hsdr_fp16_to_fp32((uint16_t)h);
        uint32_t exp = (h >> 10) & 31, man = h & 1023;
        if (exp == 31) {
            CHECK(man ? isnan(f) : isinf(f), "h=0x%04x", h);
            if (man)
                continue;
        } else {
            double want = exp ? ldexp(1024 + man, (int)exp - 25) : ldexp(man, -24);
            CHECK(fabs((double)f) == want && (signbit(f) != 0) == ((h & 0x8000) != 0), "h=0x%04x -> %g", h, (double)f);
        }
        CHECK(hsdr_fp32_to_fp16(f) == h, "round trip of 0x%04x gave 0x%04x", h, hsdr_fp32_to_fp16(f));
    }

    int have_f16c = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    have_f16c = hsdr_cpu_has_f16c();
#endif
    printf("test_fp16: F16C cross-check %s\n", have_f16c ? "on" : "off (CPU lacks F16C)");
    /* structured: every top-20-bit prefix with low bits around the rounding point (13 dropped bits) */
    static const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0800, 0x17ff};
    long n = 0;
    for (uint32_t hi = 0; hi < (1u << 19); hi++) {
        for (size_t j = 0; j < sizeof lows / sizeof lows[0]; j++) {
            uint32_t bits = (hi << 13) | lows[j];
            for (int s = 0; s < 2; s++, bits ^= 0x80000000u) {
                float f = hsdr_f32_from_bits(bits);
                if (isnan(f))
                    continue;
                uint16_t got = hsdr_fp32_to_fp16(f);
                CHECK(got == model_fp16(f), "f=%a (0x%08x): got 0x%04x, model 0x%04x", (double)f, bits, got,
                      model_fp16(f));
#if defined(__x86_64__)
                if (have_f16c)
                    CHECK(got == f16c_convert(f), "f=%a: got 0x%04x, F16C 0x%04x", (double)f, got, f16c_convert(f));
#endif
                n++;
            }
        }
    }
    /* fresh random bit patterns */
    for (int i = 0; i < 2000000; i++) {
        uint32_t bits = (uint32_t)hsdr_rng_u64(&rng);
        float f = hsdr_f32_from_bits(bits);
        if (isnan(f))
            continue;
        uint16_t got = hsdr_fp32_to_fp16(f);
        CHECK(got == model_fp16(f), "f=%a: got 0x%04x, model 0x%04x", (double)f, got, model_fp16(f));
#if defined(__x86_64__)
        if (have_f16c)
            CHECK(got == f16c_convert(f), "f=%a: got 0x%04x, F16C 0x%04x", (double)f, got, f16c_convert(f));
#endif
        n++;
    }
    /* the spec's named edges */
    CHECK(hsdr_fp32_to_fp16(65504.0f) == 0x7bff, "max");
    CHECK(hsdr_fp32_to_fp16(65519.99f) == 0x7bff, "below 65520");
    CHECK(hsdr_fp32_to_fp16(65520.0f) == 0x7c00, "65520 overflows");
    CHECK(hsdr_fp32_to_fp16(0x1p-24f) == 0x0001, "smallest subnormal");
    CHECK(hsdr_fp32_to_fp16(0x1p-25f) == 0x0000, "half of the smallest subnormal ties to even 0");
    CHECK(hsdr_fp32_to_fp16(0x1.8p-25f) == 0x0001, "0.75 ulp rounds up");
    CHECK(isnan(hsdr_fp16_to_fp32(hsdr_fp32_to_fp16(NAN))), "NaN stays NaN");
    printf("test_fp16: %ld fp32 inputs compared\n", n);
    return test_finish("test_fp16");
}
