/* The reference Q8_1 sequences (hsdr_matvec_q8_1) on fresh random rows: HSDR_Q8_1_THREADS with 1, 2, 4, ..., 32
 * lanes and 1..4 groups per row, the fork's planar PT order (HSDR_Q8_1_PT4: any length), and the orders of the CUDA
 * kernels (the fork's SOA_ISUM order crosses K = 16384). With at most lanes x groups blocks per row every thread owns
 * one block, so the result must equal an independent model: each block's value from the CPU production dot of a
 * one-block row (fused, on the same Q8_1 scales and integers), the groups added into group 0 lane by lane in group
 * order, then summed by halving strides (lanes l and l + lanes/2, ..., then + 1), which is what lane 0 of the xor
 * butterfly adds. Longer rows are held to the exact result within an fp32 bound. The integer-dot sequence
 * (HSDR_Q8_1_INT_DOT: one or four groups of 8 or 32) is held to its own formula evaluated in fp64 on the same q8_1
 * values, within the bound of its fp32 steps; the fp32 dequantizing sequence (HSDR_Q8_1_DEQUANT_FP32) to the exact
 * result within the bound of its fp32 steps. Last, every registry variant that writes y_q8_1 must name a valid order
 * (the checker calls it).
 * Outputs are poisoned first; every element is checked. */
#include <math.h>
#include <string.h>

#include "cuda/cuda.h"
#include "fp16.h"
#include "kernel.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "q8.h"
#include "rng.h"
#include "random_ptq1_0.h"
#include "testing.h"

