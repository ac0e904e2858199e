/* `hsdr quality --gguf FILE [--activations PATH]` (quality.h): the error of every numeric family on REAL weights x
 * REAL activations, one GEMV at a time. For each kept ternary tensor of the file (gguf_model.h; --tensors globs)
 * with an activation set (activations.h; the set named after the tensor), for each token of the set: the exact
 * result (the reference's double-double GEMV on the fp32 activations), then every selected variant's own timed
 * kernel (each validated first on fresh inputs of the tensor's shape, as the synthetic study does; a variant that
 * fails never runs). Per tensor and path, over the tokens: NMSE = sum (y - exact)^2 / sum exact^2 (pooled), the
 * maximum relative error max_r |y_r - exact_r| / max_r |exact_r| (per token, then the largest: relative to the
 * output's scale, since single rows near 0 make per-row ratios meaningless), and the cosine (mean and minimum over
 * tokens); per path, the same pooled over every tensor. Without --activations the activations are modelled: the
 * bonsai distribution at each tensor's width (drawn at the next multiple of 1024, the first K kept), --tokens per
 * tensor, and the output says so. Output: a table, and with --json the schema hsdr-quality/1 with "synthetic":
 * false and the "real" section (docs/results-schema.md). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "case.h"
#include "gguf_model.h"
#include "inputs.h"
#include "inspect.h"
#include "machine.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "quality.h"
#include "rng.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

#define STATESET_R 32 /* rows per activation state set, as in quality.c */

typedef struct {
    double err, ref;         /* pooled squared error and reference energy */
    double max_rel, cos_sum, cos_min;
    int tokens;
} metric;

typedef struct {
    const hsdr_gguf_gemv *g;
    const float *x;          /* T x K activations */
    int T;
    const char *source;      /* the set's path, or "modelled bonsai" */
    metric *m;               /* per path */
} job;

static void metric_init(metric *m)
{
    *m = (metric){.cos_min = INFINITY};
}

static void metric_add(metric *m, const double *y, const double *ex, int N)
{
    double e = 0, r = 0, ab = 0, aa = 0, bb = 0, dmax = 0, emax = 0;
    for (int i = 0; i < N; i++) {
        double d = y[i] - ex[i];
        e += d * d, r += ex[i] * ex[i];
        ab += y[i] * ex[i], aa += y[i] * y[i], bb += ex[i] * ex[i];
        dmax = fabs(d) > dmax ? fabs(d) : dmax;
        emax = fabs(ex[i]) > emax ? fabs(ex[i]) : emax;
    }
    double cos = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
    double rel = emax > 0 ? dmax / emax : (dmax > 0 ? INFINITY : 0.0);
    m->err += e, m->ref += r;
    m->max_rel = rel > m->max_rel ? rel : m->max_rel;
    m->cos_sum += cos;
    m->cos_min = cos < m->cos_min ? cos : m->cos_min;
    m->tokens++;
}

static void metric_merge(metric *a, const metric *b)
{
    a->err += b->err, a->ref += b->ref, a->cos_sum += b->cos_sum, a->tokens += b->tokens;
    a->max_rel = b->max_rel > a->max_rel ? b->max_rel : a->max_rel;
    a->cos_min = b->cos_min < a->cos_min ? b->cos_min : a->cos_min;
}

static double nmse_of(const metric *m)
{
    return m->ref > 0 ? m->err / m->ref : (m->err > 0 ? INFINITY : 0.0);
}

static void metric_json(cJSON *o, const metric *m)
{
    cJSON_AddNumberToObject(o, "tokens", m->tokens);
    cJSON_AddNumberToObject(o, "nmse", nmse_of(m));
    cJSON_AddNumberToObject(o, "max_rel_error", m->max_rel);
    cJSON_AddNumberToObject(o, "cos_mean", m->tokens ? m->cos_sum / m->tokens : 0.0);
    cJSON_AddNumberToObject(o, "cos_min", m->tokens ? m->cos_min : 0.0);
}

