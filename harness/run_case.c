/* The run's cases (run_case.h): per configuration, inputs, validation first, then the rounds of timing and the
 * per-stage attribution; the rows. Depends on the blocks of inputs, validation, timing, bandwidth (the ceilings),
 * matrix and results. */
#include "run_case.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "breakeven.h"
#include "case.h"
#include "gguf_model.h"
#include "inputs.h"
#include "inspect.h"
#include "machine.h"
#include "matrix.h"
#include "ptq1_0.h"
#include "results.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

/* ---- thread pools: one per thread count, created on first use, pinned ---- */

static hsdr_pool *pool_for(pools *p, int threads, char *err, size_t errlen)
{
    if (threads < 1 || threads > 64) {
        hsdr_errorf(err, errlen, "threads=%d outside 1..64", threads);
        return NULL;
    }
    if (!p->pool[threads])
        p->pool[threads] = hsdr_pool_create(threads, 1, err, errlen);
    return p->pool[threads];
}

/* ---- JSON helpers ---- */

static void add_nullable(cJSON *o, const char *name, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, name);
    else
        cJSON_AddNumberToObject(o, name, v);
}

/* The tensor of a case whose shape is "gguf:NAME" (its index in rs->model), or -1. */
static long gguf_index(const run_state *rs, const hsdr_case *c)
{
    if (!rs->model || strncmp(c->shape, "gguf:", 5) != 0)
        return -1;
    const hsdr_gguf_gemv *g = hsdr_gguf_model_find(rs->model, c->shape + 5);
    return g ? (long)(g - rs->model->gemv) : -1;
}

/* The data_hash of tensor i of the model as stored in the file (computed once). */
static const char *gguf_hash(const run_state *rs, long i)
{
    char *h = rs->gguf_hash[i];
    if (!h[0]) {
        const char *name = rs->model->gemv[i].name;
        for (uint64_t k = 0; k < rs->model->file.n_tensors; k++) {
            const gguf_tensor *t = &rs->model->file.tensors[k];
            if (gguf_str_eq(t->name, name))
                snprintf(h, 17, "%016llx", (unsigned long long)hsdr_inspect_hash(t->data, t->bytes));
        }
    }
    return h;
}

/* The base name of a path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static cJSON *case_row(const run_state *rs, const hsdr_case *c, const char *key)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "schema", HSDR_RESULTS_SCHEMA);
    cJSON_AddStringToObject(row, "key", key);
    cJSON_AddStringToObject(row, "variant", c->variant->name);
    cJSON_AddStringToObject(row, "backend", c->variant->backend);
    cJSON_AddStringToObject(row, "family", c->variant->family);
    cJSON_AddNumberToObject(row, "K", c->K);
    cJSON_AddNumberToObject(row, "N", c->N);
    cJSON_AddNumberToObject(row, "R", c->R);
    cJSON_AddNumberToObject(row, "cols", c->cols > 1 ? c->cols : 1);
    cJSON_AddNumberToObject(row, "threads", c->threads);
    cJSON_AddStringToObject(row, "distribution", hsdr_dist_name(c->dist));
    cJSON_AddStringToObject(row, "mode", hsdr_mode_name(c->mode));
    if (c->variant->uses_flns) {
        cJSON_AddNumberToObject(row, "flns_F", c->flns_F);
        cJSON_AddNumberToObject(row, "flns_b", c->flns_b);
    }
    cJSON_AddStringToObject(row, "shape", c->shape);
    const long gi = gguf_index(rs, c);
    if (gi >= 0) {
        cJSON_AddStringToObject(row, "gguf_file", base_name(rs->model->path));
        cJSON_AddStringToObject(row, "gguf_data_hash", gguf_hash(rs, gi));
        if (rs->acts) {
            cJSON_AddStringToObject(row, "activations", rs->acts->path);
            cJSON_AddNumberToObject(row, "token", rs->opt->token);
        }
    }
    cJSON_AddNumberToObject(row, "seed", (double)c->seed);
    cJSON_AddNumberToObject(row, "weight_bytes", (double)((size_t)c->N * (c->K / HSDR_QK) * HSDR_PTQ1_0_BYTES));
    return row;
}

static void set_error(cJSON *row, const char *message, char *line, size_t linen)
{
    cJSON_AddStringToObject(row, "status", "error");
    cJSON_AddStringToObject(row, "error_message", message);
    snprintf(line, linen, "ERROR: %s", message);
}

static int critical_path(const hsdr_variant *v, int K)
{
    int d = 0, G = K / HSDR_QK;
    for (int s = 0; s < HSDR_STAGE_COUNT; s++)
        if (s != HSDR_STAGE_CONVERT)
            d += v->depth[s];
    if (v->merge_is_tree) {
        int lg = 0;
        while ((1 << lg) < G)
            lg++;
        return d + lg;
    }
    return d + G - 1;
}

/* NMSE and max |err| / max |ref| of y against a reference vector. */
static void output_error(const float *y, const double *ref, int N, double *nmse, double *max_rel)
{
    double num = 0.0, den = 0.0, emax = 0.0, rmax = 0.0;
    for (int r = 0; r < N; r++) {
        double v = (double)y[r], e = v - ref[r];
        num += e * e;
        den += ref[r] * ref[r];
        emax = fmax(emax, fabs(e));
        rmax = fmax(rmax, fabs(ref[r]));
    }
    *nmse = den > 0 ? num / den : 0.0;
    *max_rel = rmax > 0 ? emax / rmax : 0.0;
}

