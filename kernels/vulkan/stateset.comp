#version 450
// vulkan.stateset: reusable activation state sets (spec/lns8.md section 4).
//   Idea     per group and tile of R rows, the occupied codes' 128-lane masks S_k = subgroupBallot(code == k) are built
//            once (route); per row the trit masks by ballot, and the lanes split the states: bitCount of S_k against
//            the positive and negative products, shifted into phase partials, a reduce-scatter butterfly to A[p].
//   Layout   weights: PTQ1_0 as stored (binding W). Activations: the host's LNS8 codes (binding ACT) and pre-scale e
//            (push constant); the state masks and codes of a group in shared memory (s_mask, s_code).
//   Stages   reduce (this shader: route, reduce, scale and merge fused; the codes are encoded on the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:vulkan --filter 'variant=vulkan.stateset *'
// A workgroup is W subgroups of S >= 8 lanes (vk.c stateset_shape: W = 1 at R = 1, 8 from R = 8 on; issue 19
// step 10: until then W = 1, its R rows walked by one subgroup) and takes a tile of RPW = R rows. Lane l holds the
// J = 128 / S consecutive group lanes i = J l + j (j = 0 .. J - 1: a word of codes and one ptq_trits4 per four of
// them); a 128-lane mask is assembled from the J ballots of those slots (slot j at bits j S .. j S + S - 1: a fixed
// permutation of the lanes, the same for every mask, so that the counts of their intersections are those of the lanes).
// Per group, once for the R rows (route): subgroup 0 flags the codes present in shared memory and compacts them in
// increasing order (a ballot and its exclusive bit count per S codes) with N_a (negative lanes); then the W subgroups
// split the occupied states, each state's mask S_k = subgroupBallot(code == k) built once, kept in shared memory.
// Per row (reduce; the W subgroups take rows w, w + W, ...): W_nz and W_neg by ballot of the row's trits,
// P_neg = N_a ^ W_neg, Wp = W_nz & ~P_neg, Wn = W_nz & P_neg; the lanes split the states: C[k] = bitCount(S_k & Wp) -
// bitCount(S_k & Wn), folded into eight phase partials (C << q, constant indices), then vulkan.direct's
// reduce-scatter butterfly to one exact A[p] a lane (issue 19 step 4; until then eight subgroupAdds); the group's fp64
// value sum_p A[p] c_p by the same butterfly, and the row's subgroup adds it, times d 2^(e - 9), to the row (groups in
// increasing order, as before step 10: the same bits); y = that sum rounded to fp32.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#include "common.glsl"
#include "phases.glsl"

// The slot loops run MAX_J times with a uniform guard (J = 128 / S <= 16 for subgroups of 8 or more lanes), so the
// compiler unrolls them: llvmpipe (lavapipe) stops an invocation after 65535 loop iterations in total (gallivm's
// loop limiter), which the per-slot loops of K >= 10240 exceeded.
#define MAX_J 16u

shared uvec4 s_mask[127];
shared uint s_code[127];
shared uint s_present[128];
shared uvec4 s_neg;
shared uint s_n;
shared double s_y[RPW];

// Place this round's ballot (bits 0 .. S-1) at bits j S .. of a 128-bit mask.
void put(inout uvec4 m, uvec4 b, uint j, uint S)
{
    if (S >= 128u) {
        m = b;
        return;
    }
    const uint at = j * S; // S divides 32 (S <= 32) or is 64
    if (S == 64u) {
        m[at >> 5] = b.x;
        m[(at >> 5) + 1u] = b.y;
    } else {
        m[at >> 5] |= (b.x & (S == 32u ? 0xffffffffu : ((1u << S) - 1u))) << (at & 31u);
    }
}

uint popc4(uvec4 v)
{
    return uint(bitCount(v.x) + bitCount(v.y) + bitCount(v.z) + bitCount(v.w));
}

