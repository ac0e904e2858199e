#include "states.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "hsdr.h"
#include "lns8.h"
#include "q8.h"
#include "rng.h"
#include "stats.h"

typedef struct {
    int *v;
    size_t n;
} int_samples;

static int percentile(const int_samples *s, double q)
{
    return hsdr_nearest_rank(s->v, s->n, q);
}

static double mean(const int_samples *s)
{
    double m = 0.0;
    for (size_t i = 0; i < s->n; i++)
        m += s->v[i];
    return s->n ? m / (double)s->n : 0.0;
}

/* hist[n] = number of tiles with n occupied states, n = 0..lanes (a tile of L lanes has at most L states). */
static cJSON *histogram(const int_samples *s, int lanes)
{
    int counts[129] = {0};
    for (size_t i = 0; i < s->n; i++)
        counts[s->v[i]]++;
    return cJSON_CreateIntArray(counts, lanes + 1);
}

int hsdr_states_run(const states_options *opt, FILE *out)
{
    const int K = opt->K;
    if (K <= 0 || K % 1024 != 0 || opt->vectors <= 0) {
        fprintf(stderr, "hsdr states: --K must be a positive multiple of 1024 and --vectors positive\n");
        return -1;
    }
    float *x = malloc(sizeof(float) * (size_t)K);
    uint8_t *codes = malloc((size_t)K);
    hsdr_block_q8_0 *q = malloc(sizeof *q * (size_t)(K / 32));
    int_samples s128 = {malloc(sizeof(int) * (size_t)(K / 128 * opt->vectors)), 0};
    int_samples s64 = {malloc(sizeof(int) * (size_t)(K / 64 * opt->vectors)), 0};
    if (!x || !codes || !q || !s128.v || !s64.v) {
        fprintf(stderr, "hsdr states: out of memory\n");
        free(x), free(codes), free(q), free(s128.v), free(s64.v);
        return -1;
    }
    if (!opt->json) {
        fprintf(out, "Reference summary: %d vectors of K = %d per distribution (RMS 1), seed %llu\n", opt->vectors, K,
                (unsigned long long)opt->seed);
        fprintf(out, "%-12s | %-18s | %-18s | %-13s | %-13s | %s\n", "", "states / 128 lanes", "states / 64 lanes",
                "LNS8 rel. RMS", "Q8_0 rel. RMS", "pre-scale e");
        fprintf(out, "%-12s | %6s %5s %5s | %6s %5s %5s | %-13s | %-13s | %s\n", "distribution", "mean", "p5", "p95",
                "mean", "p5", "p95", "error", "error", "min..max");
    }
    for (int di = 0; di < HSDR_DIST_COUNT; di++) {
        hsdr_rng rng;
        hsdr_rng_seed(&rng, opt->seed + (uint64_t)di);
        s128.n = s64.n = 0;
        double err_lns = 0.0, err_q8 = 0.0, ref = 0.0;
        int emin = 1000, emax = -1000;
        for (int vi = 0; vi < opt->vectors; vi++) {
            hsdr_dist_fill((hsdr_dist)di, &rng, x, (size_t)K, NULL);
            int e = 0;
            size_t bad;
            if (hsdr_lns8_auto_prescale(x, (size_t)K, &e, &bad) != 0 || hsdr_lns8_encode(x, (size_t)K, e, codes, &bad)) {
                fprintf(stderr, "hsdr states: encoding failed at element %zu\n", bad);
                free(x), free(codes), free(q), free(s128.v), free(s64.v);
                return -1;
            }
            emin = e < emin ? e : emin;
            emax = e > emax ? e : emax;
            for (int g = 0; g < K / 128; g++) {
                hsdr_stateset128 s;
                hsdr_stateset128_build(codes + 128 * g, &s);
                s128.v[s128.n++] = s.n_occupied;
            }
            for (int g = 0; g < K / 64; g++) {
                hsdr_stateset64 s;
                hsdr_stateset64_build(codes + 64 * g, &s);
                s64.v[s64.n++] = s.n_occupied;
            }
            hsdr_q8_0_quantize_x86(x, (size_t)K, q);
            for (int i = 0; i < K; i++) {
                double xl = ldexp(hsdr_lns8_decode(codes[i]), e);
                double xq = (double)hsdr_fp16_to_fp32(q[i / 32].d) * q[i / 32].qs[i % 32];
                err_lns += (xl - x[i]) * (xl - x[i]);
                err_q8 += (xq - x[i]) * (xq - x[i]);
                ref += (double)x[i] * x[i];
            }
        }
        qsort(s128.v, s128.n, sizeof(int), hsdr_cmp_int);
        qsort(s64.v, s64.n, sizeof(int), hsdr_cmp_int);
        double rl = sqrt(err_lns / ref), rq = sqrt(err_q8 / ref);
        const char *name = hsdr_dist_name((hsdr_dist)di);
        if (opt->json) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "distribution", name);
            cJSON_AddNumberToObject(row, "K", K);
            cJSON_AddNumberToObject(row, "vectors", opt->vectors);
            cJSON_AddNumberToObject(row, "seed", (double)opt->seed);
            cJSON_AddNumberToObject(row, "states128_mean", mean(&s128));
            cJSON_AddNumberToObject(row, "states128_p5", percentile(&s128, 0.05));
            cJSON_AddNumberToObject(row, "states128_p95", percentile(&s128, 0.95));
            cJSON_AddNumberToObject(row, "states64_mean", mean(&s64));
            cJSON_AddNumberToObject(row, "states64_p5", percentile(&s64, 0.05));
            cJSON_AddNumberToObject(row, "states64_p95", percentile(&s64, 0.95));
            cJSON_AddNumberToObject(row, "lns8_rel_rms_error", rl);
            cJSON_AddNumberToObject(row, "q8_0_rel_rms_error", rq);
            cJSON_AddNumberToObject(row, "prescale_min", emin);
            cJSON_AddNumberToObject(row, "prescale_max", emax);
            cJSON_AddItemToObject(row, "hist128", histogram(&s128, 128));
            cJSON_AddItemToObject(row, "hist64", histogram(&s64, 64));
            char *txt = cJSON_PrintUnformatted(row);
            fprintf(out, "%s\n", txt ? txt : "{}");
            cJSON_free(txt);
            cJSON_Delete(row);
        } else {
            fprintf(out, "%-12s | %6.1f %5d %5d | %6.1f %5d %5d | %-13.3e | %-13.3e | %d..%d\n", name, mean(&s128),
                    percentile(&s128, 0.05), percentile(&s128, 0.95), mean(&s64), percentile(&s64, 0.05),
                    percentile(&s64, 0.95), rl, rq, emin, emax);
        }
    }
    free(x), free(codes), free(q), free(s128.v), free(s64.v);
    return 0;
}