/* ---- one configuration ---- */

/* Each sample follows an untimed launch of the same subject: in a round the launch before would otherwise be
 * another variant's, whose code, tables and activations displace this one's (hot: and whose weights displace this
 * one's weights). Hot, the untimed launch reads the same weights; cold, the previous copy of the rotation, so the
 * timed launch still finds its weights in no cache. Measured on epyc-2c-vm: cpu.production at 5120 x 17408 cold has a
 * relative spread of 0.1-2 % on its own and 9 % in rounds without this. */
static hsdr_timing_policy main_policy(const hsdr_matrix *m, hsdr_mode mode)
{
    (void)mode;
    return (hsdr_timing_policy){m->warmup, m->min_reps, m->max_reps, m->noise_target, m->time_limit_s, 0.0, 1};
}

/* One visit's share of the main policy: the rounds, their minimum and the time limit split over the visits. A visit
 * stops on the noise target only after 3 rounds of its own (the spread of one or two samples says nothing), unless
 * the matrix asks for fewer in all. */
static hsdr_timing_policy visit_policy(const hsdr_matrix *m, hsdr_mode mode)
{
    hsdr_timing_policy p = main_policy(m, mode);
    const int v = m->visits > 1 ? m->visits : 1;
    const int floor_min = p.min_reps < 3 ? p.min_reps : 3;
    p.min_reps = (p.min_reps + v - 1) / v;
    p.min_reps = p.min_reps < floor_min ? floor_min : p.min_reps < 1 ? 1 : p.min_reps;
    p.max_reps = (p.max_reps + v - 1) / v;
    p.max_reps = p.max_reps < p.min_reps ? p.min_reps : p.max_reps;
    p.time_limit_s /= v;
    return p;
}

/* Stage measurements get a smaller budget: they attribute time, the headline number is the full run. */
static hsdr_timing_policy stage_policy(const hsdr_matrix *m, hsdr_mode mode)
{
    int min = m->min_reps < 3 ? m->min_reps : 3;
    (void)mode;
    return (hsdr_timing_policy){1, min > 0 ? min : 1, m->max_reps < 50 ? m->max_reps : 50, m->noise_target,
                                m->time_limit_s / 8, 0.0, 1};
}

/* One case of a configuration, or the production variant timed beside them as a companion (its own case filtered
 * or sharded out, or done before a --resume): the pairing needs it in the same rounds. */
typedef struct {
    hsdr_case c;
    size_t index;        /* the case's place in the expansion; SIZE_MAX for a companion */
    char key[256];
    cJSON *row;          /* NULL for a companion */
    char line[768];      /* the progress line */
    int timed;           /* set up, and in the rounds */
    hsdr_timing_setup ts;
    hsdr_subject subject;
    hsdr_stats st;       /* every visit's samples, in round order (the summary is made when the rows are written) */
    int samples_cap;
    int visit_rounds[HSDR_MATRIX_MAX_VISITS]; /* rounds of each visit: the blocks of st's samples */
    int nvisits;
    const char *stop;    /* noise when every visit met the noise target, else why one stopped */
    int production;      /* the member of its backend's production variant, or -1 */
    double ceiling_bps;  /* NaN when not measured */
    cJSON *ceiling;      /* the row's "ceiling" object (owned until added to the row) */
} member;

/* The two configurations' cases run in the same rounds: same inputs, threads and mode. */
static int same_configuration(const hsdr_case *a, const hsdr_case *b)
{
    return a->K == b->K && a->N == b->N && a->dist == b->dist && a->seed == b->seed && a->threads == b->threads &&
           a->mode == b->mode && strcmp(a->shape, b->shape) == 0;
}

/* Bytes of the read that is the ceiling of member x: a device reads the same bytes per launch; the host reads a
 * working set of this footprint (rounded up to a power of two, so that close sizes share one) when hot, 64 MiB from
 * DRAM when cold. */
static size_t ceiling_bytes(const member *x, const hsdr_inputs *in)
{
    if (x->c.variant->device)
        return in->weight_bytes;
    if (x->c.mode == HSDR_MODE_COLD)
        return (size_t)64 << 20;
    size_t rounded = 1;
    while (rounded < in->weight_bytes)
        rounded <<= 1;
    return rounded;
}

