// The parts of the fork's q8_1 integer-dot mat-vec (docs/vulkan-production.md section 3) that vulkan.mmvq
// (mmvq.comp: PTQ1_0 as stored) and vulkan.planar2 (planar2.comp: the 2-bit digits predecoded) share: the workgroup
// of 4 rows (planar2: RPW), two invocations per 128-block (sub = tid & 1), the block's activation words, the fp32
// chain of a block and the row's end (rows_end.glsl). With FUSED_ENCODE (vulkan.planar2_fused) the q8_1 words are
// the workgroup's shared copy (s_q81). The integer sums the decode feeds in are the same in both (digit . q over the
// same weights), so on the same workgroup y is the same bits: hsdr_matvec_q8_1 with hsdr_vulkan_mmvq_order
// (hsdr_vulkan_planar2_order follows HSDR_VULKAN_PLANAR2_SHAPE). Included after common.glsl; needs
// GL_KHR_shader_subgroup_shuffle.

#ifdef FUSED_ENCODE
shared uint s_q81[36u * MAXG]; // x as q8_1, quantized by the workgroup itself (planar2.comp's quantize_x)
#define Q81 s_q81
#else
layout(std430, binding = 2) readonly buffer Q81In { uint Q81[]; }; // binding 2 (SCALE) as the q8_1 words
#endif

#ifndef ROWS_END_RPW
#define ROWS_END_RPW 4 // the fork's rows a workgroup; vulkan.planar2 takes RPW (its specialization constant 1)
#endif
#include "rows_end.glsl"

// The activation words of block blk for invocation sub: y[i][t] the q8_1 word of the four weights of the sub's qs word
// i (0..2) at digit position t (0..4): qs bytes 4w .. 4w + 3 (w < 4) hold weights 16 t + 4w ..; bytes 16 + 4w' hold
// 80 + 8 t + 4w' ..; yq[0], yq[1] the words of weights 120..123 and 124..127 (the qh digits).
void mmvq_act(uint blk, uint sub, out uint y[3][5], out uint yq[2])
{
    const uint qv = 36u * blk + 4u; // the block_q8_1_x4: four (d, s) words, then 32 value words
    for (uint t = 0u; t < 5u; t++) {
        y[0][t] = Q81[qv + 4u * t + 3u * sub];
        y[1][t] = sub != 0u ? Q81[qv + 20u + 2u * t] : Q81[qv + 4u * t + 1u];
        y[2][t] = sub != 0u ? Q81[qv + 21u + 2u * t] : Q81[qv + 4u * t + 2u];
    }
    yq[0] = Q81[qv + 30u], yq[1] = Q81[qv + 31u];
}

// One block's value for invocation sub: the digit sums accA (its first qs word) and accB (the other two, and the qh
// digits with position 4), by digit positions 0-1, 2-3, 4, each scaled by the d of the q8_1 block it lies in; the
// digits' -1 is one subtraction of two q8_1 blocks' s. The fork's fma nesting, every fma fused (fma_f32).
float mmvq_block(uint blk, uint sub, int accA[3], int accB[3])
{
    const uint qb = 36u * blk;
    const vec2 ds0 = unpackHalf2x16(Q81[qb]), ds1 = unpackHalf2x16(Q81[qb + 1u]);
    const vec2 ds2 = unpackHalf2x16(Q81[qb + 2u]), ds3 = unpackHalf2x16(Q81[qb + 3u]);
    const float sB0 = sub != 0u ? ds2.x : ds0.x, sB1 = sub != 0u ? ds3.x : ds1.x;
    const float sB2 = sub != 0u ? ds3.x : ds2.x;
    precise float bias = sub != 0u ? ds2.y + ds3.y : ds0.y + ds1.y;
    float sum = fma_f32(sB2, float(accB[2]), -bias);
    sum = fma_f32(sB1, float(accB[1]), sum);
    sum = fma_f32(sB0, float(accB[0]), sum);
    sum = fma_f32(ds2.x, float(accA[2]), sum);
    sum = fma_f32(ds1.x, float(accA[1]), sum);
    return fma_f32(ds0.x, float(accA[0]), sum);
}
