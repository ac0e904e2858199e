// metal.direct: the direct 8-phase reduction (spec/lns8.md section 3).
//   Idea     one 32-lane simdgroup per row, the row's groups in increasing order: lane l owns lanes l, l + 32, l + 64,
//            l + 96 of a 128-lane group and keeps eight phase partials; simd_sum of each gives the exact A[p]; the
//            group values G_g in fp32 (Metal has no fp64) into a float-float row accumulator, y = hi + lo.
//   Layout   buffers of metal.h: W (PTQ1_0 words), ACT (the host's LNS8 codes, K bytes), Y, AOUT (A per (row, group)
//            when flags & A); hsdr_params (e, row0, ...).
//   Stages   reduce (the kernel: decode, route, reduce, scale and merge fused; the codes are encoded on the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:metal --filter 'variant=metal.direct *' (on a Mac
//            with HSDR_METAL; off Apple the CPU shim checks this source and times nothing)
// Lane 0 writes A and adds G_g = 2^e (d / 512) sum_p A[p] c_p (fp32, hsdr_lns8_group) to the row.
#include "hsdr_metal_common.h"

kernel void hsdr_direct(HSDR_METAL_KERNEL_ARGS)
{
    const uint row = P.row0 + tgid * (HSDR_METAL_THREADS_ROWS / HSDR_METAL_SIMD) + sid;
    float hi = 0.0f, lo = 0.0f;
    for (uint g = 0u; row < P.N && g < P.G; g++) { // uniform per simdgroup
        const uint base = (row * P.G + g) * 7u;
        int A[8];
        hsdr_direct_group(W, ACT, base, g, lane, A);
        if (lane == 0u) {
            if ((P.flags & HSDR_METAL_FLAG_A) != 0u)
                for (uint p = 0u; p < 8u; p++)
                    AOUT[(row * P.G + g) * 8u + p] = A[p];
            hsdr_ff_add(hi, lo, hsdr_lns8_group(A, hsdr_ptq_scale(W, base), P.e));
        }
    }
    if (row < P.N && lane == 0u)
        Y[row] = hi + lo;
}
