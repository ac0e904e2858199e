#include "q8.h"

#include <math.h>

#include "fp16.h"

static float block_amax(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < HSDR_Q8_BLOCK; j++)
        amax = fmaxf(amax, fabsf(x[j]));
    return amax;
}

void hsdr_q8_0_quantize_x86(const float *x, size_t k, hsdr_block_q8_0 *y)
{
    for (size_t b = 0; b < k / HSDR_Q8_BLOCK; b++, x += HSDR_Q8_BLOCK) {
        float amax = block_amax(x);
        float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[b].d = hsdr_fp32_to_fp16(d);
        for (int j = 0; j < HSDR_Q8_BLOCK; j++)
            y[b].qs[j] = (int8_t)rintf(x[j] * id); /* default rounding mode: nearest even */
    }
}

void hsdr_q8_0_quantize_portable(const float *x, size_t k, hsdr_block_q8_0 *y)
{
    for (size_t b = 0; b < k / HSDR_Q8_BLOCK; b++, x += HSDR_Q8_BLOCK) {
        float amax = block_amax(x);
        float d = amax / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = hsdr_fp32_to_fp16(d);
        for (int j = 0; j < HSDR_Q8_BLOCK; j++)
            y[b].qs[j] = (int8_t)roundf(x[j] * id);
    }
}

void hsdr_q8_1_quantize(const float *x, size_t k, hsdr_block_q8_1 *y)
{
    for (size_t b = 0; b < k / HSDR_Q8_BLOCK; b++, x += HSDR_Q8_BLOCK) {
        float amax = block_amax(x);
        float d = amax / 127.0f;
        int sum = 0;
        for (int j = 0; j < HSDR_Q8_BLOCK; j++) {
            int q = amax == 0.0f ? 0 : (int)roundf(x[j] / d);
            y[b].qs[j] = (int8_t)q;
            sum += q;
        }
        y[b].d = hsdr_fp32_to_fp16(d);
        y[b].s = hsdr_fp32_to_fp16(d * (float)sum);
    }
}

void hsdr_q8_1_quantize_recip(const float *x, size_t k, hsdr_block_q8_1 *y)
{
    for (size_t b = 0; b < k / HSDR_Q8_BLOCK; b++, x += HSDR_Q8_BLOCK) {
        const float amax = block_amax(x), d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < HSDR_Q8_BLOCK; j++) {
            const int q = (int)roundf(x[j] * id);
            y[b].qs[j] = (int8_t)q;
            sum += q;
        }
        y[b].d = hsdr_fp32_to_fp16(d);
        y[b].s = hsdr_fp32_to_fp16((float)sum * d);
    }
}
