#include "profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "case.h"
#include "handoff.h"
#include "inputs.h"
#include "machine.h"
#include "ptq1_0.h"
#include "profile_plan.h"
#include "stats.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

/* The host's read that sets the floor: 256 MiB on every thread, cold (rotating over copies beyond 4x the LLC). */
static const size_t READ_BYTES = (size_t)256 << 20;

/* The untimed work of a token's GEMV before its launch: fresh activations of its distribution into the shared x
 * (a device variant uploads them). */
typedef struct {
    const hsdr_profile_gemv *g;
    hsdr_rng *rng;
    float *x;
    hsdr_timing_setup *ts;
} feed;

static int fresh_activations(hsdr_subject *s)
{
    const feed *f = s->before_ctx;
    hsdr_dist_fill(f->g->dist, f->rng, f->x, (size_t)f->g->K, NULL);
    if (f->ts->dev && f->ts->v->device->set_input(f->ts->dev, f->x, s->err, sizeof s->err) != 0)
        return -1;
    return 0;
}

/* Variants to profile: a comma list of names/globs, default every benchmarkable variant available here. */
static int selected(const hsdr_profile_options *o, const hsdr_variant *v)
{
    if (!hsdr_variant_timed(v) || hsdr_variant_unavailable(v))
        return 0;
    return !o->variants || hsdr_glob_list_match(o->variants, v->name);
}

/* The validation inputs: the first 256 rows of each distinct measured tensor's own weights (the head of a real model
 * has a vocabulary of rows), activations of its distribution. *out holds n_out inputs; 0, or -1 with a message. */
static int validation_inputs(const hsdr_profile_plan *p, uint64_t seed, hsdr_inputs **out, size_t *n_out,
                             size_t **of_input, char *err, size_t errlen)
{
    *out = calloc(p->n, sizeof **out);
    *of_input = calloc(p->n, sizeof **of_input); /* the GEMV whose weights input j holds */
    *n_out = 0;
    if (!*out || !*of_input)
        return hsdr_errorf(err, errlen, "out of memory");
    for (size_t i = 0; i < p->n; i++) {
        int seen = 0;
        for (size_t j = 0; j < *n_out && !seen; j++)
            seen = strcmp(p->g[(*of_input)[j]].tensor, p->g[i].tensor) == 0;
        if (seen)
            continue;
        const hsdr_profile_gemv *g = &p->g[i];
        char why[400];
        if (hsdr_inputs_build_from(&(*out)[*n_out], g->K, g->N < 256 ? g->N : 256, g->W, NULL, g->dist, seed, why,
                                   sizeof why) != 0)
            return hsdr_errorf(err, errlen, "validation inputs of %s: %s", g->name, why);
        (*of_input)[(*n_out)++] = i;
    }
    return 0;
}