/* The ceiling of member x (measured now when none of its key is recent enough), as the row's fields. */
static void member_ceiling(run_state *rs, member *x, const hsdr_inputs *in, hsdr_pool *pool)
{
    const hsdr_bw_result *bw;
    char err[512];
    x->ceiling_bps = NAN;
    if (hsdr_ceiling(x->c.variant->device ? x->c.variant : NULL, pool, ceiling_bytes(x, in), x->c.mode,
                     rs->m->ceiling_interval_s, &bw, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s: ceiling: %s\n", x->key, err);
        return;
    }
    x->ceiling_bps = bw->bytes_per_s;
    x->ceiling = cJSON_CreateObject();
    cJSON_AddNumberToObject(x->ceiling, "bytes", (double)bw->bytes);
    cJSON_AddNumberToObject(x->ceiling, "rel_spread", bw->time.rel_spread);
    cJSON_AddNumberToObject(x->ceiling, "reps", bw->time.reps);
    cJSON_AddNumberToObject(x->ceiling, "age_s", bw->measured_at_ns); /* made an age once the rounds are over */
    cJSON *s = cJSON_AddArrayToObject(x->ceiling, "samples_ns");
    for (int i = 0; i < bw->time.reps; i++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber(bw->time.samples[i]));
}

/* Set up member x (validated already) and warm its intermediate buffers with one full run; a host variant that
 * reads PTQ1_0 as stored uses the configuration's shared copies (made on first use). 0, or -1 with a message. */
static int member_setup(member *x, const hsdr_inputs *in, hsdr_pool *pool, hsdr_weight_copies *shared,
                        int *have_shared, char *err, size_t errlen)
{
    const hsdr_variant *v = x->c.variant;
    if (!v->device && !pool)
        return -1; /* err holds why there is no pool */
    if (!*have_shared && !v->device && !v->prepare) {
        if (hsdr_weight_copies_create(shared, in->W, in->weight_bytes, x->c.mode, err, errlen) != 0)
            return -1;
        *have_shared = 1;
    }
    if (hsdr_timing_setup_create(&x->ts, &x->c, in, x->c.threads, x->c.mode, v->device ? NULL : pool,
                                 *have_shared ? shared : NULL, err, errlen) != 0)
        return -1;
    if (hsdr_timing_run_serial(&x->ts) != 0) {
        snprintf(err, errlen, "%s", x->ts.err);
        hsdr_timing_setup_free(&x->ts);
        return -1;
    }
    hsdr_timing_subject(&x->ts, -1, 0, 0, &x->subject);
    x->timed = 1;
    static int warned;
    const size_t cycled = v->device ? 0 : x->ts.wc->rot.n * x->ts.wc->bytes, llc = hsdr_machine_llc_bytes();
    if (x->row && !v->device)
        cJSON_AddNumberToObject(x->row, "bytes_cycled", (double)cycled);
    if (x->c.mode == HSDR_MODE_COLD && !v->device && cycled <= 4 * llc && !warned++)
        fprintf(stderr, "hsdr run: %s: its cold copies cycle %.0f MB, not over 4x the %.0f MB last-level cache: the "
                "setups in flight share half the memory (first such case; others may be too)\n", x->key,
                (double)cycled / 1e6, (double)llc / 1e6);
    return 0;
}

/* The member of variant p (one column), or -1. */
static int find_variant(const member *g, size_t ng, const hsdr_variant *p)
{
    for (size_t j = 0; j < ng; j++)
        if (g[j].c.variant == p && g[j].c.cols <= 1)
            return (int)j;
    return -1;
}

/* Stage times of member x: each stage alone, and by ablation -- the full run, the full run without the stage and
 * with it twice, measured in rounds so that the deltas are per round. */
static void time_stages(run_state *rs, member *x, char *dominant, size_t dn)
{
    const hsdr_variant *v = x->c.variant;
    const hsdr_timing_policy pol = stage_policy(rs->m, x->c.mode);
    cJSON *stages = cJSON_AddObjectToObject(x->row, "stages");
    double best = -1.0;
    char err[512];
    dominant[0] = '\0';
    for (int s = 0; s < HSDR_STAGE_COUNT; s++) {
        if (s == HSDR_STAGE_CONVERT || !(v->stages & HSDR_STAGE_BIT(s)))
            continue;
        double alone = NAN, removed = NAN, doubled = NAN;
        if (rs->opt->stages != STAGES_ABLATION && (v->stage || v->device)) {
            hsdr_subject a;
            hsdr_stats st;
            hsdr_timing_subject(&x->ts, s, 0, 0, &a);
            hsdr_subject *one = &a;
            if (hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0) {
                alone = st.median;
                hsdr_stats_free(&st);
            }
        }
        if (rs->opt->stages != STAGES_ALONE && (v->ablatable & HSDR_STAGE_BIT(s))) {
            hsdr_subject full, skip, twice;
            hsdr_stats st[3];
            hsdr_timing_subject(&x->ts, -1, 0, 0, &full);
            hsdr_timing_subject(&x->ts, -1, HSDR_STAGE_BIT(s), 0, &skip);
            hsdr_timing_subject(&x->ts, -1, 0, HSDR_STAGE_BIT(s), &twice);
            hsdr_subject *three[3] = {&full, &skip, &twice};
            if (hsdr_measure(three, 3, &pol, st, err, sizeof err) == 0) {
                double *d = malloc(sizeof(double) * (size_t)st[0].reps);
                if (d) {
                    for (int r = 0; r < st[0].reps; r++)
                        d[r] = st[0].samples[r] - st[1].samples[r];
                    qsort(d, (size_t)st[0].reps, sizeof *d, hsdr_cmp_double);
                    removed = hsdr_sorted_median(d, (size_t)st[0].reps);
                    for (int r = 0; r < st[0].reps; r++)
                        d[r] = st[2].samples[r] - st[0].samples[r];
                    qsort(d, (size_t)st[0].reps, sizeof *d, hsdr_cmp_double);
                    doubled = hsdr_sorted_median(d, (size_t)st[0].reps);
                    free(d);
                }
                for (int k = 0; k < 3; k++)
                    hsdr_stats_free(&st[k]);
            }
        }
        cJSON *o = cJSON_AddObjectToObject(stages, hsdr_stage_name((hsdr_stage)s));
        add_nullable(o, "alone_ns", alone);
        add_nullable(o, "ablation_ns", removed);
        add_nullable(o, "doubled_ns", doubled);
        /* dominant: the largest isolated cost, else the largest ablation delta */
        double score = !isnan(alone) ? alone : removed;
        if (!isnan(score) && score > best) {
            best = score;
            snprintf(dominant, dn, "%s", hsdr_stage_name((hsdr_stage)s));
        }
    }
}

/* The timing fields of member x's row, from its rounds (x->st) and its production member's. */
static void fill_timed_row(run_state *rs, member *g, member *x, const hsdr_inputs *in, double rounds_end_ns)
{
    const hsdr_variant *v = x->c.variant;
    cJSON *row = x->row;
    const hsdr_stats *st = &x->st;
    cJSON_AddStringToObject(row, "status", "ok");
    if (v->device)
        cJSON_AddStringToObject(row, "device", v->device->describe());
    const double ceiling = x->ceiling_bps, floor_ns = ceiling > 0 ? (double)in->weight_bytes / ceiling * 1e9 : NAN;
    add_nullable(row, "ceiling_bytes_per_s", ceiling);
    if (x->ceiling) {
        cJSON *age = cJSON_GetObjectItemCaseSensitive(x->ceiling, "age_s");
        cJSON_SetNumberValue(age, (rounds_end_ns - age->valuedouble) * 1e-9);
        cJSON_AddItemToObject(row, "ceiling", x->ceiling);
        x->ceiling = NULL;
    } else {
        cJSON_AddNullToObject(row, "ceiling");
    }
    add_nullable(row, "bytes_floor_ns", floor_ns);
    hsdr_results_add_time(row, "time_ns", st, "samples_ns");
    cJSON_AddItemToObject(row, "rounds_per_visit", cJSON_CreateIntArray(x->visit_rounds, x->nvisits));
    const double gbs = (double)in->weight_bytes / st->median;
    cJSON_AddNumberToObject(row, "gb_per_s", gbs);
    add_nullable(row, "pct_of_ceiling", 100.0 * floor_ns / st->median);
    /* paired: the median of the per-round ratios to the production variant, sampled right before this one in every
     * round */
    const member *p = x->production >= 0 ? &g[x->production] : NULL;
    double ratio = NAN, lo = NAN, hi = NAN;
    if (p && p == x)
        ratio = lo = hi = 1.0;
    else if (p && st->ref_samples)
        hsdr_paired_ratio(st->samples, st->ref_samples, (size_t)st->reps, x->visit_rounds, x->nvisits, 0.95, &ratio,
                          &lo, &hi);
    if (isnan(ratio))
        p = NULL;
    add_nullable(row, "ratio_to_production", ratio);
    if (isnan(ratio)) {
        cJSON_AddNullToObject(row, "ratio_to_production_ci");
        cJSON_AddNullToObject(row, "ratio_to_production_samples");
        cJSON_AddNullToObject(row, "production_variant");
    } else {
        cJSON *ci = cJSON_AddArrayToObject(row, "ratio_to_production_ci");
        cJSON_AddItemToArray(ci, cJSON_CreateNumber(lo));
        cJSON_AddItemToArray(ci, cJSON_CreateNumber(hi));
        if (p == x) {
            cJSON_AddNullToObject(row, "ratio_to_production_samples");
        } else {
            cJSON *rsamp = cJSON_AddArrayToObject(row, "ratio_to_production_samples");
            for (int r = 0; r < st->reps; r++)
                cJSON_AddItemToArray(rsamp, cJSON_CreateNumber(st->samples[r] / st->ref_samples[r]));
        }
        cJSON_AddStringToObject(row, "production_variant", p->c.variant->name);
    }
    char dominant[32] = "";
    if (rs->opt->stages != STAGES_NONE)
        time_stages(rs, x, dominant, sizeof dominant);
    if (dominant[0])
        cJSON_AddStringToObject(row, "dominant_stage", dominant);
    else
        cJSON_AddNullToObject(row, "dominant_stage");
    if (v->prepare || (v->stages & HSDR_STAGE_BIT(HSDR_STAGE_CONVERT))) { /* host (prepare) or device conversion */
        cJSON *cv = cJSON_AddObjectToObject(row, "convert");
        cJSON_AddNumberToObject(cv, "time_ns", x->ts.convert_ns);
        cJSON_AddNumberToObject(cv, "footprint_bytes", (double)x->ts.footprint);
        /* the bytes this variant actually streams: its converted footprint (the row's gb_per_s and pct_of_ceiling
         * stay on the PTQ1_0 bytes, the format floor every variant is compared with) */
        cJSON_AddNumberToObject(cv, "gb_per_s", (double)x->ts.footprint / st->median);
        add_nullable(cv, "pct_of_ceiling",
                     ceiling > 0 ? 100.0 * (double)x->ts.footprint / ceiling * 1e9 / st->median : NAN);
    } else {
        cJSON_AddNullToObject(row, "convert");
    }
    if (!v->needs_x) {
        cJSON *oc = cJSON_AddObjectToObject(row, "occupancy");
        cJSON_AddNumberToObject(oc, "mean", in->occ_mean);
        cJSON_AddNumberToObject(oc, "p5", in->occ_p5);
        cJSON_AddNumberToObject(oc, "p95", in->occ_p95);
    }
    cJSON_AddNumberToObject(row, "critical_path_depth", critical_path(v, x->c.K));
    /* output error of the timed path, column 0 (y from a run now: validated above, deterministic) */
    if (hsdr_timing_run_serial(&x->ts) != 0)
        for (int r = 0; r < in->N; r++)
            x->ts.exec.y[r] = NAN; /* the device failed now: the error fields say so (NaN) */
    double nmse, max_rel, pnmse, pmax;
    output_error(x->ts.exec.y, in->y_exact, in->N, &nmse, &max_rel);
    output_error(in->y_q8, in->y_exact, in->N, &pnmse, &pmax);
    cJSON *eo = cJSON_AddObjectToObject(row, "error");
    add_nullable(eo, "nmse", nmse);
    add_nullable(eo, "max_rel", max_rel);
    cJSON_AddNumberToObject(eo, "production_nmse", pnmse);
    cJSON_AddNumberToObject(eo, "production_max_rel", pmax);
    char rbuf[48] = "";
    if (p && p != x)
        snprintf(rbuf, sizeof rbuf, "  %.3fx prod [%.3f, %.3f]", ratio, lo, hi);
    snprintf(x->line, sizeof x->line, "%10.1f us  %6.2f GB/s  %5.1f%% of %.1f GB/s %s ceiling%s%s%s",
             st->median / 1e3, gbs, 100.0 * floor_ns / st->median, ceiling / 1e9, hsdr_mode_name(x->c.mode), rbuf,
             dominant[0] ? "  dominant: " : "", dominant);
}

/* Inputs shared by the configurations in flight that draw the same ones (K, N, distribution, seed). */
typedef struct {
    hsdr_inputs in;
    int refs, ok;
    char err[512];
} shared_inputs;

/* One configuration: its cases (idx[0..n) of the expansion), their members and companions, set up once and visited
 * `visits` times; its rows exist once it is closed. */
typedef struct {
    const size_t *idx;
    size_t n;
    shared_inputs *in;
    member *g;
    size_t ng;
    hsdr_weight_copies shared;
    int have_shared;
    hsdr_subject **subjects;
    hsdr_stats *stats;
    int visits;
    double rounds_end;
} configuration;

/* Set up configuration cf (its inputs built): validate each case, set up every one that passes plus its backend's
 * production variant when that is not among them. Once stop() says so, the rest is left unset (the run discards the
 * configuration at the pass boundary): a signal does not wait for a configuration's setups (cold copies, conversions,
 * validation: tens of seconds at model sizes). */
static void config_open(run_state *rs, configuration *cf, int (*stop)(void))
{
    const hsdr_inputs *in = &cf->in->in;
    const size_t n = cf->n;
    char err[512];
    cf->g = calloc(2 * n, sizeof *cf->g); /* the cases, then at most one companion per case */
    cf->subjects = calloc(2 * n, sizeof *cf->subjects);
    cf->stats = calloc(2 * n, sizeof *cf->stats);
    if (!cf->g || !cf->subjects || !cf->stats || !cf->in->ok) {
        snprintf(err, sizeof err, "%s", cf->in->ok ? "out of memory" : cf->in->err);
        free(cf->g);
        cf->g = NULL;
        return; /* config_close writes the error rows */
    }
    member *g = cf->g;
    /* the cases, a companion and the shared copies, in each of the configurations in flight */
    hsdr_timing_copy_share((size_t)(rs->m->visits > 1 ? rs->m->visits : 1) * (n + 2));
    const hsdr_case *first = &rs->m->cases[cf->idx[0]];
    hsdr_pool *pool = pool_for(&rs->pools, first->threads, err, sizeof err);
    for (size_t i = 0; i < n && !stop(); i++) {
        member *x = &g[cf->ng++];
        x->c = rs->m->cases[cf->idx[i]];
        x->index = cf->idx[i];
        hsdr_case_key(&x->c, x->key, sizeof x->key);
        x->row = case_row(rs, &x->c, x->key);
        hsdr_validation val;
        hsdr_validate(&x->c, in, &val);
        cJSON *vo = cJSON_AddObjectToObject(x->row, "validation");
        cJSON_AddBoolToObject(vo, "passed", val.passed);
        cJSON_AddStringToObject(vo, "detail", val.detail);
        if (!val.passed) {
            cJSON_AddStringToObject(x->row, "status", "failed");
            snprintf(x->line, sizeof x->line, "FAILED validation: %s", val.detail);
        } else if (member_setup(x, in, pool, &cf->shared, &cf->have_shared, err, sizeof err) != 0) {
            set_error(x->row, err, x->line, sizeof x->line);
        }
    }
    /* each backend's production variant: among the cases, or a companion validated and set up here */
    for (size_t i = 0; i < cf->ng; i++)
        g[i].production = -1;
    for (size_t i = 0, cases = cf->ng; i < cases && !stop(); i++) {
        const hsdr_variant *p = g[i].timed ? hsdr_backend_production(g[i].c.variant->backend) : NULL;
        if (!p)
            continue;
        int j = find_variant(g, cf->ng, p);
        if (j < 0 && !hsdr_variant_unavailable(p) && hsdr_variant_timed(p)) {
            member *x = &g[j = (int)cf->ng++];
            x->c = g[i].c;
            x->c.variant = p;
            x->c.R = 1;
            x->c.cols = 1;
            x->index = SIZE_MAX;
            x->production = -1;
            hsdr_case_key(&x->c, x->key, sizeof x->key);
            hsdr_validation val;
            hsdr_validate(&x->c, in, &val);
            if (!val.passed)
                fprintf(stderr, "hsdr run: %s (timed beside the cases for their ratios) FAILED validation: %s\n",
                        x->key, val.detail);
            else if (member_setup(x, in, pool, &cf->shared, &cf->have_shared, err, sizeof err) != 0)
                fprintf(stderr, "hsdr run: %s (timed beside the cases for their ratios): %s\n", x->key, err);
        }
        if (j >= 0 && g[j].timed)
            g[i].production = j;
    }
}

/* Member x leaves the rounds with message why (an error row, or a note for a companion). */
static void member_drop(member *x, const char *why)
{
    x->timed = 0;
    if (x->row)
        set_error(x->row, why, x->line, sizeof x->line);
    else
        fprintf(stderr, "hsdr run: %s (companion): %s\n", x->key, why);
    hsdr_timing_setup_free(&x->ts);
}

/* Append a visit's samples of member x (and of its reference, sampled beside them). 0, or -1 out of memory. */
static int member_append(member *x, const hsdr_stats *st)
{
    if (x->st.reps + st->reps > x->samples_cap) {
        int cap = 2 * (x->st.reps + st->reps);
        double *grown = realloc(x->st.samples, sizeof(double) * (size_t)cap);
        if (!grown)
            return -1;
        x->st.samples = grown;
        if (st->ref_samples) {
            grown = realloc(x->st.ref_samples, sizeof(double) * (size_t)cap);
            if (!grown)
                return -1;
            x->st.ref_samples = grown;
        }
        x->samples_cap = cap;
    }
    memcpy(x->st.samples + x->st.reps, st->samples, sizeof(double) * (size_t)st->reps);
    if (st->ref_samples && x->st.ref_samples)
        memcpy(x->st.ref_samples + x->st.reps, st->ref_samples, sizeof(double) * (size_t)st->reps);
    x->st.reps += st->reps;
    if (x->nvisits < HSDR_MATRIX_MAX_VISITS)
        x->visit_rounds[x->nvisits++] = st->reps;
    x->st.launches_per_sample = st->launches_per_sample;
    x->stop = !x->stop || strcmp(st->stop, "noise") != 0 ? st->stop : x->stop;
    return 0;
}

/* One visit: the ceilings (measured now only when none of the same key is recent enough), then the rounds of every
 * member still timed; a subject that fails leaves them with its error, and the others are measured again. */
static void config_visit(run_state *rs, configuration *cf)
{
    if (!cf->g)
        return;
    member *g = cf->g;
    const hsdr_inputs *in = &cf->in->in;
    const hsdr_case *first = &rs->m->cases[cf->idx[0]];
    char err[512];
    hsdr_pool *pool = pool_for(&rs->pools, first->threads, err, sizeof err);
    for (size_t i = 0; i < cf->ng; i++)
        if (g[i].timed && g[i].row) {
            cJSON_Delete(g[i].ceiling);
            g[i].ceiling = NULL;
            member_ceiling(rs, &g[i], in, pool);
        }
    const hsdr_timing_policy pol = visit_policy(rs->m, first->mode);
    for (;;) {
        size_t ns = 0;
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].timed) {
                const int p = g[i].production;
                g[i].subject.ref = p >= 0 && (size_t)p != i && g[p].timed ? &g[p].subject : NULL;
                cf->subjects[ns++] = &g[i].subject;
            }
        if (ns == 0)
            break;
        for (size_t i = 0; i < ns; i++)
            cf->subjects[i]->err[0] = '\0';
        if (hsdr_measure(cf->subjects, (int)ns, &pol, cf->stats, err, sizeof err) == 0) {
            for (size_t i = 0, k = 0; i < cf->ng; i++)
                if (g[i].timed) {
                    if (member_append(&g[i], &cf->stats[k]) != 0)
                        member_drop(&g[i], "out of memory for samples");
                    hsdr_stats_free(&cf->stats[k++]);
                }
            cf->rounds_end = hsdr_now_ns();
            break;
        }
        int blamed = 0; /* none: the engine itself failed (out of memory), and every subject leaves */
        for (size_t i = 0; i < cf->ng; i++)
            blamed |= g[i].timed && g[i].subject.err[0];
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].timed && (g[i].subject.err[0] || !blamed))
                member_drop(&g[i], blamed ? g[i].subject.err : err);
    }
    cf->visits++;
}

