#include "states.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "hsdr.h"
#include "lns8.h"
#include "q8.h"
#include "rng.h"
#include "stats.h"
#include "util.h"

/* ---------------------------------------------------------------- the accumulator */

void hsdr_states_acc_init(states_acc *a)
{
    memset(a, 0, sizeof *a);
    a->emin = 1000, a->emax = -1000;
}

void hsdr_states_acc_free(states_acc *a)
{
    free(a->s128), free(a->s64);
    hsdr_states_acc_init(a);
}

static int reserve(int **v, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    int *g = realloc(*v, sizeof(int) * c);
    if (!g)
        return -1;
    *v = g, *cap = c;
    return 0;
}

int hsdr_states_acc_add(states_acc *a, const float *x, int K, char *err, size_t errlen)
{
    uint8_t *codes = malloc((size_t)K);
    hsdr_block_q8_0 *q = malloc(sizeof *q * (size_t)(K / 32));
    if (!codes || !q || reserve(&a->s128, &a->cap128, a->n128 + (size_t)K / 128) ||
        reserve(&a->s64, &a->cap64, a->n64 + (size_t)K / 64)) {
        free(codes), free(q);
        return hsdr_errorf(err, errlen, "out of memory");
    }
    int e = 0;
    size_t bad = 0;
    if (hsdr_lns8_auto_prescale(x, (size_t)K, &e, &bad) != 0 || hsdr_lns8_encode(x, (size_t)K, e, codes, &bad)) {
        free(codes), free(q);
        return hsdr_errorf(err, errlen, "encoding failed at element %zu", bad);
    }
    a->emin = e < a->emin ? e : a->emin;
    a->emax = e > a->emax ? e : a->emax;
    for (int g = 0; g < K / 128; g++) {
        hsdr_stateset128 s;
        hsdr_stateset128_build(codes + 128 * g, &s);
        a->s128[a->n128++] = s.n_occupied;
    }
    for (int g = 0; g < K / 64; g++) {
        hsdr_stateset64 s;
        hsdr_stateset64_build(codes + 64 * g, &s);
        a->s64[a->n64++] = s.n_occupied;
    }
    hsdr_q8_0_quantize_x86(x, (size_t)K, q);
    for (int i = 0; i < K; i++) {
        double xl = ldexp(hsdr_lns8_decode(codes[i]), e);
        double xq = (double)hsdr_fp16_to_fp32(q[i / 32].d) * q[i / 32].qs[i % 32];
        a->err_lns += (xl - x[i]) * (xl - x[i]);
        a->err_q8 += (xq - x[i]) * (xq - x[i]);
        a->ref += (double)x[i] * x[i];
    }
    a->vectors++;
    a->sorted = 0;
    free(codes), free(q);
    return 0;
}

int hsdr_states_acc_merge(states_acc *a, const states_acc *b)
{
    if (reserve(&a->s128, &a->cap128, a->n128 + b->n128) || reserve(&a->s64, &a->cap64, a->n64 + b->n64))
        return -1;
    if (b->n128)
        memcpy(a->s128 + a->n128, b->s128, sizeof(int) * b->n128);
    if (b->n64)
        memcpy(a->s64 + a->n64, b->s64, sizeof(int) * b->n64);
    a->n128 += b->n128, a->n64 += b->n64;
    a->err_lns += b->err_lns, a->err_q8 += b->err_q8, a->ref += b->ref;
    a->emin = b->emin < a->emin ? b->emin : a->emin;
    a->emax = b->emax > a->emax ? b->emax : a->emax;
    a->vectors += b->vectors;
    a->sorted = 0;
    return 0;
}

static void sort_samples(states_acc *a)
{
    if (!a->sorted) {
        qsort(a->s128, a->n128, sizeof(int), hsdr_cmp_int);
        qsort(a->s64, a->n64, sizeof(int), hsdr_cmp_int);
        a->sorted = 1;
    }
}

static double mean(const int *v, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    return n ? m / (double)n : 0.0;
}

/* hist[n] = number of tiles with n occupied states, n = 0..lanes (a tile of L lanes has at most L states). */
static cJSON *histogram(const int *v, size_t n, int lanes)
{
    int counts[129] = {0};
    for (size_t i = 0; i < n; i++)
        counts[v[i]]++;
    return cJSON_CreateIntArray(counts, lanes + 1);
}

static double rel(double err, double ref)
{
    return ref > 0 ? sqrt(err / ref) : 0.0;
}

