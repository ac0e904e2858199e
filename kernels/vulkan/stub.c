/* The Vulkan entry points of a build without Vulkan (no loader, headers or glslangValidator, or HSDR_VULKAN=OFF):
 * the variants stay in the registry and say why they cannot run. */
#include <stdio.h>

#include "vk.h"

static const char reason[] = "built without Vulkan (libvulkan-dev and glslang-tools not found, or HSDR_VULKAN=OFF)";

const char *hsdr_vulkan_unavailable(void)
{
    return reason;
}

const char *hsdr_vulkan_int_dot_unavailable(void)
{
    return reason;
}

const char *hsdr_vulkan_subgroup8_unavailable(void)
{
    return reason;
}

const char *hsdr_vulkan_int_dot8_unavailable(void)
{
    return reason;
}

int hsdr_vulkan_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v, (void)io;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

/* never called: the variants are unavailable */
const hsdr_device_ops hsdr_vulkan_production_ops = {0};
const hsdr_device_ops hsdr_vulkan_q8_0_ops = {0};
const hsdr_device_ops hsdr_vulkan_q8_0_dot_ops = {0};
const hsdr_device_ops hsdr_vulkan_mmvq_ops = {0};
const hsdr_device_ops hsdr_vulkan_dmmv_ops = {0};
const hsdr_device_ops hsdr_vulkan_planar2_ops = {0};
const hsdr_device_ops hsdr_vulkan_planar2_fused_ops = {0};

hsdr_q8_1_order hsdr_vulkan_mmvq_order(int K, int N)
{
    (void)K, (void)N;
    return (hsdr_q8_1_order){HSDR_Q8_1_THREADS, 32, 1}; /* never used: the variant cannot run */
}
hsdr_q8_1_order hsdr_vulkan_dmmv_order(int K, int N)
{
    return hsdr_vulkan_mmvq_order(K, N);
}
hsdr_q8_1_order hsdr_vulkan_planar2_order(int K, int N)
{
    return hsdr_vulkan_mmvq_order(K, N);
}
hsdr_q8_1_order hsdr_vulkan_production_order(int K, int N)
{
    return hsdr_vulkan_mmvq_order(K, N);
}
const hsdr_device_ops hsdr_vulkan_direct_ops = {0};
const hsdr_device_ops hsdr_vulkan_stateset_ops = {0};
const hsdr_device_ops hsdr_vulkan_q1516_ops = {0};
