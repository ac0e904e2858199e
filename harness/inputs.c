#include "inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "hsdr.h"
#include "lns8.h"
#include "matvec.h"
#include "stats.h"
#include "util.h"

void hsdr_random_ptq1_0(hsdr_rng *r, uint8_t *W, size_t nblocks)
{
    for (size_t b = 0; b < nblocks; b++) {
        uint8_t *blk = W + b * HSDR_PTQ1_0_BYTES;
        for (int i = 0; i < 24; i++)
            blk[i] = (uint8_t)((256u * hsdr_rng_below(r, 243) + 242u) / 243u);
        for (int i = 24; i < 26; i++)
            blk[i] = (uint8_t)((256u * (3u * hsdr_rng_below(r, 81)) + 242u) / 243u);
        uint16_t d = hsdr_fp32_to_fp16((float)(0.01 + 0.02 * hsdr_rng_uniform(r)));
        blk[26] = (uint8_t)(d & 0xff);
        blk[27] = (uint8_t)(d >> 8);
    }
}

size_t hsdr_inputs_bytes(int K, int N)
{
    size_t n = (size_t)N, G = (size_t)K / HSDR_QK;
    return n * G * HSDR_PTQ1_0_BYTES + sizeof(float) * (size_t)K + (size_t)K + n * (5 * sizeof(double) + 4 + 8) +
           n * G * 32 + sizeof(hsdr_block_q8_0) * (size_t)K / 32;
}

int hsdr_inputs_build(hsdr_inputs *in, int K, int N, hsdr_dist dist, uint64_t seed, char *err, size_t errlen)
{
    return hsdr_inputs_build_from(in, K, N, NULL, NULL, dist, seed, err, errlen);
}

int hsdr_inputs_build_from(hsdr_inputs *in, int K, int N, const uint8_t *W, const float *x, hsdr_dist dist,
                           uint64_t seed, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    in->K = K;
    in->N = N;
    in->dist = dist;
    in->seed = seed;
    const size_t n = (size_t)N, G = (size_t)K / HSDR_QK;
    in->weight_bytes = n * G * HSDR_PTQ1_0_BYTES;
    in->W = malloc(in->weight_bytes);
    in->x = malloc(sizeof(float) * (size_t)K);
    in->y_exact = malloc(sizeof(double) * n);
    in->abs_exact = malloc(sizeof(double) * n);
    in->y_q8 = malloc(sizeof(float) * n);
    in->codes = malloc((size_t)K);
    in->A = malloc(sizeof(int32_t) * n * G * 8);
    in->y_lns8 = malloc(sizeof(double) * n);
    in->abs_lns8 = malloc(sizeof(double) * n);
    in->q_row = malloc(sizeof(int64_t) * n);
    in->q_bound = malloc(sizeof(double) * n);
    hsdr_block_q8_0 *q8 = malloc(sizeof *q8 * (size_t)(K / HSDR_Q8_BLOCK));
    int *occ = malloc(sizeof(int) * G);
    if (!in->W || !in->x || !in->y_exact || !in->abs_exact || !in->y_q8 || !in->codes || !in->A || !in->y_lns8 ||
        !in->abs_lns8 || !in->q_row || !in->q_bound || !q8 || !occ) {
        free(q8);
        free(occ);
        hsdr_inputs_free(in);
        return hsdr_errorf(err, errlen, "inputs for K=%d N=%d need about %zu bytes: out of memory", K, N,
                           hsdr_inputs_bytes(K, N));
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    if (W)
        memcpy(in->W, W, in->weight_bytes);
    else
        hsdr_random_ptq1_0(&rng, in->W, n * G);
    if (x)
        memcpy(in->x, x, sizeof(float) * (size_t)K);
    else if (hsdr_dist_fill(dist, &rng, in->x, (size_t)K, NULL) != 0) {
        free(q8);
        free(occ);
        hsdr_inputs_free(in);
        return hsdr_errorf(err, errlen, "distribution %s cannot fill K=%d (bonsai needs a multiple of 1024)",
                           hsdr_dist_name(dist), K);
    }
    hsdr_matvec_exact(in->W, in->x, K, N, in->y_exact, in->abs_exact);
    hsdr_matvec_q8_0(in->W, in->x, K, N, q8, in->y_q8, HSDR_FUSED);
    free(q8);
    size_t bad;
    hsdr_lns8_outputs out = {.y = in->y_lns8, .A = in->A, .q_row = in->q_row};
    if (hsdr_matvec_lns8_auto(in->W, in->x, K, N, HSDR_METHOD_DIRECT, in->codes, &in->e, &bad, &out) != 0) {
        free(occ);
        hsdr_inputs_free(in);
        return hsdr_errorf(err, errlen, "reference LNS8 matvec failed (activation %zu)", bad);
    }
    /* tolerance scales and bounds */
    for (size_t r = 0; r < n; r++) {
        double mag = 0.0, bound = 0.0;
        for (size_t g = 0; g < G; g++) {
            const uint8_t *blk = in->W + (r * G + g) * HSDR_PTQ1_0_BYTES;
            mag += hsdr_lns8_group_abs_terms(blk, in->codes + g * HSDR_QK, in->e);
            bound += hsdr_q1516_bound(hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk)), in->e);
        }
        in->abs_lns8[r] = mag;
        in->q_bound[r] = bound;
    }
    /* occupied states per 128-lane tile */
    double sum = 0.0;
    for (size_t g = 0; g < G; g++) {
        hsdr_stateset128 s;
        hsdr_stateset128_build(in->codes + g * HSDR_QK, &s);
        occ[g] = s.n_occupied;
        sum += s.n_occupied;
    }
    qsort(occ, G, sizeof(int), hsdr_cmp_int);
    in->occ_mean = sum / (double)G;
    in->occ_p5 = hsdr_nearest_rank(occ, G, 0.05);
    in->occ_p95 = hsdr_nearest_rank(occ, G, 0.95);
    free(occ);
    return 0;
}

void hsdr_inputs_flns(const hsdr_inputs *in, int F, int b, double *y)
{
    const size_t G = (size_t)in->K / HSDR_QK;
    for (size_t r = 0; r < (size_t)in->N; r++) {
        double s = 0.0;
        for (size_t g = 0; g < G; g++) {
            const uint8_t *blk = in->W + (r * G + g) * HSDR_PTQ1_0_BYTES;
            hsdr_flns root = hsdr_flns_tree(in->A + (r * G + g) * 8, F, b);
            s += hsdr_flns_value(root, F, in->e, hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk)));
        }
        y[r] = s;
    }
}

void hsdr_inputs_free(hsdr_inputs *in)
{
    free(in->W);
    free(in->x);
    free(in->y_exact);
    free(in->abs_exact);
    free(in->y_q8);
    free(in->codes);
    free(in->A);
    free(in->y_lns8);
    free(in->abs_lns8);
    free(in->q_row);
    free(in->q_bound);
    memset(in, 0, sizeof *in);
}