void hsdr_states_acc_json(states_acc *a, cJSON *row)
{
    sort_samples(a);
    cJSON_AddNumberToObject(row, "states128_mean", mean(a->s128, a->n128));
    cJSON_AddNumberToObject(row, "states128_p5", hsdr_nearest_rank(a->s128, a->n128, 0.05));
    cJSON_AddNumberToObject(row, "states128_p95", hsdr_nearest_rank(a->s128, a->n128, 0.95));
    cJSON_AddNumberToObject(row, "states64_mean", mean(a->s64, a->n64));
    cJSON_AddNumberToObject(row, "states64_p5", hsdr_nearest_rank(a->s64, a->n64, 0.05));
    cJSON_AddNumberToObject(row, "states64_p95", hsdr_nearest_rank(a->s64, a->n64, 0.95));
    cJSON_AddNumberToObject(row, "lns8_rel_rms_error", rel(a->err_lns, a->ref));
    cJSON_AddNumberToObject(row, "q8_0_rel_rms_error", rel(a->err_q8, a->ref));
    cJSON_AddNumberToObject(row, "prescale_min", a->emin);
    cJSON_AddNumberToObject(row, "prescale_max", a->emax);
    cJSON_AddItemToObject(row, "hist128", histogram(a->s128, a->n128, 128));
    cJSON_AddItemToObject(row, "hist64", histogram(a->s64, a->n64, 64));
}

void hsdr_states_table_head(const char *first, int width, FILE *out)
{
    fprintf(out, "%-*s | %-18s | %-18s | %-13s | %-13s | %s\n", width, "", "states / 128 lanes", "states / 64 lanes",
            "LNS8 rel. RMS", "Q8_0 rel. RMS", "pre-scale e");
    fprintf(out, "%-*s | %6s %5s %5s | %6s %5s %5s | %-13s | %-13s | %s\n", width, first, "mean", "p5", "p95",
            "mean", "p5", "p95", "error", "error", "min..max");
}

void hsdr_states_acc_line(states_acc *a, const char *label, int width, FILE *out)
{
    sort_samples(a);
    fprintf(out, "%-*s | %6.1f %5d %5d | %6.1f %5d %5d | %-13.3e | %-13.3e | %d..%d\n", width, label,
            mean(a->s128, a->n128),            hsdr_nearest_rank(a->s128, a->n128, 0.05), hsdr_nearest_rank(a->s128, a->n128, 0.95),
            mean(a->s64, a->n64), hsdr_nearest_rank(a->s64, a->n64, 0.05), hsdr_nearest_rank(a->s64, a->n64, 0.95),
            rel(a->err_lns, a->ref), rel(a->err_q8, a->ref), a->emin, a->emax);
}

/* ---------------------------------------------------------------- synthetic distributions */

int hsdr_states_run(const states_options *opt, FILE *out)
{
    const int K = opt->K;
    if (K <= 0 || K % 1024 != 0 || opt->vectors <= 0) {
        fprintf(stderr, "hsdr states: --K must be a positive multiple of 1024 and --vectors positive\n");
        return -1;
    }
    float *x = malloc(sizeof(float) * (size_t)K);
    if (!x) {
        fprintf(stderr, "hsdr states: out of memory\n");
        return -1;
    }
    if (!opt->json) {
        fprintf(out, "Reference summary: %d vectors of K = %d per distribution (RMS 1), seed %llu\n", opt->vectors, K,
                (unsigned long long)opt->seed);
        hsdr_states_table_head("distribution", 12, out);
    }
    int rc = 0;
    for (int di = 0; di < HSDR_DIST_COUNT && rc == 0; di++) {
        hsdr_rng rng;
        hsdr_rng_seed(&rng, opt->seed + (uint64_t)di);
        states_acc acc;
        hsdr_states_acc_init(&acc);
        char err[256];
        for (int vi = 0; vi < opt->vectors && rc == 0; vi++) {
            hsdr_dist_fill((hsdr_dist)di, &rng, x, (size_t)K, NULL);
            if (hsdr_states_acc_add(&acc, x, K, err, sizeof err) != 0) {
                fprintf(stderr, "hsdr states: %s\n", err);
                rc = -1;
            }
        }
        const char *name = hsdr_dist_name((hsdr_dist)di);
        if (rc == 0 && opt->json) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "distribution", name);
            cJSON_AddNumberToObject(row, "K", K);
            cJSON_AddNumberToObject(row, "vectors", opt->vectors);
            cJSON_AddNumberToObject(row, "seed", (double)opt->seed);
            hsdr_states_acc_json(&acc, row);
            char *txt = cJSON_PrintUnformatted(row);
            fprintf(out, "%s\n", txt ? txt : "{}");
            cJSON_free(txt);
            cJSON_Delete(row);
        } else if (rc == 0) {
            hsdr_states_acc_line(&acc, name, 12, out);
        }
        hsdr_states_acc_free(&acc);
    }
    free(x);
    return rc;
}
