/* The scalar reference's timing interface (hsdr_variant.prologue / rows / stage) of ref.exact, ref.q8_0 and the LNS8
 * reference pipelines: each stage a loop of its own over a buffer. Layout, stages and how to time them:
 * reference_timed.c. */
#ifndef HSDR_REFERENCE_TIMED_H
#define HSDR_REFERENCE_TIMED_H
#include "kernel.h"

size_t hsdr_reft_lns8_act_bytes(int K);
size_t hsdr_reft_q8_act_bytes(int K);
size_t hsdr_reft_direct_scratch_bytes(int K, int R);
size_t hsdr_reft_stateset_scratch_bytes(int K, int R);
size_t hsdr_reft_tile64_scratch_bytes(int K, int R);
size_t hsdr_reft_q8_scratch_bytes(int K, int R);
size_t hsdr_reft_exact_scratch_bytes(int K, int R);

void hsdr_reft_lns8_prologue(const hsdr_exec *e);   /* encode */
void hsdr_reft_direct_prologue(const hsdr_exec *e); /* encode, route */
void hsdr_reft_q8_prologue(const hsdr_exec *e);

int hsdr_reft_masks_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                            size_t errlen);
void hsdr_reft_masks_release(void *prepared);

void hsdr_reft_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_stateset_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_stateset_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_tile64_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_tile64_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_q8_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_q8_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
void hsdr_reft_exact_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_reft_exact_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);

#endif
