// The end of the direct 8-phase reduction that vulkan.direct, vulkan.q1516 (direct.comp) and vulkan.stateset
// (stateset.comp) share: a subgroup of S >= 8 lanes, each holding eight phase partials, reduce-scatters them (offsets
// S/2, S/4, S/8: a lane keeps half of its partials and adds its partner's other half), then adds over the offsets
// below, so that lane l ends with the exact A[phase_of(l)], phase_of(l) = 4 [l & S/2] + 2 [l & S/4] + [l & S/8]; the
// eight lanes l ^ {S/2, S/4, S/8 combinations} hold the eight phases, so an xor butterfly over those three offsets
// adds a per-phase value over the phases. Included after common.glsl; needs GL_KHR_shader_subgroup_shuffle.

uint phase_of(uint lane)
{
    const uint S = gl_SubgroupSize;
    return ((lane & (S >> 1)) != 0u ? 4u : 0u) + ((lane & (S >> 2)) != 0u ? 2u : 0u) +
           ((lane & (S >> 3)) != 0u ? 1u : 0u);
}

// exact: the partials are integers and |A[p]| <= 2^22
int phase_scatter(int part[8])
{
    const uint S = gl_SubgroupSize, lane = gl_SubgroupInvocationID, o1 = S >> 1, o2 = S >> 2, o3 = S >> 3;
    const bool up1 = (lane & o1) != 0u, up2 = (lane & o2) != 0u, up3 = (lane & o3) != 0u;
    int h4[4], h2[2];
    for (int i = 0; i < 4; i++)
        h4[i] = (up1 ? part[4 + i] : part[i]) + subgroupShuffleXor(up1 ? part[i] : part[4 + i], o1);
    for (int i = 0; i < 2; i++)
        h2[i] = (up2 ? h4[2 + i] : h4[i]) + subgroupShuffleXor(up2 ? h4[i] : h4[2 + i], o2);
    int a = (up3 ? h2[1] : h2[0]) + subgroupShuffleXor(up3 ? h2[0] : h2[1], o3);
    for (uint o = o3 >> 1; o >= 1u; o >>= 1)
        a += subgroupShuffleXor(a, o);
    return a;
}

// true on the eight lanes that write A[phase_of(lane)] (one a phase)
bool phase_writer(uint lane)
{
    return (lane & ((gl_SubgroupSize >> 3) - 1u)) == 0u;
}

// v summed over the eight phases (a fixed order: the same in every lane)
double phase_sum_f64(double v)
{
    const uint S = gl_SubgroupSize;
    for (uint o = S >> 1; o >= (S >> 3); o >>= 1) {
        const uvec2 w = unpackDouble2x32(v);
        v = v + packDouble2x32(uvec2(subgroupShuffleXor(w.x, o), subgroupShuffleXor(w.y, o)));
    }
    return v;
}

// the same for 64-bit integers as (low, high) words (exact)
uvec2 phase_sum_i64(uvec2 v)
{
    const uint S = gl_SubgroupSize;
    for (uint o = S >> 1; o >= (S >> 3); o >>= 1)
        v = i64_add(v, uvec2(subgroupShuffleXor(v.x, o), subgroupShuffleXor(v.y, o)));
    return v;
}
