#include "quality.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "fp16.h"
#include "hadamard.h"
#include "inputs.h"
#include "machine.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "shapes.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

/* ---- the synthetic network's constants (documented in the JSON "pipeline" text) ---- */
#define QTAB_BITS 16                 /* Student-t3 quantile table: 2^16 equiprobable cells */
#define LOGIT_STD 3.0                /* head gain: logits of unit-RMS inputs get about this standard deviation */
#define OUTLIER_PER 200              /* one persistent outlier channel per 200 hidden channels ... */
#define OUTLIER_MIN 20.0             /* ... of magnitude 20..60 (unit-RMS body), like the bonsai distribution */
#define OUTLIER_SPAN 40.0
#define RMS_EPS 1e-6
#define GAIN_ROWS 64                 /* rows whose energy sets a tensor's gain (rows are i.i.d.) */
#define STATESET_R 32                /* rows per activation state set (cuda.stateset takes at most 32): no output changes */

typedef struct {
    int K, N;
    uint8_t *W;    /* N x K/128 PTQ1_0 blocks */
    double gain;   /* fp64 factor on the GEMV output, the same for every path */
    const int8_t *signs; /* fold signs of this tensor's input (K entries) */
} tensor;

/* One synthetic network: tensors 3l (ffn_gate), 3l+1 (ffn_up), 3l+2 (ffn_down) of layer l, then the head. */
typedef struct {
    int H, F, V, L, T;
    tensor *t;
    int8_t *signs;   /* L x (H + F) + H: per layer the H-wide then the F-wide vector, then the head's */
    int *outlier;    /* persistent outlier channels of the inputs */
    int n_outlier;
    double nonzero;  /* fraction of nonzero weights over all tensors */
} network;

typedef struct {
    const char *name;          /* "exact" or the variant's name */
    const hsdr_variant *v;     /* NULL: the exact path */
    hsdr_timing_setup *ts;     /* T setups (variant paths, one network at a time) */
    /* samples (seed-major, then token): (L + 1) cos / nmse values each (layers, then logits), kl, top-1 */
    double *cos, *nmse, *kl;
    int *top1;
    int n;                     /* samples so far */
    int failed;                /* failed validation: never run */
    int device_failed;         /* a device call failed during the study: its numbers are not reported */
} path;

typedef struct {
    hsdr_quality_options o;
    const hsdr_model *model;
    int H, F;                  /* the model's hidden and FFN widths */
    hsdr_pool *pool;
    network net;
    float *qtab;
    float *xf;                 /* max(H, F) fp32 activations: every GEMV's input */
    /* forward scratch */
    double *x, *g, *u, *logits;
} quality_run;

/* ---------------------------------------------------------------- options */

/* Default paths: one variant per family with distinct numerics (production Q8_0, direct LNS8, fLNS, Q15.16), the
 * CPU kernel where it runs here, else the reference. The state-set families compute direct's exact A[8] and are
 * left out by default (select them with --variants). */
static const char *const default_families[] = {"production", "direct", "flns", "q1516"};

static int runnable(const hsdr_variant *v)
{
    return hsdr_variant_timed(v) && !hsdr_variant_unavailable(v);
}

int hsdr_quality_variants(const char *variants, const hsdr_variant ***out, int *count)
{
    const hsdr_variant **p = calloc(hsdr_registry_count + 1, sizeof *p);
    if (!p)
        return -1;
    int n = 0;
    if (variants) {
        for (size_t i = 0; i < hsdr_registry_count; i++) {
            const hsdr_variant *v = &hsdr_registry[i];
            if (hsdr_glob_list_match(variants, v->name) && runnable(v))
                p[n++] = v;
        }
    } else {
        for (size_t f = 0; f < sizeof default_families / sizeof default_families[0]; f++) {
            const hsdr_variant *pick = NULL;
            for (size_t i = 0; i < hsdr_registry_count; i++) {
                const hsdr_variant *v = &hsdr_registry[i];
                if (strcmp(v->family, default_families[f]) != 0 || !runnable(v))
                    continue;
                if (!pick || (strcmp(v->backend, "cpu") == 0 && strcmp(pick->backend, "cpu") != 0))
                    pick = v;
            }
            if (pick)
                p[n++] = pick;
        }
    }
    if (n == 0) {
        fprintf(stderr, "hsdr quality: --variants '%s' selects no variant that runs here (see hsdr list)\n",
                variants ? variants : "");
        free(p);
        return 1;
    }
    *out = p;
    *count = n;
    return 0;
}

