/* Inputs of one benchmark configuration (K, N, distribution, shape, seed) and the reference results every variant
 * is validated against. Built once per configuration and shared by all variants, thread counts and modes. */
#ifndef HSDR_INPUTS_H
#define HSDR_INPUTS_H
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

typedef struct {
    int K, N;
    hsdr_dist dist;
    uint64_t seed;
    uint8_t *W;          /* N x K/128 PTQ1_0 blocks: random (uniform trits, fp16 d ~ 0.01..0.03) or given */
    float *x;            /* K activations of the distribution */
    size_t weight_bytes;
    /* reference bundle */
    double *y_exact, *abs_exact; /* exact result and sum |terms| per row */
    float *y_q8;                 /* production PTQ1_0 x Q8_0 (fused), bit-exact target */
    uint8_t *codes;              /* LNS8 codes of x with the automatic pre-scale e */
    int e;
    int32_t *A;                  /* N x G x 8 */
    double *y_lns8, *abs_lns8;   /* sum_g G_g and sum_g |d| 2^e sum |t| |x_dec| per row */
    int64_t *q_row;              /* spec Q15.16 per row */
    double *q_bound;             /* per row: sum of the per-group bounds */
    double occ_mean;             /* occupied states per 128-lane tile */
    int occ_p5, occ_p95;
} hsdr_inputs;

/* 0, or -1 with a message (out of memory: the message gives the bytes needed). */
int hsdr_inputs_build(hsdr_inputs *in, int K, int N, hsdr_dist dist, uint64_t seed, char *err, size_t errlen);
/* The same with the weights given (W not NULL: N x K/128 PTQ1_0 blocks, copied instead of drawn) and the activations
 * given (x not NULL: K floats, copied; NULL: drawn from dist under seed); the references are computed on them. */
int hsdr_inputs_build_from(hsdr_inputs *in, int K, int N, const uint8_t *W, const float *x, hsdr_dist dist,
                           uint64_t seed, char *err, size_t errlen);
void hsdr_inputs_free(hsdr_inputs *in);
/* Bytes hsdr_inputs_build allocates for (K, N): used to refuse cases that cannot fit before trying. */
size_t hsdr_inputs_bytes(int K, int N);
/* Reference fLNS row values sum_g value(tree(A_g)) for (F, b) into y (N). */
void hsdr_inputs_flns(const hsdr_inputs *in, int F, int b, double *y);
/* Random PTQ1_0 weights: each qs byte encodes 5 uniform digits, each qh byte 4, d = fp16 of a uniform 0.01..0.03. */
void hsdr_random_ptq1_0(hsdr_rng *r, uint8_t *W, size_t nblocks);

#endif
