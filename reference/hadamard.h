/* The Hadamard fold of the Bonsai 2 checkpoints (spec/ptq1_0.md section 6): x <- x (.) s (a +-1 sign vector per
 * input width), then a normalized Walsh-Hadamard transform (H_1024 / 32, Sylvester order) on each 1024-chunk, in fp32. */
#ifndef HSDR_HADAMARD_H
#define HSDR_HADAMARD_H
#include <stddef.h>
#include <stdint.h>

#define HSDR_WHT_CHUNK 1024

/* Unnormalized fast WHT in Sylvester order (y_i = sum_j (-1)^popcount(i & j) x_j), n a power of two, fp32. */
void hsdr_wht(float *x, size_t n);
/* The fold: returns -1 (x untouched) when K is not a multiple of 1024, else 0. signs: K entries of +-1. */
int hsdr_hadamard_fold(float *x, const int8_t *signs, size_t K);

#endif
