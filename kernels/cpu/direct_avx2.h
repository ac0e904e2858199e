/* cpu.direct / cpu.flns / cpu.q1516: the AVX2 direct 8-phase reduction vectorized over 16 rows (exact A[8] per group
 * from phase-sorted lane pairs and vpmaddwd), finished as an fp64 phase combination, the fLNS tree (8 rows per
 * vector) or the Q15.16 integer materialization. Layout, stages and how to time them: direct_avx2.c.
 * Depths (the registry's rows): per 128-lane group; the reduce chain is the running prefix over ~66 pairs. */
#ifndef HSDR_CPU_DIRECT_AVX2_H
#define HSDR_CPU_DIRECT_AVX2_H
#include "../kernel.h"

const char *hsdr_cpu_direct_unavailable(void);
int hsdr_cpu_direct_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                            size_t errlen);
void hsdr_cpu_direct_release(void *prepared);
size_t hsdr_cpu_direct_act_bytes(int K);
size_t hsdr_cpu_direct_scratch_bytes(int K, int R);
void hsdr_cpu_direct_prologue(const hsdr_exec *e);
void hsdr_cpu_direct_prologue_part(const hsdr_exec *e, int part, int parts);
void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_flns_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_q1516_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#endif
