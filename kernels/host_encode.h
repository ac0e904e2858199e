/* Activations encoded on the host, for the device backends whose kernels take them pre-encoded (Vulkan, Metal). */
#ifndef HSDR_HOST_ENCODE_H
#define HSDR_HOST_ENCODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* K activations x -> K bytes: lns8, the LNS8 codes with the automatic pre-scale (*e); else the Q8_0 values of the
 * production x86 quantizer, with scales[K / 32] = the fp32 value of each block's fp16 d (scales unused for LNS8).
 * Returns 0, or -1 with err naming the offending index (NaN, an infinite absmax) or the lack of memory. */
int hsdr_encode_activations(const float *x, size_t K, bool lns8, uint8_t *bytes, float *scales, int *e, char *err,
                            size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
