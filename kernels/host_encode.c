#include "host_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "lns8.h"
#include "q8.h"

int hsdr_encode_activations(const float *x, size_t K, bool lns8, uint8_t *bytes, float *scales, int *e, char *err,
                            size_t errlen)
{
    if (lns8) {
        size_t bad = 0;
        if (hsdr_lns8_auto_prescale(x, K, e, &bad) != 0 || hsdr_lns8_encode(x, K, *e, bytes, &bad) != 0) {
            snprintf(err, errlen, "x[%zu] = %g cannot be encoded to LNS8 (NaN, or an infinite absmax)", bad,
                     (double)x[bad]);
            return -1;
        }
        return 0;
    }
    hsdr_block_q8_0 *q = malloc(sizeof *q * (K / 32));
    if (!q) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    hsdr_q8_0_quantize_x86(x, K, q); /* the CPU production path's activations */
    for (size_t b = 0; b < K / 32; b++) {
        memcpy(bytes + 32 * b, q[b].qs, 32);
        scales[b] = hsdr_fp16_to_fp32(q[b].d);
    }
    free(q);
    return 0;
}

int hsdr_device_io_check(const hsdr_matvec_io *io, bool codes_ok, char *err, size_t errlen)
{
    if ((!io->x && !(codes_ok && io->codes)) || !io->y_f32) {
        snprintf(err, errlen, "needs %s and an fp32 y", codes_ok ? "fp32 activations or LNS8 codes" : "fp32 activations");
        return -1;
    }
    return 0;
}

int hsdr_device_activations(const float *x, const uint8_t *codes, int prescale_e, size_t K, bool lns8, uint8_t *bytes,
                            float *scales, int *e, char *err, size_t errlen)
{
    if (x)
        return hsdr_encode_activations(x, K, lns8, bytes, scales, e, err, errlen);
    memcpy(bytes, codes, K);
    *e = prescale_e;
    return 0;
}