/* Free what configuration cf holds; the rows still in it too (a configuration left unfinished: no rows). */
static void config_discard(configuration *cf)
{
    for (size_t i = 0; cf->g && i < cf->ng; i++) {
        if (cf->g[i].timed)
            hsdr_timing_setup_free(&cf->g[i].ts);
        hsdr_stats_free(&cf->g[i].st);
        cJSON_Delete(cf->g[i].ceiling);
        cJSON_Delete(cf->g[i].row);
    }
    if (cf->have_shared)
        hsdr_weight_copies_free(&cf->shared);
    free(cf->g);
    free(cf->subjects);
    free(cf->stats);
    cf->g = NULL;
}

/* Write the rows of configuration cf into rows[]: error rows when it could not be set up, else every case's row
 * from the samples of all visits; then free it. */
static void config_close(run_state *rs, configuration *cf, cJSON **rows)
{
    member *g = cf->g;
    if (!g) {
        for (size_t i = 0; i < cf->n; i++) {
            const hsdr_case *c = &rs->m->cases[cf->idx[i]];
            char key[256], line[768];
            hsdr_case_key(c, key, sizeof key);
            rows[cf->idx[i]] = case_row(rs, c, key);
            set_error(rows[cf->idx[i]], cf->in->ok ? "out of memory" : cf->in->err, line, sizeof line);
            if (!rs->opt->quiet)
                printf("[%zu/%zu %.0fs] %s: %s\n", cf->idx[i] + 1, rs->m->ncases,
                       (hsdr_now_ns() - rs->t_start) / 1e9, key, line);
        }
    } else {
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].production >= 0 && !g[g[i].production].timed)
                g[i].production = -1;
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].timed) {
                g[i].st.stop = g[i].stop;
                hsdr_stats_summarize(&g[i].st);
            }
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].timed && g[i].row)
                fill_timed_row(rs, g, &g[i], &cf->in->in, cf->rounds_end);
        for (size_t i = 0; i < cf->ng; i++)
            if (g[i].row) { /* handed over: config_discard frees the rest */
                rows[g[i].index] = g[i].row;
                g[i].row = NULL;
                if (!rs->opt->quiet)
                    printf("[%zu/%zu %.0fs] %s: %s\n", g[i].index + 1, rs->m->ncases,
                           (hsdr_now_ns() - rs->t_start) / 1e9, g[i].key, g[i].line);
            }
    }
    config_discard(cf);
}


