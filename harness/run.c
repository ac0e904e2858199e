#include "run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bandwidth.h"
#include "breakeven.h"
#include "case.h"
#include "cli.h"
#include "inputs.h"
#include "machine.h"
#include "matrix.h"
#include "ptq1_0.h"
#include "results.h"
#include "threads.h"
#include "timing.h"
#include "util.h"
#include "validate.h"

enum stage_timing { STAGES_BOTH, STAGES_ALONE, STAGES_ABLATION, STAGES_NONE };

typedef struct {
    const char *matrix_path, *filter, *out_dir;
    int shard_i, shard_n;
    const char **sets;
    int nsets;
    enum stage_timing stages;
    int dry_run, quiet, resume;
} run_options;

/* ---- thread pools: one per thread count, created on first use, pinned ---- */

typedef struct {
    hsdr_pool *pool[65];
} pools;

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

static cJSON *case_row(const hsdr_case *c, const char *key)
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

typedef struct {
    const hsdr_matrix *m;
    const run_options *opt;
    pools pools;
    cJSON *context;
    double t_start; /* hsdr_now_ns() when the cases started */
} run_state;

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
 * production variant when that is not among them. */
static void config_open(run_state *rs, configuration *cf)
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
    const hsdr_case *first = &rs->m->cases[cf->idx[0]];
    hsdr_pool *pool = pool_for(&rs->pools, first->threads, err, sizeof err);
    for (size_t i = 0; i < n; i++) {
        member *x = &g[cf->ng++];
        x->c = rs->m->cases[cf->idx[i]];
        x->index = cf->idx[i];
        hsdr_case_key(&x->c, x->key, sizeof x->key);
        x->row = case_row(&x->c, x->key);
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
    for (size_t i = 0, cases = cf->ng; i < cases; i++) {
        g[i].production = -1;
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
            rows[cf->idx[i]] = case_row(c, key);
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

/* Open the configuration of the next case not done (the consecutive cases that share inputs, threads and mode: the
 * expansion's order), on inputs shared with a configuration in flight that draws the same ones. NULL when no case
 * is left, or out of memory (said). */
static configuration *config_next(run_state *rs, cJSON **rows, flight *f)
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
            cf->in->ok = hsdr_inputs_build(&cf->in->in, c->K, c->N, c->dist, c->seed, cf->in->err,
                                           sizeof cf->in->err) == 0;
    }
    if (!cf->in) {
        fprintf(stderr, "hsdr run: out of memory\n");
        f->out_of_memory = 1;
        free(cf);
        return NULL;
    }
    cf->in->refs++;
    config_open(rs, cf);
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

/* ---- after the run: the summary ---- */

static void print_summary(cJSON **rows, size_t n, const cJSON *be)
{
    printf("\n%-14s %6s %6s %4s %3s %-4s %-10s %11s %7s %6s %7s %-11s\n", "variant", "K", "N", "R", "thr", "mode",
           "dist", "median us", "GB/s", "%ceil", "x prod", "dominant");
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = rows[i];
        const char *status = hsdr_row_str(r, "status");
        printf("%-14s %6.0f %6.0f %4.0f %3.0f %-4s %-10s ", hsdr_row_str(r, "variant"), hsdr_row_num(r, "K"),
               hsdr_row_num(r, "N"), hsdr_row_num(r, "R"), hsdr_row_num(r, "threads"), hsdr_row_str(r, "mode"),
               hsdr_row_str(r, "distribution"));
        if (strcmp(status, "ok") != 0) {
            printf("%s\n", strcmp(status, "failed") == 0 ? "FAILED VALIDATION (not timed)" : "ERROR");
            continue;
        }
        double ratio = hsdr_row_num(r, "ratio_to_production");
        char rbuf[16] = "-";
        if (!isnan(ratio))
            snprintf(rbuf, sizeof rbuf, "%.2f", ratio);
        printf("%11.1f %7.2f %6.1f %7s %-11s\n", hsdr_row_median(r) / 1e3, hsdr_row_num(r, "gb_per_s"),
               hsdr_row_num(r, "pct_of_ceiling"), rbuf, hsdr_row_str(r, "dominant_stage"));
    }
    const cJSON *o;
    if (cJSON_GetArraySize(be) > 0)
        printf("\nbreak-even R (state sets vs direct, time per row fitted as a + b/R):\n");
    cJSON_ArrayForEach(o, be)
    {
        double R = hsdr_row_num(o, "break_even_R");
        printf("  K=%-6.0f threads=%.0f %-10s %-4s %-13s vs %-11s: ", hsdr_row_num(o, "K"), hsdr_row_num(o, "threads"),
               hsdr_row_str(o, "distribution"), hsdr_row_str(o, "mode"), hsdr_row_str(o, "stateset"),
               hsdr_row_str(o, "direct"));
        if (isnan(R))
            printf("none (%s)\n", hsdr_row_str(o, "note"));
        else
            printf("R* = %.1f\n", R);
    }
}

