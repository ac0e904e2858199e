/* Scalar reference matvecs over PTQ1_0 weights (N rows of K/128 blocks, row-major).
 *   exact        y = sum (t - 1) * fp32(d) * x, double-double accumulation ("fp64 or better")
 *   q8_0         production PTQ1_0 x Q8_0: x86 Q8_0 quantizer and the fp32 sequence of spec/ptq1_0.md section 4,
 *                with fused multiply-adds at the two pinned places (section 7) or, named as such, unfused
 *   lns8         y = sum_g G_g with direct A[8] per group (pre-encoded codes and pre-scale e), double-double
 *   q1516        per group Q_g (spec implementation) and per row sum_g Q_g in int64 */
#ifndef HSDR_MATVEC_H
#define HSDR_MATVEC_H
#include <stdbool.h>
#include <stdint.h>

#include "q8.h"

enum hsdr_fma_mode { HSDR_UNFUSED = 0, HSDR_FUSED = 1 };

/* One row's production dot: row = K/128 PTQ1_0 blocks, y = K/32 Q8_0 blocks. */
float hsdr_dot_ptq1_0_q8_0(const uint8_t *row, const hsdr_block_q8_0 *y, int K, enum hsdr_fma_mode mode);

/* The fp32 sequences of the CUDA PTQ1_0 x Q8_1 kernels (docs/cuda-production.md), the references their output is
 * held to bit for bit. Activations: Q8_1 (hsdr_q8_1_quantize, into y_q8: K/32 blocks). A row is split over
 * lanes x warps threads (lanes a power of two, 1..32; warps 1..32); thread t = w * lanes + l owns the 128-blocks
 * b = t, t + lanes * warps, ... in increasing order: acc_b = the fused chain of spec/ptq1_0.md section 7 step 3
 * over the block's four Q8_1 blocks (acc = fmaf(d8_k, isum_k, acc), k = 0..3, from +0; isum_k exact),
 * p_t = fmaf(d_w, acc_b, p_t) from +0. Then lane l of warp 0 adds the other warps' lane-l values in warp order, one rounding each
 * (((p_l + p_{lanes + l}) + p_{2 lanes + l}) + ...: the fork's shared-memory step), and the xor butterfly over the
 * lanes: for o = lanes / 2, ..., 2, 1 every lane adds lane l ^ o's value (one rounding per add); y = lane 0's value.
 * pt4 (the fork's planar PT kernel; lanes and warps unused): each block's value is rounded on its own,
 * p_b = d_w * acc_b (an unfused multiply), and one thread adds them into four accumulators from +0: blocks 4i + m
 * into s_m for every complete quad in increasing i, the remaining K/128 mod 4 blocks into s_0 in order; then
 * y = (s_0 + s_1) + (s_2 + s_3). *
 * vk_wg > 0 (lanes, warps and pt4 unused): the Vulkan integer-dot sequence of the fork's mul_mat_vecq_ptq1_0.comp
 * (docs/vulkan-production.md section 3) with the choices that pin its bits: activations by
 * hsdr_q8_1_quantize_recip; a workgroup of vk_wg invocations in subgroups of vk_sg takes a row, two invocations per
 * 128-block (block b to pair b mod (vk_wg / 2), sub 0 on qs bytes 0..11, sub 1 on bytes 12..23 and qh), each with
 * exact integer sums of digit (0..2) times q: A over its first four bytes, B over the rest, split by digit position
 * (0-1, 2-3, 4; the qh digits with 4), scaled by the d of the Q8_1 block they fall in; per block the fused chain
 * sum = fma(dA0, A0, fma(dA1, A1, fma(dA2, A2, fma(dB0, B0, fma(dB1, B1, fma(dB2, B2, -bias)))))) with bias =
 * s_0 + s_1 (sub 0) or s_2 + s_3 (sub 1), then p = fma(d_w, sum, p) over its blocks in increasing order; each
 * subgroup's xor butterfly (o = vk_sg / 2, ..., 1; lane 0's value); y = that of the one subgroup, or with several
 * ((+0 + s_0) + s_1) + ... in subgroup order.
 * vk_dmmv (with vk_wg, vk_sg): instead the fork's fp32 dequantizing mat-vec for K <= 4096 (docs/vulkan-production.md
 * section 3b), with no Q8_1 at all (y_q8 is not written): invocation i of vk_wg takes, in increasing iterations j, the
 * 8 weights from c = 8 (j vk_wg + i) while c < K; per row s = ((x_c w_c + x_c+1 w_c+1) + x_c+2 w_c+2) + x_c+3 w_c+3
 * and s' likewise over c + 4 .. c + 7 (products exact, each sum rounded), p = fma(s + s', d, p) from +0 with d the
 * block's fp16 scale; then the subgroups' butterflies and their sum as above. The fork leaves the order inside dot,
 * the fma and the subgroup tree to the device: these are the choices that pin them. */
