/* `hsdr inspect FILE.gguf`: a model file's metadata summary and, per PTQ1_0 / PQ2_0 tensor, the statistics of its
 * ternary weights (gguf.h reads the file; the trits are decoded with the reference decoder of reference/ptq1_0.h).
 *
 * Definitions (tests/make_gguf.py computes the same numbers independently; tests/gguf.cmake compares them):
 * - zero_trit_fraction: weights whose ternary value is 0, over all weights (PQ2_0: code 1);
 * - all_zero_block_fraction: 128-weight blocks whose 128 values are all 0, over all blocks;
 * - scales: each block's fp16 d read as a float (exact). NaN scales are counted apart and left out; the others are
 *   sorted (-0 equals +0); min and max are the first and last, p5 / median / p95 the nearest-rank percentiles: the
 *   value at 1-based rank max(1, ceil(p * n / 100)) for p = 5, 50, 95; subnormal counts nonzero fp16 with a zero
 *   exponent field, zero counts +-0;
 * - data_hash (every tensor): FNV-1a 64 over the tensor's bytes read as little-endian 64-bit words (the last word
 *   zero-padded), then the byte count mixed in as one more word; 16 hex digits. */
#ifndef HSDR_INSPECT_H
#define HSDR_INSPECT_H
#include <stdint.h>
#include <stdio.h>

#include "gguf.h"

typedef struct {
    uint64_t blocks, weights, zero_weights, all_zero_blocks;
    uint64_t code3; /* PQ2_0 codes 3 (+2: not ternary) */
    uint64_t scales_counted, subnormal, zero, nan;
    float min, p5, median, p95, max; /* valid when scales_counted > 0 */
} inspect_ternary_stats;

/* The statistics of a PTQ1_0 or PQ2_0 tensor: 0, or -1 for another type. */
int hsdr_inspect_ternary(const gguf_tensor *t, inspect_ternary_stats *s);
/* data_hash as defined above. */
uint64_t hsdr_inspect_hash(const uint8_t *data, uint64_t bytes);
/* Print the summary of path (text, or one JSON document). 0; 2 (exit status) with the reader's message on stderr
 * for a file that is not a well-formed GGUF. */
int hsdr_inspect_run(const char *path, int json, FILE *out);

#endif