/* ---- the command ---- */

/* 0: options read; 1: --help printed; -1: a usage error (printed). */
static int parse_args(int argc, char **argv, run_options *o)
{
    static const struct option longopts[] = {{"filter", required_argument, NULL, 'f'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"shard", required_argument, NULL, 'S'},
                                             {"set", required_argument, NULL, 's'},
                                             {"stages", required_argument, NULL, 't'},
                                             {"dry-run", no_argument, NULL, 'n'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"resume", no_argument, NULL, 'r'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    static const char *sets[64];
    *o = (run_options){.matrix_path = NULL, .out_dir = "results/latest", .shard_i = 0, .shard_n = 1, .sets = sets};
    optind = 0;
    for (int c; (c = hsdr_getopt("run", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'f') {
            o->filter = optarg;
        } else if (c == 'o') {
            o->out_dir = optarg;
        } else if (c == 'S') {
            char tail;
            if (sscanf(optarg, "%d/%d%c", &o->shard_i, &o->shard_n, &tail) != 2 || o->shard_n < 1 ||
                o->shard_i < 0 || o->shard_i >= o->shard_n) {
                fprintf(stderr, "hsdr run: --shard '%s': expected i/n with 0 <= i < n\n", optarg);
                return -1;
            }
        } else if (c == 's') {
            if (o->nsets == 64) {
                fprintf(stderr, "hsdr run: too many --set options\n");
                return -1;
            }
            sets[o->nsets++] = optarg;
        } else if (c == 't') {
            const char *v = optarg;
            if (strcmp(v, "both") == 0)
                o->stages = STAGES_BOTH;
            else if (strcmp(v, "alone") == 0)
                o->stages = STAGES_ALONE;
            else if (strcmp(v, "ablation") == 0)
                o->stages = STAGES_ABLATION;
            else if (strcmp(v, "none") == 0)
                o->stages = STAGES_NONE;
            else {
                fprintf(stderr, "hsdr run: --stages '%s': expected both, alone, ablation or none\n", v);
                return -1;
            }
        } else if (c == 'n') {
            o->dry_run = 1;
        } else if (c == 'q') {
            o->quiet = 1;
        } else if (c == 'r') {
            o->resume = 1;
        } else {
            return c == HSDR_GETOPT_HELP ? 1 : -1;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "hsdr run: more than one matrix given ('%s', '%s')\n", argv[optind], argv[optind + 1]);
        return -1;
    }
    o->matrix_path = optind < argc ? argv[optind] : "matrix.yaml";
    return 0;
}

/* ---- interruption: SIGINT / SIGTERM stop the run at the next case boundary ---- */

/* The first SIGINT or SIGTERM: its number. The loop polls it between configurations (the cases timed together in
 * rounds), so a configuration is never cut in half and every row written is whole. */
static volatile sig_atomic_t stop_signal;
/* Set once the cases are over: the results files are being written, which takes moments, and a process ended now
 * would leave the old results.jsonl beside a journal of the new rows. Signals are then ignored. */
static volatile sig_atomic_t writing_results;

static void on_stop_signal(int sig)
{
    if (writing_results)
        return;
    if (stop_signal) {
        /* A second signal: the user will not wait for the configurations in flight. The default action ends the
         * process when the handler returns (the signal is blocked until then); the journal keeps whole rows only. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
    static const char msg_int[] = "\nhsdr run: SIGINT: stopping after the current cases (one configuration's rounds; "
                                  "a second signal: at once)\n";
    static const char msg_term[] = "\nhsdr run: SIGTERM: stopping after the current cases (one configuration's rounds; "
                                   "a second signal: at once)\n";
    ssize_t ignored = sig == SIGINT ? write(STDERR_FILENO, msg_int, sizeof msg_int - 1)
                                    : write(STDERR_FILENO, msg_term, sizeof msg_term - 1);
    (void)ignored;
}

typedef struct {
    struct sigaction old[2];
    int installed[2];
} stop_handlers;

static const int stop_signals[2] = {SIGINT, SIGTERM};

static void stop_handlers_install(stop_handlers *h)
{
    stop_signal = 0;
    writing_results = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT); /* one handler at a time: a second signal never interrupts the first */
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART; /* file writes and pool waits go on as if nothing happened */
    for (int i = 0; i < 2; i++) {
        h->installed[i] = 0;
        if (sigaction(stop_signals[i], NULL, &h->old[i]) != 0)
            continue;
        /* An ignored signal stays ignored: a shell starts background jobs of a script with SIGINT ignored so that
         * Ctrl-C on the script leaves them running, and nohup-like launchers rely on the same. */
        if (h->old[i].sa_handler == SIG_IGN)
            continue;
        h->installed[i] = sigaction(stop_signals[i], &sa, NULL) == 0;
    }
}

static void stop_handlers_restore(stop_handlers *h)
{
    for (int i = 0; i < 2; i++)
        if (h->installed[i])
            sigaction(stop_signals[i], &h->old[i], NULL);
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

/* The command line that continues this run: the same arguments (argv[1..]), shell-quoted where needed, plus
 * --resume. */
static void resume_command(int argc, char **argv, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "hsdr run");
    int has_resume = 0;
    for (int i = 1; i < argc && len < n; i++) {
        const char *a = argv[i];
        has_resume |= strcmp(a, "--resume") == 0;
        int plain = *a != '\0';
        for (const char *c = a; *c && plain; c++)
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%", *c) != NULL;
        if (plain) {
            len += (size_t)snprintf(buf + len, n - len, " %s", a);
            continue;
        }
        len += (size_t)snprintf(buf + len, n - len, " '");
        for (const char *c = a; *c && len < n; c++)
            len += (size_t)snprintf(buf + len, n - len, *c == '\'' ? "'\\''" : "%c", *c);
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "'");
    }
    if (!has_resume && len < n)
        snprintf(buf + len, n - len, " --resume");
}

/* ---- the run's context ---- */

static const char *stage_timing_name(enum stage_timing s)
{
    return s == STAGES_ALONE ? "alone" : s == STAGES_ABLATION ? "ablation" : s == STAGES_NONE ? "none" : "both";
}

/* What, besides the case keys and seeds, decides the rows' numbers: --resume refuses rows measured under others. */
static cJSON *run_settings(const hsdr_matrix *m, const run_options *opt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "warmup", m->warmup);
    cJSON_AddNumberToObject(o, "repetitions_min", m->min_reps);
    cJSON_AddNumberToObject(o, "repetitions_max", m->max_reps);
    cJSON_AddNumberToObject(o, "noise_target", m->noise_target);
    cJSON_AddNumberToObject(o, "time_limit_s", m->time_limit_s);
    cJSON_AddNumberToObject(o, "ceiling_interval_s", m->ceiling_interval_s);
    cJSON_AddNumberToObject(o, "visits", m->visits);
    cJSON_AddStringToObject(o, "stages", stage_timing_name(opt->stages));
    return o;
}

/* What is known only as the run goes on: the ceilings measured and the pinning of the pools made so far. */
static void add_run_facts(cJSON *context, const pools *p)
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

/* The journal line of a finished row: the row with the context as it stands now, so that a row resumed from the
 * journal is as self-contained as a row of results.jsonl (its ceiling is in its own context). */
static int journal_append(const run_state *rs, hsdr_partial *journal, const cJSON *row)
{
    cJSON *copy = cJSON_Duplicate(row, 1), *ctx = cJSON_Duplicate(rs->context, 1);
    int rc = -1;
    if (copy && ctx) {
        add_run_facts(ctx, &rs->pools);
        if (cJSON_ReplaceItemInObjectCaseSensitive(copy, "context", ctx)) {
            ctx = NULL;
            rc = hsdr_results_partial_append(journal, copy);
        }
    }
    cJSON_Delete(ctx);
    cJSON_Delete(copy);
    return rc;
}

/* ---- --resume: the rows an interrupted run of the same cases left ---- */

typedef struct {
    const char *key;
    size_t index; /* in the expansion */
} case_key;

static int cmp_case_key(const void *a, const void *b)
{
    return strcmp(((const case_key *)a)->key, ((const case_key *)b)->key);
}

/* The mark of the interrupted run: a resumed run's rows carry none (or the new one, if interrupted again). Every
 * other field, the paired ratios included, was measured with the row's own rounds and stays. */
static void strip_run_fields(cJSON *row)
{
    cJSON_DeleteItemFromObjectCaseSensitive(row, "partial");
}

/* Reads DIR/results.partial.jsonl (the journal: every row finished before the interruption), or without one
 * DIR/results.jsonl (written by an interrupted run, or a complete one being extended), and files each row under its
 * case: kept[i] = the row of case i, or NULL. Every row must be a case of this expansion (key) with the same input
 * seed and settings, once; otherwise nothing is kept, the message names file:line, and -1 is returned. */
static int load_previous_rows(const hsdr_matrix *m, const run_options *opt, const cJSON *settings, cJSON **kept,
                              size_t *nkept, char *from, size_t fromlen)
{
    char journal[1024], results[1024], err[1200];
    snprintf(journal, sizeof journal, "%s/results.partial.jsonl", opt->out_dir);
    snprintf(results, sizeof results, "%s/results.jsonl", opt->out_dir);
    const char *path = access(journal, F_OK) == 0 ? journal : access(results, F_OK) == 0 ? results : NULL;
    *nkept = 0;
    from[0] = '\0';
    if (!path)
        return 0;
    snprintf(from, fromlen, "%s", path);
    cJSON **rows = NULL;
    size_t *lines = NULL, n = 0, torn = 0;
    int rc = path == journal ? hsdr_results_read_journal(path, &rows, &lines, &n, &torn, err, sizeof err)
                             : hsdr_results_read_lines(path, &rows, &lines, &n, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "hsdr run --resume: %s\n", err);
        return -1;
    }
    if (torn)
        printf("hsdr run --resume: %s: %zu bytes after the last complete row dropped (a row cut off when the run was "
               "killed)\n", path, torn);
    case_key *index = malloc((m->ncases ? m->ncases : 1) * sizeof *index);
    char(*keys)[256] = malloc((m->ncases ? m->ncases : 1) * sizeof *keys);
    size_t *first_line = calloc(m->ncases ? m->ncases : 1, sizeof *first_line);
    rc = -1;
    if (!index || !keys || !first_line) {
        fprintf(stderr, "hsdr run --resume: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < m->ncases; i++) {
        hsdr_case_key(&m->cases[i], keys[i], sizeof keys[i]);
        index[i] = (case_key){keys[i], i};
    }
    qsort(index, m->ncases, sizeof *index, cmp_case_key);
    for (size_t r = 0; r < n; r++) {
        const char *key = cJSON_GetObjectItemCaseSensitive(rows[r], "key")->valuestring;
        case_key probe = {key, 0};
        const case_key *hit = bsearch(&probe, index, m->ncases, sizeof *index, cmp_case_key);
        if (!hit) {
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s' is not a case of this run (%s with these --set, --filter and "
                    "--shard options): the directory holds results of another matrix or other options; resume with "
                    "the command that started it, or give another --out\n",
                    path, lines[r], key, m->source);
            goto out;
        }
        size_t c = hit->index;
        if (first_line[c]) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s' already at line %zu\n", path, lines[r], key,
                    first_line[c]);
            goto out;
        }
        first_line[c] = lines[r];
        const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rows[r], "seed");
        if (!cJSON_IsNumber(seed)) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s': field 'seed': missing or not a number\n", path,
                    lines[r], key);
            goto out;
        }
        if (seed->valuedouble != (double)m->cases[c].seed) { /* 53-bit seeds: exact in a double */
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s': field 'seed' is %.0f, this run's inputs use seed %llu "
                    "(another matrix seed): refusing to mix the two runs\n",
                    path, lines[r], key, seed->valuedouble, (unsigned long long)m->cases[c].seed);
            goto out;
        }
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(rows[r], "status");
        if (!cJSON_IsString(status) || (strcmp(status->valuestring, "ok") != 0 &&
                                        strcmp(status->valuestring, "failed") != 0 &&
                                        strcmp(status->valuestring, "error") != 0)) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s': field 'status': expected ok, failed or error\n",
                    path, lines[r], key);
            goto out;
        }
        /* rows written before the settings were recorded carry none: their keys and seeds are all there is */
        const cJSON *their = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rows[r], "context"),
                                                               "settings");
        if (their && !cJSON_Compare(their, settings, 1)) {
            char *a = hsdr_results_print(their), *b = hsdr_results_print(settings);
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s': field 'context.settings' is %s, this run's is %s: refusing "
                    "to mix rows timed under other settings\n",
                    path, lines[r], key, a ? a : "?", b ? b : "?");
            free(a);
            free(b);
            goto out;
        }
    }
    /* all rows belong here: hand them over, in the order of the expansion */
    for (size_t r = 0; r < n; r++) {
        const char *key = cJSON_GetObjectItemCaseSensitive(rows[r], "key")->valuestring;
        case_key probe = {key, 0};
        const case_key *hit = bsearch(&probe, index, m->ncases, sizeof *index, cmp_case_key);
        strip_run_fields(rows[r]);
        kept[hit->index] = rows[r];
        rows[r] = NULL;
        (*nkept)++;
    }
    rc = 0;
