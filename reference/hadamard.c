#include "hadamard.h"

void hsdr_wht(float *x, size_t n)
{
    for (size_t h = 1; h < n; h <<= 1)
        for (size_t i = 0; i < n; i += 2 * h)
            for (size_t j = i; j < i + h; j++) {
                float a = x[j], b = x[j + h];
                x[j] = a + b;
                x[j + h] = a - b;
            }
}

int hsdr_hadamard_fold(float *x, const int8_t *signs, size_t K)
{
    if (K % HSDR_WHT_CHUNK != 0)
        return -1;
    for (size_t i = 0; i < K; i++)
        x[i] = signs[i] < 0 ? -x[i] : x[i];
    for (size_t c = 0; c < K; c += HSDR_WHT_CHUNK) {
        hsdr_wht(x + c, HSDR_WHT_CHUNK);
        for (size_t i = 0; i < HSDR_WHT_CHUNK; i++)
            x[c + i] *= 1.0f / 32.0f; /* exact power-of-two scaling: H_1024 / sqrt(1024) */
    }
    return 0;
}
