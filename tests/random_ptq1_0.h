/* Random PTQ1_0 weights for the tests: uniform trits, scales (1 + U) 2^(-10..1) (exact in fp16). */
#ifndef HSDR_TEST_RANDOM_PTQ1_0_H
#define HSDR_TEST_RANDOM_PTQ1_0_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "fp16.h"
#include "ptq1_0.h"
#include "rng.h"

static inline void random_ptq1_0_blocks(hsdr_rng *r, uint8_t *W, size_t blocks)
{
    for (size_t g = 0; g < blocks; g++) {
        int8_t t[HSDR_QK];
        for (int i = 0; i < HSDR_QK; i++)
            t[i] = (int8_t)hsdr_rng_below(r, 3) - 1;
        float d = (float)ldexp(1.0 + hsdr_rng_uniform(r), (int)hsdr_rng_below(r, 12) - 10);
        hsdr_ptq1_0_pack(t, hsdr_fp32_to_fp16(d), W + g * HSDR_PTQ1_0_BYTES);
    }
}

#endif