/* The configurations of a run in flight (heap: the setups point into them) and the cases not opened yet. */
typedef struct {
    configuration *open[HSDR_MATRIX_MAX_VISITS];
    int nopen;
    size_t next;      /* the first case not looked at */
    size_t *idx, nidx; /* the opened configurations' case lists, one after the other */
    int out_of_memory; /* the run ends at the pass boundary, as when stopped */
} flight;

/* The inputs of case c: for a shape "gguf:NAME" the tensor's weights (a shape of a tensor the model does not hold is
 * an error: the matrix and the file disagree), else random ones; the activations drawn from c's distribution. */
static int case_inputs(const run_state *rs, const hsdr_case *c, hsdr_inputs *in, char *err, size_t errlen)
{
    if (strncmp(c->shape, "gguf:", 5) != 0)
        return hsdr_inputs_build(in, c->K, c->N, c->dist, c->seed, err, errlen);
    const long gi = gguf_index(rs, c);
    if (gi < 0)
        return hsdr_errorf(err, errlen, "shape %s: %s", c->shape,
                           rs->model ? "no such ternary tensor in the --gguf file" : "needs --gguf FILE");
    const hsdr_gguf_gemv *g = &rs->model->gemv[gi];
    if (g->K != c->K || g->N != c->N)
        return hsdr_errorf(err, errlen, "shape %s: the case has K=%d N=%d, the tensor is %dx%d", c->shape, c->K, c->N,
                           g->K, g->N);
    const float *x = NULL;
    if (rs->acts) {
        const hsdr_act_set *s = hsdr_activations_find(rs->acts, g->name);
        if (!s || s->K != g->K || rs->opt->token >= s->T) /* checked before the run (hsdr_run_check_activations) */
            return hsdr_errorf(err, errlen, "shape %s: no activation of token %d and width %d", c->shape,
                               rs->opt->token, g->K);
        x = s->x + (size_t)rs->opt->token * (size_t)s->K;
    }
    return hsdr_inputs_build_from(in, c->K, c->N, g->W, x, c->dist, c->seed, err, errlen);
}

