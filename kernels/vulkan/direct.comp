#version 450
// vulkan.direct (and, compiled with -DQ1516, vulkan.q1516): the direct 8-phase reduction (spec/lns8.md section 3).
// One subgroup per row, the row's groups in increasing order: lane l of a subgroup of S lanes owns lanes l, l + S, ...
// of every 128-lane group and keeps eight phase partials (s t 2^q of its lanes, by phase k & 7); subgroupAdd of each
// partial gives the exact A[p] (any subgroup size: 8 on lavapipe, 32 on NVIDIA, 64 on AMD). The first lane then
//   direct: adds G_g = 2^e (d_g / 512) sum_p A[p] c_p to the row in fp64, y = that sum rounded to fp32;
//   q1516:  S = sum_p A[p] C31[p] (64-bit, as two 32-bit words: no shaderInt64 needed), Q_g = rint(S d_g
//           2^(e + 16 - 31 - 9)) in fp64 (spec section 6), the row = sum_g Q_g (64-bit, exact), y = row * 2^-16.
// A workgroup has RPW = local_size_x / S subgroups and takes RPW rows.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

void main()
{
    const uint row = PC.row0 + gl_WorkGroupID.x * RPW + gl_SubgroupID;
    if (row >= PC.N) // uniform per subgroup
        return;
    const uint G = PC.G, S = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
#ifdef Q1516
    uvec2 qrow = uvec2(0u); // int64 as (low, high) words (common.glsl)
#else
    double yrow = 0.0LF;
#endif
    for (uint g = 0u; g < G; g++) {
        const uint base = (row * G + g) * 7u;
        int part[8] = int[8](0, 0, 0, 0, 0, 0, 0, 0);
        for (uint i = lane; i < 128u; i += S) {
            const uint c = act_code(g * 128u + i);
            part[c & 7u] += lns8_term(c, ptq_trit(base, i));
        }
        int A[8];
        for (int p = 0; p < 8; p++)
            A[p] = subgroupAdd(part[p]); // exact: |A[p]| <= 2^22
        if (subgroupElect()) {
            if ((PC.flags & FLAG_A) != 0u)
                for (int p = 0; p < 8; p++)
                    AOUT[(row * G + g) * 8u + uint(p)] = A[p];
            const float d = ptq_scale(base);
#ifdef Q1516
            uvec2 s = uvec2(0u);
            for (int p = 0; p < 8; p++)
                s = i64_add(s, i64_mul(A[p], LNS8_C31[p])); // exact: |S| <= 2^54
            precise double x = i64_to_double(s) * double(d);   // as the reference: fp64(S) * d, one rounding
            const uvec2 q = i64_from_double(round_even(x * pow2(PC.e + 16 - 31 - 9)));
            if ((PC.flags & FLAG_Q) != 0u)
                QG[row * G + g] = q;
            qrow = i64_add(qrow, q);
#else
            yrow += lns8_group(A, d, PC.e);
#endif
        }
    }
    if (subgroupElect()) {
#ifdef Q1516
        if ((PC.flags & FLAG_Q) != 0u)
            QR[row] = qrow;
        Y[row] = float(i64_to_double(qrow) * pow2(-16));
#else
        Y[row] = float(yrow);
#endif
    }
}
