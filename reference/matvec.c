#include "matvec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "hsdr.h"
#include "lns8.h"
#include "ptq1_0.h"

/* sum t * q over one 32-block of a group's trits: exact (|isum| <= 32 * 127) */
static int32_t isum32(const int8_t *t, const int8_t *qs)
{
    int32_t isum = 0;
    for (int j = 0; j < HSDR_Q8_BLOCK; j++)
        isum += t[j] * qs[j];
    return isum;
}

float hsdr_dot_ptq1_0_q8_0(const uint8_t *row, const hsdr_block_q8_0 *y, int K, enum hsdr_fma_mode mode)
{
    float sumf = 0.0f;
    for (int i = 0; i < K / HSDR_QK; i++) {
        const uint8_t *blk = row + (size_t)i * HSDR_PTQ1_0_BYTES;
        int8_t t[HSDR_QK];
        hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
        float sumi = 0.0f;
        for (int k = 0; k < 4; k++) {
            const hsdr_block_q8_0 *b = &y[4 * i + k];
            const int32_t isum = isum32(t + 32 * k, b->qs);
            float dy = hsdr_fp16_to_fp32(b->d);
            /* The project builds with -ffp-contract=off: the unfused line rounds the product, then the sum. */
            sumi = mode == HSDR_FUSED ? fmaf(dy, (float)isum, sumi) : sumi + dy * (float)isum;
        }
        float dw = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
        sumf = mode == HSDR_FUSED ? fmaf(dw, sumi, sumf) : sumf + dw * sumi;
    }
    return sumf;
}

void hsdr_matvec_exact(const uint8_t *W, const float *x, int K, int N, double *y, double *abs_terms)
{
    int G = K / HSDR_QK;
    for (int r = 0; r < N; r++) {
        hsdr_dd acc = {0.0, 0.0};
        double mag = 0.0;
        for (int g = 0; g < G; g++) {
            const uint8_t *blk = W + ((size_t)r * G + g) * HSDR_PTQ1_0_BYTES;
            int8_t t[HSDR_QK];
            hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
            double d = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
            for (int i = 0; i < HSDR_QK; i++) {
                if (t[i] == 0)
                    continue;
                double term = d * (double)x[(size_t)g * HSDR_QK + i]; /* exact: 11 x 24 significant bits */
                acc = hsdr_dd_add_d(acc, t[i] > 0 ? term : -term);
                mag += fabs(term);
            }
        }
        y[r] = hsdr_dd_to_double(acc);
        if (abs_terms)
            abs_terms[r] = mag;
    }
}

void hsdr_matvec_q8_0(const uint8_t *W, const float *x, int K, int N, hsdr_block_q8_0 *y_q8, float *y,
                      enum hsdr_fma_mode mode)
{
    hsdr_q8_0_quantize_x86(x, (size_t)K, y_q8);
    for (int r = 0; r < N; r++)
        y[r] = hsdr_dot_ptq1_0_q8_0(W + (size_t)r * (K / HSDR_QK) * HSDR_PTQ1_0_BYTES, y_q8, K, mode);
}

/* The end of a row of HSDR_Q8_1_INT_DOT and HSDR_Q8_1_DEQUANT_FP32: each group's xor butterfly over its sg threads'
 * values p (lane 0's value, one rounding per add), then the groups' values in order ((+0 + s_0) + s_1) + ..., or the
 * one group's. */
static float groups_reduce(float *p, int wg, int sg)
{
    enum { MAX_SG = 128 };
    float v[MAX_SG], total = 0.0f;
    const int nsg = wg / sg;
    for (int s = 0; s < nsg; s++) {
        float *u = p + s * sg;
        for (int o = sg / 2; o >= 1; o /= 2) {
            for (int l = 0; l < sg; l++)
                v[l] = u[l] + u[l ^ o];
            memcpy(u, v, sizeof(float) * (size_t)sg);
        }
        total = nsg == 1 ? u[0] : total + u[0];
    }
    return total;
}