/* Open the configuration of the next case not done (the consecutive cases that share inputs, threads and mode: the
 * expansion's order), on inputs shared with a configuration in flight that draws the same ones. NULL when no case
 * is left, or out of memory (said). */
static configuration *config_next(run_state *rs, cJSON **rows, flight *f, int (*stop)(void))
{
    const hsdr_matrix *m = rs->m;
    while (f->next < m->ncases && rows[f->next])
        f->next++; /* done before the interruption (--resume) */
    if (f->next == m->ncases)
        return NULL;
    const hsdr_case *c = &m->cases[f->next];
    configuration *cf = calloc(1, sizeof *cf);
    if (!cf) {
        fprintf(stderr, "hsdr run: out of memory\n");
        f->out_of_memory = 1;
        return NULL;
    }
    cf->idx = f->idx + f->nidx;
    for (; f->next < m->ncases && same_configuration(&m->cases[f->next], c); f->next++)
        if (!rows[f->next])
            f->idx[f->nidx + cf->n++] = f->next;
    f->nidx += cf->n;
    for (int k = 0; k < f->nopen && !cf->in; k++) {
        const hsdr_inputs *in = &f->open[k]->in->in;
        if (in->K == c->K && in->N == c->N && in->dist == c->dist && in->seed == c->seed)
            cf->in = f->open[k]->in;
    }
    if (!cf->in && (cf->in = calloc(1, sizeof *cf->in))) {
        if (hsdr_inputs_bytes(c->K, c->N) > hsdr_timing_memory_cap())
            snprintf(cf->in->err, sizeof cf->in->err, "refused: inputs need %zu bytes, above the %zu-byte cap",
                     hsdr_inputs_bytes(c->K, c->N), hsdr_timing_memory_cap());
        else
            cf->in->ok = case_inputs(rs, c, &cf->in->in, cf->in->err, sizeof cf->in->err) == 0;
    }
    if (!cf->in) {
        fprintf(stderr, "hsdr run: out of memory\n");
        f->out_of_memory = 1;
        free(cf);
        return NULL;
    }
    cf->in->refs++;
    config_open(rs, cf, stop);
    return cf;
}

