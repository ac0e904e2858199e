// metal.stateset: reusable activation state sets (spec/lns8.md section 4).
//   Idea     a one-simdgroup threadgroup per tile of R rows; per group the occupied codes (simd_min) and their
//            128-lane masks (four simd_ballot words) built once (route); per row popcount of the positive and negative
//            products per state, folded into phase partials, simd_sum to the exact A[8].
//   Layout   buffers of metal.h: W, ACT (the host's LNS8 codes), Y, AOUT (A); hsdr_params (R <= HSDR_METAL_MAX_R);
//            the state masks and codes of a group in threadgroup memory.
//   Stages   reduce (the kernel: route, reduce, scale and merge fused; the codes are encoded on the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:metal --filter 'variant=metal.stateset *' (on a Mac
//            with HSDR_METAL; off Apple the CPU shim checks this source and times nothing)
// Lane l holds the tile lanes l + 32 j (j = 0..3), and a 128-lane mask is four 32-bit words, word j = simd_ballot over
// slot j. Per group, once for the R rows (route): the negative-lane mask, then the occupied states one at a time (the
// smallest code still unassigned, by simd_min) with their masks S_k = simd_ballot(code == k), kept in threadgroup
// memory. Per row (reduce): W_nz and W_neg by ballot of the row's trits, P_neg = N_a ^ W_neg, Wp = W_nz & ~P_neg,
// Wn = W_nz & P_neg; the lanes split the states, C[k] = popcount(S_k & Wp) - popcount(S_k & Wn), folded into eight
// phase partials (C << q); simd_sum gives the exact A[p]. Lane 0 writes A and adds the group's value to the row's
// float-float sum (groups in increasing order).
#include "hsdr_metal_common.h"

kernel void hsdr_stateset(HSDR_METAL_KERNEL_ARGS)
{
    threadgroup uint s_mask[127 * 4];
    threadgroup uint s_code[127];
    threadgroup float s_hi[HSDR_METAL_MAX_R], s_lo[HSDR_METAL_MAX_R];
    const uint first = P.row0 + tgid * P.R;
    const uint rows = first >= P.N ? 0u : min(P.R, P.N - first);
    for (uint r = lane; r < rows; r += HSDR_METAL_SIMD)
        s_hi[r] = s_lo[r] = 0.0f;
    for (uint g = 0u; g < P.G; g++) { // uniform
        // route: the negative mask and the occupied states of this group's 128 codes
        uint neg[4], todo = 0u; // todo bit j: slot j holds a nonzero code not yet in a state
        for (uint j = 0u; j < 4u; j++) {
            const uint c = ACT[g * 128u + lane + 32u * j];
            neg[j] = uint(static_cast<simd_vote::vote_t>(simd_ballot((c & 0x7fu) != 0u && (c >> 7) != 0u)));
            if ((c & 0x7fu) != 0u)
                todo |= 1u << j;
        }
        uint n_states = 0u;
        while (simd_any(todo != 0u)) { // uniform: every lane sees the same answer
            uint mine = 128u;
            for (uint j = 0u; j < 4u; j++)
                if (mine == 128u && (todo & (1u << j)) != 0u)
                    mine = ACT[g * 128u + lane + 32u * j] & 0x7fu;
            const uint k = simd_min(mine);
            for (uint j = 0u; j < 4u; j++) {
                const bool hit = (todo & (1u << j)) != 0u && (ACT[g * 128u + lane + 32u * j] & 0x7fu) == k;
                const uint m = uint(static_cast<simd_vote::vote_t>(simd_ballot(hit)));
                if (hit)
                    todo &= ~(1u << j);
                if (lane == 0u)
                    s_mask[n_states * 4u + j] = m;
            }
            if (lane == 0u)
                s_code[n_states] = k;
            n_states++;
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
        // reduce: every row of the tile against the state set
        for (uint r = 0u; r < rows; r++) {
            const uint row = first + r, base = (row * P.G + g) * 7u;
            uint wp[4], wn[4];
            for (uint j = 0u; j < 4u; j++) {
                const int t = hsdr_ptq_trit(W, base, lane + 32u * j);
                const uint nz = uint(static_cast<simd_vote::vote_t>(simd_ballot(t != 0)));
                const uint wneg = uint(static_cast<simd_vote::vote_t>(simd_ballot(t < 0)));
                const uint pneg = neg[j] ^ wneg;
                wp[j] = nz & ~pneg;
                wn[j] = nz & pneg;
            }
            int part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (uint s = lane; s < n_states; s += HSDR_METAL_SIMD) {
                int C = 0; // |C| <= 128
                for (uint j = 0u; j < 4u; j++)
                    C += int(popcount(s_mask[s * 4u + j] & wp[j])) - int(popcount(s_mask[s * 4u + j] & wn[j]));
                part[s_code[s] & 7u] += C * (1 << (s_code[s] >> 3)); // C may be negative: no shift of it
            }
            int A[8];
            for (int p = 0; p < 8; p++)
                A[p] = simd_sum(part[p]);
            if (lane == 0u) {
                if ((P.flags & HSDR_METAL_FLAG_A) != 0u)
                    for (uint p = 0u; p < 8u; p++)
                        AOUT[(row * P.G + g) * 8u + p] = A[p];
                float hi = s_hi[r], lo = s_lo[r];
                hsdr_ff_add(hi, lo, hsdr_lns8_group(A, hsdr_ptq_scale(W, base), P.e));
                s_hi[r] = hi;
                s_lo[r] = lo;
            }
        }
        simdgroup_barrier(mem_flags::mem_threadgroup); // the next group's states overwrite this group's
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    for (uint r = lane; r < rows; r += HSDR_METAL_SIMD)
        Y[first + r] = s_hi[r] + s_lo[r];
}
