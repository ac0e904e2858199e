/* Adapters that expose the scalar reference (reference/) through the variant interface. */
#ifndef HSDR_REFERENCE_VARIANTS_H
#define HSDR_REFERENCE_VARIANTS_H
#include "kernel.h"

int hsdr_ref_encode_lns8(const float *x, size_t n, int e, uint8_t *codes, size_t *bad);
int hsdr_ref_auto_prescale(const float *x, size_t n, int *e, size_t *bad);
int hsdr_ref_exact_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
int hsdr_ref_q8_0_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
int hsdr_ref_direct_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
int hsdr_ref_stateset_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
int hsdr_ref_tile64_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#endif
