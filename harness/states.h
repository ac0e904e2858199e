/* `hsdr states`: a short summary of the reference on synthetic activations -- occupied LNS8 states per 128- and
 * 64-lane tile (summary and, in JSON, the histogram hist128 / hist64: entry n = tiles with n occupied states) and the
 * activation quantization error of LNS8 and Q8_0 -- per distribution. */
#ifndef HSDR_STATES_H
#define HSDR_STATES_H
#include <stdint.h>
#include <stdio.h>

typedef struct {
    int K;           /* activation width (multiple of 1024 for the bonsai distribution) */
    int vectors;     /* vectors per distribution */
    uint64_t seed;
    int json;        /* JSON Lines instead of a table */
} states_options;

/* 0, or -1 with a message on stderr. */
int hsdr_states_run(const states_options *opt, FILE *out);

#endif