/* HSDR_Q8_1_INT_DOT on wg threads in groups of sg (matvec.h says what it pins). */
static void matvec_q8_1_int_dot(const uint8_t *W, int K, int N, int wg, int sg, const hsdr_block_q8_1 *q, float *y)
{
    enum { MAX_WG = 1024 };
    const int G = K / HSDR_QK, pairs = wg / 2;
    float p[MAX_WG];
    for (int r = 0; r < N; r++) {
        for (int i = 0; i < wg; i++)
            p[i] = 0.0f;
        for (int b = 0; b < G; b++) {
            const uint8_t *blk = W + ((size_t)r * G + b) * HSDR_PTQ1_0_BYTES;
            const hsdr_block_q8_1 *a = q + 4 * (size_t)b;
            int8_t t[HSDR_QK];
            hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
            int32_t acc[2][2][3] = {{{0}}}; /* [sub][A, B][digit positions 0-1, 2-3, 4] */
            for (int e = 0; e < HSDR_QK; e++) {
                int byte, n; /* the qh digits (bytes 24, 25) go with digit position 4 */
                hsdr_ptq1_0_locate(e, &byte, &n);
                const int sub = byte >= 12, part = byte - 12 * sub >= 4;
                const int pos = byte >= 24 ? 2 : n < 2 ? 0 : n < 4 ? 1 : 2;
                acc[sub][part][pos] += (t[e] + 1) * a[e / 32].qs[e % 32];
            }
            const float dw = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
            float ds[4], ss[4];
            for (int k = 0; k < 4; k++)
                ds[k] = hsdr_fp16_to_fp32(a[k].d), ss[k] = hsdr_fp16_to_fp32(a[k].s);
            for (int sub = 0; sub < 2; sub++) {
                const float dB[3] = {sub ? ds[2] : ds[0], sub ? ds[3] : ds[1], sub ? ds[3] : ds[2]};
                const float bias = sub ? ss[2] + ss[3] : ss[0] + ss[1];
                float sum = fmaf(dB[2], (float)acc[sub][1][2], -bias);
                sum = fmaf(dB[1], (float)acc[sub][1][1], sum);
                sum = fmaf(dB[0], (float)acc[sub][1][0], sum);
                sum = fmaf(ds[2], (float)acc[sub][0][2], sum);
                sum = fmaf(ds[1], (float)acc[sub][0][1], sum);
                sum = fmaf(ds[0], (float)acc[sub][0][0], sum);
                const int tid = 2 * (b % pairs) + sub;
                p[tid] = fmaf(dw, sum, p[tid]);
            }
        }
        y[r] = groups_reduce(p, wg, sg);
    }
}

/* HSDR_Q8_1_DEQUANT_FP32 on wg threads in groups of sg (matvec.h says what it pins). */
static void matvec_dequant_fp32(const uint8_t *W, const float *x, int K, int N, int wg, int sg, float *y)
{
    enum { MAX_WG = 1024 };
    const int G = K / HSDR_QK;
    float p[MAX_WG];
    int8_t *t = malloc((size_t)K); /* a row's trits */
    float *d = malloc(sizeof(float) * (size_t)G);
    for (int r = 0; r < N && t && d; r++) {
        for (int b = 0; b < G; b++) {
            const uint8_t *blk = W + ((size_t)r * G + b) * HSDR_PTQ1_0_BYTES;
            hsdr_ptq1_0_unpack(blk, t + (size_t)b * HSDR_QK, HSDR_DECODE_INT);
            d[b] = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
        }
        for (int i = 0; i < wg; i++) {
            p[i] = 0.0f;
            for (int c = 8 * i; c < K; c += 8 * wg) {
                float s[2];
                for (int h = 0; h < 2; h++) {
                    const int c0 = c + 4 * h;
                    s[h] = x[c0] * (float)t[c0];
                    for (int k = 1; k < 4; k++)
                        s[h] = s[h] + x[c0 + k] * (float)t[c0 + k];
                }
                p[i] = fmaf(s[0] + s[1], d[c / HSDR_QK], p[i]);
            }
        }
        y[r] = groups_reduce(p, wg, sg);
    }
    if (!t || !d) /* out of memory: y is NaN, which no check passes */
        for (int r = 0; r < N; r++)
            y[r] = NAN;
    free(t);
    free(d);
}

