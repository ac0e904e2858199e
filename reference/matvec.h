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

/* The fp32 sequences of the fork's GPU PTQ1_0 x Q8_1 mat-vecs (docs/cuda-production.md, docs/vulkan-production.md),
 * the references a variant's y is held to bit for bit. An order is one sequence and the threads that share a row:
 * `groups` groups of `lanes` threads (lanes a power of two), thread t = w * lanes + l being lane l of group w.
 * HSDR_Q8_1_THREADS (lanes 1..32, groups 1..32): activations Q8_1 (hsdr_q8_1_quantize, into y_q8: K/32 blocks);
 *   thread t owns the 128-blocks b = t, t + lanes * groups, ... in increasing order: acc_b = the fused chain of
 *   spec/ptq1_0.md section 7 step 3 over the block's four Q8_1 blocks (acc = fmaf(d8_k, isum_k, acc), k = 0..3, from
 *   +0; isum_k exact), p_t = fmaf(d_w, acc_b, p_t) from +0. Then lane l of group 0 adds the other groups' lane-l
 *   values in group order, one rounding each (((p_l + p_{lanes + l}) + p_{2 lanes + l}) + ...: the fork's
 *   shared-memory step), and the xor butterfly over the lanes: for o = lanes / 2, ..., 2, 1 every lane adds lane
 *   l ^ o's value (one rounding per add); y = lane 0's value.
 * HSDR_Q8_1_PT4 (the fork's planar PT kernel; lanes and groups unused): Q8_1 as above; each block's value is rounded
 *   on its own, p_b = d_w * acc_b (an unfused multiply), and one thread adds them into four accumulators from +0:
 *   blocks 4i + m into s_m for every complete quad in increasing i, the remaining K/128 mod 4 blocks into s_0 in
 *   order; then y = (s_0 + s_1) + (s_2 + s_3).
 * HSDR_Q8_1_INT_DOT: the integer-dot sequence of the fork's mul_mat_vecq_ptq1_0.comp (docs/vulkan-production.md
 *   section 3) with the choices that pin its bits: activations by hsdr_q8_1_quantize_recip; wg = lanes * groups
 *   threads take a row, two per 128-block (block b to pair b mod (wg / 2), sub 0 on qs bytes 0..11, sub 1 on bytes
 *   12..23 and qh), each with exact integer sums of digit (0..2) times q: A over its first four bytes, B over the
 *   rest, split by digit position (0-1, 2-3, 4; the qh digits with 4), scaled by the d of the Q8_1 block they fall
 *   in; per block the fused chain sum = fma(dA0, A0, fma(dA1, A1, fma(dA2, A2, fma(dB0, B0, fma(dB1, B1, fma(dB2,
 *   B2, -bias)))))) with bias = s_0 + s_1 (sub 0) or s_2 + s_3 (sub 1), then p = fma(d_w, sum, p) over its blocks in
 *   increasing order; each group's xor butterfly (o = lanes / 2, ..., 1; lane 0's value); y = that of the one group,
 *   or with several ((+0 + s_0) + s_1) + ... in group order.
 * HSDR_Q8_1_DEQUANT_FP32: the fork's fp32 dequantizing mat-vec for K <= 4096 (docs/vulkan-production.md section 3b),
 *   with no Q8_1 at all (y_q8 is not written): thread i of wg = lanes * groups takes, in increasing iterations j, the
 *   8 weights from c = 8 (j wg + i) while c < K; per row s = ((x_c w_c + x_c+1 w_c+1) + x_c+2 w_c+2) + x_c+3 w_c+3
 *   and s' likewise over c + 4 .. c + 7 (products exact, each sum rounded), p = fma(s + s', d, p) from +0 with d the
 *   block's fp16 scale; then the groups' butterflies and their sum as in HSDR_Q8_1_INT_DOT.
 * The fork leaves the order inside a dot, the fma and the reduction tree to the device: these are the choices that
 * pin them. Which order a kernel follows is its backend's to say (kernels/cuda/q8_1_orders.c, kernels/vulkan/vk.c). */
typedef enum {
    HSDR_Q8_1_THREADS = 0,
    HSDR_Q8_1_PT4,
    HSDR_Q8_1_INT_DOT,
    HSDR_Q8_1_DEQUANT_FP32,
} hsdr_q8_1_sequence;
typedef struct {
    hsdr_q8_1_sequence sequence;
    int lanes;  /* threads of one xor butterfly, a power of two */
    int groups; /* groups of `lanes` threads on one row */
} hsdr_q8_1_order;
void hsdr_matvec_q8_1(const uint8_t *W, const float *x, int K, int N, hsdr_q8_1_order order, hsdr_block_q8_1 *y_q8,
                      float *y);
/* The same in {HSDR_Q8_1_THREADS, lanes, 1}: one group of `lanes` lanes. */
void hsdr_matvec_q8_1_lanes(const uint8_t *W, const float *x, int K, int N, int lanes, hsdr_block_q8_1 *y_q8,
                            float *y);

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