static int select_paths(const hsdr_quality_options *o, path **out, int *count)
{
    const hsdr_variant **vs = NULL;
    int nv = 0, rc = hsdr_quality_variants(o->variants, &vs, &nv);
    if (rc != 0)
        return rc;
    path *p = calloc((size_t)nv + 1, sizeof *p);
    if (!p) {
        free(vs);
        return -1;
    }
    p[0] = (path){.name = "exact"};
    for (int i = 0; i < nv; i++)
        p[i + 1] = (path){.name = vs[i]->name, .v = vs[i]};
    free(vs);
    *out = p;
    *count = nv + 1;
    return 0;
}

const char *hsdr_quality_activations(const hsdr_variant *v, int F, int b, char *buf, size_t n)
{
    if (!v)
        snprintf(buf, n, "fp32 (not quantized), double-double GEMV");
    else if (strcmp(v->family, "production") == 0 || strcmp(v->family, "baseline") == 0)
        snprintf(buf, n, "%s", (v->outputs & HSDR_OUT_Y_Q8_1) ? "Q8_1" : "Q8_0"); /* the CUDA kernels: Q8_1 */
    else if (strcmp(v->family, "flns") == 0)
        snprintf(buf, n, "LNS8, fLNS tree F=%d b=%d", F, b);
    else if (strcmp(v->family, "q1516") == 0)
        snprintf(buf, n, "LNS8, Q15.16 per group");
    else if (strcmp(v->family, "exact") == 0)
        snprintf(buf, n, "fp32 (not quantized)");
    else
        snprintf(buf, n, "LNS8, exact A[8]");
    return buf;
}

static const char *activations_of(const path *p, char *buf, size_t n, const hsdr_quality_options *o)
{
    return hsdr_quality_activations(p->v, o->F, o->b, buf, n);
}

/* ---------------------------------------------------------------- the synthetic network */

/* Student-t (3 degrees of freedom) CDF, closed form. */
static double t3_cdf(double t)
{
    const double s3 = sqrt(3.0);
    return 0.5 + (t / (s3 * (1.0 + t * t / 3.0)) + atan(t / s3)) / M_PI;
}

/* qtab[i] = the Student-t3 quantile at (i + 1/2) / 2^16, unit variance: one table lookup per weight draws from the
 * distribution discretized to 2^16 equiprobable values (the reference's Student-t sampler costs ~170 ns a value, the
 * table ~1 ns; the quantizer only sees |w| / max |w| of 128 values, which the discretization hardly changes). */
static float *t3_table(void)
{
    const int n = 1 << QTAB_BITS;
    float *q = malloc(sizeof(float) * (size_t)n);
    if (!q)
        return NULL;
    for (int i = 0; i < n; i++) {
        double p = (i + 0.5) / n, lo = -1e4, hi = 1e4;
        for (int it = 0; it < 80; it++) {
            double mid = 0.5 * (lo + hi);
            if (t3_cdf(mid) < p)
                lo = mid;
            else
                hi = mid;
        }
        q[i] = (float)(0.5 * (lo + hi) / sqrt(3.0));
    }
    return q;
}

typedef struct {
    tensor *t;
    uint64_t seed;
    const float *qtab;
    int failed;
} gen_arg;

/* Rows of one tensor, split over the pool: row r draws its floats from its own stream (seed, r), so the weights do
 * not depend on the thread count; the reference quantizer packs each 128-block. */
static void gen_fn(int tid, int nthreads, void *arg)
{
    gen_arg *a = arg;
    const int K = a->t->K, N = a->t->N, nb = K / HSDR_QK;
    int r0 = (int)((long)N * tid / nthreads), r1 = (int)((long)N * (tid + 1) / nthreads);
    float *w = malloc(sizeof(float) * (size_t)K);
    if (!w) {
        a->failed = 1;
        return;
    }
    for (int r = r0; r < r1; r++) {
        hsdr_rng rng;
        hsdr_rng_seed(&rng, a->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(r + 1)));
        for (int k = 0; k < K; k += 4) {
            uint64_t u = hsdr_rng_u64(&rng);
            for (int j = 0; j < 4; j++)
                w[k + j] = a->qtab[(u >> (16 * j)) & 0xffff];
        }
        for (int g = 0; g < nb; g++)
            hsdr_ptq1_0_quantize(w + HSDR_QK * g, a->t->W + ((size_t)r * nb + g) * HSDR_PTQ1_0_BYTES);
    }
    free(w);
}