typedef struct {
    const hsdr_gguf_gemv *g;
    const float *x;
    double *y;
} exact_arg;

static void exact_fn(int tid, int nthreads, void *arg)
{
    exact_arg *a = arg;
    int r0 = (int)((long)a->g->N * tid / nthreads), r1 = (int)((long)a->g->N * (tid + 1) / nthreads);
    size_t row = (size_t)(a->g->K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
    if (r1 > r0)
        hsdr_matvec_exact(a->g->W + row * r0, a->x, a->g->K, r1 - r0, a->y + r0, NULL);
}

/* Modelled activations: T bonsai vectors of width K (drawn at the next multiple of 1024, the first K kept). */
static float *modelled_x(int K, int T, uint64_t seed)
{
    const int W = (K + 1023) / 1024 * 1024;
    float *x = malloc(sizeof(float) * (size_t)K * T), *tmp = malloc(sizeof(float) * (size_t)W);
    if (!x || !tmp) {
        free(x), free(tmp);
        return NULL;
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    for (int t = 0; t < T; t++) {
        hsdr_dist_fill(HSDR_DIST_BONSAI, &rng, tmp, (size_t)W, NULL);
        memcpy(x + (size_t)t * K, tmp, sizeof(float) * (size_t)K);
    }
    free(tmp);
    return x;
}

static int write_json(const hsdr_quality_options *o, const hsdr_gguf_model *m, const hsdr_activations *acts,
                      const job *jobs, int nj, const hsdr_variant **vs, const int *failed, int nv)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "hsdr-quality/1");
    cJSON_AddBoolToObject(doc, "synthetic", 0);
    cJSON_AddNumberToObject(doc, "seed", (double)o->seed);
    cJSON_AddNumberToObject(doc, "flns_F", o->F);
    cJSON_AddNumberToObject(doc, "flns_b", o->b);
    cJSON_AddNumberToObject(doc, "threads", o->threads);
    cJSON_AddItemToObject(doc, "context", hsdr_machine_context());
    cJSON *real = cJSON_AddObjectToObject(doc, "real");
    cJSON_AddStringToObject(real, "gguf", m->path);
    cJSON_AddStringToObject(real, "tensor_globs", o->tensors ? o->tensors : "");
    cJSON_AddStringToObject(real, "activations", acts ? acts->path : "");
    cJSON_AddStringToObject(real, "activations_source", acts ? "captured" : "modelled bonsai");
    cJSON_AddStringToObject(real, "exact", "fp32 activations (not quantized) into the double-double reference GEMV");
    cJSON *tarr = cJSON_AddArrayToObject(real, "tensors");
    char buf[96], hash[17];
    for (int j = 0; j < nj; j++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", jobs[j].g->name);
        cJSON_AddStringToObject(t, "type", gguf_ggml_type_name(jobs[j].g->type));
        cJSON_AddNumberToObject(t, "layer", jobs[j].g->layer);
        cJSON_AddNumberToObject(t, "K", jobs[j].g->K);
        cJSON_AddNumberToObject(t, "N", jobs[j].g->N);
        cJSON_AddNumberToObject(t, "T", jobs[j].T);
        cJSON_AddStringToObject(t, "activations", jobs[j].source);
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)hsdr_inspect_hash(
                     (const uint8_t *)jobs[j].x, sizeof(float) * (uint64_t)jobs[j].T * jobs[j].g->K));
        cJSON_AddStringToObject(t, "activations_hash", hash);
        cJSON *pa = cJSON_AddArrayToObject(t, "paths");
        for (int i = 0; i < nv; i++) {
            if (failed[i])
                continue;
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "variant", vs[i]->name);
            cJSON_AddStringToObject(p, "family", vs[i]->family);
            metric_json(p, &jobs[j].m[i]);
            cJSON_AddItemToArray(pa, p);
        }
        cJSON_AddItemToArray(tarr, t);
    }
    cJSON *fam = cJSON_AddArrayToObject(real, "families");
    for (int i = 0; i < nv; i++) {
        if (failed[i])
            continue;
        metric all;
        metric_init(&all);
        for (int j = 0; j < nj; j++)
            metric_merge(&all, &jobs[j].m[i]);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "variant", vs[i]->name);
        cJSON_AddStringToObject(p, "family", vs[i]->family);
        cJSON_AddStringToObject(p, "activations", hsdr_quality_activations(vs[i], o->F, o->b, buf, sizeof buf));
        cJSON_AddNumberToObject(p, "tensors", nj);
        metric_json(p, &all);
        cJSON_AddItemToArray(fam, p);
    }
    char *txt = cJSON_Print(doc);
    cJSON_Delete(doc);
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->json_path);
    FILE *f = fopen(tmp, "w");
    int ok = f && txt && fputs(txt, f) >= 0 && fputc('\n', f) != EOF;
    ok = (f && fclose(f) == 0) && ok;
    ok = ok && rename(tmp, o->json_path) == 0;
    if (!ok) {
        fprintf(stderr, "hsdr quality: cannot write %s\n", o->json_path);
        remove(tmp);
    }
    cJSON_free(txt);
    return ok ? 0 : -1;
}