void hsdr_matvec_q8_1(const uint8_t *W, const float *x, int K, int N, hsdr_q8_1_order order, hsdr_block_q8_1 *y_q8,
                      float *y)
{
    enum { MAX_LANES = 32, MAX_GROUPS = 32 };
    if (order.sequence == HSDR_Q8_1_DEQUANT_FP32) {
        matvec_dequant_fp32(W, x, K, N, order.lanes * order.groups, order.lanes, y);
        return;
    }
    if (order.sequence == HSDR_Q8_1_INT_DOT) {
        hsdr_q8_1_quantize_recip(x, (size_t)K, y_q8);
        matvec_q8_1_int_dot(W, K, N, order.lanes * order.groups, order.lanes, y_q8, y);
        return;
    }
    const bool pt4 = order.sequence == HSDR_Q8_1_PT4;
    const int G = K / HSDR_QK, lanes = order.lanes, threads = pt4 ? 1 : order.lanes * order.groups;
    hsdr_q8_1_quantize(x, (size_t)K, y_q8);
    for (int r = 0; r < N; r++) {
        float p[MAX_LANES * MAX_GROUPS] = {0.0f};
        for (int b = 0; b < G; b++) {
            const uint8_t *blk = W + ((size_t)r * G + b) * HSDR_PTQ1_0_BYTES;
            int8_t t[HSDR_QK];
            hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
            float acc = 0.0f;
            for (int k = 0; k < 4; k++) {
                const hsdr_block_q8_1 *a = &y_q8[4 * b + k];
                acc = fmaf(hsdr_fp16_to_fp32(a->d), (float)isum32(t + 32 * k, a->qs), acc);
            }
            const float dw = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
            if (pt4) { /* the block rounded on its own, then its accumulator */
                const float v = dw * acc;
                const int m = b < G / 4 * 4 ? b % 4 : 0;
                p[m] = p[m] + v;
            } else {
                p[b % threads] = fmaf(dw, acc, p[b % threads]);
            }
        }
        if (pt4) {
            y[r] = (p[0] + p[1]) + (p[2] + p[3]);
            continue;
        }
        for (int w = 1; w < order.groups; w++) /* group 0 adds the other groups' partials, lane by lane */
            for (int l = 0; l < lanes; l++)
                p[l] = p[l] + p[w * lanes + l];
        for (int o = lanes / 2; o >= 1; o /= 2) {
            float q[MAX_LANES];
            for (int l = 0; l < lanes; l++)
                q[l] = p[l] + p[l ^ o];
            memcpy(p, q, sizeof(float) * (size_t)lanes);
        }
        y[r] = p[0];
    }
}

void hsdr_matvec_q8_1_lanes(const uint8_t *W, const float *x, int K, int N, int lanes, hsdr_block_q8_1 *y_q8,
                            float *y)
{
    hsdr_matvec_q8_1(W, x, K, N, (hsdr_q8_1_order){HSDR_Q8_1_THREADS, lanes, 1}, y_q8, y);
}

double hsdr_lns8_group_abs_terms(const uint8_t *block, const uint8_t *codes, int e)
{
    int8_t t[HSDR_QK];
    hsdr_ptq1_0_unpack(block, t, HSDR_DECODE_INT);
    double s = 0.0;
    for (int i = 0; i < HSDR_QK; i++)
        if (t[i] != 0)
            s += fabs(hsdr_lns8_decode(codes[i]));
    return s * fabs((double)hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(block))) * ldexp(1.0, e);
}