/* The file and the tensors of a GGUF plan: the header's lines and the JSON's "gguf" object. */
static void describe_gguf(const hsdr_profile_plan *p, const hsdr_profile_options *o, cJSON *doc)
{
    printf("file: %s, data hash %016llx (FNV-1a of the whole file, as inspect's data_hash), %zu ternary tensor(s) "
           "kept%s%s%s of %d layer(s); measured:\n",
           p->file_base, (unsigned long long)p->file_hash, p->n_kept, o->tensors ? " by --tensors '" : "",
           o->tensors ? o->tensors : "", o->tensors ? "'" : "", p->layers_model);
    cJSON *go = cJSON_AddObjectToObject(doc, "gguf");
    char hash[20];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)p->file_hash);
    cJSON_AddStringToObject(go, "file", p->file_base);
    cJSON_AddStringToObject(go, "data_hash", hash);
    cJSON_AddNumberToObject(go, "file_bytes", (double)p->file.file.size);
    if (o->tensors)
        cJSON_AddStringToObject(go, "tensors_globs", o->tensors);
    else
        cJSON_AddNullToObject(go, "tensors_globs");
    cJSON_AddNumberToObject(go, "tensors_kept", (double)p->n_kept);
    cJSON_AddBoolToObject(go, "head", p->head);
    cJSON_AddBoolToObject(go, "tied_head", p->tied_head);
    cJSON_AddNumberToObject(go, "token_bytes", (double)p->token_bytes);
    cJSON *kinds = cJSON_AddArrayToObject(go, "layer_kinds");
    for (int k = 0; k < p->n_kinds; k++) {
        cJSON *ko = cJSON_CreateObject();
        cJSON_AddStringToObject(ko, "tensors", p->kinds[k].name);
        cJSON_AddNumberToObject(ko, "layers_model", p->kinds[k].layers_model);
        cJSON_AddNumberToObject(ko, "layers_measured", p->kinds[k].layers_measured);
        cJSON_AddItemToArray(kinds, ko);
    }
    cJSON *ts = cJSON_AddArrayToObject(go, "tensors_measured");
    for (size_t i = 0; i < p->n; i++) {
        const hsdr_profile_gemv *g = &p->g[i];
        char where[24] = "head";
        if (g->layer >= 0)
            snprintf(where, sizeof where, "layer %d", g->layer);
        printf("  %-32s %-6s K %6d N %6d %10zu bytes as PTQ1_0  %s\n", g->name,
               g->type == GGML_T_PQ2_0 ? "PQ2_0" : "PTQ1_0", g->K, g->N, g->bytes, where);
        cJSON *to = cJSON_CreateObject();
        cJSON_AddStringToObject(to, "name", g->name);
        cJSON_AddStringToObject(to, "type", g->type == GGML_T_PQ2_0 ? "PQ2_0" : "PTQ1_0");
        cJSON_AddNumberToObject(to, "layer", g->layer);
        cJSON_AddNumberToObject(to, "K", g->K);
        cJSON_AddNumberToObject(to, "N", g->N);
        cJSON_AddItemToArray(ts, to);
    }
    for (int k = 0; k < p->n_kinds; k++)
        printf("layer kind %d: %d of %d layer(s) measured: %s\n", k + 1, p->kinds[k].layers_measured,
               p->kinds[k].layers_model, p->kinds[k].name);
    if (p->tied_head)
        printf("head: token_embd (no output tensor kept: tied embeddings)\n");
}

/* --split tune: per GEMV shape (K, N) of g[0..ng), its first GEMV's setup timed on 1, 2, 4, ... and all the pool's
 * threads, the candidates interleaved (A B C A B C ...: the machine drifts between seconds), TUNE_ROUNDS samples
 * each after one untimed launch on the weights' next copy (as in the token), the pool held; every GEMV of the shape
 * gets the count of least median (the fewest on a tie). Host setups only. 0, or -1 with a message in err. */
enum { TUNE_ROUNDS = 7, TUNE_MAX = 16 };

static int tune_threads(hsdr_timing_setup *ts, const hsdr_profile_gemv *g, size_t ng, int threads, hsdr_pool *pool,
                        char *err, size_t errlen)
{
    int cand[TUNE_MAX], nc = 0;
    for (int n = 1; n < threads && nc < TUNE_MAX - 1; n *= 2)
        cand[nc++] = n;
    cand[nc++] = threads;
    double samples[TUNE_MAX][TUNE_ROUNDS];
    const hsdr_timing_policy one = {.warmup = 1, .min_reps = 1, .max_reps = 1, .noise_target = 0.0,
                                    .time_limit_s = INFINITY};
    int rc = 0;
    hsdr_pool_hold(pool, 1);
    for (size_t i = 0; i < ng && rc == 0; i++) {
        size_t first = 0;
        while (g[first].K != g[i].K || g[first].N != g[i].N)
            first++;
        if (first < i) { /* a shape already tuned: the same count */
            hsdr_timing_setup_threads(&ts[i], ts[first].active);
            continue;
        }
        for (int r = 0; r < TUNE_ROUNDS && rc == 0; r++)
            for (int c = 0; c < nc && rc == 0; c++) {
                hsdr_timing_setup_threads(&ts[i], cand[c]);
                hsdr_subject sub, *subp = &sub;
                hsdr_stats st;
                hsdr_timing_subject(&ts[i], -1, 0, 0, &sub);
                if ((rc = hsdr_measure(&subp, 1, &one, &st, err, errlen)) == 0) {
                    samples[c][r] = st.samples[0];
                    hsdr_stats_free(&st);
                }
            }
        int best = threads;
        double best_ns = INFINITY;
        for (int c = 0; c < nc && rc == 0; c++) {
            qsort(samples[c], TUNE_ROUNDS, sizeof(double), hsdr_cmp_double);
            if (samples[c][TUNE_ROUNDS / 2] < best_ns) {
                best_ns = samples[c][TUNE_ROUNDS / 2];
                best = cand[c];
            }
        }
        hsdr_timing_setup_threads(&ts[i], best);
    }
    hsdr_pool_hold(pool, 0);
    return rc;
}