void main()
{
    const uint S = gl_SubgroupSize, lane = gl_SubgroupInvocationID, J = 128u / S, G = PC.G;
    const uint sg = gl_SubgroupID, W = gl_NumSubgroups;
    const uint p = phase_of(lane); // the phase this lane ends with
    const uint first = PC.row0 + gl_WorkGroupID.x * RPW;
    const uint rows = min(RPW, PC.N - min(first, PC.N));
    for (uint r = gl_LocalInvocationIndex; r < RPW; r += gl_WorkGroupSize.x)
        s_y[r] = 0.0LF;
    for (uint g = 0u; g < G; g++) {
        // route, 1 (subgroup 0): the negative mask and the occupied codes in increasing order
        if (sg == 0u) {
            for (uint k = lane; k < 128u; k += S)
                s_present[k] = 0u;
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uvec4 neg = uvec4(0u);
            [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J) {
                const uint c = act_code(g * 128u + J * lane + j);
                put(neg, subgroupBallot((c & 0x7fu) != 0u && (c >> 7) != 0u), j, S);
                if ((c & 0x7fu) != 0u)
                    s_present[c & 0x7fu] = 1u; // every writer writes 1
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uint n = 0u;
            [[unroll]] for (uint b = 0u; b < MAX_J; b++) if (b < J) { // codes b S .. b S + S - 1
                const uint k = b * S + lane;
                const bool has = k != 0u && s_present[k] != 0u;
                const uvec4 hb = subgroupBallot(has);
                if (has)
                    s_code[n + subgroupBallotExclusiveBitCount(hb)] = k;
                n += subgroupBallotBitCount(hb);
            }
            if (subgroupElect()) {
                s_neg = neg;
                s_n = n;
            }
        }
        memoryBarrierShared();
        barrier();
        // route, 2 (every subgroup): the masks of states sg, sg + W, ...
        const uint n_states = s_n;
        for (uint s = sg; s < n_states; s += W) {
            const uint k = s_code[s];
            uvec4 m = uvec4(0u);
            [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J)
                put(m, subgroupBallot((act_code(g * 128u + J * lane + j) & 0x7fu) == k), j, S);
            if (subgroupElect())
                s_mask[s] = m;
        }
        memoryBarrierShared();
        barrier();
        // reduce: rows sg, sg + W, ... of the tile against the state set
        const uvec4 neg = s_neg;
        for (uint r = sg; r < rows; r += W) {
            const uint row = first + r, base = (row * G + g) * 7u;
            uvec4 nz = uvec4(0u), wneg = uvec4(0u);
            uint t4 = 0u;
            [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J) {
                if (J < 4u) // subgroups of 64 or 128: two slots a lane, or one
                    t4 = uint(ptq_trit(base, J * lane + j)) << (8u * (j & 3u));
                else if ((j & 3u) == 0u)
                    t4 = ptq_trits4(base, J * lane + j);
                const int t = bitfieldExtract(int(t4), int(8u * (j & 3u)), 8);
                put(nz, subgroupBallot(t != 0), j, S);
                put(wneg, subgroupBallot(t < 0), j, S);
            }
            const uvec4 pneg = neg ^ wneg, wp = nz & ~pneg, wn = nz & pneg;
            int part[8] = int[8](0, 0, 0, 0, 0, 0, 0, 0);
            for (uint s = lane; s < n_states; s += S) {
                const uvec4 m = s_mask[s];
                const int C = int(popc4(m & wp)) - int(popc4(m & wn)); // |C| <= 128
                const uint k = s_code[s];
                for (int q = 0; q < 8; q++)
                    part[q] += (k & 7u) == uint(q) ? C << (k >> 3) : 0;
            }
            const int a = phase_scatter(part);
            if ((PC.flags & FLAG_A) != 0u && phase_writer(lane))
                AOUT[(row * G + g) * 8u + p] = a;
            const double v = phase_sum_f64(double(a) * LNS8_CP[p]);
            if (subgroupElect())
                s_y[r] += v * double(ptq_scale(base)) * pow2(PC.e - 9);
        }
        memoryBarrierShared();
        barrier(); // the next group's states overwrite this group's
    }
    for (uint r = gl_LocalInvocationIndex; r < rows; r += gl_WorkGroupSize.x)
        Y[first + r] = float(s_y[r]);
}
