#include "profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "case.h"
#include "inputs.h"
#include "machine.h"
#include "ptq1_0.h"
#include "shapes.h"
#include "stats.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

typedef struct {
    const hsdr_gemv_shape *shape;
    int layer; /* -1: head */
    uint8_t *W;
    hsdr_dist dist; /* the requested distribution, or gaussian where bonsai's WHT-1024 fold cannot apply */
} gemv;

/* The untimed work of a token's GEMV before its launch: fresh activations of its distribution into the shared x
 * (a device variant uploads them). */
typedef struct {
    const gemv *g;
    hsdr_rng *rng;
    float *x;
    hsdr_timing_setup *ts;
} feed;

static int fresh_activations(hsdr_subject *s)
{
    const feed *f = s->before_ctx;
    hsdr_dist_fill(f->g->dist, f->rng, f->x, (size_t)f->g->shape->K, NULL);
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

int hsdr_profile(const hsdr_profile_options *options)
{
    hsdr_profile_options o = *options;
    const hsdr_model *model = hsdr_model_find(o.model);
    if (!model) {
        fprintf(stderr, "hsdr profile: unknown model '%s'\n", o.model);
        return HSDR_EXIT_USAGE;
    }
    if (o.layers > model->n_layers)
        o.layers = model->n_layers;
    /* the GEMVs of the measured layers (+ head) */
    size_t ng = 0, cap = 0;
    gemv *g = NULL;
    size_t total_bytes = 0;
    int max_k = 0;
    for (int l = -1; l < o.layers; l++) {
        const hsdr_gemv_shape *list;
        int n;
        if (l < 0) {
            if (!o.head)
                continue;
            list = &model->head;
            n = 1;
        } else if (hsdr_model_layer_is_attn(model, l)) {
            list = model->attn, n = model->n_attn;
        } else {
            list = model->other, n = model->n_other;
        }
        for (int i = 0; i < n; i++) {
            if (ng == cap) {
                cap = cap ? 2 * cap : 16;
                gemv *grown = realloc(g, cap * sizeof *g);
                if (!grown) {
                    free(g);
                    fprintf(stderr, "hsdr profile: out of memory\n");
                    return HSDR_EXIT_USAGE;
                }
                g = grown;
            }
            hsdr_dist d = o.dist == HSDR_DIST_BONSAI && list[i].K % 1024 != 0 ? HSDR_DIST_GAUSSIAN : o.dist;
            g[ng++] = (gemv){&list[i], l, NULL, d};
            total_bytes += (size_t)list[i].N * (list[i].K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
            max_k = list[i].K > max_k ? list[i].K : max_k;
        }
    }
    if (total_bytes > hsdr_timing_memory_cap()) {
        fprintf(stderr, "hsdr profile: %d layers%s of %s need %zu bytes of weights, above the %zu-byte cap: use "
                        "fewer --layers or --no-head\n",
                o.layers, o.head ? " + head" : "", model->name, total_bytes, hsdr_timing_memory_cap());
        free(g);
        return HSDR_EXIT_USAGE;
    }
    int rc = HSDR_EXIT_OK;
    char err[512];
    hsdr_rng rng;
    hsdr_rng_seed(&rng, o.seed);
    for (size_t i = 0; i < ng; i++) {
        size_t nb = (size_t)g[i].shape->N * (g[i].shape->K / HSDR_QK);
        if (!(g[i].W = malloc(nb * HSDR_PTQ1_0_BYTES))) {
            fprintf(stderr, "hsdr profile: out of memory for %s weights\n", g[i].shape->tensor);
            rc = HSDR_EXIT_USAGE;
            goto out;
        }
        hsdr_random_ptq1_0(&rng, g[i].W, nb);
    }
    hsdr_pool *pool = hsdr_pool_create(o.threads, 1, err, sizeof err);
    if (!pool) {
        fprintf(stderr, "hsdr profile: %s\n", err);
        rc = HSDR_EXIT_USAGE;
        goto out;
    }
    /* the host's floor: every weight byte read once per token at the host's measured DRAM read bandwidth (device
     * variants replace it with their device's own read of the same bytes, per row) */
    const hsdr_bw_result *bw;
    double ceiling = hsdr_ceiling(NULL, pool, (size_t)256 << 20, HSDR_MODE_COLD, INFINITY, &bw, err, sizeof err) == 0
                         ? bw->bytes_per_s
                         : NAN;
    int attn_layers = 0;
    for (int l = 0; l < o.layers; l++)
        attn_layers += hsdr_model_layer_is_attn(model, l);
    /* the whole model's floor: every layer's weights (+ the head when measured) once per token */
    const double full_bytes =
        (double)(hsdr_model_token_bytes(model) - (o.head ? 0 : hsdr_gemv_weight_bytes(&model->head)));
    const double full_floor_ns = full_bytes / ceiling * 1e9;
    printf("hsdr profile: %s, %d of %d layers%s measured (%d attention), %zu GEMVs, %.1f MB of PTQ1_0 weights per "
           "measured token (%s the host CPU's %.0f MB last-level cache: %s there); %d token(s), %d thread(s) (%s), "
           "activations %s\n",
           model->name, o.layers, model->n_layers, o.head ? " + head" : "", attn_layers, ng, total_bytes / 1e6,
           total_bytes > 4 * hsdr_machine_llc_bytes() ? "over 4x" : "not over 4x", hsdr_machine_llc_bytes() / 1e6,
           total_bytes > 4 * hsdr_machine_llc_bytes() ? "cold" : "partly cache-resident, not cold", o.tokens,
           o.threads, hsdr_pool_pinning(pool), hsdr_dist_name(o.dist));
    printf("GEMV-only: no attention, recurrence or sampling; encoding counted per GEMV. Floor: weight bytes / the "
           "ceiling: for host variants %.1f GB/s (the host CPU's DRAM read, %d thread(s), measured now); for device "
           "variants the device's own streaming read of the same bytes (its own line).\n",
           ceiling / 1e9, o.threads);
    for (size_t i = 0; i < ng; i++)
        if (g[i].dist != o.dist) {
            printf("note: K = %d is not a multiple of 1024 (no WHT-1024 fold): those GEMVs get gaussian activations\n",
                   g[i].shape->K);
            break;
        }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "hsdr-profile/1");
    cJSON_AddStringToObject(doc, "model", model->name);
    cJSON_AddNumberToObject(doc, "layers_measured", o.layers);
    cJSON_AddNumberToObject(doc, "layers_model", model->n_layers);
    cJSON_AddNumberToObject(doc, "tokens", o.tokens);
    cJSON_AddNumberToObject(doc, "threads", o.threads);
    cJSON_AddBoolToObject(doc, "cold", total_bytes > 4 * hsdr_machine_llc_bytes());
    cJSON_AddNumberToObject(doc, "host_ceiling_bytes_per_s", ceiling); /* each variant names its own ceiling */
    cJSON_AddItemToObject(doc, "context", hsdr_machine_context());
    cJSON *vres = cJSON_AddArrayToObject(doc, "variants");
    float *x = malloc(sizeof(float) * (size_t)max_k);
    double *token_ns = malloc(sizeof(double) * (size_t)o.tokens);
    double *gemv_ns = calloc(ng, sizeof(double));
    hsdr_timing_setup *ts = calloc(ng, sizeof *ts);
    hsdr_subject *subj = calloc(ng, sizeof *subj), **subjp = calloc(ng, sizeof *subjp);
    hsdr_stats *st = calloc(ng, sizeof *st);
    feed *feeds = calloc(ng, sizeof *feeds);
    if (!x || !token_ns || !gemv_ns || !ts || !subj || !subjp || !st || !feeds) {
        fprintf(stderr, "hsdr profile: out of memory\n");
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
        /* validate first, on the first GEMV's shape (N clipped to 256 rows) */
        hsdr_validation val;
        hsdr_validate_sample(v, g[0].shape->K, g[0].shape->N, g[0].dist, o.seed, 8, 12, &val);
        hsdr_case c = {.variant = v, .R = 1, .dist = g[0].dist, .mode = HSDR_MODE_HOT, .flns_F = 8, .flns_b = 12};
        if (!val.passed) {
            printf("%-14s FAILED VALIDATION (not timed): %s\n", v->name, val.detail);
            rc = HSDR_EXIT_FAIL;
            continue;
        }
        double convert_ns = 0.0;
        int ok = 1;
        for (size_t i = 0; i < ng && ok; i++) {
            hsdr_inputs wi = {.K = g[i].shape->K, .N = g[i].shape->N, .W = g[i].W, .x = x,
                              .weight_bytes = (size_t)g[i].shape->N * (g[i].shape->K / HSDR_QK) * 28};
            hsdr_case ci = c;
            ci.K = wi.K, ci.N = wi.N, ci.threads = o.threads;
            /* one copy per GEMV: a token visits every GEMV's weights once, in model order */
            if (hsdr_timing_setup_create(&ts[i], &ci, &wi, o.threads, HSDR_MODE_HOT, v->device ? NULL : pool, NULL,
                                         err, sizeof err) != 0) {
                printf("%-14s ERROR: %s\n", v->name, err);
                ok = 0;
                for (size_t j = 0; j < i; j++)
                    hsdr_timing_setup_free(&ts[j]);
            }
            convert_ns += ts[i].convert_ns;
        }
        if (!ok) {
            rc = HSDR_EXIT_FAIL;
            continue;
        }
        memset(gemv_ns, 0, sizeof(double) * ng);
        double ceiling_v = ceiling, device_sum = 0.0;
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
        ok = hsdr_measure(subjp, (int)ng, &tokens, st, err, sizeof err) == 0;
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
        /* extrapolation to the whole model: mean time of each layer kind, times the model's count of that kind */
        double attn_sum = 0, other_sum = 0, head_ns = 0;
        for (size_t i = 0; i < ng; i++) {
            double per_token = gemv_ns[i] / o.tokens;
            if (g[i].layer < 0)
                head_ns = per_token;
            else if (hsdr_model_layer_is_attn(model, g[i].layer))
                attn_sum += per_token;
            else
                other_sum += per_token;
        }
        int other_layers = o.layers - attn_layers, model_attn = hsdr_model_attn_layers(model);
        double full_ns = NAN;
        if ((attn_layers > 0 || model_attn == 0) && (other_layers > 0 || model->n_layers == model_attn))
            full_ns = head_ns + (attn_layers ? attn_sum / attn_layers * model_attn : 0) +
                      (other_layers ? other_sum / other_layers * (model->n_layers - model_attn) : 0);
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
        if (v->device) {
            cJSON_AddStringToObject(vo, "device", v->device->describe());
            cJSON_AddStringToObject(vo, "timing", "one CUDA graph per token, replayed back to back (device clock)");
        }
        cJSON_AddNumberToObject(vo, "convert_ms", convert_ns / 1e6);
        cJSON *br = cJSON_AddArrayToObject(vo, "per_gemv");
        for (size_t i = 0; i < ng; i++) {
            cJSON *go = cJSON_CreateObject();
            cJSON_AddStringToObject(go, "tensor", g[i].shape->tensor);
            cJSON_AddNumberToObject(go, "layer", g[i].layer);
            cJSON_AddNumberToObject(go, "K", g[i].shape->K);
            cJSON_AddNumberToObject(go, "N", g[i].shape->N);
            cJSON_AddNumberToObject(go, "mean_ns", gemv_ns[i] / o.tokens);
            cJSON_AddItemToArray(br, go);
            hsdr_timing_setup_free(&ts[i]);
        }
        cJSON_AddItemToArray(vres, vo);
        /* per-tensor breakdown (summed over the measured layers) */
        printf("  per tensor:");
        for (size_t i = 0; i < ng; i++) {
            int first = 1;
            for (size_t j = 0; j < i; j++)
                first &= strcmp(g[j].shape->tensor, g[i].shape->tensor) != 0;
            if (!first)
                continue;
            double s = 0;
            for (size_t j = i; j < ng; j++)
                if (strcmp(g[j].shape->tensor, g[i].shape->tensor) == 0)
                    s += gemv_ns[j] / o.tokens;
            /* a device: shares of the separately launched GEMVs (the graph overlaps their launches) */
            printf(" %s %.1f%%", g[i].shape->tensor, 100.0 * s / (v->device ? device_sum : med));
        }
        printf("\n");
    }
    printf("* full ms: the whole %d-layer model%s extrapolated from the measured layers' mean per layer kind (needs "
           "at least one layer of each kind).\n",
           model->n_layers, o.head ? " with head" : "");
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
    hsdr_pool_destroy(pool);
out:
    for (size_t i = 0; i < ng; i++)
        free(g[i].W);
    free(g);
    return rc;
}