enum { KMAX = 17408, NMAX = 24 };

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
        hsdr_q8_1_order o = {HSDR_Q8_1_THREADS, 1 << hsdr_rng_below(&rng, 6), 1 + (int)hsdr_rng_below(&rng, 4)};
        int G = 1 + (int)hsdr_rng_below(&rng, it % 2 ? o.lanes * o.groups : KMAX / HSDR_QK);
        if (it % 5 == 4) /* the SOA_ISUM order on both sides of its threshold (127, 128 and 136 blocks) */
            G = it % 3 == 0 ? 127 : it % 3 == 1 ? 128 : 136;
        const int K = G * HSDR_QK;
        const int N = 1 + (int)hsdr_rng_below(&rng, NMAX);
        if (it % 5 == 4)
            o = it % 2 ? hsdr_cuda_soa_order(K, N) : hsdr_cuda_cols_order(K, N);
        else if (it % 7 == 3)
            o = hsdr_cuda_lanes8_order(K, N);
        else if (it % 7 == 5)
            o = hsdr_cuda_pt_order(K, N);
        else if (it % 11 == 6) /* the integer-dot sequence: 1 or 4 groups of 8 or 32 */
            o = (hsdr_q8_1_order){HSDR_Q8_1_INT_DOT, it % 4 < 2 ? 8 : 32, it % 2 ? 4 : 1};
        else if (it % 13 == 9) /* the fp32 dequantizing sequence, likewise */
            o = (hsdr_q8_1_order){HSDR_Q8_1_DEQUANT_FP32, it % 4 < 2 ? 8 : 32, it % 2 ? 4 : 1};
        const int lanes = o.lanes, threads = o.sequence == HSDR_Q8_1_PT4 ? KMAX : o.lanes * o.groups;
        const int wg = o.lanes * o.groups, sg = o.lanes; /* the integer-dot and dequantizing sequences' threads */
        for (int r = 0; r < N; r++)
            random_ptq1_0_blocks(&rng, W + (size_t)r * G * HSDR_PTQ1_0_BYTES, (size_t)G);
        const double scale = ldexp(1.0, (int)hsdr_rng_below(&rng, 16) - 8);
        for (int k = 0; k < K; k++)
            x[k] = (float)(hsdr_rng_gaussian(&rng) * scale);
        for (int r = 0; r < N; r++)
            y[r] = NAN; /* poison */
        if (o.sequence == HSDR_Q8_1_THREADS && o.groups == 1 && it % 2)
            hsdr_matvec_q8_1_lanes(W, x, K, N, lanes, q, y);
        else
            hsdr_matvec_q8_1(W, x, K, N, o, q, y);
        hsdr_matvec_exact(W, x, K, N, ye, mag);
        for (int b = 0; b < K / 32; b++) { /* the same scales and integers as Q8_0 blocks */
            q0[b].d = q[b].d;
            memcpy(q0[b].qs, q[b].qs, sizeof q0[b].qs);
        }
        for (int r = 0; r < N; r++) {
            const uint8_t *row = W + (size_t)r * G * HSDR_PTQ1_0_BYTES;
            if (o.sequence == HSDR_Q8_1_DEQUANT_FP32) {
                /* fp32 x and exact products: the sequence rounds each chunk's 3 + 3 dot adds, their sum and its fma
                 * (5 roundings deep), each invocation's sum over its ceil(K / (8 wg)) chunks, the log2(sg) butterfly
                 * adds and the wg / sg subgroup adds, each by at most 2^-24 of a partial bounded by sum |terms| */
                int log_sg = 0;
                while ((1 << log_sg) < sg)
                    log_sg++;
                const int iters = (K + 8 * wg - 1) / (8 * wg);
                const double bound = (5.0 + iters + log_sg + wg / sg) * 0x1p-24 * mag[r];
                CHECK(fabs((double)y[r] - ye[r]) <= bound, "K=%d N=%d dmmv %d/%d row %d: %.9g against exact %.17g "
                      "(bound %.3g)", K, N, wg, sg, r, (double)y[r], ye[r], bound);
                continue;
            }
            if (o.sequence == HSDR_Q8_1_INT_DOT) {
                /* the sequence's own formula in fp64 on the same q8_1 values (the fp16 s included): every term is
                 * exact in fp64 (24-bit scales times integers below 2^15); the fp32 sequence rounds each of a
                 * block's 8 steps, each lane's sum over its G / (wg / 2) blocks, the log2(sg) butterfly adds and the
                 * wg / sg subgroup adds, each by at most 2^-24 of a partial bounded by the sum of |terms| */
                double want = 0.0, terms = 0.0;
                for (int b = 0; b < G; b++) {
                    const uint8_t *blk = row + (size_t)b * HSDR_PTQ1_0_BYTES;
                    int8_t t[HSDR_QK];
                    hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
                    const double dw = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
                    double v = 0.0, m = 0.0;
                    for (int k = 0; k < 4; k++) {
                        const hsdr_block_q8_1 *a = &q[4 * b + k];
                        double digit_q = 0.0;
                        for (int j = 0; j < 32; j++)
                            digit_q += (double)((t[32 * k + j] + 1) * a->qs[j]);
                        v += hsdr_fp16_to_fp32(a->d) * digit_q - hsdr_fp16_to_fp32(a->s);
                        m += fabs(hsdr_fp16_to_fp32(a->d) * digit_q) + fabs(hsdr_fp16_to_fp32(a->s));
                    }
                    want += dw * v;
                    terms += fabs(dw) * m;
                }
                int log_sg = 0;
                while ((1 << log_sg) < sg)
                    log_sg++;
                const double bound = (8.0 + G / (wg / 2) + 1 + log_sg + wg / sg) * 0x1p-24 * terms;
                CHECK(fabs((double)y[r] - want) <= bound, "K=%d N=%d int-dot %d/%d row %d: %.9g against its formula "
                      "%.17g (bound %.3g)", K, N, wg, sg, r, (double)y[r], want, bound);
                continue; /* the q8_1 bias's fp16 s moves y from the exact product by more than the bound below */
            }
            if (o.sequence == HSDR_Q8_1_PT4) { /* every block rounded alone, four accumulators, the tail into s_0 */
                float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (int b = 0; b < G; b++)
                    s[b < G / 4 * 4 ? b % 4 : 0] +=
                        hsdr_dot_ptq1_0_q8_0(row + (size_t)b * HSDR_PTQ1_0_BYTES, q0 + 4 * b, HSDR_QK, HSDR_FUSED);
                const float want = (s[0] + s[1]) + (s[2] + s[3]);
                CHECK(y[r] == want && !(y[r] == 0.0f && signbit(y[r])),
                      "K=%d N=%d pt4 row %d: %.9g, the independent model gives %.9g", K, N, r, (double)y[r],
                      (double)want);
            } else if (G <= threads) {
                float lane[128] = {0.0f};
                for (int b = 0; b < G; b++)
                    lane[b] = hsdr_dot_ptq1_0_q8_0(row + (size_t)b * HSDR_PTQ1_0_BYTES, q0 + 4 * b, HSDR_QK,
                                                   HSDR_FUSED);
                for (int w = 1; w < o.groups; w++)
                    for (int l = 0; l < lanes; l++)
                        lane[l] = lane[l] + lane[w * lanes + l];
                for (int stride = lanes / 2; stride >= 1; stride /= 2)
                    for (int l = 0; l < stride; l++)
                        lane[l] = lane[l] + lane[l + stride];
                CHECK(y[r] == lane[0] && !(y[r] == 0.0f && signbit(y[r])),
                      "K=%d N=%d lanes %d groups %d row %d: %.9g, the independent model gives %.9g", K, N, lanes,
                      o.groups, r, (double)y[r], (double)lane[0]);
            }
            /* Q8_1 moves each activation by at most its block's d8 / 2 <= amax / 254 * (1 + 2^-10) (fp16 d); the
             * fp32 sequence (at most 4 + 2 G / 32 + 5 roundings of 2^-24 on sums of at most the magnitude) stays
             * far under 1e-5 of the magnitude for K <= 17408 */
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
    /* every registry variant held to a Q8_1 sequence names a valid order for it (the checker calls it) */
    static const int Ks[] = {128, 16256, 16384, 17408}, Ns[] = {1, 8191, 8192, 16384};
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if (!(v->outputs & HSDR_OUT_Y_Q8_1))
            continue;
        CHECK(v->q8_1_order != NULL, "%s writes y_q8_1 without a q8_1_order", v->name);
        for (int a = 0; a < 4 && v->q8_1_order; a++)
            for (int b = 0; b < 4; b++) {
                const hsdr_q8_1_order o = v->q8_1_order(Ks[a], Ns[b]);
                const bool pow2 = o.lanes >= 1 && (o.lanes & (o.lanes - 1)) == 0;
                const bool threads = o.sequence == HSDR_Q8_1_THREADS && pow2 && o.lanes <= 32 && o.groups >= 1 &&
                                     o.groups <= 32;
                const bool groups = (o.sequence == HSDR_Q8_1_INT_DOT || o.sequence == HSDR_Q8_1_DEQUANT_FP32) &&
                                    pow2 && o.lanes >= 2 && o.lanes <= 128 && o.groups >= 1 &&
                                    o.lanes * o.groups <= 1024;
                CHECK(o.sequence == HSDR_Q8_1_PT4 || threads || groups,
                      "%s: q8_1_order(%d, %d) = {sequence %d, %d lanes, %d groups}: THREADS with lanes a power of two "
                      "up to 32 and 1..32 groups, PT4, or INT_DOT / DEQUANT_FP32 with groups of 2..128 lanes (a power "
                      "of two), up to 1024 threads",
                      v->name, Ks[a], Ns[b], (int)o.sequence, o.lanes, o.groups);
            }
    }
    return test_finish("test_q8_1_warp");
}
