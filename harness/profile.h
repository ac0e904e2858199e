/* The block of `hsdr profile --model M | --gguf FILE [--tensors GLOBS] [--tokens T] [--layers L] [--variants LIST]
 *               [--threads N|cores] [--split all|auto|tune] [--no-head] [--hot] [--dist D] [--seed S] [--json FILE]`:
 * every GEMV of decode tokens, fresh activations per token (encoding counted, per GEMV), per variant: ms/token,
 * GEMV-only tokens/s, per-tensor breakdown, weight conversion cost. The GEMVs (profile_plan.h): a model of shapes.h
 * with seeded random PTQ1_0 weights, or a GGUF file's own ternary tensors (PTQ1_0 read in place from the mapping).
 * L layers are run and the full model is extrapolated from the mean time per layer kind; the output says which
 * numbers are measured and which extrapolated. Every variant is validated on the measured tensors' own weights
 * before it is timed. GEMV-only: no attention, recurrence or sampling. The pool is held spinning over the tokens
 * (hsdr_pool_hold); --split auto gives each GEMV the threads handoff.h's split rule picks, --split tune the thread
 * count of least measured time per GEMV shape (default all).
 * The token is cold on any cache size: its weights rotate over enough copies (profile_plan.h,
 * hsdr_profile_rotation_plan), or the run says why it is not. */
#ifndef HSDR_PROFILE_H
#define HSDR_PROFILE_H

#include <stdint.h>

#include "rng.h"

/* --split: every GEMV on all the threads; the split rule's choice (handoff.h: measured hand-off, one thread's bare
 * read); or the least of the GEMV shape's measured times on 1, 2, 4, ... all threads, per variant. */
enum { HSDR_SPLIT_ALL, HSDR_SPLIT_AUTO, HSDR_SPLIT_TUNE };

typedef struct {
    const char *model, *variants, *json_path; /* model: a name of shapes.h; variants: NULL = every timed one */
    const char *gguf, *tensors;               /* a GGUF file instead of model; its tensors' globs (NULL: all) */
    int tokens, layers, threads, head;        /* layers 0: the default (profile_plan.h) */
    int split;                                /* HSDR_SPLIT_*: the threads each GEMV runs on */
    int hot;                                  /* 1: the token's weights read in place, not rotated (--hot) */
    hsdr_dist dist;
    uint64_t seed;
} hsdr_profile_options;

/* The profile of o->model or o->gguf (harness/cmd/profile.c reads the options): an exit status, messages on stderr. */
int hsdr_profile(const hsdr_profile_options *o);

#endif
