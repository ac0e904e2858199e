#version 450
// vulkan.direct (and, compiled with -DQ1516, vulkan.q1516): the direct 8-phase reduction (spec/lns8.md section 3).
//   Idea     one subgroup per row: each lane adds s t 2^q of its lanes of every group into eight phase partials, and a
//            reduce-scatter butterfly leaves each lane one exact A[p]; direct: the phases summed over the groups in
//            fp64; q1516: S_g and Q_g per group in 64-bit words (no shaderInt64), the row an exact 64-bit sum.
//   Layout   weights: PTQ1_0 as stored (binding W, 7 words a block). Activations: the host's LNS8 codes (binding ACT,
//            four a word) and pre-scale e (push constant). Outputs: Y, A per (row, group) (AOUT), q1516's QG and QR.
//   Stages   reduce (this shader: decode, route, reduce, scale and merge fused; the codes are encoded on the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.direct *'
//            (or 'variant=vulkan.q1516 *')
// One subgroup of S lanes (S >= 8: hsdr_vulkan_subgroup8_unavailable says so elsewhere) per row, the row's groups
// in increasing order. Lane l owns the words w = l, l + S, ... (w < 32) of every 128-lane group: the four LNS8 codes
// of activation word w and the four trits of ptq_trits4 (weights 4w .. 4w + 3), whose terms s t 2^q it adds into eight
// phase partials (constant indices: registers). A reduce-scatter butterfly (offsets S/2, S/4, S/8: the lane keeps half
// of its partials and adds its partner's other half) and plain xor adds over the offsets below leave lane l with the
// exact A[p(l)], p(l) = 4 [l & S/2] + 2 [l & S/4] + [l & S/8] (issue 19 step 4; until then eight subgroupAdds a
// group and scalar decodes). Then
//   direct: each lane adds d_g A[p] c_p to its phase's fp64 sum over the groups; at the end the eight phases are added
//           by an xor butterfly over S/2, S/4, S/8 (within spec/vectors.md's fp32 tolerance: only the fp64 order of
//           the reference changes), y = fp32 of 2^(e - 9) times that;
//   q1516:  S_g = sum_p A[p] C31[p] by the same butterfly on 64-bit terms (two 32-bit words: no shaderInt64 needed;
//           exact), then Q_g = rint(S_g d_g 2^(e + 16 - 31 - 9)) in fp64 (spec section 6) by the first lane, the row =
//           sum_g Q_g (64-bit, exact), y = row * 2^-16.
// A workgroup has RPW = local_size_x / S subgroups and takes RPW rows.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "phases.glsl"

void main()
{
    const uint row = PC.row0 + gl_WorkGroupID.x * RPW + gl_SubgroupID;
    if (row >= PC.N) // uniform per subgroup
        return;
    const uint G = PC.G, S = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
    const uint p = phase_of(lane); // the phase this lane ends with
#ifdef Q1516
    uvec2 qrow = uvec2(0u); // int64 as (low, high) words (common.glsl)
#else
    precise double yp = 0.0LF; // this lane's phase: sum_g d_g A_g[p] c_p
#endif
    for (uint g = 0u; g < G; g++) {
        const uint base = (row * G + g) * 7u;
        int part[8] = int[8](0, 0, 0, 0, 0, 0, 0, 0);
        for (uint w = lane; w < 32u; w += S) {
            const uint codes = ACT[g * 32u + w], t4 = ptq_trits4(base, 4u * w);
            for (uint j = 0u; j < 4u; j++) {
                const uint c = (codes >> (8u * j)) & 0xffu;
                const int v = lns8_term(c, bitfieldExtract(int(t4), int(8u * j), 8));
                for (int k = 0; k < 8; k++)
                    part[k] += (c & 7u) == uint(k) ? v : 0;
            }
        }
        const int a = phase_scatter(part);
        if ((PC.flags & FLAG_A) != 0u && phase_writer(lane))
            AOUT[(row * G + g) * 8u + p] = a;
        const float d = ptq_scale(base);
#ifdef Q1516
        const uvec2 s = phase_sum_i64(i64_mul(a, LNS8_C31[p])); // exact: |S| <= 2^54
        if (subgroupElect()) {
            precise double x = i64_to_double(s) * double(d); // as the reference: fp64(S) * d, one rounding
            const uvec2 q = i64_from_double(round_even(x * pow2(PC.e + 16 - 31 - 9)));
            if ((PC.flags & FLAG_Q) != 0u)
                QG[row * G + g] = q;
            qrow = i64_add(qrow, q);
        }
#else
        yp += double(a) * LNS8_CP[p] * double(d);
#endif
    }
#ifdef Q1516
    if (subgroupElect()) {
        if ((PC.flags & FLAG_Q) != 0u)
            QR[row] = qrow;
        Y[row] = float(i64_to_double(qrow) * pow2(-16));
    }
#else
    const double y = phase_sum_f64(yp);
    if (subgroupElect())
        Y[row] = float(y * pow2(PC.e - 9));
#endif
}
