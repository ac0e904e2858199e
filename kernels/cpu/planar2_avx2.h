/* Two AVX2 2-bit baselines, bit-identical to the production PTQ1_0 x Q8_0 fused sequence (spec/ptq1_0.md 4, 7), and
 * the activations they share:
 *   cpu.planar2  PTQ1_0 converted once to a predecoded 2-bit planar form, rows interleaved in groups of 8
 *                (planar2_avx2.c: idea, layout, stages, how to time it);
 *   cpu.pq2_0    PTQ1_0 converted once to standard PQ2_0 blocks (34 bytes, 2.125 bpw), row-major
 *                (pq2_0_avx2.c: likewise). */
#ifndef HSDR_CPU_PLANAR2_AVX2_H
#define HSDR_CPU_PLANAR2_AVX2_H
#include "../kernel.h"
#include "../../reference/q8.h"
#include "avx2_ptq1_0.h" /* hsdr_cpu_avx2_unavailable: the same AVX2 + FMA + F16C requirement */

/* Activations of both 2-bit kernels: [Q8_0 blocks][d8 fp32][q in the kernel's order: K bytes][dk][sq]. dk and sq
 * are d8 and the exact sum of q of each Q8_0 block, except in the sub-blocks whose digits the kernel sums four times
 * too large: there d8 / 4 and 4 sum q (exact: a power of two), so fma(dk, isum, .) is production's fma. */
typedef struct {
    hsdr_block_q8_0 *q;
    float *d;
    int8_t *qs;
    float *dk;
    int32_t *sq;
} hsdr_cpu_q2_act;
hsdr_cpu_q2_act hsdr_cpu_q2_act_of(const hsdr_exec *e);
size_t hsdr_cpu_q2_act_bytes(int K);
/* The encode stage: the production quantizer, q laid out by order(), then dk and sq; sub-block k (0..3) of each
 * 128-weight group is the four-times one when bit k of times4 is set. */
void hsdr_cpu_q2_encode(const hsdr_exec *e, unsigned times4, void (*order)(const hsdr_cpu_q2_act *a, int K));

int hsdr_cpu_planar2_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                             size_t errlen);
void hsdr_cpu_planar2_release(void *prepared);
size_t hsdr_cpu_planar2_scratch_bytes(int K, int R);
void hsdr_cpu_planar2_prologue(const hsdr_exec *e);
void hsdr_cpu_planar2_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_planar2_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

int hsdr_cpu_pq2_0_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                           size_t errlen);
void hsdr_cpu_pq2_0_release(void *prepared);
size_t hsdr_cpu_pq2_0_scratch_bytes(int K, int R);
void hsdr_cpu_pq2_0_prologue(const hsdr_exec *e);
void hsdr_cpu_pq2_0_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_pq2_0_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

#endif
