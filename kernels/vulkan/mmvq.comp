#version 450
// vulkan.mmvq: the fork's Vulkan PTQ1_0 x q8_1 mat-vec with integer dot products, as it runs for one column on
// NVIDIA at K > 4096 (mul_mat_vecq_ptq1_0.comp, PrismML-Eng/llama.cpp 5a398c96; docs/vulkan-production.md section 3).
//   Idea     x quantized to q8_1 on the device; two invocations per 128-block decode its digits by x3 steps in 16-bit
//            lanes against pre-masked activation words with OpSDot; each block's fused fp32 chain, then a fixed xor
//            butterfly per subgroup and the subgroups added in order (rows_end.glsl).
//   Layout   weights: PTQ1_0 as stored (binding W, 7 words a block). Activations: block_q8_1_x4 (binding 2 as q8_1
//            words: per 128 values four (d, s) words, then 32 words of four int8; quantize_q8_1.comp).
//   Stages   encode (quantize_q8_1.comp's dispatch), reduce (this shader).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.mmvq *'
// Built with -DHSDR_INT_DOT (OpSDot). y is held bit for bit to hsdr_matvec_q8_1 in HSDR_Q8_1_INT_DOT {lanes =
// subgroup size, groups = the workgroup's subgroups}: the fork's operations in the fork's order, with the two choices
// it leaves to the device pinned: every fma fused (fma_f32), the lanes added by a fixed xor butterfly of shuffles
// instead of subgroupAdd.
//
// A workgroup takes RPW = 4 rows; two invocations per 128-block (sub = tid & 1: qs bytes 0..11, or 12..23 and the
// qh bytes), blocks tid / 2, tid / 2 + wg / 2, ... For each of its three qs words the invocation splits the bytes
// into 16-bit lanes (bytes 0, 2 and 1, 3) and, digit position by position, multiplies by 3: the digit (0..2) lands
// in each lane's high byte, the remainder stays below for the next position. The activation word of the same four
// weights is masked to match (its bytes 1, 3 in place; bytes 0, 2 moved up), so OpSDot on signed bytes gives
// digit . q and the remainders meet zeros. Sums by digit positions 0-1, 2-3, 4 (and the qh digits, unmasked, with
// 4), each scaled by the d of the q8_1 block it lies in; the digits' -1 is one subtraction of two blocks' s.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "mmvq.glsl"

// One digit position of the 16-bit lanes lo (bytes 0, 2) and hi (bytes 1, 3) against the pre-masked activations:
// digit . q added to acc, the remainders kept.
void level(inout uint lo, inout uint hi, uint ylo, uint yhi, inout int acc)
{
    const uint wl = 3u * lo, wh = 3u * hi;
    lo = wl & 0x00ff00ffu;
    hi = wh & 0x00ff00ffu;
    acc += sdot4(wl, ylo) + sdot4(wh, yhi);
}

void main()
{
    const uint tid = gl_LocalInvocationID.x, sub = tid & 1u, G = PC.G;
    const uint first = PC.row0 + gl_WorkGroupID.x * RPW, rows = min(RPW, PC.N - min(first, PC.N));
    float temp[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint blk = tid >> 1; blk < G; blk += gl_WorkGroupSize.x >> 1) {
        uint y[3][5], yq[2], yl[3][5], yh[3][5];
        mmvq_act(blk, sub, y, yq);
        for (uint i = 0u; i < 3u; i++) // masked to the 16-bit lanes: bytes 1, 3 in place, bytes 0, 2 moved up
            for (uint t = 0u; t < 5u; t++)
                yh[i][t] = y[i][t] & 0xff00ff00u, yl[i][t] = (y[i][t] << 8) & 0xff00ff00u;
        for (uint n = 0u; n < 4u; n++) {
            if (n >= rows)
                break;
            const uint base = ((first + n) * G + blk) * 7u;
            uint lo[3], hi[3];
            for (uint i = 0u; i < 3u; i++) {
                const uint w = W[base + 3u * sub + i];
                lo[i] = w & 0x00ff00ffu, hi[i] = (w >> 8) & 0x00ff00ffu;
            }
            const uint w6 = W[base + 6u];
            int accA[3] = int[3](0, 0, 0), accB[3] = int[3](0, 0, 0);
            for (uint t = 0u; t < 5u; t++) {
                const uint g = t < 2u ? 0u : t < 4u ? 1u : 2u;
                level(lo[0], hi[0], yl[0][t], yh[0][t], accA[g]);
                level(lo[1], hi[1], yl[1][t], yh[1][t], accB[g]);
                level(lo[2], hi[2], yl[2][t], yh[2][t], accB[g]);
            }
            // qh: digit n of qh[h] is weight 120 + 2n + h; sub 0 decodes zeros
            uint vq = sub != 0u ? ((w6 & 0xffu) | ((w6 & 0xff00u) << 8)) : 0u, q01 = 0u, q23 = 0u;
            for (uint t = 0u; t < 4u; t++) {
                const uint wq = 3u * vq;
                vq = wq & 0x00ff00ffu;
                const uint two = ((wq >> 8) & 3u) | ((wq >> 16) & 0x300u); // weights 120 + 2t, 121 + 2t
                if (t < 2u)
                    q01 |= two << (16u * t);
                else
                    q23 |= two << (16u * (t - 2u));
            }
            accB[2] += sdot4(q01, yq[0]) + sdot4(q23, yq[1]);
            temp[n] = fma_f32(unpackHalf2x16(w6).y, mmvq_block(blk, sub, accA, accB), temp[n]);
        }
    }
    rows_end(temp, first, rows);
}
