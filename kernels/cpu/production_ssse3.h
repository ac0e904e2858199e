/* cpu.production: the production-equivalent PTQ1_0 x Q8_0 kernel (the fork's x86 design: SSSE3 compare-form digits,
 * maddubs, the fused fp32 sequence of spec/ptq1_0.md section 7), and the Q8_0 quantizer and sums every CPU kernel on
 * Q8_0 activations shares. Layout, stages and how to time it: production_ssse3.c. */
#ifndef HSDR_CPU_PRODUCTION_SSSE3_H
#define HSDR_CPU_PRODUCTION_SSSE3_H
#include "../kernel.h"
#include "../../reference/q8.h"

/* The production x86 Q8_0 quantizer (AVX2 when the CPU has it, as the production AVX2 build runs it; the
 * reference's scalar x86 quantizer otherwise): K/32 blocks into q, and their fp16 scales widened to fp32 into d.
 * Bit-identical to hsdr_q8_0_quantize_x86. Shared by every CPU kernel on Q8_0 activations. */
void hsdr_cpu_q8_0_quantize(const float *x, int K, hsdr_block_q8_0 *q, float *d);
/* The exact sum of the 32 q of each of n Q8_0 blocks (the (t - 1) q = t q - q correction of the 2-bit and
 * rows-in-lanes kernels). */
void hsdr_cpu_q8_0_sums(const hsdr_block_q8_0 *q, int n, int32_t *sums);

const char *hsdr_cpu_production_unavailable(void);
size_t hsdr_cpu_production_act_bytes(int K);
size_t hsdr_cpu_production_scratch_bytes(int K, int R);
void hsdr_cpu_production_prologue(const hsdr_exec *e);
void hsdr_cpu_production_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_production_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

#endif
