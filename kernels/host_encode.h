/* The host side of the device backends' checking interface: the rule every device kernel's inputs follow, and
 * activations encoded on the host for the kernels that take them pre-encoded (Vulkan, Metal). */
#ifndef HSDR_HOST_ENCODE_H
#define HSDR_HOST_ENCODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* K activations x -> K bytes: lns8, the LNS8 codes with the automatic pre-scale (*e); else the Q8_0 values of the
 * production x86 quantizer, with scales[K / 32] = the fp32 value of each block's fp16 d (scales unused for LNS8).
 * Returns 0, or -1 with err naming the offending index (NaN, an infinite absmax) or the lack of memory. */
int hsdr_encode_activations(const float *x, size_t K, bool lns8, uint8_t *bytes, float *scales, int *e, char *err,
                            size_t errlen);

/* The checking interface's rule for a device kernel (kernel.h, hsdr_matvec_io): fp32 activations, or pre-encoded
 * LNS8 codes where the kernel takes them (codes_ok), and an fp32 y. 0, or -1 with "needs ... and an fp32 y". */
int hsdr_device_io_check(const hsdr_matvec_io *io, bool codes_ok, char *err, size_t errlen);

/* The K bytes (and Q8_0 scales) a kernel reads: x encoded as hsdr_encode_activations does, or, where x is NULL, the
 * given LNS8 codes with their pre-scale prescale_e (the caller has checked that the kernel takes codes). */
int hsdr_device_activations(const float *x, const uint8_t *codes, int prescale_e, size_t K, bool lns8, uint8_t *bytes,
                            float *scales, int *e, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