int hsdr_matvec_lns8(const uint8_t *W, const uint8_t *codes, int e, int K, int N, enum hsdr_group_method method,
                     const hsdr_lns8_outputs *out)
{
    const int G = K / HSDR_QK;
    if (out->flns_lambda && !hsdr_flns_params_ok(out->flns_F, out->flns_b))
        return -2;
    hsdr_stateset128 *s128 = NULL;
    hsdr_stateset64 *s64 = NULL;
    if (method == HSDR_METHOD_STATESET128 && !(s128 = malloc(sizeof *s128 * (size_t)G)))
        return -1;
    if (method == HSDR_METHOD_TILE64 && !(s64 = malloc(sizeof *s64 * 2 * (size_t)G)))
        return -1;
    for (int g = 0; g < G; g++) {
        const uint8_t *tile = codes + (size_t)g * HSDR_QK;
        if (s128)
            hsdr_stateset128_build(tile, &s128[g]);
        if (s64) {
            hsdr_stateset64_build(tile, &s64[2 * g]);
            hsdr_stateset64_build(tile + 64, &s64[2 * g + 1]);
        }
    }
    for (int r = 0; r < N; r++) {
        hsdr_dd y = {0.0, 0.0};
        int64_t qsum = 0;
        for (int g = 0; g < G; g++) {
            const size_t rg = (size_t)r * G + g;
            const uint8_t *blk = W + rg * HSDR_PTQ1_0_BYTES;
            const double d = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
            int32_t A[8];
            if (method == HSDR_METHOD_DIRECT) {
                int8_t t[HSDR_QK];
                hsdr_ptq1_0_unpack(blk, t, HSDR_DECODE_INT);
                hsdr_direct_group(codes + (size_t)g * HSDR_QK, t, A);
            } else {
                int16_t C[HSDR_NSTATES];
                uint64_t nz[2], neg[2];
                hsdr_ptq1_0_to_masks(blk, nz, neg);
                if (s128) {
                    hsdr_stateset128_counts(&s128[g], nz, neg, C);
                } else {
                    memset(C, 0, sizeof C);
                    hsdr_stateset64_counts_add(&s64[2 * g], nz[0], neg[0], C);
                    hsdr_stateset64_counts_add(&s64[2 * g + 1], nz[1], neg[1], C);
                }
                hsdr_fold_counts(C, A);
                if (out->C)
                    memcpy(out->C + rg * HSDR_NSTATES, C, sizeof C);
            }
            if (out->A)
                memcpy(out->A + rg * 8, A, sizeof A);
            if (out->y)
                y = hsdr_dd_add(y, hsdr_group_sum_dd(A, d, e));
            if (out->q_group || out->q_row) {
                int64_t q = hsdr_q1516_group(A, d, e);
                if (out->q_group)
                    out->q_group[rg] = q;
                qsum += q;
            }
            if (out->flns_lambda) {
                hsdr_flns root = hsdr_flns_tree(A, out->flns_F, out->flns_b);
                out->flns_lambda[rg] = root.lambda;
                out->flns_sign[rg] = root.sign;
            }
        }
        if (out->y)
            out->y[r] = hsdr_dd_to_double(y);
        if (out->q_row)
            out->q_row[r] = qsum;
    }
    free(s128);
    free(s64);
    return 0;
}

int hsdr_matvec_lns8_auto(const uint8_t *W, const float *x, int K, int N, enum hsdr_group_method method,
                          uint8_t *codes, int *e, size_t *bad, const hsdr_lns8_outputs *out)
{
    int st = hsdr_lns8_auto_prescale(x, (size_t)K, e, bad);
    if (st == 0)
        st = hsdr_lns8_encode(x, (size_t)K, *e, codes, bad);
    return st != 0 ? st : hsdr_matvec_lns8(W, codes, *e, K, N, method, out);
}
