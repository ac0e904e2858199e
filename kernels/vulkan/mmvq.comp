#version 450
// vulkan.mmvq: the fork's Vulkan PTQ1_0 x q8_1 mat-vec with integer dot products, as it runs for one column on
// NVIDIA at K > 4096 (mul_mat_vecq_ptq1_0.comp, PrismML-Eng/llama.cpp 5a398c96; docs/vulkan-production.md section
// 3), after quantize_q8_1.comp. Built with -DHSDR_INT_DOT (OpSDot). y is held bit for bit to hsdr_matvec_q8_1 with
// hsdr_q8_1_order {vk_wg = workgroup, vk_sg = subgroup}: the fork's operations in the fork's order, with the two
// choices it leaves to the device pinned: every fma fused (fma_f32), the lanes added by a fixed xor butterfly of
// shuffles instead of subgroupAdd.
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

layout(std430, binding = 2) readonly buffer Q81In { uint Q81[]; }; // binding 2 (SCALE) as the q8_1 words

shared float s_part[4 * 32]; // per row, each subgroup's sum (workgroups of up to 32 subgroups)

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
        const uint qb = 36u * blk, qv = qb + 4u; // the block_q8_1_x4: four (d, s) words, then 32 value words
        const vec2 ds0 = unpackHalf2x16(Q81[qb]), ds1 = unpackHalf2x16(Q81[qb + 1u]);
        const vec2 ds2 = unpackHalf2x16(Q81[qb + 2u]), ds3 = unpackHalf2x16(Q81[qb + 3u]);
        const float sB0 = sub != 0u ? ds2.x : ds0.x, sB1 = sub != 0u ? ds3.x : ds1.x;
        const float sB2 = sub != 0u ? ds3.x : ds2.x;
        precise float bias = sub != 0u ? ds2.y + ds3.y : ds0.y + ds1.y;
        // the activation words of digit position t: qs bytes 4w .. 4w + 3 (w < 4) hold weights 16 t + 4w ..; bytes
        // 16 + 4w' hold 80 + 8 t + 4w' ..
        uint yl[3][5], yh[3][5];
        for (uint t = 0u; t < 5u; t++) {
            const uint y0 = Q81[qv + 4u * t + 3u * sub];
            const uint y1 = sub != 0u ? Q81[qv + 20u + 2u * t] : Q81[qv + 4u * t + 1u];
            const uint y2 = sub != 0u ? Q81[qv + 21u + 2u * t] : Q81[qv + 4u * t + 2u];
            yh[0][t] = y0 & 0xff00ff00u, yl[0][t] = (y0 << 8) & 0xff00ff00u;
            yh[1][t] = y1 & 0xff00ff00u, yl[1][t] = (y1 << 8) & 0xff00ff00u;
            yh[2][t] = y2 & 0xff00ff00u, yl[2][t] = (y2 << 8) & 0xff00ff00u;
        }
        const uint yq0 = Q81[qv + 30u], yq1 = Q81[qv + 31u]; // weights 120..127
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
            accB[2] += sdot4(q01, yq0) + sdot4(q23, yq1);
            float sum = fma_f32(sB2, float(accB[2]), -bias);
            sum = fma_f32(sB1, float(accB[1]), sum);
            sum = fma_f32(sB0, float(accB[0]), sum);
            sum = fma_f32(ds2.x, float(accA[2]), sum);
            sum = fma_f32(ds1.x, float(accA[1]), sum);
            sum = fma_f32(ds0.x, float(accA[0]), sum);
            temp[n] = fma_f32(unpackHalf2x16(w6).y, sum, temp[n]);
        }
    }
    // each subgroup's xor butterfly (lane 0's value), then the subgroups in order
    const uint nsg = gl_WorkGroupSize.x / gl_SubgroupSize;
    for (uint n = 0u; n < 4u; n++) {
        precise float v = temp[n];
        for (uint o = gl_SubgroupSize >> 1; o >= 1u; o >>= 1)
            v = v + subgroupShuffleXor(v, o);
        if (gl_SubgroupInvocationID == 0u)
            s_part[n * 32u + gl_SubgroupID] = v;
    }
    barrier();
    if (tid < rows) {
        precise float y = s_part[tid * 32u];
        if (nsg > 1u) {
            y = 0.0;
            for (uint s = 0u; s < nsg; s++)
                y = y + s_part[tid * 32u + s];
        }
        Y[first + tid] = y;
    }
}