/* The jobs: kept tensors with activations (checked against the tensor's width). 0, or exit status 2 (printed). */
static int plan(const hsdr_quality_options *o, const hsdr_gguf_model *m, const hsdr_activations *acts, job *jobs,
                int *nj, int nv)
{
    *nj = 0;
    for (size_t i = 0; i < m->n; i++) {
        const hsdr_gguf_gemv *g = &m->gemv[i];
        job *j = &jobs[*nj];
        if (acts) {
            const hsdr_act_set *s = hsdr_activations_find(acts, g->name);
            if (!s) {
                printf("  %s: no activation set (%s.npy): skipped\n", g->name, g->name);
                continue;
            }
            if (s->K != g->K) {
                fprintf(stderr, "hsdr quality: %s: shape (%d, %d): K = %d, but tensor %s has ne0 = %d\n", s->path,
                        s->T, s->K, s->K, g->name, g->K);
                return HSDR_EXIT_USAGE;
            }
            *j = (job){.g = g, .x = s->x, .T = s->T, .source = s->path};
        } else {
            float *x = modelled_x(g->K, o->tokens, o->seed + i);
            if (!x) {
                fprintf(stderr, "hsdr quality: out of memory for %s's activations\n", g->name);
                return HSDR_EXIT_USAGE;
            }
            *j = (job){.g = g, .x = x, .T = o->tokens, .source = "modelled bonsai"};
        }
        j->m = malloc(sizeof(metric) * (size_t)nv);
        if (!j->m) {
            fprintf(stderr, "hsdr quality: out of memory\n");
            return HSDR_EXIT_USAGE;
        }
        for (int v = 0; v < nv; v++)
            metric_init(&j->m[v]);
        (*nj)++;
    }
    if (acts)
        for (size_t i = 0; i < acts->n; i++)
            if (!hsdr_gguf_model_find(m, acts->sets[i].name)) {
                char with[600];
                snprintf(with, sizeof with, "%s.weight", acts->sets[i].name);
                if (!hsdr_gguf_model_find(m, with))
                    printf("  %s: no kept ternary tensor of that name: not used\n", acts->sets[i].path);
            }
    if (*nj == 0) {
        fprintf(stderr, "hsdr quality: %s: no kept tensor of %s has an activation set (NAME.weight.npy)\n",
                acts ? acts->path : "", m->path);
        return HSDR_EXIT_USAGE;
    }
    return 0;
}