/* Mean squared row norm of the decoded weights over the first rows, and the nonzero count there. */
static double row_energy(const tensor *t, long *nonzero, long *counted)
{
    const int nb = t->K / HSDR_QK, rows = t->N < GAIN_ROWS ? t->N : GAIN_ROWS;
    double e = 0.0;
    for (int r = 0; r < rows; r++)
        for (int g = 0; g < nb; g++) {
            const uint8_t *blk = t->W + ((size_t)r * nb + g) * HSDR_PTQ1_0_BYTES;
            int8_t q[HSDR_QK];
            hsdr_ptq1_0_unpack(blk, q, HSDR_DECODE_INT);
            double d = hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
            int nz = 0;
            for (int i = 0; i < HSDR_QK; i++)
                nz += q[i] != 0;
            e += d * d * nz;
            *nonzero += nz;
        }
    *counted += (long)rows * t->K;
    return e / rows;
}

static void network_free(network *n)
{
    if (n->t)
        for (int i = 0; i < n->T; i++)
            free(n->t[i].W);
    free(n->t);
    free(n->signs);
    free(n->outlier);
    memset(n, 0, sizeof *n);
}

/* A fresh network of seed s. 0, or -1 out of memory. */
static int network_build(quality_run *q, uint64_t s)
{
    network *n = &q->net;
    network_free(n);
    const int H = q->H, F = q->F;
    n->H = H, n->F = F, n->V = q->o.vocab, n->L = q->o.layers, n->T = 3 * n->L + 1;
    n->t = calloc((size_t)n->T, sizeof *n->t);
    n->signs = malloc((size_t)n->L * (H + F) + H);
    n->n_outlier = H / OUTLIER_PER + 1;
    n->outlier = malloc(sizeof(int) * (size_t)n->n_outlier);
    if (!n->t || !n->signs || !n->outlier)
        return -1;
    hsdr_rng rng;
    hsdr_rng_seed(&rng, s);
    for (size_t i = 0; i < (size_t)n->L * (H + F) + H; i++)
        n->signs[i] = (hsdr_rng_u64(&rng) >> 63) ? -1 : 1;
    for (int i = 0; i < n->n_outlier; i++)
        n->outlier[i] = (int)hsdr_rng_below(&rng, (uint32_t)H);
    long nonzero = 0, counted = 0;
    for (int i = 0; i < n->T; i++) {
        tensor *t = &n->t[i];
        int l = i / 3, kind = i < 3 * n->L ? i % 3 : 3;
        const int8_t *layer_signs = n->signs + (size_t)l * (H + F);
        t->K = kind == 2 ? F : H;
        t->N = kind == 3 ? n->V : kind == 2 ? H : F;
        t->signs = kind == 3 ? n->signs + (size_t)n->L * (H + F) : kind == 2 ? layer_signs + H : layer_signs;
        t->W = malloc((size_t)t->N * (t->K / HSDR_QK) * HSDR_PTQ1_0_BYTES);
        if (!t->W)
            return -1;
        gen_arg a = {t, hsdr_rng_u64(&rng), q->qtab, 0};
        hsdr_pool_run(q->pool, gen_fn, &a);
        if (a.failed)
            return -1;
        t->gain = (kind == 3 ? LOGIT_STD : 1.0) / sqrt(row_energy(t, &nonzero, &counted));
    }
    n->nonzero = (double)nonzero / (double)counted;
    return 0;
}

/* ---------------------------------------------------------------- the forward pass */

typedef struct {
    const tensor *t;
    const float *x;
    double *y;
} exact_arg;

