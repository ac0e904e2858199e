/* cpu.avx512: cpu.avx2 widened to AVX-512 (F, BW, VNNI), bit-identical to production: sixteen rows in the dword
 * lanes of every vector, compare-into-mask digits, vpdpbusd against broadcast activations, the fused fp32 sequence
 * across rows. Layout, stages and how to time it: avx512_ptq1_0.c. Activations: cpu.avx2's (its prologue). */
#ifndef HSDR_CPU_AVX512_PTQ1_0_H
#define HSDR_CPU_AVX512_PTQ1_0_H
#include "../kernel.h"

/* NULL when the CPU (and the OS) has AVX-512 F, BW, VNNI, with FMA and F16C, else why not. */
const char *hsdr_cpu_avx512_unavailable(void);
void hsdr_cpu_avx512_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
/* Stages alone (both variants: scratch for one group's digits, sums and sumi; encode is cpu.avx2's). */
size_t hsdr_cpu_avx512_scratch_bytes(int K, int R);
void hsdr_cpu_avx512_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

/* cpu.ptq1_r16: cpu.avx512 on the same bytes permuted (prepare = the convert stage): per group of sixteen rows and
 * block, seven 64-byte vectors, vector j = dword j (bytes 4j .. 4j + 3) of rows 0..15, so a block of sixteen rows is
 * seven aligned loads (no transpose) and a thread's rows are one sequential stream. Same 28 bytes per 128 weights. */
int hsdr_cpu_ptq1_r16_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                              size_t errlen);
void hsdr_cpu_ptq1_r16_release(void *prepared);
void hsdr_cpu_ptq1_r16_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_ptq1_r16_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

#endif