/* One tensor on every path. 0, or -1 when out of memory (printed). */
static int run_job(const hsdr_quality_options *o, hsdr_pool *pool, job *j, const hsdr_variant **vs, int *failed,
                   int nv, float *xbuf, double *y)
{
    const hsdr_gguf_gemv *g = j->g;
    const int K = g->K, N = g->N;
    double *exact = malloc(sizeof(double) * (size_t)N * j->T);
    if (!exact) {
        fprintf(stderr, "hsdr quality: out of memory\n");
        return -1;
    }
    for (int t = 0; t < j->T; t++) {
        memcpy(xbuf, j->x + (size_t)t * K, sizeof(float) * (size_t)K);
        exact_arg a = {g, xbuf, exact + (size_t)t * N};
        hsdr_pool_run(pool, exact_fn, &a);
    }
    for (int i = 0; i < nv; i++) {
        if (failed[i])
            continue;
        hsdr_inputs in = {.K = K, .N = N, .W = (uint8_t *)g->W, .x = xbuf,
                          .weight_bytes = (size_t)N * (K / HSDR_QK) * HSDR_PTQ1_0_BYTES};
        hsdr_case c = {.variant = vs[i], .K = K, .N = N, .R = N < STATESET_R ? N : STATESET_R, .threads = o->threads,
                       .dist = HSDR_DIST_GAUSSIAN, .mode = HSDR_MODE_HOT, .flns_F = o->F, .flns_b = o->b};
        hsdr_timing_setup ts;
        char err[512];
        if (hsdr_timing_setup_create(&ts, &c, &in, o->threads, HSDR_MODE_HOT, vs[i]->device ? NULL : pool, NULL, err,
                                     sizeof err) != 0) {
            printf("%s: ERROR on %s: %s\n", vs[i]->name, g->name, err);
            failed[i] = 1;
            continue;
        }
        for (int t = 0; t < j->T && !failed[i]; t++) {
            memcpy(xbuf, j->x + (size_t)t * K, sizeof(float) * (size_t)K);
            if (hsdr_timing_run_pool(&ts) != 0) {
                fprintf(stderr, "hsdr quality: %s: %s\n", vs[i]->name, ts.err);
                failed[i] = 1;
                break;
            }
            for (int r = 0; r < N; r++)
                y[r] = ts.exec.y[r];
            metric_add(&j->m[i], y, exact + (size_t)t * N, N);
        }
        hsdr_timing_setup_free(&ts);
    }
    free(exact);
    return 0;
}