static void exact_fn(int tid, int nthreads, void *arg)
{
    exact_arg *a = arg;
    int r0 = (int)((long)a->t->N * tid / nthreads), r1 = (int)((long)a->t->N * (tid + 1) / nthreads);
    size_t row = (size_t)(a->t->K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
    if (r1 > r0)
        hsdr_matvec_exact(a->t->W + row * r0, a->x, a->t->K, r1 - r0, a->y + r0, NULL);
}

/* y = gain * W x for tensor i of path p; x = q->xf (fp32, K entries). */
static void gemv(quality_run *q, path *p, int i, double *y)
{
    const tensor *t = &q->net.t[i];
    if (!p->v) {
        exact_arg a = {t, q->xf, y};
        hsdr_pool_run(q->pool, exact_fn, &a);
    } else {
        if (hsdr_timing_run_pool(&p->ts[i]) != 0) {
            fprintf(stderr, "hsdr quality: %s: %s\n", p->name, p->ts[i].err);
            p->device_failed = 1;
        }
        for (int r = 0; r < t->N; r++)
            y[r] = p->ts[i].exec.y[r];
    }
    for (int r = 0; r < t->N; r++)
        y[r] *= t->gain;
}

/* xf = fold(RMSNorm(x)) for tensor i's input (the fold leaves a width that is not a multiple of 1024 alone). */
static void norm_fold(quality_run *q, const double *x, int K, int i)
{
    double ss = 0.0;
    for (int k = 0; k < K; k++)
        ss += x[k] * x[k];
    double s = 1.0 / sqrt(ss / K + RMS_EPS);
    for (int k = 0; k < K; k++)
        q->xf[k] = (float)(x[k] * s);
    hsdr_hadamard_fold(q->xf, q->net.t[i].signs, (size_t)K);
}

/* One token through the network on path p: layer outputs (L x H) and logits (V). */
static void forward(quality_run *q, path *p, const double *x0, double *layer_out, double *logits)
{
    const network *n = &q->net;
    memcpy(q->x, x0, sizeof(double) * (size_t)n->H);
    for (int l = 0; l < n->L; l++) {
        norm_fold(q, q->x, n->H, 3 * l);
        gemv(q, p, 3 * l, q->g);
        gemv(q, p, 3 * l + 1, q->u);
        for (int k = 0; k < n->F; k++) /* SwiGLU: SiLU(gate) * up, the FFN's activation (no RMSNorm) */
            q->xf[k] = (float)(q->g[k] / (1.0 + exp(-q->g[k])) * q->u[k]);
        hsdr_hadamard_fold(q->xf, n->t[3 * l + 2].signs, (size_t)n->F);
        gemv(q, p, 3 * l + 2, q->g);
        for (int k = 0; k < n->H; k++)
            q->x[k] += q->g[k];
        memcpy(layer_out + (size_t)l * n->H, q->x, sizeof(double) * (size_t)n->H);
    }
    norm_fold(q, q->x, n->H, n->T - 1);
    gemv(q, p, n->T - 1, logits);
}

/* ---------------------------------------------------------------- metrics */

static double cosine(const double *a, const double *b, int n)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < n; i++)
        ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

/* sum (a - ref)^2 / sum ref^2 */
static double nmse(const double *a, const double *ref, int n)
{
    double e = 0, r = 0;
    for (int i = 0; i < n; i++)
        e += (a[i] - ref[i]) * (a[i] - ref[i]), r += ref[i] * ref[i];
    return r > 0 ? e / r : (e > 0 ? INFINITY : 0.0);
}

static double log_sum_exp(const double *z, int n)
{
    double m = -INFINITY, s = 0.0;
    for (int i = 0; i < n; i++)
        m = z[i] > m ? z[i] : m;
    for (int i = 0; i < n; i++)
        s += exp(z[i] - m);
    return m + log(s);
}

/* KL(softmax(ref) || softmax(z)) in nats. */
static double kl_divergence(const double *ref, const double *z, int n)
{
    double lr = log_sum_exp(ref, n), lz = log_sum_exp(z, n), kl = 0.0;
    for (int i = 0; i < n; i++) {
        double lp = ref[i] - lr;
        kl += exp(lp) * (lp - (z[i] - lz));
    }
    return kl > 0 ? kl : 0.0; /* rounding can leave a tiny negative value for identical inputs */
}

static int argmax(const double *z, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (z[i] > z[best])
            best = i;
    return best;
}

/* ---------------------------------------------------------------- output */

typedef struct {
    double mean, min, max;
} summary;

static summary summarize(const double *v, int n, int stride)
{
    summary s = {0.0, INFINITY, -INFINITY};
    for (int i = 0; i < n; i++) {
        double x = v[(size_t)i * stride];
        s.mean += x / n;
        s.min = x < s.min ? x : s.min;
        s.max = x > s.max ? x : s.max;
    }
    return s;
}

static void add_summary(cJSON *o, const char *name, summary s)
{
    char key[32];
    snprintf(key, sizeof key, "%s_mean", name);
    cJSON_AddNumberToObject(o, key, s.mean);
    snprintf(key, sizeof key, "%s_min", name);
    cJSON_AddNumberToObject(o, key, s.min);
    snprintf(key, sizeof key, "%s_max", name);
    cJSON_AddNumberToObject(o, key, s.max);
}

