/* The scalar reference behind the variant interface: thin adapters over reference/matvec.h. The LNS8 variants
 * differ only in how A[8] is computed (direct, 128-lane state sets, 64-lane tiles) and in which outputs they
 * declare; ref.flns and ref.q1516 compute A directly. */
#include "reference_variants.h"

#include <stdio.h>
#include <stdlib.h>

#include "../reference/lns8.h"
#include "../reference/matvec.h"

int hsdr_ref_encode_lns8(const float *x, size_t n, int e, uint8_t *codes, size_t *bad)
{
    return hsdr_lns8_encode(x, n, e, codes, bad);
}

int hsdr_ref_auto_prescale(const float *x, size_t n, int *e, size_t *bad)
{
    return hsdr_lns8_auto_prescale(x, n, e, bad);
}

int hsdr_ref_exact_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    if (!io->x) {
        snprintf(err, errlen, "needs fp32 activations");
        return -1;
    }
    hsdr_matvec_exact(io->weights, io->x, io->K, io->N, io->y_f64, NULL);
    return 0;
}

int hsdr_ref_q8_0_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    if (!io->x) {
        snprintf(err, errlen, "needs fp32 activations");
        return -1;
    }
    hsdr_block_q8_0 *q = malloc(sizeof *q * (size_t)(io->K / HSDR_Q8_BLOCK));
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hsdr_matvec_q8_0(io->weights, io->x, io->K, io->N, q, io->y_f32, HSDR_FUSED);
    free(q);
    return 0;
}

/* Route the outputs the variant declares (and the caller wants) to the reference LNS8 matvec. */
static int ref_lns8(const hsdr_variant *v, hsdr_matvec_io *io, enum hsdr_group_method method, char *err,
                    size_t errlen)
{
    unsigned o = v->outputs;
    hsdr_lns8_outputs out = {
        .y = (o & HSDR_OUT_Y_LNS8) ? io->y_f64 : NULL,
        .A = (o & HSDR_OUT_A) ? io->A : NULL,
        .C = (o & HSDR_OUT_C) ? io->C : NULL,
        .q_group = (o & HSDR_OUT_Q1516) ? io->q_group : NULL,
        .q_row = (o & HSDR_OUT_Q1516) ? io->q_row : NULL,
        .flns_lambda = (o & HSDR_OUT_FLNS) ? io->flns_lambda : NULL,
        .flns_sign = (o & HSDR_OUT_FLNS) ? io->flns_sign : NULL,
        .flns_F = io->flns_F,
        .flns_b = io->flns_b,
    };
    if (out.flns_lambda && !out.flns_sign)
        out.flns_lambda = NULL;
    switch (hsdr_matvec_lns8(io->weights, io->codes, io->prescale_e, io->K, io->N, method, &out)) {
    case 0: return 0;
    case -2: snprintf(err, errlen, "fLNS parameters F=%d b=%d outside F 0..8, b 4..16", io->flns_F, io->flns_b); return -1;
    default: snprintf(err, errlen, "out of memory"); return -1;
    }
}

int hsdr_ref_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    return ref_lns8(v, io, HSDR_METHOD_DIRECT, err, errlen);
}

int hsdr_ref_stateset_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    return ref_lns8(v, io, HSDR_METHOD_STATESET128, err, errlen);
}

int hsdr_ref_tile64_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    return ref_lns8(v, io, HSDR_METHOD_TILE64, err, errlen);
}
