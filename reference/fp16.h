/* fp16 <-> fp32 conversions (IEEE binary16, round to nearest even).
 * fp32 -> fp16 rounds to nearest even with gradual underflow to fp16 subnormals and overflow to infinity from
 * 65520 upward (spec/ptq1_0.md section 7); NaN stays NaN (quiet). fp16 -> fp32 is exact. */
#ifndef HSDR_FP16_H
#define HSDR_FP16_H
#include <stdint.h>

uint16_t hsdr_fp32_to_fp16(float f);
float hsdr_fp16_to_fp32(uint16_t h);

/* Bit casts (memcpy: no aliasing games). */
uint32_t hsdr_f32_bits(float f);
float hsdr_f32_from_bits(uint32_t u);

#endif