typedef struct {
    int lanes, warps;
    bool pt4;
    int vk_wg, vk_sg;
    bool vk_dmmv;
} hsdr_q8_1_order;
void hsdr_matvec_q8_1(const uint8_t *W, const float *x, int K, int N, hsdr_q8_1_order order, hsdr_block_q8_1 *y_q8,
                      float *y);
/* The same with one warp of `lanes` lanes (warps = 1). */
void hsdr_matvec_q8_1_lanes(const uint8_t *W, const float *x, int K, int N, int lanes, hsdr_block_q8_1 *y_q8,
                            float *y);
/* The order of the fork's one-column SOA_ISUM mat-vec (cuda.production, docs/cuda-production.md section 3): K/128 <
 * 128 blocks (K < 16384): a warp per row, {32 lanes, 1 warp}; else a 128-thread CTA per row, {32 lanes, 4 warps}. */
hsdr_q8_1_order hsdr_cuda_soa_order(int K, int N);
/* The order of the fork's planar PT one-column kernel (cuda.production_pt: sm_75 .. sm_87): pt4. */
hsdr_q8_1_order hsdr_cuda_pt_order(int K, int N);
/* Our 8-lanes-per-row kernel (cuda.lanes8): {8, 1}. */
#define HSDR_CUDA_ROW_LANES 8
hsdr_q8_1_order hsdr_cuda_lanes8_order(int K, int N);
/* Our dedicated 1..8-column kernel (cuda.cols) for an N-row matrix: 8 lanes from 16384 rows, 16 from 8192, else 32,
 * one warp, so that a matrix of few rows still gives every SM enough warps. Fixed by the shape alone: every column
 * count gives each column the same bits. */
hsdr_q8_1_order hsdr_cuda_cols_order(int K, int N);

/* abs_terms (optional, N entries): sum |t - 1| * |d| * |x|, the scale of the tolerance of spec/vectors.md. */
void hsdr_matvec_exact(const uint8_t *W, const float *x, int K, int N, double *y, double *abs_terms);
/* y_q8 scratch: K/32 blocks (the quantized activations, also returned to the caller). */
void hsdr_matvec_q8_0(const uint8_t *W, const float *x, int K, int N, hsdr_block_q8_0 *y_q8, float *y,
                      enum hsdr_fma_mode mode);
/* sum_i |t_i| |decoded x_i| |d| 2^e over one PTQ1_0 block and its 128 codes: the scale of the fp32 tolerance of
 * spec/vectors.md (2^-20 times this, summed over a row's groups). */
double hsdr_lns8_group_abs_terms(const uint8_t *block, const uint8_t *codes, int e);

/* How a group's A[8] is computed; all three give identical integers. */
enum hsdr_group_method { HSDR_METHOD_DIRECT, HSDR_METHOD_STATESET128, HSDR_METHOD_TILE64 };

/* Outputs of the LNS8 matvec; every pointer may be NULL (not computed). Shapes: y, q_row N; A N x G x 8;
 * C N x G x 128 (state-set methods only); q_group, flns_* N x G, with G = K/128. */
typedef struct {
    double *y;          /* sum_g G_g, double-double accumulated */
    int32_t *A;
    int16_t *C;
    int64_t *q_group;   /* Q15.16, spec implementation */
    int64_t *q_row;     /* sum_g Q_g (int64) */
    int32_t *flns_lambda;
    int8_t *flns_sign;
    int flns_F, flns_b; /* used when flns_lambda is set */
} hsdr_lns8_outputs;

/* LNS8 matvec on pre-encoded codes with pre-scale e. State sets are built once per group column and reused by all
 * N rows. Returns 0, -1 when out of memory, -2 when fLNS parameters are out of range. */
int hsdr_matvec_lns8(const uint8_t *W, const uint8_t *codes, int e, int K, int N, enum hsdr_group_method method,
                     const hsdr_lns8_outputs *out);
/* The same from fp32 activations with the automatic pre-scale: encodes x (K codes into codes), sets *e.
 * Returns 0, an LNS8 status (NaN / infinite absmax, index in *bad), or the codes of hsdr_matvec_lns8. */
int hsdr_matvec_lns8_auto(const uint8_t *W, const float *x, int K, int N, enum hsdr_group_method method,
                          uint8_t *codes, int *e, size_t *bad, const hsdr_lns8_outputs *out);

#endif
