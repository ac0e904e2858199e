/* Validation of one variant on one configuration's inputs, before it may be timed: the checking interface (every
 * declared output; integers exactly) and the timed path (prologue + rows, y against the family's reference). */
#ifndef HSDR_VALIDATE_H
#define HSDR_VALIDATE_H
#include <stdbool.h>
#include <stddef.h>

#include "case.h"
#include "inputs.h"

typedef struct {
    bool passed;
    char detail[512]; /* what was compared, or the first mismatch */
} hsdr_validation;

void hsdr_validate(const hsdr_case *c, const hsdr_inputs *in, hsdr_validation *out);
/* hsdr_validate on fresh inputs of (K, N clipped to 256 rows, dist, seed), one thread, hot, R = 1, fLNS (F, b):
 * the gate of commands that use a variant's output without a matrix case (profile, quality). */
void hsdr_validate_sample(const hsdr_variant *v, int K, int N, hsdr_dist dist, uint64_t seed, int F, int b,
                          hsdr_validation *out);

/* The reference value and tolerance the timed path's y[r] is held to (also used for error metrics). */
typedef struct {
    double *ref; /* N */
    double *tol; /* N; -1 means bit-exact against the fp32 value of ref */
    const char *what;
} hsdr_y_reference;
/* Fills ref/tol (caller-allocated, N each) for the variant's family; 0, or -1 when the family is unknown. */
int hsdr_y_reference_for(const hsdr_variant *v, const hsdr_case *c, const hsdr_inputs *in, hsdr_y_reference *yr);

#endif