static cJSON *path_json(const quality_run *q, const path *p)
{
    const int L = q->net.L, M = L + 1;
    char buf[96];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->v ? p->v->family : "exact");
    cJSON_AddStringToObject(o, "variant", p->name);
    cJSON_AddStringToObject(o, "family", p->v ? p->v->family : "exact");
    cJSON_AddStringToObject(o, "activations", activations_of(p, buf, sizeof buf, &q->o));
    cJSON *pl = cJSON_AddArrayToObject(o, "per_layer");
    for (int l = 0; l < L; l++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "layer", l);
        add_summary(e, "cos", summarize(p->cos + l, p->n, M));
        add_summary(e, "nmse", summarize(p->nmse + l, p->n, M));
        cJSON_AddItemToArray(pl, e);
    }
    cJSON *fin = cJSON_AddObjectToObject(o, "final");
    add_summary(fin, "cos", summarize(p->cos + L, p->n, M));
    add_summary(fin, "nmse", summarize(p->nmse + L, p->n, M));
    add_summary(fin, "kl", summarize(p->kl, p->n, 1));
    int agree = 0;
    for (int i = 0; i < p->n; i++)
        agree += p->top1[i];
    cJSON_AddNumberToObject(fin, "top1_agreement", p->n ? (double)agree / p->n : 0.0);
    cJSON *samples = cJSON_AddArrayToObject(o, "samples");
    for (int i = 0; i < p->n; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "seed", (double)(q->o.seed + (uint64_t)(i / q->o.tokens)));
        cJSON_AddNumberToObject(s, "token", i % q->o.tokens);
        cJSON_AddItemToObject(s, "cos", cJSON_CreateDoubleArray(p->cos + (size_t)i * M, M));
        cJSON_AddItemToObject(s, "nmse", cJSON_CreateDoubleArray(p->nmse + (size_t)i * M, M));
        cJSON_AddNumberToObject(s, "kl", p->kl[i]);
        cJSON_AddBoolToObject(s, "top1", p->top1[i]);
        cJSON_AddItemToArray(samples, s);
    }
    return o;
}

static const char *pipeline_text(void)
{
    return "SYNTHETIC network on the model's FFN and head shapes. Input per token: Student-t3 channels (unit RMS) "
           "plus persistent outlier channels (one per 200, magnitude 20..60). Per layer: RMSNorm (no gain) -> "
           "signs + WHT-1024 fold (widths not a multiple of 1024 are not folded) -> ffn_gate, ffn_up -> "
           "SiLU(gate) * up -> fold -> ffn_down -> residual add. Then RMSNorm -> fold -> output head -> softmax. "
           "Weights: the reference PTQ1_0 quantizer over i.i.d. Student-t3 floats, one fresh network per seed; each "
           "GEMV output is multiplied by a per-tensor fp64 gain (1, or 3 for the head, over the RMS row norm of the "
           "first 64 rows), the same on every path. Every GEMV input is fp32; the exact path does not quantize it "
           "(double-double reference GEMV), the other paths run the named variant's timed kernel.";
}

static int write_json(const quality_run *q, const path *paths, int np)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "hsdr-quality/1");
    cJSON_AddBoolToObject(doc, "synthetic", 1);
    cJSON_AddStringToObject(doc, "model", q->model->name);
    cJSON *sh = cJSON_AddObjectToObject(doc, "shapes");
    cJSON_AddNumberToObject(sh, "hidden", q->net.H);
    cJSON_AddNumberToObject(sh, "ffn", q->net.F);
    cJSON_AddNumberToObject(sh, "vocab", q->net.V);
    cJSON_AddNumberToObject(sh, "vocab_model", q->model->head.N);
    cJSON_AddNumberToObject(doc, "layers", q->o.layers);
    cJSON_AddNumberToObject(doc, "seeds", q->o.seeds);
    cJSON_AddNumberToObject(doc, "tokens", q->o.tokens);
    cJSON_AddNumberToObject(doc, "seed", (double)q->o.seed);
    cJSON_AddNumberToObject(doc, "flns_F", q->o.F);
    cJSON_AddNumberToObject(doc, "flns_b", q->o.b);
    cJSON_AddNumberToObject(doc, "threads", q->o.threads);
    cJSON_AddNumberToObject(doc, "weight_nonzero_fraction", q->net.nonzero);
    cJSON_AddStringToObject(doc, "pipeline", pipeline_text());
    cJSON_AddItemToObject(doc, "context", hsdr_machine_context());
    cJSON *arr = cJSON_AddArrayToObject(doc, "paths");
    for (int i = 1; i < np; i++)
        if (!paths[i].failed)
            cJSON_AddItemToArray(arr, path_json(q, &paths[i]));
    char *txt = cJSON_Print(doc);
    cJSON_Delete(doc);
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s.tmp", q->o.json_path);
    FILE *f = fopen(tmp, "w");
    int ok = f && txt && fputs(txt, f) >= 0 && fputc('\n', f) != EOF;
    ok = (f && fclose(f) == 0) && ok;
    ok = ok && rename(tmp, q->o.json_path) == 0;
    if (!ok) {
        fprintf(stderr, "hsdr quality: cannot write %s\n", q->o.json_path);
        remove(tmp);
    }
    cJSON_free(txt);
    return ok ? 0 : -1;
}

