/* Registry hook: HSDR_CPU_DIRECT_VARIANTS expands, inside the one table of kernels/registry.c (where ST() and D()
 * are defined), to this file's variant entries, each followed by a comma.
 *
 * cpu.direct / cpu.flns / cpu.q1516: the AVX2 direct 8-phase reduction (exact A[8] per group with int16 madd against
 * per-phase activation vectors built in the prologue), finished as an fp64 phase combination, the fLNS tree, or the
 * Q15.16 integer materialization (kernels/cpu/direct_avx2.c). */
#ifndef HSDR_CPU_DIRECT_AVX2_H
#define HSDR_CPU_DIRECT_AVX2_H
#include "../kernel.h"

const char *hsdr_cpu_direct_unavailable(void);
size_t hsdr_cpu_direct_act_bytes(int K);
size_t hsdr_cpu_direct_scratch_bytes(int K, int R);
void hsdr_cpu_direct_prologue(const hsdr_exec *e);
void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_flns_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_q1516_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#define HSDR_CPU_DIRECT_STAGES_ ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE)

#define HSDR_CPU_DIRECT_VARIANTS                                                                                     \
    {.name = "cpu.direct", .backend = "cpu", .family = "direct",                                                     \
     .summary = "AVX2 direct 8-phase: per-phase int16 activation vectors (prologue), madd against decoded digits "   \
                "minus the phase sums, exact A[8]; fp64 phase combination",                                         \
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_, .precision = 32,                   \
     .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_direct_matvec,                                   \
     .ablatable = ST(ENCODE) | ST(ROUTE),                                                                            \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 15, D(REDUCE) = 12, D(SCALE) = 3, D(MERGE) = 1},          \
     .act_bytes = hsdr_cpu_direct_act_bytes, .scratch_bytes = hsdr_cpu_direct_scratch_bytes,                         \
     .prologue = hsdr_cpu_direct_prologue, .rows = hsdr_cpu_direct_rows, .stage = hsdr_cpu_direct_stage},          \
    {.name = "cpu.flns", .backend = "cpu", .family = "flns",                                                         \
     .summary = "cpu.direct's exact A[8], then the fLNS tree (F, b) per group with cached LC/kappa tables",         \
     .outputs = HSDR_OUT_FLNS | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_, .precision = 32,                      \
     .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_flns_matvec,                                     \
     .uses_flns = true, .ablatable = ST(ENCODE) | ST(ROUTE),                                                         \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 15, D(REDUCE) = 12, D(SCALE) = 19, D(MERGE) = 1},         \
     .act_bytes = hsdr_cpu_direct_act_bytes, .scratch_bytes = hsdr_cpu_direct_scratch_bytes,                         \
     .prologue = hsdr_cpu_direct_prologue, .rows = hsdr_cpu_flns_rows, .stage = hsdr_cpu_flns_stage},              \
    {.name = "cpu.q1516", .backend = "cpu", .family = "q1516",                                                       \
     .summary = "cpu.direct's exact A[8], S = sum A[p] C31[p] (int64), Q15.16 per group materialized, int64 SIMD "   \
                "merge across groups",                                                                               \
     .outputs = HSDR_OUT_Q1516 | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_ | ST(MATERIALIZE), .precision = 32,   \
     .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_q1516_matvec,                                    \
     .ablatable = ST(ENCODE) | ST(ROUTE),                                                                            \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 15, D(REDUCE) = 12, D(SCALE) = 4, D(MATERIALIZE) = 4,     \
               D(MERGE) = 1},                                                                                        \
     .act_bytes = hsdr_cpu_direct_act_bytes, .scratch_bytes = hsdr_cpu_direct_scratch_bytes,                         \
     .prologue = hsdr_cpu_direct_prologue, .rows = hsdr_cpu_q1516_rows, .stage = hsdr_cpu_q1516_stage},

#endif
