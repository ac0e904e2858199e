/* Output buffers of one checking-interface matvec (hsdr_matvec_io), shared by `hsdr check` and the harness's
 * validation: every buffer is poisoned, so an element a variant fails to write can never pass a comparison. */
#ifndef HSDR_OUTPUTS_H
#define HSDR_OUTPUTS_H
#include <stdint.h>

#include "kernel.h"

typedef struct {
    double *y_f64;
    float *y_f32;
    int32_t *A;
    int16_t *C;
    int64_t *q_group, *q_row;
    int32_t *lambda;
    int8_t *sign;
} hsdr_outputs;

/* Allocate (poisoned) buffers for N rows of G groups and point io's outputs at those the variant declares. 0, or -1
 * when out of memory (free with hsdr_outputs_free either way). */
int hsdr_outputs_alloc(hsdr_outputs *o, const hsdr_variant *v, int N, int G, hsdr_matvec_io *io);
void hsdr_outputs_free(hsdr_outputs *o);
/* y of row r in the variant's precision. */
double hsdr_outputs_y(const hsdr_outputs *o, const hsdr_variant *v, int r);

#endif
