/* The block of `hsdr profile --model M [--tokens T] [--layers L] [--variants LIST] [--threads N|cores]
 *               [--no-head] [--dist D] [--seed S] [--json FILE]`:
 * every GEMV of decode tokens on a real model's shapes (shapes.h), fresh activations per token (encoding counted,
 * per GEMV), per variant: ms/token, GEMV-only tokens/s, per-tensor breakdown, weight conversion cost. L layers are
 * run (the model's own layer pattern) and the full model is extrapolated from the mean time per layer kind; the
 * output says which numbers are measured and which extrapolated. GEMV-only: no attention, recurrence or sampling. */
#ifndef HSDR_PROFILE_H
#define HSDR_PROFILE_H

#include <stdint.h>

#include "rng.h"

typedef struct {
    const char *model, *variants, *json_path; /* model: a name of shapes.h; variants: NULL = every timed one */
    int tokens, layers, threads, head;
    hsdr_dist dist;
    uint64_t seed;
} hsdr_profile_options;

/* The profile of o->model (harness/cmd/profile.c reads the options): an exit status, messages on stderr. */
int hsdr_profile(const hsdr_profile_options *o);

#endif