/* Free configuration cf (closed or discarded) and its share of the inputs. */
static void config_free(configuration *cf)
{
    if (--cf->in->refs == 0) {
        hsdr_inputs_free(&cf->in->in);
        free(cf->in);
    }
    free(cf);
}

/* ---- the run: every configuration, a few in flight ---- */

size_t hsdr_run_cases(run_state *rs, cJSON **rows, size_t done, int (*stop)(void),
                      void (*row_done)(const run_state *rs, cJSON *row, void *ctx), void *ctx)
{
    /* The configurations in flight: each pass opens the next one (while fewer than `visits` are open), visits every
     * open one, and closes those visited `visits` times, so that a configuration's visits are spread over the run. */
    const int visits = rs->m->visits > 1 ? rs->m->visits : 1;
    flight fl = {.idx = malloc((rs->m->ncases ? rs->m->ncases : 1) * sizeof *fl.idx)};
    while (fl.idx) {
        if (!stop() && fl.nopen < visits) {
            configuration *cf = config_next(rs, rows, &fl, stop);
            if (cf)
                fl.open[fl.nopen++] = cf;
        }
        if (fl.nopen == 0)
            break;
        if (stop() || fl.out_of_memory) { /* the pass boundary: the configurations in flight leave no rows */
            for (int k = 0; k < fl.nopen; k++) {
                config_discard(fl.open[k]);
                config_free(fl.open[k]);
            }
            fl.nopen = 0;
            break;
        }
        for (int k = 0; k < fl.nopen; k++)
            config_visit(rs, fl.open[k]);
        /* close the oldest while it has had its visits (or could not be set up): the tail of the run, with nothing
         * left to open, has fewer in flight */
        while (fl.nopen > 0 && (fl.open[0]->visits >= visits || !fl.open[0]->g)) {
            configuration *cf = fl.open[0];
            config_close(rs, cf, rows);
            for (size_t k = 0; k < cf->n; k++) {
                cJSON_AddItemReferenceToObject(rows[cf->idx[k]], "context", rs->context);
                done++;
                row_done(rs, rows[cf->idx[k]], ctx);
            }
            config_free(cf);
            memmove(&fl.open[0], &fl.open[1], sizeof fl.open[0] * (size_t)(fl.nopen - 1));
            fl.nopen--;
        }
        fflush(stdout);
    }
    free(fl.idx);
    return done;
}

/* What is known only as the run goes on: the ceilings measured and the pinning of the pools made so far. */
void hsdr_run_add_facts(cJSON *context, const pools *p)
{
    cJSON_AddItemToObject(context, "ceilings", hsdr_bandwidth_log());
    int pinned_all = 1;
    for (int t = 1; t <= 64; t++)
        if (p->pool[t]) {
            pinned_all &= hsdr_pool_pinned(p->pool[t]);
            cJSON_AddStringToObject(context, t == 1 ? "pinning" : "pinning_more", hsdr_pool_pinning(p->pool[t]));
        }
    cJSON_AddBoolToObject(context, "threads_pinned", pinned_all);
}

void hsdr_run_pools_free(pools *p)
{
    for (int t = 0; t <= 64; t++)
        if (p->pool[t])
            hsdr_pool_destroy(p->pool[t]);
}
