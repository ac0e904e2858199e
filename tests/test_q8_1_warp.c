/* The CUDA production sequence's reference (hsdr_matvec_q8_1_lanes, and hsdr_matvec_q8_1_warp = 8 lanes) on fresh
 * random rows, with 1, 2, 4, ..., 32 lanes per row. With at most `lanes` blocks per row every lane owns one block, so
 * the result must equal an independent model: each block's value from the CPU production dot of a one-block row
 * (fused, on the same Q8_1 scales and integers), summed by halving strides (lanes l and l + lanes/2, ..., then + 1),
 * which is what lane 0 of the xor butterfly adds. Longer rows are held to the exact result within an fp32 bound.
 * Outputs are poisoned first; every element is checked. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "q8.h"
#include "rng.h"
#include "random_ptq1_0.h"
#include "testing.h"

enum { KMAX = 8192, NMAX = 24 };

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_q8_1_warp"));
    static uint8_t W[NMAX * (KMAX / HSDR_QK) * HSDR_PTQ1_0_BYTES];
    static float x[KMAX], y[NMAX];
    static double ye[NMAX], mag[NMAX];
    static hsdr_block_q8_1 q[KMAX / 32];
    static hsdr_block_q8_0 q0[KMAX / 32];
    for (int it = 0; it < 300; it++) {
        const int lanes = it % 3 ? 1 << hsdr_rng_below(&rng, 6) : HSDR_CUDA_ROW_LANES;
        const int G = 1 + (int)hsdr_rng_below(&rng, it % 2 ? lanes : KMAX / HSDR_QK), K = G * HSDR_QK;
        const int N = 1 + (int)hsdr_rng_below(&rng, NMAX);
        for (int r = 0; r < N; r++)
            random_ptq1_0_blocks(&rng, W + (size_t)r * G * HSDR_PTQ1_0_BYTES, (size_t)G);
        const double scale = ldexp(1.0, (int)hsdr_rng_below(&rng, 16) - 8);
        for (int k = 0; k < K; k++)
            x[k] = (float)(hsdr_rng_gaussian(&rng) * scale);
        for (int r = 0; r < N; r++)
            y[r] = NAN; /* poison */
        if (lanes == HSDR_CUDA_ROW_LANES && it % 2)
            hsdr_matvec_q8_1_warp(W, x, K, N, q, y);
        else
            hsdr_matvec_q8_1_lanes(W, x, K, N, lanes, q, y);
        hsdr_matvec_exact(W, x, K, N, ye, mag);
        for (int b = 0; b < K / 32; b++) { /* the same scales and integers as Q8_0 blocks */
            q0[b].d = q[b].d;
            memcpy(q0[b].qs, q[b].qs, sizeof q0[b].qs);
        }
        for (int r = 0; r < N; r++) {
            const uint8_t *row = W + (size_t)r * G * HSDR_PTQ1_0_BYTES;
            if (G <= lanes) {
                float lane[32] = {0.0f};
                for (int b = 0; b < G; b++)
                    lane[b] = hsdr_dot_ptq1_0_q8_0(row + (size_t)b * HSDR_PTQ1_0_BYTES, q0 + 4 * b, HSDR_QK,
                                                   HSDR_FUSED);
                for (int stride = lanes / 2; stride >= 1; stride /= 2)
                    for (int l = 0; l < stride; l++)
                        lane[l] = lane[l] + lane[l + stride];
                CHECK(y[r] == lane[0] && !(y[r] == 0.0f && signbit(y[r])),
                      "K=%d N=%d lanes %d row %d: %.9g, the independent model gives %.9g", K, N, lanes, r, (double)y[r],
                      (double)lane[0]);
            }
            /* Q8_1 moves each activation by at most its block's d8 / 2 <= amax / 254 * (1 + 2^-10) (fp16 d); the
             * fp32 sequence (at most 4 + 2 G / 32 + 5 roundings of 2^-24 on sums of at most the magnitude) stays
             * far under 1e-5 of the magnitude for K <= 8192 */
            double amax = 0.0, wsum = 0.0;
            for (int k = 0; k < K; k++)
                amax = fmax(amax, fabs((double)x[k]));
            for (int b = 0; b < G; b++) {
                int8_t t[HSDR_QK];
                hsdr_ptq1_0_unpack(row + (size_t)b * HSDR_PTQ1_0_BYTES, t, HSDR_DECODE_INT);
                double d = fabs((double)hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(row + (size_t)b * HSDR_PTQ1_0_BYTES)));
                for (int i = 0; i < HSDR_QK; i++)
                    wsum += d * (t[i] != 0);
            }
            const double act = wsum * amax / 254.0 * (1.0 + 0x1p-10);
            CHECK(fabs((double)y[r] - ye[r]) <= act + 1e-5 * (mag[r] + act),
                  "K=%d N=%d row %d: %.9g against exact %.17g (bound %.3g)", K, N, r, (double)y[r], ye[r],
                  act + 1e-5 * (mag[r] + act));
        }
    }
    return test_finish("test_q8_1_warp");
}
