/* `hsdr states`: a short summary of the reference on activations -- occupied LNS8 states per 128- and 64-lane tile
 * (summary and, in JSON, the histogram hist128 / hist64: entry n = tiles with n occupied states) and the
 * activation quantization error of LNS8 and Q8_0 -- per distribution of synthetic activations, or (--activations,
 * states_real.c) per set of real captured activations (activations.h), overall, and beside the modelled "bonsai"
 * distribution at each set's width. */
#ifndef HSDR_STATES_H
#define HSDR_STATES_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

typedef struct {
    int K;           /* activation width (multiple of 1024 for the bonsai distribution) */
    int vectors;     /* vectors per distribution (with --activations: per modelled width) */
    uint64_t seed;
    int json;        /* JSON Lines instead of a table */
    const char *activations; /* NULL: synthetic distributions; else a path for hsdr_activations_open */
} states_options;

/* 0, or -1 with a message on stderr. */
int hsdr_states_run(const states_options *opt, FILE *out);
/* The --activations study (states_real.c): an exit status (2 for a bad file, with its message on stderr). */
int hsdr_states_real_run(const states_options *opt, FILE *out);

/* The statistics of a stream of vectors (each a multiple of 128 wide): tile occupancies and quantization errors. */
typedef struct {
    int *s128, *s64;       /* occupied states per tile, one entry per tile */
    size_t n128, n64, cap128, cap64;
    double err_lns, err_q8, ref;
    int emin, emax;        /* LNS8 pre-scale exponents seen */
    long vectors;
    int sorted;
} states_acc;

void hsdr_states_acc_init(states_acc *a);
void hsdr_states_acc_free(states_acc *a);
/* Add one vector of K values (K a multiple of 128). 0, or -1 with "what" in err (out of memory, a value LNS8 refuses:
 * NaN or an infinite maximum, with its index). */
int hsdr_states_acc_add(states_acc *a, const float *x, int K, char *err, size_t errlen);
/* Add every tile and error of b to a (the overall row). 0 or -1 (out of memory). */
int hsdr_states_acc_merge(states_acc *a, const states_acc *b);
/* The summary fields (states128_mean ... hist64) added to row. */
void hsdr_states_acc_json(states_acc *a, cJSON *row);
/* One table line (the label column width characters wide):
 * "LABEL | mean p5 p95 | mean p5 p95 | LNS8 err | Q8_0 err | emin..emax". */
void hsdr_states_acc_line(states_acc *a, const char *label, int width, FILE *out);
/* The table's two header lines (the first column named first, width characters wide). */
void hsdr_states_table_head(const char *first, int width, FILE *out);

#endif
