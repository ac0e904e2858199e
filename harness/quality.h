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

#include <stdint.h>

typedef struct {
    const char *model, *variants, *json_path; /* variants: NULL = one per numeric family */
    int layers, seeds, tokens, vocab, threads, F, b; /* vocab 0: the model's; F, b: the fLNS variants' */
    uint64_t seed;
} hsdr_quality_options;

/* The study (harness/cmd/quality.c reads the options): an exit status, messages on stderr. */
int hsdr_quality(const hsdr_quality_options *o);

#endif
