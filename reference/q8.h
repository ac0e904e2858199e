/* 8-bit activation blocks of the production paths (spec/ptq1_0.md sections 3 and 5).
 * Q8_0: 32 int8 + fp16 d (34 bytes). Two quantizers:
 *   x86 production:  d = amax / 127.0f; stored fp16(d) (nearest even); id = amax != 0 ? 127.0f / amax : 0;
 *                    q = round-to-nearest-even(x * id) in fp32.        (used by ggml's AVX2 builds: "production")
 *   portable:        d = amax / 127.0f; id = d != 0 ? 1 / d : 0; q = roundf(x * id) (half away from zero).
 * Q8_1 (CUDA activations): fp16 d, fp16 s, 32 int8; d = amax / 127.0f, q = roundf(x / d) (half away from zero;
 *   0 when amax = 0); s = fp16(d * sum of q) -- the sum convention of ggml's CPU reference quantizer; the CUDA
 *   issue pins the device-side convention against this one. */
#ifndef HSDR_Q8_H
#define HSDR_Q8_H
#include <stddef.h>
#include <stdint.h>

#define HSDR_Q8_BLOCK 32

typedef struct {
    uint16_t d; /* fp16 bits */
    int8_t qs[HSDR_Q8_BLOCK];
} hsdr_block_q8_0;

typedef struct {
    uint16_t d; /* fp16 bits */
    uint16_t s; /* fp16 bits */
    int8_t qs[HSDR_Q8_BLOCK];
} hsdr_block_q8_1;

/* k must be a multiple of 32. */
void hsdr_q8_0_quantize_x86(const float *x, size_t k, hsdr_block_q8_0 *y);
void hsdr_q8_0_quantize_portable(const float *x, size_t k, hsdr_block_q8_0 *y);
void hsdr_q8_1_quantize(const float *x, size_t k, hsdr_block_q8_1 *y);
/* The same with a reciprocal, as the Vulkan quantizer (ggml's quantize_q8_1.comp) writes it: d = amax / 127,
 * q = round(x * (1 / d)) (0 when d = 0), every operation one fp32 rounding, round half away from zero; s = fp16(d *
 * sum q). Differs from hsdr_q8_1_quantize where x * (1 / d) and x / d round to different integers. */
void hsdr_q8_1_quantize_recip(const float *x, size_t k, hsdr_block_q8_1 *y);

#endif
