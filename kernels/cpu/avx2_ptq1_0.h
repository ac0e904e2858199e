/* cpu.avx2: our own AVX2 PTQ1_0 x Q8_0 kernel, bit-identical to production: eight rows in the dword lanes of every
 * vector, compare-form digits, maddubs against broadcast activations, the fused fp32 sequence across rows.
 * Layout, stages and how to time it: avx2_ptq1_0.c. */
#ifndef HSDR_CPU_AVX2_PTQ1_0_H
#define HSDR_CPU_AVX2_PTQ1_0_H
#include "../../reference/q8.h"
#include "../kernel.h"

/* The activations of cpu.avx2 (and of cpu.avx512, which shares its prologue): the production Q8_0 blocks, their q in
 * natural order, the exact sum of q per Q8_0 block and the fp32 scales, all views into hsdr_exec.act. */
typedef struct {
    int8_t *q;
    int32_t *qsum;
    float *d;
    hsdr_block_q8_0 *blocks;
} hsdr_cpu_q8_act;
hsdr_cpu_q8_act hsdr_cpu_q8_act_of(const hsdr_exec *e);

/* NULL when the CPU has AVX2, FMA and F16C (also the requirement of cpu.planar2 and cpu.pq2_0), else why not. */
const char *hsdr_cpu_avx2_unavailable(void);
size_t hsdr_cpu_avx2_act_bytes(int K);
size_t hsdr_cpu_avx2_scratch_bytes(int K, int R);
void hsdr_cpu_avx2_prologue(const hsdr_exec *e);
void hsdr_cpu_avx2_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_avx2_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

#endif
