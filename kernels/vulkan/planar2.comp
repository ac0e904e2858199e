#version 450
// vulkan.planar2 (and, built with -DFUSED_ENCODE, vulkan.planar2_fused): vulkan.mmvq's design on PTQ1_0's digits
// predecoded once on the host into 2-bit fields (vk.c planar2_convert; 34 bytes per 128 weights, 1.21x PTQ1_0's 28).
//   Idea     the decode is a shift and a mask per four digits, and OpSDot takes them against the q8_1 activation words
//            as they are: the same integer sums as mmvq's x3 steps, so the same y bits (as cuda.planar2 is to
//            cuda.production); _fused: each workgroup quantizes x itself, so a GEMV is one dispatch.
//   Layout   weights: 8 words per (row, group) block, then the fp16 scales (below). Activations: block_q8_1_x4 (the
//            encode dispatch's, or _fused's workgroup copy in shared memory; q8_1.glsl).
//   Stages   encode (quantize_q8_1.comp's dispatch; none for _fused), reduce (this shader).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.planar2 *'
//            (or 'variant=vulkan.planar2_fused *')
// A workgroup takes RPW rows (specialization constant 1: the fork's 4 unless HSDR_VULKAN_PLANAR2_SHAPE says otherwise,
// vk.c planar2_shape), each block's activation words loaded once for all of them; y bit for bit against
// hsdr_matvec_q8_1 in hsdr_vulkan_planar2_order (mmvq's by default).
//
// Layout: block (row r, group g) is the 8 words at 8 (r G + g): words 3 sub + i (sub 0, 1; i = 0..2) hold, for the four
// bytes k of PTQ1_0 qs word 3 sub + i, the digits of positions 0..3 in bit pairs 0, 2, 4, 6 of byte k; word 6 + sub
// holds in byte k the position-4 digits of the sub's qs words 0..2 in bit pairs 0, 2, 4, and in bit pair 6 the qh digit
// of weight 120 + 4 sub + k. The fp16 scales follow all the blocks, two a word, in the same order.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#define ROWS_END_RPW RPW
#include "mmvq.glsl"
#ifdef FUSED_ENCODE
#include "q8_1.glsl"

// vulkan.planar2_fused: x quantized to q8_1 by each workgroup itself into s_q81 (q8_1.glsl: the words of
// quantize_q8_1.comp), so that a GEMV is one dispatch and a token needs no barrier between an encode and its mat-vec.
// Item i = 32 g + j is values 4 j .. 4 j + 3 of block g; the eight items of a 32-value block are eight consecutive
// invocations of one subgroup (a workgroup is whole subgroups of 8 or more, and 32 G items a multiple of 8), their
// amax and sum by xor shuffles within the eight (a max and integer sums: any order gives the same).
void quantize_x(uint tid)
{
    for (uint i = tid; i < 32u * PC.G; i += gl_WorkGroupSize.x) {
        const uint g = i >> 5, j = i & 31u, base = 128u * g + 4u * j;
        const vec4 v = vec4(uintBitsToFloat(ACT[base]), uintBitsToFloat(ACT[base + 1u]),
                            uintBitsToFloat(ACT[base + 2u]), uintBitsToFloat(ACT[base + 3u]));
        float amax = max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)));
        for (uint o = 1u; o < 8u; o <<= 1)
            amax = max(amax, subgroupShuffleXor(amax, o));
        float d, id;
        q8_1_scale(amax, d, id);
        int sum;
        s_q81[36u * g + 4u + j] = q8_1_word(v, id, sum);
        for (uint o = 1u; o < 8u; o <<= 1)
            sum += subgroupShuffleXor(sum, o);
        if ((j & 7u) == 0u)
            s_q81[36u * g + (j >> 3)] = q8_1_ds(d, sum);
    }
    barrier();
}
#endif

void main()
{
    const uint tid = gl_LocalInvocationID.x, sub = tid & 1u, G = PC.G, M = 0x03030303u;
    const uint first = PC.row0 + gl_WorkGroupID.x * RPW, rows = min(RPW, PC.N - min(first, PC.N));
    const uint scales = PC.N * G * 8u; // the word of the first scales
#ifdef FUSED_ENCODE
    quantize_x(tid);
#endif
    float temp[RPW];
    for (uint n = 0u; n < RPW; n++)
        temp[n] = 0.0;
    for (uint blk = tid >> 1; blk < G; blk += gl_WorkGroupSize.x >> 1) {
        uint y[3][5], yq[2];
        mmvq_act(blk, sub, y, yq);
        // every one of the RPW rows, without a branch on `rows`, so that the compiler may issue all the rows' loads
        // ahead (RPW is known when the pipeline is made); a row past N (the last workgroup only) reads row N - 1 and
        // rows_end never stores it
        for (uint n = 0u; n < RPW; n++) {
            const uint b = min(first + n, PC.N - 1u) * G + blk, base = 8u * b;
            const uint c0 = W[base + 3u * sub], c1 = W[base + 3u * sub + 1u], c2 = W[base + 3u * sub + 2u];
            const uint p4 = W[base + 6u + sub];
            int accA[3] = int[3](0, 0, 0), accB[3] = int[3](0, 0, 0);
            for (uint t = 0u; t < 4u; t++) {
                const uint g = t >> 1, s = 2u * t;
                accA[g] += sdot4((c0 >> s) & M, y[0][t]);
                accB[g] += sdot4((c1 >> s) & M, y[1][t]) + sdot4((c2 >> s) & M, y[2][t]);
            }
            accA[2] += sdot4(p4 & M, y[0][4]);
            accB[2] += sdot4((p4 >> 2) & M, y[1][4]) + sdot4((p4 >> 4) & M, y[2][4]);
            if (sub != 0u) // the qh digits: weights 120..123 in word 6, 124..127 in word 7
                accB[2] += sdot4((W[base + 6u] >> 6) & M, yq[0]) + sdot4((p4 >> 6) & M, yq[1]);
            const float d = unpackHalf2x16(W[scales + (b >> 1)] >> (16u * (b & 1u))).x;
            temp[n] = fma_f32(d, mmvq_block(blk, sub, accA, accB), temp[n]);
        }
    }
    rows_end(temp, first, rows);
}
