#version 450
// The q8_1 activations of vulkan.mmvq (docs/vulkan-production.md section 3: the upstream quantizer the fork runs
// before its integer-dot mat-vec), with the rounding the fork leaves open pinned so that y can be held to a C
// reference bit for bit (hsdr_q8_1_quantize_recip; the arithmetic: q8_1.glsl). The encode stage of vulkan.mmvq,
// vulkan.planar2 and vulkan.production above K = 4096 (how to time them: mmvq.comp, planar2.comp).
//
// A workgroup of 32 invocations fills one 144-byte block_q8_1_x4 (four 32-value blocks: their four (d, s) words,
// then 32 words of four int8): invocation i quantizes values 4 i .. 4 i + 3; eight invocations make a block, their
// amax and sum through shared memory (max and integer sums: any order gives the same).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "q8_1.glsl"

layout(std430, binding = 2) writeonly buffer Q81Out { uint Q81W[]; }; // binding 2 (SCALE) as the q8_1 words

shared float s_amax[32];
shared int s_sum[32];

void main()
{
    const uint tid = gl_LocalInvocationID.x, blk = gl_WorkGroupID.x, base = 128u * blk + 4u * tid;
    vec4 v = vec4(0.0);
    for (uint j = 0u; j < 4u; j++)
        v[j] = base + j < PC.K ? uintBitsToFloat(ACT[base + j]) : 0.0;
    s_amax[tid] = max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)));
    barrier();
    const uint k = tid >> 3; // the 32-value block
    float amax = 0.0;
    for (uint i = 0u; i < 8u; i++)
        amax = max(amax, s_amax[8u * k + i]);
    float d, id;
    q8_1_scale(amax, d, id);
    int sum;
    const uint word = q8_1_word(v, id, sum);
    Q81W[36u * blk + 4u + tid] = word;
    s_sum[tid] = sum;
    barrier();
    if ((tid & 7u) == 0u) {
        int total = 0;
        for (uint i = 0u; i < 8u; i++)
            total += s_sum[tid + i];
        Q81W[36u * blk + k] = q8_1_ds(d, total);
    }
}
