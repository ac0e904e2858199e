#version 450
// vulkan.q8_0 (this file is production.comp: until issue 19 step 3 it was the Vulkan production row): PTQ1_0 x Q8_0,
// bit-identical to the CPU production path's fused sequence (spec/ptq1_0.md sections 4 and 7).
//   Idea     per 128-block the exact integer sums of its four 32-blocks and sumi = fma(d8_k, isum_k, sumi) from +0,
//            blocks in parallel into shared memory; then one invocation per row chains sumf = fma(d_w, sumi_b, sumf)
//            over the blocks in increasing order. Every fma is fma_f32 (common.glsl).
//   Layout   weights: PTQ1_0 as stored (binding W, 7 words a block). Activations: the host's x86 Q8_0 values (binding
//            ACT, four int8 a word) and each Q8_0 block's fp16 scale as fp32 (binding SCALE).
//   Stages   reduce (this shader; the Q8_0 encode happens on the host, untimed).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.q8_0 *'
//            (or 'variant=vulkan.q8_0_dot *')
// GLSL's fma() may be unfused in Vulkan, and on lavapipe it is (1-ulp differences in y): hence fma_f32.
//
// Built with -DHSDR_INT_DOT it is vulkan.q8_0_dot: each 32-block's integer sum four weights at a time, the trits
// packed as signed bytes against a word of Q8_0 values by the SPIR-V integer dot product (common.glsl's sdot4): the
// same integers, so the same y.
//
// A workgroup takes RPW rows: its invocations decode the RPW x G blocks (block j -> row j / G, group j % G) into
// shared memory, then invocation r < RPW chains row r. RPW x G x 8 bytes of shared memory (the host picks RPW to fit).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

shared float s_sumi[RPW * MAXG];
shared float s_dw[RPW * MAXG];

void main()
{
    const uint G = PC.G, first = PC.row0 + gl_WorkGroupID.x * RPW;
    const uint rows = min(RPW, PC.N - min(first, PC.N));
    for (uint j = gl_LocalInvocationID.x; j < rows * G; j += gl_WorkGroupSize.x) {
        const uint r = j / G, g = j % G, base = ((first + r) * G + g) * 7u;
        int isum[4] = int[4](0, 0, 0, 0);
#ifdef HSDR_INT_DOT
        for (uint w = 0u; w < 128u; w += 4u) // four weights a dot product: the same exact integers
            isum[w >> 5] += sdot4(ptq_trits4(base, w), ACT[(g * 128u + w) >> 2]);
#else
        for (uint w = 0u; w < 128u; w++) {
            const int t = ptq_trit(base, w);
            isum[w >> 5] += t * act_q8(g * 128u + w);
        }
#endif
        precise float sumi = 0.0;
        for (uint k = 0u; k < 4u; k++)
            sumi = fma_f32(SCALE[g * 4u + k], float(isum[k]), sumi);
        s_sumi[r * G + g] = sumi;
        s_dw[r * G + g] = ptq_scale(base);
    }
    barrier();
    const uint r = gl_LocalInvocationID.x;
    if (r < rows) {
        precise float sumf = 0.0;
        for (uint g = 0u; g < G; g++)
            sumf = fma_f32(s_dw[r * G + g], s_sumi[r * G + g], sumf);
        Y[first + r] = sumf;
    }
}
