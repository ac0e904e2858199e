#version 450
// vulkan.dmmv: the fork's generic fp32 dequantizing mat-vec for one PTQ1_0 column, as it runs on NVIDIA for
// K <= 4096 (mul_mat_vec_ptq1_0_f32_f32 from mul_mat_vec.comp at PrismML-Eng/llama.cpp 5a398c96;
// docs/vulkan-production.md section 3b).
//   Idea     no quantization: x read as fp32, each invocation takes 8 consecutive weights an iteration, two 4-wide
//            dots (their additions in order) times the block's d fused into its running sum, then a fixed xor
//            butterfly per subgroup and the subgroups added in order (rows_end.glsl); 2 rows a workgroup.
//   Layout   weights: PTQ1_0 as stored (binding W, 7 words a block). Activations: x as fp32 bit patterns (binding ACT).
//   Stages   reduce (this shader; x is uploaded, not encoded).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.dmmv *'
// y is held bit for bit to hsdr_matvec_q8_1 in HSDR_Q8_1_DEQUANT_FP32 {lanes = subgroup size, groups = the
// workgroup's subgroups}: the fork's operations in the fork's order, with the choices it leaves to the device pinned:
// dot's additions in order, the multiply by d and the add fused (fma_f32), a fixed xor butterfly of shuffles instead
// of subgroupAdd.
//
// A workgroup takes RPW = 2 rows. Invocation tid takes the 8 consecutive weights from c = 8 (j wg + tid) in
// iterations j = 0, 1, ... while c < K (always inside one 128-block): per row s = ((x_c t_c + ..) + ..) over c .. c + 3
// and s' over c + 4 .. c + 7 (the products exact: t in {-1, 0, 1}), then p = fma(s + s', d, p).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#define ROWS_END_RPW 2
#include "rows_end.glsl"

// The four products x_c t_c .. x_c+3 t_c+3 (the signed-byte trits of ptq_trits4) added in order.
float dot4(uint c, uint t4)
{
    precise float s = uintBitsToFloat(ACT[c]) * float(bitfieldExtract(int(t4), 0, 8));
    for (int k = 1; k < 4; k++)
        s = s + uintBitsToFloat(ACT[c + uint(k)]) * float(bitfieldExtract(int(t4), 8 * k, 8));
    return s;
}

void main()
{
    const uint tid = gl_LocalInvocationID.x, G = PC.G, wg = gl_WorkGroupSize.x;
    const uint first = PC.row0 + gl_WorkGroupID.x * RPW, rows = min(RPW, PC.N - min(first, PC.N));
    float temp[2] = float[2](0.0, 0.0);
    for (uint c = 8u * tid; c < PC.K; c += 8u * wg) {
        const uint blk = c >> 7, e = c & 127u;
        for (uint n = 0u; n < 2u; n++) {
            if (n >= rows)
                break;
            const uint base = ((first + n) * G + blk) * 7u;
            precise float s = dot4(c, ptq_trits4(base, e)) + dot4(c + 4u, ptq_trits4(base, e + 4u));
            temp[n] = fma_f32(s, ptq_scale(base), temp[n]);
        }
    }
    rows_end(temp, first, rows);
}
