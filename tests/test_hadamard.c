/* The Hadamard fold: the fast WHT equals the Sylvester matrix product; the normalized fold is orthonormal and its
 * inverse (fold again, then the signs) recovers x; K not a multiple of 1024 is refused. */
#include <math.h>
#include <string.h>

#include "hadamard.h"
#include "rng.h"
#include "testing.h"

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_hadamard"));
    for (int lg = 0; lg <= 10; lg += 2) {
        size_t n = (size_t)1 << lg;
        float x[1024], y[1024];
        for (size_t i = 0; i < n; i++)
            x[i] = (float)hsdr_rng_gaussian(&rng);
        memcpy(y, x, sizeof(float) * n);
        hsdr_wht(y, n);
        for (size_t i = 0; i < n; i++) {
            double s = 0.0, mag = 0.0;
            for (size_t j = 0; j < n; j++) {
                s += (__builtin_popcountll(i & j) & 1) ? -x[j] : x[j];
                mag += fabs(x[j]);
            }
            /* fp32 butterflies: lg levels of rounding, each <= 2^-24 relative of partial sums bounded by mag */
            CHECK(fabs(y[i] - s) <= lg * 0x1p-23 * mag, "n=%zu i=%zu: %g vs %g", n, i, (double)y[i], s);
        }
    }
    size_t K = 5120;
    float *x = malloc(sizeof(float) * K), *y = malloc(sizeof(float) * K);
    int8_t *s = malloc(K);
    for (size_t i = 0; i < K; i++) {
        x[i] = (float)hsdr_rng_gaussian(&rng);
        s[i] = (hsdr_rng_u64(&rng) >> 63) ? -1 : 1;
    }
    memcpy(y, x, sizeof(float) * K);
    CHECK(hsdr_hadamard_fold(y, s, K) == 0, "fold");
    double n0 = 0.0, n1 = 0.0;
    for (size_t i = 0; i < K; i++) {
        n0 += (double)x[i] * x[i];
        n1 += (double)y[i] * y[i];
    }
    CHECK(fabs(n1 / n0 - 1.0) < 1e-5, "norm preserved: %g", n1 / n0);
    /* inverse: H is symmetric and H H = 1024 I, so fold with all +1 signs, then apply s */
    int8_t *ones = malloc(K);
    memset(ones, 1, K);
    CHECK(hsdr_hadamard_fold(y, ones, K) == 0, "fold back");
    for (size_t i = 0; i < K; i++) {
        float back = s[i] < 0 ? -y[i] : y[i];
        CHECK(fabsf(back - x[i]) <= 1e-5f * (1.0f + fabsf(x[i])), "inverse at %zu: %g vs %g", i, (double)back,
              (double)x[i]);
    }
    float z[100] = {0};
    CHECK(hsdr_hadamard_fold(z, ones, 100) == -1, "K = 100 refused");
    free(x), free(y), free(s), free(ones);
    return test_finish("test_hadamard");
}
