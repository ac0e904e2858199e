/* The Vulkan backend's C entry points, called from the registry (kernels/registry.c). Built from kernels/vulkan/vk.c
 * and the GLSL compute shaders beside it (compiled to SPIR-V by glslangValidator and checked by spirv-val at build
 * time) when CMake finds the Vulkan loader, its headers and glslangValidator; otherwise kernels/vulkan/stub.c provides
 * the same functions and every Vulkan variant reports why it cannot run.
 *   Idea     one compute shader per variant (its head says the idea, layout and stages), dispatched by vk.c on one
 *            device with the same buffers for all; the checking interface runs the timed path itself.
 *   Layout   the bindings, push and specialization constants every shader shares: common.glsl.
 *   Stages   the dispatches a variant times: its mat-vec (reduce), and for vulkan.mmvq, vulkan.planar2 and
 *            vulkan.production above K = 4096 the q8_1 quantizer before it (encode).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.direct *'
 *            (any vulkan.NAME; scripts/gpu-bench.sh runs the GPU matrix)
 *
 * Device: HSDR_VULKAN_DEVICE = an index into the loader's list or a part of the device name (case-insensitive);
 * default: the first discrete GPU, else integrated, else virtual, else CPU (mesa lavapipe). Q8_0 and LNS8 activations
 * are encoded on the host (Q8_0 by the x86 production quantizer, LNS8 with the automatic pre-scale) and uploaded
 * untimed; vulkan.dmmv reads x as fp32. A Vulkan row times its dispatches only, by timestamps (vkCmdWriteTimestamp x
 * timestampPeriod, masked to timestampValidBits). On a CPU device (lavapipe) times are not GPU performance numbers:
 * the context says so. */
#ifndef HSDR_VK_H
#define HSDR_VK_H
#include <stddef.h>

#include "../kernel.h"

/* NULL when a Vulkan device can run the shaders (fp64, subgroup basic/ballot/arithmetic/shuffle in compute,
 * timestamps on a compute queue; 64-bit integers are 32-bit word pairs, so shaderInt64 is not needed), else why not. */
const char *hsdr_vulkan_unavailable(void);
/* The same, and NULL only where the device also has shaderIntegerDotProduct (the shaders built with HSDR_INT_DOT). */
const char *hsdr_vulkan_int_dot_unavailable(void);
/* The same, and NULL only where the device's subgroups have 8 lanes or more (vulkan.direct, vulkan.q1516,
 * vulkan.stateset). */
const char *hsdr_vulkan_subgroup8_unavailable(void);
/* Both of the two above (vulkan.planar2_fused: OpSDot, and its quantizer's shuffles within eight lanes). */
const char *hsdr_vulkan_int_dot8_unavailable(void);

/* The checking interface of every Vulkan variant: its own timed path (the encode and upload of set_input, one sample
 * of mark / enqueue / mark / elapsed, outputs back), so the code checked against the vectors is the code that is
 * timed. */
int hsdr_vulkan_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

/* vulkan.production: the fork's one-column dispatch on NVIDIA (docs/vulkan-production.md): vulkan.mmvq's kernel for
 * K > 4096, vulkan.dmmv's up to it; y bit for bit against hsdr_matvec_q8_1 in the order below. */
extern const hsdr_device_ops hsdr_vulkan_production_ops;
hsdr_q8_1_order hsdr_vulkan_production_order(int K, int N);
/* vulkan.q8_0: PTQ1_0 x Q8_0, y bit-identical to the CPU production path (fused). */
extern const hsdr_device_ops hsdr_vulkan_q8_0_ops;
/* vulkan.q8_0_dot: the same design and bits, each 32-block's integer sum by the SPIR-V integer dot product (OpSDot). */
extern const hsdr_device_ops hsdr_vulkan_q8_0_dot_ops;
/* vulkan.dmmv: the fork's fp32 dequantizing mat-vec for K <= 4096 on NVIDIA (docs/vulkan-production.md section 3b):
 * x as fp32, 8 weights an invocation and iteration; y bit for bit against hsdr_matvec_q8_1 in the order below. */
extern const hsdr_device_ops hsdr_vulkan_dmmv_ops;
hsdr_q8_1_order hsdr_vulkan_dmmv_order(int K, int N);
/* vulkan.mmvq: the fork's integer-dot mat-vec for K > 4096 on NVIDIA (docs/vulkan-production.md section 3): x
 * quantized to q8_1 on the device, then OpSDot on two bytes of digits at a time; y bit for bit against
 * hsdr_matvec_q8_1 in the order below (the workgroup and subgroup sizes it runs with on this device). */
extern const hsdr_device_ops hsdr_vulkan_mmvq_ops;
hsdr_q8_1_order hsdr_vulkan_mmvq_order(int K, int N);
/* vulkan.planar2: vulkan.mmvq's design on the digits predecoded once into 2-bit fields (planar2.comp): a shift and a
 * mask per four digits, the same integer sums; y bit for bit against hsdr_matvec_q8_1 in the order below (mmvq's,
 * unless HSDR_VULKAN_PLANAR2_SHAPE sets another workgroup: vk.c planar2_shape). */
extern const hsdr_device_ops hsdr_vulkan_planar2_ops;
hsdr_q8_1_order hsdr_vulkan_planar2_order(int K, int N);
/* vulkan.planar2_fused: vulkan.planar2 with x quantized to q8_1 by each workgroup itself (the words of the encode
 * dispatch, q8_1.glsl), so a GEMV is one dispatch; y as vulkan.planar2's. */
extern const hsdr_device_ops hsdr_vulkan_planar2_fused_ops;
/* vulkan.direct: direct 8-phase A[8] per group, phase sums by subgroupAdd; exact A, fp64 group sums. */
extern const hsdr_device_ops hsdr_vulkan_direct_ops;
/* vulkan.stateset: ballot state sets per tile of R rows and group, subgroupBallotBitCount per row, folded to A[8]. */
extern const hsdr_device_ops hsdr_vulkan_stateset_ops;
/* vulkan.q1516: the direct A[8], then Q15.16 per group (64-bit S as two 32-bit words, fp64 materialization) and a
 * 64-bit row merge. */
extern const hsdr_device_ops hsdr_vulkan_q1516_ops;

#endif
