/* The Metal backend's C entry points, called from the registry (kernels/registry.c). Each .metal kernel's head says
 * its idea, layout and stages. Time a variant on a Mac (HSDR_METAL):
 *     ./build/hsdr run matrix.yaml --set variants=backend:metal --filter 'variant=metal.direct *'
 *
 * On Apple, with HSDR_METAL on: kernels/metal/host/metal_host.m (Objective-C, Metal framework) compiles the .metal
 * kernels at run time, runs them on the default GPU and times them from the command buffer's GPU start and end times
 * (HSDR_METAL_HOST is defined). Everywhere else: kernels/metal/shim/shim_host.cpp compiles the very same .metal
 * sources as C++ against shim/metal_shim.h and runs them on the CPU, so `hsdr check` validates them against the
 * vectors; the shim is not timed (its device ops are not registered: a shim run says nothing about Apple GPUs).
 *
 * Kernel interface (kernels/metal/hsdr_metal_common.h, shared by the kernels, the host and the shim): buffers
 * 0 W (PTQ1_0 words), 1 ACT (K bytes: Q8_0 values or LNS8 codes, encoded on the host), 2 SCALE (K/32 floats, production
 * only), 3 Y (N floats), 4 AOUT (N * G * 8 ints, when flags & A), 5 QG (N * G longs) and 6 QR (N longs) when flags & Q,
 * 7 the hsdr_params; threadgroups of hsdr_metal_threads(kernel) threads taking hsdr_metal_rows(kernel, R) rows each
 * (the state-set kernel: R <= HSDR_METAL_MAX_R, which the hosts enforce). */
#ifndef HSDR_METAL_H
#define HSDR_METAL_H
#include <stddef.h>

#include "../kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when the Metal kernels can run here (a Metal GPU on Apple; the CPU shim elsewhere), else why not. */
const char *hsdr_metal_unavailable(void);

/* The checking interface of every Metal variant: encode x on the host, run the kernel, read every declared output. */
int hsdr_metal_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#ifdef HSDR_METAL_HOST
/* the timed device ops (Apple only) */
extern const hsdr_device_ops hsdr_metal_production_ops, hsdr_metal_direct_ops, hsdr_metal_stateset_ops,
    hsdr_metal_q1516_ops;
#define HSDR_METAL_OPS(name) (&hsdr_metal_##name##_ops)
#else
#define HSDR_METAL_OPS(name) NULL /* the CPU shim validates; it does not time */
#endif

/* The kernel of a Metal variant: its function name in the .metal sources and which activations it reads. */
typedef struct {
    const char *function; /* hsdr_production, hsdr_direct, hsdr_stateset, hsdr_q1516 */
    int lns8;             /* activations: LNS8 codes (else Q8_0 values + scales) */
    unsigned outs;        /* optional outputs it can write: HSDR_METAL_FLAG_A, HSDR_METAL_FLAG_Q */
} hsdr_metal_kernel;
extern const hsdr_metal_kernel hsdr_metal_production, hsdr_metal_direct, hsdr_metal_stateset, hsdr_metal_q1516;
/* The kernel of variant v (by name: metal.production, metal.direct, metal.stateset, metal.q1516), or NULL. */
const hsdr_metal_kernel *hsdr_metal_kernel_for(const hsdr_variant *v);
/* Threads per threadgroup of kernel k, and the rows each threadgroup takes (R: the rows sharing a state set). */
unsigned hsdr_metal_threads(const hsdr_metal_kernel *k);
unsigned hsdr_metal_rows(const hsdr_metal_kernel *k, int R);

#ifdef __cplusplus
}
#endif
#endif
