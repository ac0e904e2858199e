/* Registry hook: HSDR_CPU_DIRECT_VARIANTS expands, inside the one table of kernels/registry.c (where ST() and D()
 * are defined), to this file's variant entries, each followed by a comma.
 *
 * cpu.direct / cpu.flns / cpu.q1516: the AVX2 direct 8-phase reduction vectorized over 16 rows (exact A[8] per group
 * from phase-sorted lane pairs and vpmaddwd), finished as an fp64 phase combination, the fLNS tree (8 rows per
 * vector) or the Q15.16 integer materialization. Depth: per 128-lane group; the reduce chain is the running prefix
 * over ~66 pairs.
 * (kernels/cpu/direct_avx2.c) */
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
void hsdr_cpu_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_flns_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
void hsdr_cpu_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_q1516_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#define HSDR_CPU_DIRECT_STAGES_ ST(CONVERT) | ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE)
#define HSDR_CPU_DIRECT_COMMON_                                                                                      \
    .unavailable = hsdr_cpu_direct_unavailable, .ablatable = ST(ENCODE) | ST(ROUTE),                                 \
    .prepare = hsdr_cpu_direct_prepare, .release = hsdr_cpu_direct_release,                                         \
    .act_bytes = hsdr_cpu_direct_act_bytes, .scratch_bytes = hsdr_cpu_direct_scratch_bytes,                         \
    .prologue = hsdr_cpu_direct_prologue

#define HSDR_CPU_DIRECT_VARIANTS                                                                                     \
    {.name = "cpu.direct", .backend = "cpu", .family = "direct",                                                     \
     .summary = "AVX2 direct 8-phase, vectorized over 8 rows: row-interleaved PTQ1_0 (convert), digits by compare " \
                "form, per phase lane pairs s2^(q-1) x 8-row digit pairs in vpmaddwd, prefix slots -> exact A[8]",   \
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_, .precision = 32,                   \
     .matvec = hsdr_cpu_direct_matvec, HSDR_CPU_DIRECT_COMMON_,                                                      \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 10, D(MERGE) = 1},          \
     .rows = hsdr_cpu_direct_rows, .stage = hsdr_cpu_direct_stage},                                                  \
    {.name = "cpu.flns", .backend = "cpu", .family = "flns",                                                         \
     .summary = "cpu.direct's exact A[8] (8-row pairs), then the fLNS tree (F, b) per group on cached LC/kappa "     \
                "tables",                                                                                            \
     .outputs = HSDR_OUT_FLNS | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_, .precision = 32,                      \
     .matvec = hsdr_cpu_flns_matvec, HSDR_CPU_DIRECT_COMMON_, .uses_flns = true,                                     \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 41, D(MERGE) = 1},          \
     .rows = hsdr_cpu_flns_rows, .stage = hsdr_cpu_flns_stage},                                                      \
    {.name = "cpu.q1516", .backend = "cpu", .family = "q1516",                                                       \
     .summary = "cpu.direct's exact A[8] (8-row pairs), S = sum A[p] C31[p] (int64), Q15.16 per group "             \
                "materialized, int64 SIMD merge across groups",                                                      \
     .outputs = HSDR_OUT_Q1516 | HSDR_OUT_A, .stages = HSDR_CPU_DIRECT_STAGES_ | ST(MATERIALIZE), .precision = 32,   \
     .matvec = hsdr_cpu_q1516_matvec, HSDR_CPU_DIRECT_COMMON_,                                                       \
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 9, D(MATERIALIZE) = 5,      \
               D(MERGE) = 1},                                                                                        \
     .rows = hsdr_cpu_q1516_rows, .stage = hsdr_cpu_q1516_stage},

#endif