int hsdr_profile(const hsdr_profile_options *options)
{
    hsdr_profile_options o = *options;
    hsdr_profile_plan plan;
    char err[512];
    const int planned = o.gguf ? hsdr_profile_plan_gguf(&plan, o.gguf, o.tensors, o.layers, o.head, o.dist, err,
                                                         sizeof err)
                               : hsdr_profile_plan_model(&plan, o.model, o.layers, o.head, o.dist, o.seed, err,
                                                         sizeof err);
    if (planned != 0) {
        fprintf(stderr, "hsdr profile: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    const hsdr_profile_gemv *g = plan.g;
    const size_t ng = plan.n;
    const size_t total_bytes = plan.measured_bytes;
    int max_k = 0;
    for (size_t i = 0; i < ng; i++)
        max_k = g[i].K > max_k ? g[i].K : max_k;
    int rc = HSDR_EXIT_OK;
    hsdr_rng rng;
    hsdr_rng_seed(&rng, o.seed ^ 0x5bd1e995u); /* the activations: not the random weights' stream */
    hsdr_inputs *vin = NULL;
    size_t n_vin = 0, *vin_of = NULL;
    hsdr_weight_copies *in_place = calloc(ng, sizeof *in_place); /* per GEMV: its weights, read where they are */
    hsdr_pool *pool = NULL;
    hsdr_split_model split = {0};
    cJSON *doc = NULL;
    float *x = NULL;
    double *token_ns = NULL, *gemv_ns = NULL;
    hsdr_timing_setup *ts = NULL;
    hsdr_subject *subj = NULL, **subjp = NULL;
    hsdr_stats *st = NULL;
    feed *feeds = NULL;
    hsdr_read_subject *reader = NULL; /* the host's read, sampled between the tokens of every host variant */
    hsdr_subject read_s;
    if (!in_place || validation_inputs(&plan, o.seed, &vin, &n_vin, &vin_of, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr profile: %s\n", in_place ? err : "out of memory");
        rc = HSDR_EXIT_USAGE;
        goto done;
    }
    /* the token made cold: every GEMV's weights in rot.copies copies, token t on copy t mod copies (the raw PTQ1_0
     * copies here, shared by the variants that read them as stored; a converting variant's own, per setup) */
    hsdr_profile_rotation rot;
    hsdr_profile_rotation_plan(total_bytes, hsdr_machine_llc_bytes(), hsdr_timing_memory_cap(), o.hot, &rot);
    int raw_readers = 0, host_variants = 0; /* selected host variants: reading PTQ1_0 as stored, any */
    for (size_t vi = 0; vi < hsdr_registry_count; vi++) {
        const hsdr_variant *v = &hsdr_registry[vi];
        const int host = selected(&o, v) && !v->device;
        raw_readers |= host && !v->prepare;
        host_variants |= host;
    }
    for (size_t i = 0; i < ng; i++)
        if ((rot.copies > 1 && raw_readers
                 ? hsdr_weight_copies_create_n(&in_place[i], g[i].W, g[i].bytes, rot.copies, err, sizeof err)
                 : hsdr_weight_copies_borrow(&in_place[i], g[i].W, g[i].bytes, err, sizeof err)) != 0) {
            fprintf(stderr, "hsdr profile: %s\n", err);
            rc = HSDR_EXIT_USAGE;
            goto done;
        }
    if (!(pool = hsdr_pool_create(o.threads, 1, err, sizeof err))) {
        fprintf(stderr, "hsdr profile: %s\n", err);
        rc = HSDR_EXIT_USAGE;
        goto done;
    }
    /* the host's floor: every weight byte read once per token at the host's measured DRAM read bandwidth (device
     * variants replace it with their device's own read of the same bytes, per row) */
    const hsdr_bw_result *bw;
    double ceiling = hsdr_ceiling(NULL, pool, READ_BYTES, HSDR_MODE_COLD, INFINITY, &bw, err, sizeof err) == 0
                         ? bw->bytes_per_s
                         : NAN;
    if (host_variants && hsdr_read_subject_create(pool, READ_BYTES, HSDR_MODE_COLD, &reader, &read_s, err,
                                                  sizeof err) != 0)
        fprintf(stderr, "hsdr profile: the read between the tokens: %s; the host floor is the read before them\n",
                err);
    if (o.split == HSDR_SPLIT_AUTO && hsdr_split_model_measure(pool, ceiling, &split, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr profile: --split auto: %s\n", err);
        rc = HSDR_EXIT_FAIL;
        goto done;
    }
    /* the whole model's floor: every layer's weights (+ the head when measured) once per token */
    const double full_floor_ns = (double)plan.token_bytes / ceiling * 1e9;
    const int cold = rot.cold;
    char kinds_measured[64] = "";
    if (!o.gguf && plan.n_kinds == 2)
        snprintf(kinds_measured, sizeof kinds_measured, " (%d attention)", plan.kinds[0].layers_measured);
    printf("hsdr profile: %s, %d of %d layers%s measured%s, %zu GEMVs, %.1f MB of PTQ1_0 weights per measured token "
           "(host: %s%s); %d token(s), %d thread(s) (%s), activations %s\n",
           plan.model, plan.layers_measured, plan.layers_model, o.head ? " + head" : "", kinds_measured, ng,
           total_bytes / 1e6, rot.why, hsdr_machine_llc_overridden() ? ", the cache size from HSDR_LLC_BYTES" : "",
           o.tokens, o.threads, hsdr_pool_pinning(pool), hsdr_dist_name(o.dist));
    doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "hsdr-profile/1");
    cJSON_AddStringToObject(doc, "model", plan.model);
    cJSON_AddStringToObject(doc, "weights", o.gguf ? "gguf" : "random");
    if (o.gguf)
        describe_gguf(&plan, &o, doc);
    printf("GEMV-only: no attention, recurrence or sampling; encoding counted per GEMV (tensors that share an input "
           "each encode it). Floor: weight bytes / the ceiling: for host variants the host CPU's DRAM read on %d "
           "thread(s), %s (%.1f GB/s before the tokens); for device variants the device's own streaming read of the "
           "same bytes (its own line). Weights: %s.\n",
           o.threads, reader ? "sampled once per token round between the variant's tokens (its line)" : "measured now",
           ceiling / 1e9,
           o.gguf ? "the file's tensors (PTQ1_0 read in place, PQ2_0 converted), validated on them"
                  : "seeded random PTQ1_0");
    for (size_t i = 0; i < ng; i++)
        if (g[i].dist != o.dist) {
            printf("note: K = %d is not a multiple of 1024 (no WHT-1024 fold): those GEMVs get gaussian activations\n",
                   g[i].K);
            break;
        }
    cJSON_AddNumberToObject(doc, "layers_measured", plan.layers_measured);
    cJSON_AddNumberToObject(doc, "layers_model", plan.layers_model);
    cJSON_AddNumberToObject(doc, "tokens", o.tokens);
    cJSON_AddNumberToObject(doc, "threads", o.threads);
    static const char *const split_names[] = {"all", "auto", "tune"};
    cJSON_AddStringToObject(doc, "split", split_names[o.split]);
    if (o.split == HSDR_SPLIT_TUNE)
        printf("split: tune, each GEMV shape on the thread count (1, 2, 4 .. %d) of least median time over %d "
               "interleaved samples, per variant (the counts: per_gemv threads in the JSON)\n", o.threads,
               TUNE_ROUNDS);
    if (o.split == HSDR_SPLIT_AUTO)
        printf("split: auto, GEMV of B bytes on the n of least handoff(n) + B / min(n x %.1f GB/s, %.1f GB/s); "
               "handoff(%d) %.2f us\n", split.per_thread_bytes_per_s / 1e9, ceiling / 1e9, o.threads,
               split.handoff_ns[o.threads] / 1e3);
    cJSON_AddBoolToObject(doc, "cold", cold);
    cJSON *ro = cJSON_AddObjectToObject(doc, "rotation"); /* host variants; a device's own rule below */
    cJSON_AddNumberToObject(ro, "copies", (double)rot.copies);
    cJSON_AddNumberToObject(ro, "copies_needed", (double)rot.copies_needed);
    cJSON_AddNumberToObject(ro, "token_bytes", (double)rot.token_bytes);
    cJSON_AddNumberToObject(ro, "bytes_cycled", (double)rot.bytes_cycled);
    cJSON_AddNumberToObject(ro, "llc_bytes", (double)rot.llc_bytes);
    cJSON_AddBoolToObject(ro, "llc_from_env", hsdr_machine_llc_overridden());
    cJSON_AddNumberToObject(ro, "memory_cap_bytes", (double)rot.cap_bytes);
    cJSON_AddBoolToObject(ro, "hot_asked", o.hot);
    cJSON_AddStringToObject(ro, "label", rot.why);
    cJSON_AddNumberToObject(doc, "host_ceiling_bytes_per_s", ceiling); /* each variant names its own ceiling */
    cJSON_AddNumberToObject(doc, "host_ceiling_threads", o.threads);
    cJSON_AddItemToObject(doc, "context", hsdr_machine_context());
    cJSON *vres = cJSON_AddArrayToObject(doc, "variants");
    x = malloc(sizeof(float) * (size_t)max_k);
    token_ns = malloc(sizeof(double) * (size_t)o.tokens);
    gemv_ns = calloc(ng, sizeof(double));
    ts = calloc(ng, sizeof *ts);
    subj = calloc(ng, sizeof *subj), subjp = calloc(ng + 1, sizeof *subjp);
    st = calloc(ng + 1, sizeof *st);
    feeds = calloc(ng, sizeof *feeds);
    double *kind_ns = calloc((size_t)plan.n_kinds + 1, sizeof(double));
    if (!x || !token_ns || !gemv_ns || !ts || !subj || !subjp || !st || !feeds || !kind_ns) {
        fprintf(stderr, "hsdr profile: out of memory\n");
        free(kind_ns);
        rc = HSDR_EXIT_USAGE;
        goto done;
    }
    size_t device_l2 = 0; /* the L2 of the device variants profiled, 0 without one */
    int host_profiled = 0;
    printf("\n%-14s %12s %12s %10s %10s %9s %12s\n", "variant", "ms/token", "tokens/s", "floor ms", "% floor",
           "full ms*", "convert ms");
    for (size_t vi = 0; vi < hsdr_registry_count; vi++) {
        const hsdr_variant *v = &hsdr_registry[vi];
        if (!selected(&o, v))
            continue;
        /* validate first, on every distinct measured tensor's own weights (N clipped to 256 rows) */
        hsdr_validation val = {.passed = true};
        const char *failed_on = NULL;
        for (size_t j = 0; j < n_vin && val.passed; j++) {
            const hsdr_inputs *in = &vin[j];
            hsdr_case c = {.variant = v, .K = in->K, .N = in->N, .R = 1, .threads = 1, .dist = in->dist,
                           .mode = HSDR_MODE_HOT, .flns_F = 8, .flns_b = 12};
            hsdr_validate(&c, in, &val);
            failed_on = g[vin_of[j]].name;
        }
        if (!val.passed) {
            printf("%-14s FAILED VALIDATION (not timed) on %s: %s\n", v->name, failed_on, val.detail);
            rc = HSDR_EXIT_FAIL;
            continue;
        }
        double convert_ns = 0.0;
        int ok = 1;
        for (size_t i = 0; i < ng && ok; i++) {
            hsdr_inputs wi = {.K = g[i].K, .N = g[i].N, .W = (uint8_t *)g[i].W, .x = x, .weight_bytes = g[i].bytes};
            hsdr_case ci = {.variant = v, .K = wi.K, .N = wi.N, .R = 1, .threads = o.threads, .dist = g[i].dist,
                            .mode = HSDR_MODE_HOT, .flns_F = 8, .flns_b = 12};
            /* one setup per GEMV: a token visits every GEMV's weights once, in model order; a variant that reads
             * PTQ1_0 as stored reads them in place (the mapped file's bytes) or the shared rotated copies, a
             * converting one its own copies, as many */
            if (hsdr_timing_setup_create(&ts[i], &ci, &wi, o.threads, HSDR_MODE_HOT, v->device ? NULL : pool,
                                         &in_place[i], err, sizeof err) != 0 ||
                hsdr_timing_setup_copies(&ts[i], rot.copies, err, sizeof err) != 0) {
                printf("%-14s ERROR: %s\n", v->name, err);
                ok = 0;
                for (size_t j = 0; j <= i; j++) /* a failed create left ts[i] empty: freeing it is a no-op */
                    hsdr_timing_setup_free(&ts[j]);
            }
            convert_ns += ts[i].convert_ns;
            if (ok && o.split == HSDR_SPLIT_AUTO)
                hsdr_timing_setup_threads(&ts[i], hsdr_split_threads(&split, (double)ts[i].footprint));
        }
        if (ok && o.split == HSDR_SPLIT_TUNE && !v->device && o.threads > 1 &&
            tune_threads(ts, g, ng, o.threads, pool, err, sizeof err) != 0) {
            printf("%-14s ERROR: --split tune: %s\n", v->name, err);
            for (size_t i = 0; i < ng; i++)
                hsdr_timing_setup_free(&ts[i]);
            ok = 0;
        }
        if (!ok) {
            rc = HSDR_EXIT_FAIL;
            continue;
        }
        memset(gemv_ns, 0, sizeof(double) * ng);
        double ceiling_v = ceiling, device_sum = 0.0, read_spread = NAN;
        host_profiled |= v->device == NULL;
        /* a token is a round of the engine: every GEMV once, in model order, each with fresh activations drawn
         * (untimed) just before its launch; the first round warms up */
        for (size_t i = 0; i < ng; i++) {
            hsdr_timing_subject(&ts[i], -1, 0, 0, &subj[i]);
            subj[i].before = fresh_activations;
            subj[i].before_ctx = &feeds[i];
            feeds[i] = (feed){&g[i], &rng, x, &ts[i]};
            subjp[i] = &subj[i];
        }
        const hsdr_timing_policy tokens = {.warmup = 1, .min_reps = o.tokens, .max_reps = o.tokens,
                                           .noise_target = 0.0, .time_limit_s = INFINITY};
        /* a host variant's floor: the read sampled once per token round, after its GEMVs (the same minutes, the
         * same drift: on the lent host the read measured before the tokens ranged 50-128 GB/s within one call) */
        const int with_read = !v->device && reader;
        if (with_read)
            subjp[ng] = &read_s;
        hsdr_pool_hold(pool, 1); /* the workers spin between the token's GEMVs */
        ok = hsdr_measure(subjp, (int)ng + with_read, &tokens, st, err, sizeof err) == 0;
        hsdr_pool_hold(pool, 0);
        if (ok && with_read) {
            ceiling_v = st[ng].median > 0 ? (double)READ_BYTES / (st[ng].median * 1e-9) : ceiling;
            read_spread = st[ng].median > 0 ? (st[ng].p75 - st[ng].p25) / st[ng].median : NAN;
            hsdr_stats_free(&st[ng]);
        }
        for (int t = 0; ok && t < o.tokens; t++) {
            token_ns[t] = 0.0;
            for (size_t i = 0; i < ng; i++)
                token_ns[t] += st[i].samples[t];
        }
        for (size_t i = 0; ok && i < ng; i++) {
            gemv_ns[i] = st[i].mean * o.tokens; /* the per-token mean below divides by the tokens */
            device_sum += st[i].mean;
            hsdr_stats_free(&st[i]);
        }
        if (ok && v->device) {
            device_l2 = v->device->l2_bytes();
            /* a device: the token's time is the whole token as one graph, replayed back to back (no launch latency
             * in it); the separate launches above give the per-tensor shares */
            hsdr_device_run **runs = malloc(sizeof *runs * ng), *token = NULL;
            ok = runs != NULL;
            for (size_t i = 0; ok && i < ng; i++)
                runs[i] = ts[i].dev;
            char why[256] = "";
            if (ok && v->device->token_create(runs, (int)ng, &token, why, sizeof why) != 0) {
                snprintf(err, sizeof err, "token: %s", why);
                ok = 0;
            }
            if (ok) {
                hsdr_subject ts_token = {.name = "token", .dev = v->device, .run = token, .stage = -1, .count = 1};
                hsdr_subject *one = &ts_token;
                hsdr_stats tst;
                const hsdr_timing_policy replays = {.warmup = 2, .min_reps = o.tokens, .max_reps = o.tokens,
                                                    .noise_target = 0.0, .time_limit_s = INFINITY};
                ok = hsdr_measure(&one, 1, &replays, &tst, err, sizeof err) == 0;
                for (int t = 0; ok && t < o.tokens; t++)
                    token_ns[t] = tst.samples[t];
                if (ok)
                    hsdr_stats_free(&tst);
                v->device->destroy(token);
            }
            free(runs);
            hsdr_bw_result bw_dev;
            if (ok && hsdr_device_read_bandwidth(v, total_bytes, HSDR_MODE_COLD, &bw_dev, err, sizeof err) == 0) {
                ceiling_v = bw_dev.bytes_per_s;
                hsdr_bw_result_free(&bw_dev);
            }
        }
        if (!ok) {
            printf("%-14s ERROR: %s\n", v->name, err);
            for (size_t i = 0; i < ng; i++)
                hsdr_timing_setup_free(&ts[i]);
            rc = HSDR_EXIT_FAIL;
            continue;
        }
        qsort(token_ns, (size_t)o.tokens, sizeof(double), hsdr_cmp_double);
        double med = token_ns[o.tokens / 2];
        /* extrapolation to the whole model: the head as measured, plus each layer kind's mean time per measured
         * layer times the model's count of that kind (kind_ns[0]: the head) */
        memset(kind_ns, 0, sizeof(double) * ((size_t)plan.n_kinds + 1));
        for (size_t i = 0; i < ng; i++)
            kind_ns[g[i].kind + 1] += gemv_ns[i] / o.tokens;
        double full_ns = kind_ns[0];
        for (int k = 0; k < plan.n_kinds; k++) {
            const hsdr_profile_kind *pk = &plan.kinds[k];
            if (pk->layers_measured > 0)
                full_ns += kind_ns[k + 1] / pk->layers_measured * pk->layers_model;
            else if (pk->layers_model > 0)
                full_ns = NAN; /* a kind none of whose layers was measured */
        }
        if (v->device && !isnan(full_ns) && device_sum > 0)
            full_ns *= med / device_sum; /* separate launches scaled to the graph's token time */
        double floor_ns = (double)total_bytes / ceiling_v * 1e9;
        char full[32] = "-";
        if (!isnan(full_ns))
            snprintf(full, sizeof full, "%.2f", full_ns / 1e6);
        printf("%-14s %12.3f %12.1f %10.3f %10.1f %9s %12.1f\n", v->name, med / 1e6, 1e9 / med, floor_ns / 1e6,
               100.0 * floor_ns / med, full, convert_ns / 1e6);
        if (v->device)
            printf("%-14s   floor from %s's streaming read of %.1f MB: %.1f GB/s (cold)\n", "",
                   v->device->describe(), total_bytes / 1e6, ceiling_v / 1e9);
        else if (reader)
            printf("  floor from the read between its tokens: %.1f GB/s (spread %.0f %%)\n", ceiling_v / 1e9,
                   100.0 * read_spread);
        if (!v->device && o.split != HSDR_SPLIT_ALL) { /* the threads each tensor got (per its first GEMV) */
            printf("  threads:");
            for (size_t i = 0; i < ng; i++) {
                size_t j = 0;
                while (strcmp(g[j].tensor, g[i].tensor) != 0)
                    j++;
                if (j == i)
                    printf(" %s %d", g[i].tensor, ts[i].active);
            }
            printf("\n");
        }
        cJSON *vo = cJSON_CreateObject();
        cJSON_AddStringToObject(vo, "variant", v->name);
        cJSON_AddNumberToObject(vo, "ms_per_token_measured", med / 1e6);
        cJSON_AddNumberToObject(vo, "tokens_per_s_measured", 1e9 / med);
        cJSON_AddNumberToObject(vo, "floor_ms_per_token_measured", floor_ns / 1e6);
        if (isnan(full_ns)) {
            cJSON_AddNullToObject(vo, "ms_per_token_full_model_extrapolated");
        } else {
            cJSON_AddNumberToObject(vo, "ms_per_token_full_model_extrapolated", full_ns / 1e6);
            cJSON_AddNumberToObject(vo, "tokens_per_s_full_model_extrapolated", 1e9 / full_ns);
        }
        cJSON_AddNumberToObject(vo, "floor_ms_per_token_full_model", full_floor_ns * ceiling / ceiling_v / 1e6);
        cJSON_AddNumberToObject(vo, "ceiling_bytes_per_s", ceiling_v);
        cJSON_AddStringToObject(vo, "ceiling_of", v->device ? v->device->describe() : "the host CPU's DRAM read");
        if (!v->device) { /* the read sampled between this variant's tokens, or (false) the one before them */
            cJSON_AddBoolToObject(vo, "ceiling_between_tokens", reader != NULL);
            if (reader && !isnan(read_spread))
                cJSON_AddNumberToObject(vo, "ceiling_rel_spread", read_spread);
        }
        if (v->device) {
            cJSON_AddStringToObject(vo, "device", v->device->describe());
            cJSON_AddStringToObject(vo, "timing", "one CUDA graph per token, replayed back to back (device clock)");
        }
        cJSON_AddNumberToObject(vo, "convert_ms", convert_ns / 1e6);
        cJSON *br = cJSON_AddArrayToObject(vo, "per_gemv");
        for (size_t i = 0; i < ng; i++) {
            cJSON *go = cJSON_CreateObject();
            cJSON_AddStringToObject(go, "tensor", g[i].tensor);
            if (o.gguf)
                cJSON_AddStringToObject(go, "name", g[i].name);
            cJSON_AddNumberToObject(go, "layer", g[i].layer);
            cJSON_AddNumberToObject(go, "K", g[i].K);
            cJSON_AddNumberToObject(go, "N", g[i].N);
            cJSON_AddNumberToObject(go, "mean_ns", gemv_ns[i] / o.tokens);
            if (!v->device)
                cJSON_AddNumberToObject(go, "threads", ts[i].active);
            cJSON_AddItemToArray(br, go);
            hsdr_timing_setup_free(&ts[i]);
        }
        cJSON_AddItemToArray(vres, vo);
        /* per-tensor breakdown (summed over the measured layers) */
        printf("  per tensor:");
        for (size_t i = 0; i < ng; i++) {
            int first = 1;
            for (size_t j = 0; j < i; j++)
                first &= strcmp(g[j].tensor, g[i].tensor) != 0;
            if (!first)
                continue;
            double s = 0;
            for (size_t j = i; j < ng; j++)
                if (strcmp(g[j].tensor, g[i].tensor) == 0)
                    s += gemv_ns[j] / o.tokens;
            /* a device: shares of the separately launched GEMVs (the graph overlaps their launches) */
            printf(" %s %.1f%%", g[i].tensor, 100.0 * s / (v->device ? device_sum : med));
        }
        printf("\n");
    }
    free(kind_ns);
    printf("* full ms: the whole %d-layer model%s extrapolated from the measured layers' mean per layer kind (needs "
           "at least one layer of each kind).\n",
           plan.layers_model, o.head ? " with head" : "");
    if (device_l2 && !host_profiled) /* device variants only: cold means the token's bytes exceed 3x its L2 */
        cJSON_ReplaceItemInObject(doc, "cold", cJSON_CreateBool(total_bytes > 3 * device_l2));
    if (o.json_path) {
        char *txt = cJSON_Print(doc);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s.tmp", o.json_path);
        FILE *f = fopen(tmp, "w");
        if (!f || !txt || fputs(txt, f) < 0 || fclose(f) != 0 || rename(tmp, o.json_path) != 0) {
            fprintf(stderr, "hsdr profile: cannot write %s\n", o.json_path);
            rc = HSDR_EXIT_USAGE;
        }
        cJSON_free(txt);
    }
done:
    free(x);
    free(token_ns);
    free(gemv_ns);
    free(ts);
    free(subj);
    free(subjp);
    free(st);
    free(feeds);
    cJSON_Delete(doc);
    hsdr_split_model_free(&split);
    hsdr_read_subject_free(reader);
    hsdr_pool_destroy(pool);
    for (size_t j = 0; vin && j < n_vin; j++)
        hsdr_inputs_free(&vin[j]);
    free(vin);
    free(vin_of);
    for (size_t i = 0; in_place && i < ng; i++)
        hsdr_weight_copies_free(&in_place[i]);
    free(in_place);
    hsdr_profile_plan_free(&plan);
    return rc;
}