static void print_table(const quality_run *q, const path *paths, int np)
{
    const int L = q->net.L, M = L + 1;
    printf("\n%-16s %-34s %11s %11s %11s %10s %8s\n", "path", "activations", "layer-1 NMSE", "logits NMSE",
           "logits cos", "KL (nats)", "top-1");
    for (int i = 1; i < np; i++) {
        const path *p = &paths[i];
        char buf[96];
        if (p->failed) {
            printf("%-16s FAILED VALIDATION (not run)\n", p->name);
            continue;
        }
        int agree = 0;
        for (int s = 0; s < p->n; s++)
            agree += p->top1[s];
        printf("%-16s %-34s %11.3e %11.3e %11.7f %10.3e %7.1f%%\n", p->name, activations_of(p, buf, sizeof buf, &q->o),
               summarize(p->nmse + (L - 1), p->n, M).mean, summarize(p->nmse + L, p->n, M).mean,
               summarize(p->cos + L, p->n, M).mean, summarize(p->kl, p->n, 1).mean, 100.0 * agree / p->n);
    }
    printf("means over %d seeds x %d tokens; NMSE and cosine against the exact-activation path; SYNTHETIC weights "
           "(%.1f%% nonzero)\n",
           q->o.seeds, q->o.tokens, 100.0 * q->net.nonzero);
}

/* ---------------------------------------------------------------- the command */

static void input_token(const quality_run *q, hsdr_rng *rng, double *x0)
{
    const int H = q->net.H;
    float *tmp = q->xf;
    hsdr_dist_fill(HSDR_DIST_STUDENT_T3, rng, tmp, (size_t)H, NULL);
    for (int k = 0; k < H; k++)
        x0[k] = tmp[k];
    for (int i = 0; i < q->net.n_outlier; i++)
        x0[q->net.outlier[i]] = (hsdr_rng_uniform(rng) < 0.5 ? -1 : 1) *
                                (OUTLIER_MIN + OUTLIER_SPAN * hsdr_rng_uniform(rng));
}

static int setups_create(quality_run *q, path *p, char *err, size_t errlen)
{
    p->ts = calloc((size_t)q->net.T, sizeof *p->ts);
    if (!p->ts)
        return hsdr_errorf(err, errlen, "out of memory");
    for (int i = 0; i < q->net.T; i++) {
        const tensor *t = &q->net.t[i];
        hsdr_inputs in = {.K = t->K, .N = t->N, .W = t->W, .x = q->xf,
                          .weight_bytes = (size_t)t->N * (t->K / HSDR_QK) * HSDR_PTQ1_0_BYTES};
        hsdr_case c = {.variant = p->v, .K = t->K, .N = t->N, .R = t->N < STATESET_R ? t->N : STATESET_R,
                       .threads = q->o.threads, .dist = HSDR_DIST_GAUSSIAN, .mode = HSDR_MODE_HOT,
                       .flns_F = q->o.F, .flns_b = q->o.b};
        if (hsdr_timing_setup_create(&p->ts[i], &c, &in, q->o.threads, HSDR_MODE_HOT, p->v->device ? NULL : q->pool,
                                     NULL, err, errlen) != 0) {
            for (int j = 0; j < i; j++)
                hsdr_timing_setup_free(&p->ts[j]);
            free(p->ts);
            p->ts = NULL;
            return -1;
        }
    }
    return 0;
}

static void setups_free(quality_run *q, path *p)
{
    for (int i = 0; p->ts && i < q->net.T; i++)
        hsdr_timing_setup_free(&p->ts[i]);
    free(p->ts);
    p->ts = NULL;
}