int hsdr_quality_real(const hsdr_quality_options *o)
{
    char err[1024];
    hsdr_gguf_model m;
    if (hsdr_gguf_model_open(&m, o->gguf, o->tensors, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr quality: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    hsdr_activations acts_store, *acts = NULL;
    if (o->activations) {
        if (hsdr_activations_open(&acts_store, o->activations, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr quality: %s\n", err);
            hsdr_gguf_model_close(&m);
            return HSDR_EXIT_USAGE;
        }
        acts = &acts_store;
    }
    const hsdr_variant **vs = NULL;
    int nv = 0, nj = 0, rc = HSDR_EXIT_OK, maxK = 0, maxN = 0;
    job *jobs = calloc(m.n, sizeof *jobs);
    int sel = jobs ? hsdr_quality_variants(o->variants, &vs, &nv) : -1;
    int *failed = sel == 0 ? calloc((size_t)nv, sizeof *failed) : NULL;
    hsdr_pool *pool = NULL;
    float *xbuf = NULL;
    double *y = NULL;
    if (sel != 0 || !failed) {
        if (sel != 1)
            fprintf(stderr, "hsdr quality: out of memory\n");
        rc = HSDR_EXIT_USAGE;
        goto out;
    }
    printf("hsdr quality: REAL weights from %s (%zu ternary tensor(s) kept%s%s), activations %s%s; %d thread(s); "
           "paths:", m.path, m.n, o->tensors ? " by " : "", o->tensors ? o->tensors : "",
           acts ? "captured in " : "MODELLED (the bonsai distribution at each tensor's width, not real): ",
           acts ? acts->path : "--tokens per tensor", o->threads);
    for (int i = 0; i < nv; i++)
        printf(" %s", vs[i]->name);
    printf("\n");
    if ((rc = plan(o, &m, acts, jobs, &nj, nv)) != 0)
        goto out;
    for (int j = 0; j < nj; j++) {
        maxK = jobs[j].g->K > maxK ? jobs[j].g->K : maxK;
        maxN = jobs[j].g->N > maxN ? jobs[j].g->N : maxN;
    }
    pool = hsdr_pool_create(o->threads, 1, err, sizeof err);
    xbuf = malloc(sizeof(float) * (size_t)maxK);
    y = malloc(sizeof(double) * (size_t)maxN);
    if (!pool || !xbuf || !y) {
        fprintf(stderr, "hsdr quality: %s\n", pool ? "out of memory" : err);
        rc = HSDR_EXIT_USAGE;
        goto out;
    }
    /* correctness gates use: a variant that fails validation on the first tensor's shape never runs */
    for (int i = 0; i < nv; i++) {
        hsdr_validation val;
        const int K = jobs[0].g->K, N = jobs[0].g->N;
        hsdr_validate_sample(vs[i], K, N, K % 1024 == 0 ? HSDR_DIST_BONSAI : HSDR_DIST_GAUSSIAN, o->seed, o->F, o->b,
                             &val);
        if (!val.passed) {
            printf("%s: FAILED VALIDATION (not run): %s\n", vs[i]->name, val.detail);
            failed[i] = 1;
            rc = HSDR_EXIT_FAIL;
        }
    }
    for (int j = 0; j < nj; j++)
        if (run_job(o, pool, &jobs[j], vs, failed, nv, xbuf, y) != 0) {
            rc = HSDR_EXIT_USAGE;
            goto out;
        }
    for (int i = 0; i < nv; i++)
        if (failed[i] && rc == HSDR_EXIT_OK)
            rc = HSDR_EXIT_FAIL;
    printf("\n%-28s %6s %6s %4s  %-16s %11s %11s %11s %11s\n", "tensor", "K", "N", "T", "path", "NMSE", "max rel",
           "cos mean", "cos min");
    for (int j = 0; j < nj; j++)
        for (int i = 0; i < nv; i++) {
            if (failed[i])
                continue;
            const metric *mt = &jobs[j].m[i];
            printf("%-28s %6d %6d %4d  %-16s %11.3e %11.3e %11.8f %11.8f\n", jobs[j].g->name, jobs[j].g->K,
                   jobs[j].g->N, jobs[j].T, vs[i]->name, nmse_of(mt), mt->max_rel, mt->cos_sum / mt->tokens,
                   mt->cos_min);
        }
    printf("\n%-16s %-10s %-30s %11s %11s %11s %11s\n", "path", "family", "activations", "NMSE", "max rel",
           "cos mean", "cos min");
    for (int i = 0; i < nv; i++) {
        char buf[96];
        if (failed[i]) {
            printf("%-16s FAILED (not run)\n", vs[i]->name);
            continue;
        }
        metric all;
        metric_init(&all);
        for (int j = 0; j < nj; j++)
            metric_merge(&all, &jobs[j].m[i]);
        printf("%-16s %-10s %-30s %11.3e %11.3e %11.8f %11.8f\n", vs[i]->name, vs[i]->family,
               hsdr_quality_activations(vs[i], o->F, o->b, buf, sizeof buf), nmse_of(&all), all.max_rel,
               all.cos_sum / all.tokens, all.cos_min);
    }
    printf("per GEMV against the exact path (fp32 activations, double-double GEMV); NMSE pooled over tokens, max rel = "
           "largest |error| / largest |exact| of a token; %s activations\n", acts ? "REAL" : "MODELLED");
    if (o->json_path && write_json(o, &m, acts, jobs, nj, vs, failed, nv) != 0)
        rc = HSDR_EXIT_USAGE;
out:
    for (int j = 0; j < nj; j++) {
        if (!acts)
            free((float *)jobs[j].x);
        free(jobs[j].m);
    }
    if (!acts && jobs && nj < (int)m.n && jobs[nj].x) /* a job plan() filled before failing */
        free((float *)jobs[nj].x), free(jobs[nj].m);
    free(jobs), free(vs), free(failed), free(xbuf), free(y);
    if (pool)
        hsdr_pool_destroy(pool);
    if (acts)
        hsdr_activations_close(acts);
    hsdr_gguf_model_close(&m);
    return rc;
}
