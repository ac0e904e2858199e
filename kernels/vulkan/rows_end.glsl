// The end of a row of the fork-style mat-vecs (mmvq.comp and planar2.comp through mmvq.glsl: 4 rows a workgroup;
// dmmv.comp: 2): each subgroup's xor butterfly of its invocations' temp[n] (lane 0's value, one rounding per add),
// then the subgroups' values in order, y written for the workgroup's `rows` rows from `first`: hsdr_matvec_q8_1's
// Vulkan reduction. Define ROWS_END_RPW (rows a workgroup) before including it, after common.glsl; needs
// GL_KHR_shader_subgroup_shuffle.

shared float s_part[ROWS_END_RPW * 32]; // per row, each subgroup's sum (workgroups of up to 32 subgroups)

void rows_end(float temp[ROWS_END_RPW], uint first, uint rows)
{
    const uint tid = gl_LocalInvocationID.x, nsg = gl_WorkGroupSize.x / gl_SubgroupSize;
    for (uint n = 0u; n < ROWS_END_RPW; n++) {
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
