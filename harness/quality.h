/* The block of `hsdr quality [--model M] [--layers L] [--seeds S] [--tokens T] [--vocab V] [--variants LIST]
 *               [--threads N] [--flns F,b] [--seed X] [--json FILE]`:
 * a model-shaped accuracy study on SYNTHETIC ternary layers with a real model's shapes (shapes.h). Per seed, a
 * fresh network: L FFN blocks (RMSNorm -> signs + WHT-1024 fold -> ffn_gate, ffn_up -> SiLU(gate) * up -> fold ->
 * ffn_down -> residual add), then a final RMSNorm -> fold -> output head -> softmax; PTQ1_0 weights come from the
 * reference quantizer over heavy-tailed (Student-t, 3 degrees of freedom) random floats. T input vectors per network
 * go through it once with exact activations (fp32 into the double-double reference GEMV) and once per path (each
 * variant's own timed kernel, validated first): per layer and at the logits, the cosine similarity and NMSE against
 * the exact path, and the KL divergence of the softmax head and top-1 agreement. Output: a table, and with --json
 * the schema hsdr-quality/1 (docs/results-schema.md). Results do not depend on the thread count. */
#ifndef HSDR_QUALITY_H
#define HSDR_QUALITY_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

typedef struct {
    const char *model, *variants, *json_path; /* variants: NULL = one per numeric family */
    const char *gguf, *activations, *tensors; /* gguf: the real-weights study (quality_real.c); tensors: globs */
    int layers, seeds, tokens, vocab, threads, F, b; /* vocab 0: the model's; F, b: the fLNS variants' */
    uint64_t seed;
} hsdr_quality_options;

/* The study (harness/cmd/quality.c reads the options): an exit status, messages on stderr. */
int hsdr_quality(const hsdr_quality_options *o);
/* The per-GEMV study on a GGUF file's ternary tensors (o->gguf) and real activations (o->activations; NULL: modelled
 * bonsai activations), quality_real.c: an exit status, messages on stderr. */
int hsdr_quality_real(const hsdr_quality_options *o);

/* The variants a study runs: those matching --variants that run here, or one per numeric family (production, direct,
 * flns, q1516; the CPU kernel where it runs, else the reference). 0 with *out (malloc) and *count; 1 when none runs
 * here (said on stderr); -1 out of memory. */
int hsdr_quality_variants(const char *variants, const hsdr_variant ***out, int *count);
/* What variant v (NULL: the exact path) makes of the activations: "Q8_0", "LNS8, exact A[8]", ... into buf. */
const char *hsdr_quality_activations(const hsdr_variant *v, int F, int b, char *buf, size_t n);

#endif
