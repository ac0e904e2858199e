#version 450
// vulkan.stateset: reusable activation state sets (spec/lns8.md section 4). A workgroup is one subgroup of S lanes and
// takes a tile of RPW = R rows. Lane l holds the tile lanes i = l + j S (j = 0 .. 128 / S - 1); a 128-lane mask is
// assembled from the 128 / S ballots of those slots (bits j S .. j S + S - 1).
// Per group, once for the R rows (route): N_a (negative lanes), then the occupied states one at a time (the smallest
// code still unassigned, by subgroupMin) with their masks S_k = subgroupBallot(code == k), kept in shared memory.
// Per row (reduce): W_nz and W_neg by ballot of the row's trits, P_neg = N_a ^ W_neg, Wp = W_nz & ~P_neg,
// Wn = W_nz & P_neg; the lanes split the states: C[k] = bitCount(S_k & Wp) - bitCount(S_k & Wn), folded into eight
// phase partials (C << q), subgroupAdd to the exact A[p]; the first lane writes A and adds the group's fp64 value to
// the row (groups in increasing order), y = that sum rounded to fp32.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require
#include "common.glsl"

// The slot loops run MAX_J times with a uniform guard (J = 128 / S <= 32 for subgroups of 4 or more lanes), so the
// compiler unrolls them: llvmpipe (lavapipe) stops an invocation after 65535 loop iterations in total (gallivm's
// loop limiter), which the per-slot loops of K >= 10240 exceeded.
#define MAX_J 32u

shared uvec4 s_mask[127];
shared uint s_code[127];
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
    const uint first = PC.row0 + gl_WorkGroupID.x * RPW;
    const uint rows = min(RPW, PC.N - min(first, PC.N));
    for (uint r = lane; r < RPW; r += S)
        s_y[r] = 0.0LF;
    for (uint g = 0u; g < G; g++) {
        // route: the tile's negative mask and occupied states, built once for the R rows
        uvec4 neg = uvec4(0u);
        uint todo = 0u; // bit j: slot j has a nonzero code not yet in a state
        [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J) {
            const uint c = act_code(g * 128u + lane + j * S);
            put(neg, subgroupBallot((c & 0x7fu) != 0u && (c >> 7) != 0u), j, S);
            if ((c & 0x7fu) != 0u)
                todo |= 1u << j;
        }
        uint n_states = 0u;
        while (subgroupAny(todo != 0u)) {
            uint mine = 128u;
            if (todo != 0u)
                mine = act_code(g * 128u + lane + uint(findLSB(todo)) * S) & 0x7fu;
            const uint k = subgroupMin(mine);
            uvec4 m = uvec4(0u);
            [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J) {
                const bool hit = (todo & (1u << j)) != 0u && (act_code(g * 128u + lane + j * S) & 0x7fu) == k;
                put(m, subgroupBallot(hit), j, S);
                if (hit)
                    todo &= ~(1u << j);
            }
            if (subgroupElect()) {
                s_mask[n_states] = m;
                s_code[n_states] = k;
            }
            n_states++;
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // reduce: every row of the tile against the state set
        for (uint r = 0u; r < rows; r++) {
            const uint row = first + r, base = (row * G + g) * 7u;
            uvec4 nz = uvec4(0u), wneg = uvec4(0u);
            [[unroll]] for (uint j = 0u; j < MAX_J; j++) if (j < J) {
                const int t = ptq_trit(base, lane + j * S);
                put(nz, subgroupBallot(t != 0), j, S);
                put(wneg, subgroupBallot(t < 0), j, S);
            }
            const uvec4 pneg = neg ^ wneg, wp = nz & ~pneg, wn = nz & pneg;
            int part[8] = int[8](0, 0, 0, 0, 0, 0, 0, 0);
            for (uint s = lane; s < n_states; s += S) {
                const uvec4 m = s_mask[s];
                const int C = int(popc4(m & wp)) - int(popc4(m & wn)); // |C| <= 128
                part[s_code[s] & 7u] += C << (s_code[s] >> 3);
            }
            int A[8];
            for (int p = 0; p < 8; p++)
                A[p] = subgroupAdd(part[p]);
            if (subgroupElect()) {
                if ((PC.flags & FLAG_A) != 0u)
                    for (int p = 0; p < 8; p++)
                        AOUT[(row * G + g) * 8u + uint(p)] = A[p];
                s_y[r] += lns8_group(A, ptq_scale(base), PC.e);
            }
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier(); // the next group's states overwrite this group's
    }
    for (uint r = lane; r < rows; r += S)
        Y[first + r] = float(s_y[r]);
}
