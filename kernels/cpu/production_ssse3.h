/* cpu.production: the production-equivalent PTQ1_0 x Q8_0 kernel (SSSE3 design, fused fp32 sequence). */
#ifndef HSDR_CPU_PRODUCTION_SSSE3_H
#define HSDR_CPU_PRODUCTION_SSSE3_H
#include "../kernel.h"

const char *hsdr_cpu_production_unavailable(void);
size_t hsdr_cpu_production_act_bytes(int K);
size_t hsdr_cpu_production_scratch_bytes(int K, int R);
void hsdr_cpu_production_prologue(const hsdr_exec *e);
void hsdr_cpu_production_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_production_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_production_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#endif