/* Compare one token's outputs of path p with the exact path's and append the sample. */
static void record(quality_run *q, path *p, const double *lo, const double *lg, const double *ex_lo,
                   const double *ex_lg)
{
    const network *n = &q->net;
    const int M = n->L + 1, s = p->n++;
    for (int l = 0; l < n->L; l++) {
        p->cos[(size_t)s * M + l] = cosine(lo + (size_t)l * n->H, ex_lo + (size_t)l * n->H, n->H);
        p->nmse[(size_t)s * M + l] = nmse(lo + (size_t)l * n->H, ex_lo + (size_t)l * n->H, n->H);
    }
    p->cos[(size_t)s * M + n->L] = cosine(lg, ex_lg, n->V);
    p->nmse[(size_t)s * M + n->L] = nmse(lg, ex_lg, n->V);
    p->kl[s] = kl_divergence(ex_lg, lg, n->V);
    p->top1[s] = argmax(lg, n->V) == argmax(ex_lg, n->V);
}

int hsdr_quality(const hsdr_quality_options *o)
{
    quality_run q = {.o = *o};
    q.model = hsdr_model_find(q.o.model);
    const hsdr_gemv_shape *ffn = q.model ? hsdr_model_tensor(q.model, "ffn_gate") : NULL; /* (hidden, ffn) */
    if (!ffn) {
        size_t nm;
        const hsdr_model *ms = hsdr_models(&nm);
        fprintf(stderr, "hsdr quality: --model '%s': unknown model (", q.o.model);
        for (size_t i = 0; i < nm; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", ms[i].name);
        fprintf(stderr, ")\n");
        return HSDR_EXIT_USAGE;
    }
    q.H = ffn->K, q.F = ffn->N;
    const int H = q.H, F = q.F;
    if (!q.o.vocab)
        q.o.vocab = q.model->head.N;
    path *paths = NULL;
    int np = 0;
    int sel = select_paths(&q.o, &paths, &np);
    if (sel != 0) {
        if (sel < 0)
            fprintf(stderr, "hsdr quality: out of memory\n");
        return HSDR_EXIT_USAGE;
    }
    size_t bytes = (size_t)q.o.layers * 3 * (size_t)H * (F / HSDR_QK) * HSDR_PTQ1_0_BYTES +
                   (size_t)q.o.vocab * (H / HSDR_QK) * HSDR_PTQ1_0_BYTES;
    if (bytes > hsdr_timing_memory_cap()) {
        fprintf(stderr, "hsdr quality: %d layers + a %d-row head of %s need %zu bytes of weights, above the %zu-byte "
                        "cap: use fewer --layers or a smaller --vocab\n",
                q.o.layers, q.o.vocab, q.model->name, bytes, hsdr_timing_memory_cap());
        free(paths);
        return HSDR_EXIT_USAGE;
    }
    char err[512];
    int rc = HSDR_EXIT_OK;
    const int S = q.o.seeds * q.o.tokens, L = q.o.layers, W = H > F ? H : F;
    double *x0 = malloc(sizeof(double) * (size_t)H * q.o.tokens);
    double *ex_lo = malloc(sizeof(double) * (size_t)L * H * q.o.tokens); /* exact layer outputs per token */
    double *ex_lg = malloc(sizeof(double) * (size_t)q.o.vocab * q.o.tokens);
    double *lo = malloc(sizeof(double) * (size_t)L * H), *lg = malloc(sizeof(double) * (size_t)q.o.vocab);
    q.xf = malloc(sizeof(float) * (size_t)W);
    q.x = malloc(sizeof(double) * (size_t)H);
    q.g = malloc(sizeof(double) * (size_t)W);
    q.u = malloc(sizeof(double) * (size_t)F);
    q.qtab = t3_table();
    q.pool = hsdr_pool_create(q.o.threads, 1, err, sizeof err);
    int oom = !x0 || !ex_lo || !ex_lg || !lo || !lg || !q.xf || !q.x || !q.g || !q.u || !q.qtab;
    for (int i = 0; i < np && !oom; i++) {
        paths[i].cos = malloc(sizeof(double) * (size_t)S * (L + 1));
        paths[i].nmse = malloc(sizeof(double) * (size_t)S * (L + 1));
        paths[i].kl = malloc(sizeof(double) * (size_t)S);
        paths[i].top1 = malloc(sizeof(int) * (size_t)S);
        oom = !paths[i].cos || !paths[i].nmse || !paths[i].kl || !paths[i].top1;
    }
    if (!q.pool) {
        fprintf(stderr, "hsdr quality: %s\n", err);
        rc = HSDR_EXIT_USAGE;
        goto out;
    }
    if (oom) {
        fprintf(stderr, "hsdr quality: out of memory\n");
        rc = HSDR_EXIT_USAGE;
        goto out;
    }
    printf("hsdr quality: SYNTHETIC ternary network on %s shapes (hidden %d, ffn %d, head %d rows%s): %d FFN layer(s) "
           "+ head, %d seed(s) x %d token(s), %d thread(s) (%s); paths:",
           q.model->name, H, F, q.o.vocab, q.o.vocab == q.model->head.N ? "" : ", a sub-vocabulary", L, q.o.seeds,
           q.o.tokens, q.o.threads, hsdr_pool_pinning(q.pool));
    for (int i = 1; i < np; i++)
        printf(" %s", paths[i].name);
    printf("\n");
    /* correctness gates use: a variant that fails validation is never run */
    hsdr_dist vd = H % HSDR_WHT_CHUNK == 0 ? HSDR_DIST_BONSAI : HSDR_DIST_GAUSSIAN;
    for (int i = 1; i < np; i++) {
        hsdr_validation val;
        hsdr_validate_sample(paths[i].v, H, F, vd, q.o.seed, q.o.F, q.o.b, &val);
        if (!val.passed) {
            printf("%s: FAILED VALIDATION (not run): %s\n", paths[i].name, val.detail);
            paths[i].failed = 1;
            rc = HSDR_EXIT_FAIL;
        }
    }
    for (int s = 0; s < q.o.seeds; s++) {
        uint64_t seed = q.o.seed + (uint64_t)s;
        double t0 = hsdr_now_ns();
        if (network_build(&q, seed * 0x2545F4914F6CDD1Dull + 1) != 0) {
            fprintf(stderr, "hsdr quality: out of memory for the weights\n");
            rc = HSDR_EXIT_USAGE;
            goto out;
        }
        printf("seed %d/%d: network built in %.1f s (%.1f%% nonzero weights)", s + 1, q.o.seeds,
               (hsdr_now_ns() - t0) / 1e9, 100.0 * q.net.nonzero);
        fflush(stdout);
        hsdr_rng rng;
        hsdr_rng_seed(&rng, seed ^ 0x51ED2701A5A5A5A5ull);
        t0 = hsdr_now_ns();
        for (int t = 0; t < q.o.tokens; t++) {
            input_token(&q, &rng, x0 + (size_t)t * H);
            forward(&q, &paths[0], x0 + (size_t)t * H, ex_lo + (size_t)t * L * H, ex_lg + (size_t)t * q.o.vocab);
        }
        printf("; exact %.1f s", (hsdr_now_ns() - t0) / 1e9);
        for (int i = 1; i < np; i++) {
            path *p = &paths[i];
            if (p->failed)
                continue;
            t0 = hsdr_now_ns();
            if (setups_create(&q, p, err, sizeof err) != 0) {
                printf("\n%s: ERROR: %s\n", p->name, err);
                p->failed = 1;
                rc = HSDR_EXIT_FAIL;
                continue;
            }
            for (int t = 0; t < q.o.tokens; t++) {
                forward(&q, p, x0 + (size_t)t * H, lo, lg);
                record(&q, p, lo, lg, ex_lo + (size_t)t * L * H, ex_lg + (size_t)t * q.o.vocab);
            }
            setups_free(&q, p);
            if (p->device_failed) {
                p->failed = 1;
                rc = HSDR_EXIT_FAIL;
            }
            printf(", %s %.1f s", p->name, (hsdr_now_ns() - t0) / 1e9);
            fflush(stdout);
        }
        printf("\n");
    }
    print_table(&q, paths, np);
    if (q.o.json_path && write_json(&q, paths, np) != 0)
        rc = HSDR_EXIT_USAGE;
out:
    for (int i = 0; i < np; i++) {
        free(paths[i].cos), free(paths[i].nmse), free(paths[i].kl), free(paths[i].top1);
        setups_free(&q, &paths[i]);
    }
    free(paths);
    network_free(&q.net);
    free(x0), free(ex_lo), free(ex_lg), free(lo), free(lg);
    free(q.xf), free(q.x), free(q.g), free(q.u), free(q.qtab);
    if (q.pool)
        hsdr_pool_destroy(q.pool);
    return rc;
}
