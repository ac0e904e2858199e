#version 450
// The fused-fma probe (vk.c, fma_probe): for triple i (words 4i..4i+2 of W, fp32 bit patterns), Y[i] = the device's
// fma(a, b, c) (`precise`) and AOUT[i] = the bits of common.glsl's fp64 emulation, fma_f32 built with FMA_FUSED
// false. Vulkan lets a device compute GLSL's fma as a multiply and an add; vk.c compares both with the host's
// correctly rounded fmaf and switches fma_f32 to the device's fma (FMA_FUSED) only where the two agree on every
// triple: then the switch changes no bits the checks have seen. A device that flushes fp32 subnormals flushes them in
// both or shows the difference here.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i < PC.N) {
        const vec3 t = uintBitsToFloat(uvec3(W[4u * i], W[4u * i + 1u], W[4u * i + 2u]));
        precise float r = fma(t.x, t.y, t.z);
        Y[i] = r;
        AOUT[i] = floatBitsToInt(fma_f32(t.x, t.y, t.z));
    }
}