out:
    free(index);
    free(keys);
    free(first_line);
    free(lines);
    for (size_t r = 0; r < n; r++)
        cJSON_Delete(rows[r]);
    free(rows);
    return rc;
}

/* ---- writing the results ---- */

/* An interrupted run: results.jsonl + .csv hold the done rows, each marked "partial", so that every reader sees
 * that cases are missing; breakeven.json is removed (a fit over part of an R sweep is a wrong fit, and an older one
 * describes other rows); with no row done there is no results file at all (an empty one could carry no mark). */
static int write_interrupted(const char *out_dir, cJSON **rows, size_t done, size_t total, int sig)
{
    char path[1024], err[1024];
    for (size_t i = 0; i < done; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(rows[i], "partial");
        cJSON *mark = cJSON_AddObjectToObject(rows[i], "partial");
        cJSON_AddNumberToObject(mark, "done", (double)done);
        cJSON_AddNumberToObject(mark, "total", (double)total);
        cJSON_AddStringToObject(mark, "interrupted_by", signal_name(sig));
    }
    if (hsdr_breakeven_remove(out_dir, err, sizeof err) != 0)
        fprintf(stderr, "hsdr run: warning: %s\n", err);
    if (done == 0) {
        const char *names[] = {"results.jsonl", "results.csv"};
        for (int i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", out_dir, names[i]);
            if (unlink(path) != 0 && errno != ENOENT) {
                fprintf(stderr, "hsdr run: cannot remove %s: %s\n", path, strerror(errno));
                return -1;
            }
        }
        return 0;
    }
    if (hsdr_results_write(out_dir, "results", rows, done, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- the command ---- */

int hsdr_cmd_run(int argc, char **argv)
{
    /* getopt_long permutes the array it reads: a copy, so that the resume command repeats argv as given */
    char **permuted = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!permuted) {
        fprintf(stderr, "hsdr run: out of memory\n");
        return HSDR_EXIT_USAGE;
    }
    memcpy(permuted, argv, sizeof(char *) * (size_t)(argc + 1));
    run_options opt;
    const int parsed = parse_args(argc, permuted, &opt);
    free(permuted);
    if (parsed != 0)
        return parsed > 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
    char err[1024];
    hsdr_matrix_spec *spec = NULL;
    if (hsdr_matrix_load(opt.matrix_path, &spec, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    for (int i = 0; i < opt.nsets; i++)
        if (hsdr_matrix_override(spec, opt.sets[i], err, sizeof err) != 0) {
            fprintf(stderr, "hsdr run: --set: %s\n", err);
            hsdr_matrix_spec_free(spec);
            return HSDR_EXIT_USAGE;
        }
    hsdr_matrix m;
    int rc = hsdr_matrix_expand(spec, &m, err, sizeof err);
    hsdr_matrix_spec_free(spec);
    if (rc != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    size_t expanded = m.ncases;
    if (opt.filter)
        hsdr_matrix_filter(&m, opt.filter);
    size_t filtered = m.ncases;
    if (hsdr_matrix_shard(&m, opt.shard_i, opt.shard_n, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        hsdr_matrix_free(&m);
        return HSDR_EXIT_USAGE;
    }
    printf("hsdr run: %s: %zu cases expanded, %zu skipped", m.source, expanded, m.nskipped);
    if (opt.filter)
        printf(", %zu after --filter '%s'", filtered, opt.filter);
    printf("; shard %d/%d runs %zu\n", opt.shard_i, opt.shard_n, m.ncases);
    if (opt.dry_run || !opt.quiet) {
        /* skip reasons, counted */
        for (size_t i = 0; i < m.nskipped; i++) {
            int seen = 0;
            for (size_t j = 0; j < i && !seen; j++)
                seen = strcmp(m.skipped[i].reason, m.skipped[j].reason) == 0;
            if (seen)
                continue;
            size_t count = 0;
            for (size_t j = i; j < m.nskipped; j++)
                count += strcmp(m.skipped[i].reason, m.skipped[j].reason) == 0;
            printf("  skipped %zu: %s\n", count, m.skipped[i].reason);
        }
    }
    /* rows[i]: the row of case i, in the order of the expansion; with --resume the kept ones are filled first */
    cJSON **rows = calloc(m.ncases ? m.ncases : 1, sizeof(cJSON *));
    cJSON *settings = run_settings(&m, &opt);
    if (!rows || !settings) {
        fprintf(stderr, "hsdr run: out of memory\n");
        free(rows);
        cJSON_Delete(settings);
        hsdr_matrix_free(&m);
        return HSDR_EXIT_USAGE;
    }
    size_t nkept = 0;
    char kept_from[1024] = "";
    if (opt.resume) {
        if (load_previous_rows(&m, &opt, settings, rows, &nkept, kept_from, sizeof kept_from) != 0) {
            free(rows);
            cJSON_Delete(settings);
            hsdr_matrix_free(&m);
            return HSDR_EXIT_USAGE;
        }
        if (!kept_from[0])
            printf("hsdr run --resume: nothing to resume in %s (no results.partial.jsonl or results.jsonl): running "
                   "every case\n", opt.out_dir);
        else
            printf("hsdr run --resume: %zu of %zu cases already done in %s, %zu to run\n", nkept, m.ncases, kept_from,
                   m.ncases - nkept);
    }
    if (opt.dry_run) {
        char key[256];
        for (size_t i = 0; i < m.ncases; i++) {
            if (rows[i])
                continue;
            hsdr_case_key(&m.cases[i], key, sizeof key);
            printf("%s\n", key);
        }
        for (size_t i = 0; i < m.ncases; i++)
            cJSON_Delete(rows[i]);
        free(rows);
        cJSON_Delete(settings);
        hsdr_matrix_free(&m);
        return HSDR_EXIT_OK;
    }
    run_state rs = {.m = &m, .opt = &opt};
    memset(&rs.pools, 0, sizeof rs.pools);
    rs.context = hsdr_machine_context();
    cJSON_AddStringToObject(rs.context, "matrix", m.source);
    cJSON_AddNumberToObject(rs.context, "matrix_seed", (double)m.seed);
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", opt.shard_i, opt.shard_n);
    cJSON_AddStringToObject(rs.context, "shard", shard);
    cJSON_AddItemToObject(rs.context, "settings", settings);
    /* The journal. A fresh run starts it empty; a resumed one rewrites it with the kept rows (dropping a torn last
     * line) and appends after them, so that a second interruption loses nothing either. */
    cJSON **kept = malloc((nkept ? nkept : 1) * sizeof *kept);
    hsdr_partial *partial = NULL;
    if (kept) {
        size_t k = 0;
        for (size_t i = 0; i < m.ncases; i++)
            if (rows[i])
                kept[k++] = rows[i];
        if (!opt.resume) {
            char journal[1100];
            struct stat st;
            snprintf(journal, sizeof journal, "%s/results.partial.jsonl", opt.out_dir);
            if (stat(journal, &st) == 0 && st.st_size > 0)
                printf("hsdr run: %s: the rows of an interrupted run are discarded (--resume continues such a run)\n",
                       journal);
        }
        partial = hsdr_results_partial_reopen(opt.out_dir, "results", kept, nkept, err, sizeof err);
        free(kept);
    }
    if (!partial) {
        fprintf(stderr, "hsdr run: %s\n", kept ? err : "out of memory");
        for (size_t i = 0; i < m.ncases; i++)
            cJSON_Delete(rows[i]);
        free(rows);
        cJSON_Delete(rs.context);
        hsdr_matrix_free(&m);
        return HSDR_EXIT_USAGE;
    }
    stop_handlers handlers;
    stop_handlers_install(&handlers);
    /* The configurations in flight: each pass opens the next one (while fewer than `visits` are open), visits every
     * open one, and closes those visited `visits` times, so that a configuration's visits are spread over the run. */
    const int visits = m.visits > 1 ? m.visits : 1;
    flight fl = {.idx = malloc((m.ncases ? m.ncases : 1) * sizeof *fl.idx)};
    size_t done = nkept;
    rs.t_start = hsdr_now_ns();
    while (fl.idx) {
        if (!stop_signal && fl.nopen < visits) {
            configuration *cf = config_next(&rs, rows, &fl);
            if (cf)
                fl.open[fl.nopen++] = cf;
        }
        if (fl.nopen == 0)
            break;
        if (stop_signal || fl.out_of_memory) { /* the pass boundary: the configurations in flight leave no rows */
            for (int k = 0; k < fl.nopen; k++) {
                config_discard(fl.open[k]);
                config_free(fl.open[k]);
            }
            fl.nopen = 0;
            break;
        }
        for (int k = 0; k < fl.nopen; k++)
            config_visit(&rs, fl.open[k]);
        /* close the oldest while it has had its visits (or could not be set up): the tail of the run, with nothing
         * left to open, has fewer in flight */
        while (fl.nopen > 0 && (fl.open[0]->visits >= visits || !fl.open[0]->g)) {
            configuration *cf = fl.open[0];
            config_close(&rs, cf, rows);
            for (size_t k = 0; k < cf->n; k++) {
                cJSON_AddItemReferenceToObject(rows[cf->idx[k]], "context", rs.context);
                done++;
                if (journal_append(&rs, partial, rows[cf->idx[k]]) != 0)
                    fprintf(stderr, "hsdr run: warning: could not append to %s: %s\n",
                            hsdr_results_partial_path(partial), strerror(errno));
            }
            config_free(cf);
            memmove(&fl.open[0], &fl.open[1], sizeof fl.open[0] * (size_t)(fl.nopen - 1));
            fl.nopen--;
        }
        fflush(stdout);
    }
    free(fl.idx);
    writing_results = 1;
    /* A signal after the last case changes nothing: the run is complete. */
    int interrupted = done < m.ncases ? stop_signal : 0;
    /* from here on rows[0..done) are the done rows in the order of the expansion */
    size_t k = 0;
    for (size_t i = 0; i < m.ncases; i++)
        if (rows[i])
            rows[k++] = rows[i];
    size_t failed = 0, errors = 0;
    for (size_t i = 0; i < done; i++) {
        const char *status = hsdr_row_str(rows[i], "status");
        failed += strcmp(status, "failed") == 0;
        errors += strcmp(status, "error") == 0;
    }
    cJSON *be = hsdr_breakeven_fit(rows, done);
    /* the measured ceilings go into the context (shared by reference by every row measured in this process) */
    add_run_facts(rs.context, &rs.pools);
    rc = HSDR_EXIT_OK;
    if (interrupted) {
        int written = write_interrupted(opt.out_dir, rows, done, m.ncases, interrupted) == 0;
        hsdr_results_partial_close(partial, 0);
        char cmd[2048];
        resume_command(argc, argv, cmd, sizeof cmd);
        printf("\nhsdr run: interrupted by %s after %zu of %zu cases (%zu ok, %zu failed validation, %zu errors)",
               signal_name(interrupted), done, m.ncases, done - failed - errors, failed, errors);
        if (!written)
            printf("; the results could not be written (above)");
        else if (done)
            printf("; %s/results.jsonl (+ .csv) holds their rows, each marked \"partial\"", opt.out_dir);
        else
            printf("; no case finished, no results file written");
        printf("\nhsdr run: the remaining %zu cases run with: %s\n", m.ncases - done, cmd);
        /* as a shell reports a process ended by the signal: 128 + its number (130 SIGINT, 143 SIGTERM) */
        rc = written ? 128 + interrupted : HSDR_EXIT_USAGE;
    } else {
        if (hsdr_results_write(opt.out_dir, "results", rows, done, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr run: %s\n", err);
            rc = HSDR_EXIT_USAGE;
        } else if (hsdr_breakeven_write(opt.out_dir, be, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr run: %s\n", err);
            rc = HSDR_EXIT_USAGE;
        }
        hsdr_results_partial_close(partial, rc == HSDR_EXIT_OK);
        if (!opt.quiet)
            print_summary(rows, done, be);
        if (nkept)
            printf("\nhsdr run: %zu cases, %zu of them kept from %s and %zu run in %.1f s", m.ncases, nkept, kept_from,
                   m.ncases - nkept, (hsdr_now_ns() - rs.t_start) / 1e9);
        else
            printf("\nhsdr run: %zu cases in %.1f s", m.ncases, (hsdr_now_ns() - rs.t_start) / 1e9);
        printf(": %zu ok, %zu failed validation, %zu errors; results in %s/results.jsonl (+ .csv, breakeven.json)\n",
               m.ncases - failed - errors, failed, errors, opt.out_dir);
    }
    stop_handlers_restore(&handlers);
    for (size_t i = 0; i < done; i++)
        cJSON_Delete(rows[i]);
    free(rows);
    cJSON_Delete(be);
    cJSON_Delete(rs.context);
    for (int t = 0; t <= 64; t++)
        if (rs.pools.pool[t])
            hsdr_pool_destroy(rs.pools.pool[t]);
    hsdr_matrix_free(&m);
    if (rc == HSDR_EXIT_OK && (failed || errors))
        rc = HSDR_EXIT_FAIL;
    return rc;
}
