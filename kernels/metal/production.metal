// metal.production: PTQ1_0 x Q8_0 with the production Metal design (spec/ptq1_0.md section 5), y bit-identical to
// the CPU production path (fused, section 7).
//   Idea     a 32-lane simdgroup per row with 4 blocks in flight, 8 lanes a block, each lane owning whole bytes;
//            digits decoded on the float pipeline in floor form against pre-combined activation coefficients (every
//            value an exact integer below 2^24); sumi = fma(d8_k, isum_k, sumi) per block, sumf = fma(d_w, sumi, sumf).
//   Layout   buffers of metal.h: W (PTQ1_0 words), ACT (the host's x86 Q8_0 values, K bytes), SCALE (each Q8_0
//            block's fp16 scale as fp32), Y; hsdr_params.
//   Stages   reduce (the kernel: decode, reduce, scale and merge fused; the Q8_0 encode happens on the host).
//   Time it  ./build/hsdr run matrix.yaml --set variants=backend:metal --filter 'variant=metal.production *' (on a
//            Mac with HSDR_METAL; off Apple the CPU shim checks this source and times nothing)
// Lane `part` of a block owns qs[2 part], qs[2 part + 1], qs[16 + part] and qh digit `part` (16 weights), so every
// code byte is read once. Floor form: g_k = floor(byte 3^k / 256) (exact in fp32), digit n = g_{n+1} - 3 g_n, so a
// byte's dot with its activations is sum_k g_k times pre-combined coefficients (a_{k-1} - 3 a_k, a_{k-1}, -3 a_k ...)
// split by 32-block. The 8 lanes' partial sums meet by xor shuffles (integers, exact), the block's first lane makes
// sumi from +0, and lane 0 chains sumf over the blocks in order.
#include "hsdr_metal_common.h"

// The activations of the Q8_0 vector: byte i as a signed value.
inline float hsdr_act(device const uchar *ACT, uint i)
{
    return float(as_type<char>(ACT[i]));
}

// floor(byte 3^k / 256), k = 1..5, into g[1..5] (g[0] = 0): byte 3^5 < 2^16, exact in fp32.
inline void hsdr_floor_digits(uint byte, thread float *g)
{
    const float u = float(byte) * (1.0f / 256.0f);
    g[0] = 0.0f;
    g[1] = floor(u * 3.0f);
    g[2] = floor(u * 9.0f);
    g[3] = floor(u * 27.0f);
    g[4] = floor(u * 81.0f);
    g[5] = floor(u * 243.0f);
}

kernel void hsdr_production(HSDR_METAL_KERNEL_ARGS)
{
    const uint row = P.row0 + tgid * (HSDR_METAL_THREADS_ROWS / HSDR_METAL_SIMD) + sid;
    const bool live = row < P.N; // uniform per simdgroup; dead simdgroups still take part in nothing but stay
    const uint G = P.G, part = lane & 7u;
    float sumf = 0.0f;
    for (uint b0 = 0u; live && b0 < G; b0 += 4u) { // uniform per simdgroup
        const uint blk = b0 + (lane >> 3);
        const bool mine = blk < G;
        float ps[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // this lane's part of the four 32-block integer sums
        float dw = 0.0f;
        if (mine) {
            const uint base = (row * G + blk) * 7u, a0 = blk * 128u;
            float g[6];
            // qs[m], m = 2 part and 2 part + 1: digit n is weight 16 n + m, 32-blocks 0, 0, 1, 1, 2
            for (uint j = 0u; j < 2u; j++) {
                const uint m = 2u * part + j;
                hsdr_floor_digits(hsdr_ptq_byte(W, base, m), g);
                const float x0 = hsdr_act(ACT, a0 + m), x1 = hsdr_act(ACT, a0 + 16u + m),
                            x2 = hsdr_act(ACT, a0 + 32u + m), x3 = hsdr_act(ACT, a0 + 48u + m),
                            x4 = hsdr_act(ACT, a0 + 64u + m);
                // sum (t_n - 1) x_n with t_n = g_{n+1} - 3 g_n, by 32-block
                ps[0] += g[1] * (x0 - 3.0f * x1) + g[2] * x1 - (x0 + x1);
                ps[1] += g[2] * (-3.0f * x2) + g[3] * (x2 - 3.0f * x3) + g[4] * x3 - (x2 + x3);
                ps[2] += g[4] * (-3.0f * x4) + g[5] * x4 - x4;
            }
            // qs[16 + part]: digit n is weight 80 + 8 n + part, 32-blocks 2, 2, 3, 3, 3
            hsdr_floor_digits(hsdr_ptq_byte(W, base, 16u + part), g);
            const float y0 = hsdr_act(ACT, a0 + 80u + part), y1 = hsdr_act(ACT, a0 + 88u + part),
                        y2 = hsdr_act(ACT, a0 + 96u + part), y3 = hsdr_act(ACT, a0 + 104u + part),
                        y4 = hsdr_act(ACT, a0 + 112u + part);
            ps[2] += g[1] * (y0 - 3.0f * y1) + g[2] * y1 - (y0 + y1);
            ps[3] += g[2] * (-3.0f * y2) + g[3] * (y2 - 3.0f * y3) + g[4] * (y3 - 3.0f * y4) + g[5] * y4 -
                     (y2 + y3 + y4);
            // qh digit `part` = digit n = part / 2 of qh[part % 2]: weight 120 + part, 32-block 3
            hsdr_floor_digits(hsdr_ptq_byte(W, base, 24u + (part & 1u)), g);
            const uint n = part >> 1;
            ps[3] += (g[n + 1] - 3.0f * g[n] - 1.0f) * hsdr_act(ACT, a0 + 120u + part);
            dw = hsdr_ptq_scale(W, base);
        }
        // the block's 8 lanes: exact integer sums (xor offsets 4, 2, 1 stay inside the 8-lane group)
        int isum[4];
        for (int k = 0; k < 4; k++) {
            int v = int(ps[k]);
            v += simd_shuffle_xor(v, ushort(4));
            v += simd_shuffle_xor(v, ushort(2));
            v += simd_shuffle_xor(v, ushort(1));
            isum[k] = v;
        }
        float sumi = 0.0f;
        if (mine)
            for (uint k = 0u; k < 4u; k++)
                sumi = fma(SCALE[blk * 4u + k], float(isum[k]), sumi);
        // lane 0 chains the (up to) four blocks in order
        for (uint j = 0u; j < 4u; j++) {
            const float s = simd_shuffle(sumi, ushort(8u * j)), d = simd_shuffle(dw, ushort(8u * j));
            if (lane == 0u && b0 + j < G)
                sumf = fma(d, s, sumf);
        }
    }
    if (live && lane == 0u)
        Y[row] = sumf;
}
