#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hadamard.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void hsdr_rng_seed(hsdr_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t hsdr_rng_u64(hsdr_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double hsdr_rng_uniform(hsdr_rng *r)
{
    return (double)(hsdr_rng_u64(r) >> 11) * 0x1p-53;
}

uint32_t hsdr_rng_below(hsdr_rng *r, uint32_t n)
{
    return (uint32_t)(((hsdr_rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

double hsdr_rng_gaussian(hsdr_rng *r)
{
    double u1 = 1.0 - hsdr_rng_uniform(r); /* (0, 1] */
    double u2 = hsdr_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double hsdr_rng_laplace(hsdr_rng *r)
{
    double u = hsdr_rng_uniform(r) - 0.5;
    double b = 1.0 / sqrt(2.0); /* variance 2 b^2 = 1 */
    return u < 0 ? b * log(1.0 + 2.0 * u) : -b * log(1.0 - 2.0 * u);
}

double hsdr_rng_student_t3(hsdr_rng *r)
{
    double z = hsdr_rng_gaussian(r);
    double chi2 = 0.0;
    for (int i = 0; i < 3; i++) {
        double g = hsdr_rng_gaussian(r);
        chi2 += g * g;
    }
    /* t3 has variance 3: divide by sqrt(3) for unit variance. */
    return z / sqrt(chi2 / 3.0) / sqrt(3.0);
}

static const char *const dist_names[HSDR_DIST_COUNT] = {"gaussian", "laplace", "student-t3", "bonsai"};

const char *hsdr_dist_name(hsdr_dist d)
{
    return (unsigned)d < HSDR_DIST_COUNT ? dist_names[d] : "?";
}

int hsdr_dist_from_name(const char *name, hsdr_dist *d)
{
    for (int i = 0; i < HSDR_DIST_COUNT; i++)
        if (strcmp(name, dist_names[i]) == 0) {
            *d = (hsdr_dist)i;
            return 0;
        }
    return -1;
}

static void rms_normalize(float *x, size_t K)
{
    double ss = 0.0;
    for (size_t i = 0; i < K; i++)
        ss += (double)x[i] * x[i];
    double scale = ss > 0.0 ? 1.0 / sqrt(ss / (double)K) : 0.0;
    for (size_t i = 0; i < K; i++)
        x[i] = (float)(x[i] * scale);
}

int hsdr_dist_fill(hsdr_dist d, hsdr_rng *r, float *x, size_t K, const int8_t *signs)
{
    switch (d) {
    case HSDR_DIST_GAUSSIAN:
        for (size_t i = 0; i < K; i++)
            x[i] = (float)hsdr_rng_gaussian(r);
        break;
    case HSDR_DIST_LAPLACE:
        for (size_t i = 0; i < K; i++)
            x[i] = (float)hsdr_rng_laplace(r);
        break;
    case HSDR_DIST_STUDENT_T3:
        for (size_t i = 0; i < K; i++)
            x[i] = (float)hsdr_rng_student_t3(r);
        break;
    case HSDR_DIST_BONSAI: {
        if (K % HSDR_WHT_CHUNK != 0)
            return -1;
        /* Residual-stream-like: Student-t body plus ~0.5% outlier channels 20-60x larger, RMSNorm'd, then the fold. */
        for (size_t i = 0; i < K; i++)
            x[i] = (float)hsdr_rng_student_t3(r);
        for (size_t j = 0; j < K / 200 + 1; j++)
            x[hsdr_rng_below(r, (uint32_t)K)] = (float)((hsdr_rng_uniform(r) < 0.5 ? -1 : 1) *
                                                        (20.0 + 40.0 * hsdr_rng_uniform(r)));
        rms_normalize(x, K);
        int8_t *own = NULL;
        if (!signs) {
            own = malloc(K);
            if (!own)
                return -1;
            for (size_t i = 0; i < K; i++)
                own[i] = (hsdr_rng_u64(r) >> 63) ? -1 : 1;
            signs = own;
        }
        hsdr_hadamard_fold(x, signs, K); /* orthonormal: the RMS stays 1 (up to fp32 rounding) */
        free(own);
        return 0;
    }
    default:
        return -1;
    }
    rms_normalize(x, K);
    return 0;
}
