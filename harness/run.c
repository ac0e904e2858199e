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
#include "case.h"
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

static void add_stats(cJSON *row, const hsdr_stats *st)
{
    cJSON *t = cJSON_AddObjectToObject(row, "time_ns");
    cJSON_AddNumberToObject(t, "median", st->median);
    cJSON_AddNumberToObject(t, "p10", st->p10);
    cJSON_AddNumberToObject(t, "p90", st->p90);
    cJSON_AddNumberToObject(t, "min", st->min);
    cJSON_AddNumberToObject(t, "mean", st->mean);
    cJSON_AddNumberToObject(t, "rel_spread", st->rel_spread);
    cJSON_AddNumberToObject(t, "reps", st->reps);
    cJSON_AddStringToObject(t, "stop", st->stop);
    cJSON *s = cJSON_AddArrayToObject(row, "samples_ns");
    for (int i = 0; i < st->reps; i++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber(st->samples[i]));
}

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
    cJSON_AddStringToObject(row, "schema", "hsdr-results/1");
    cJSON_AddStringToObject(row, "key", key);
    cJSON_AddStringToObject(row, "variant", c->variant->name);
    cJSON_AddStringToObject(row, "backend", c->variant->backend);
    cJSON_AddStringToObject(row, "family", c->variant->family);
    cJSON_AddNumberToObject(row, "K", c->K);
    cJSON_AddNumberToObject(row, "N", c->N);
    cJSON_AddNumberToObject(row, "R", c->R);
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
static void output_error(const float *y, const double *yd, const double *ref, int N, double *nmse, double *max_rel)
{
    double num = 0.0, den = 0.0, emax = 0.0, rmax = 0.0;
    for (int r = 0; r < N; r++) {
        double v = y ? (double)y[r] : yd[r], e = v - ref[r];
        num += e * e;
        den += ref[r] * ref[r];
        emax = fmax(emax, fabs(e));
        rmax = fmax(rmax, fabs(ref[r]));
    }
    *nmse = den > 0 ? num / den : 0.0;
    *max_rel = rmax > 0 ? emax / rmax : 0.0;
}

/* ---- one case ---- */

typedef struct {
    const hsdr_matrix *m;
    const run_options *opt;
    pools pools;
    cJSON *context;
} run_state;

static hsdr_timing_policy main_policy(const hsdr_matrix *m)
{
    return (hsdr_timing_policy){m->warmup, m->min_reps, m->max_reps, m->noise_target, m->time_limit_s};
}

/* Stage measurements get a smaller budget: they attribute time, the headline number is the full run. */
static hsdr_timing_policy stage_policy(const hsdr_matrix *m)
{
    int min = m->min_reps < 3 ? m->min_reps : 3;
    return (hsdr_timing_policy){1, min > 0 ? min : 1, m->max_reps < 50 ? m->max_reps : 50, m->noise_target,
                                m->time_limit_s / 8};
}

static void time_stages(run_state *rs, hsdr_timing_setup *ts, hsdr_pool *pool, double full_ns, cJSON *row,
                        char *dominant, size_t dn)
{
    const hsdr_variant *v = ts->v;
    const hsdr_timing_policy pol = stage_policy(rs->m);
    cJSON *stages = cJSON_AddObjectToObject(row, "stages");
    double best = -1.0;
    dominant[0] = '\0';
    for (int s = 0; s < HSDR_STAGE_COUNT; s++) {
        if (s == HSDR_STAGE_CONVERT || !(v->stages & HSDR_STAGE_BIT(s)))
            continue;
        double alone = NAN, removed = NAN, doubled = NAN;
        hsdr_stats st;
        if (rs->opt->stages != STAGES_ABLATION && rs->opt->stages != STAGES_NONE && (v->stage || v->device) &&
            hsdr_time_stage(ts, pool, (hsdr_stage)s, &pol, &st) == 0) {
            alone = st.median;
            hsdr_stats_free(&st);
        }
        if (rs->opt->stages != STAGES_ALONE && rs->opt->stages != STAGES_NONE && (v->ablatable & HSDR_STAGE_BIT(s))) {
            if (hsdr_time_full(ts, pool, HSDR_STAGE_BIT(s), 0, &pol, &st) == 0) {
                removed = full_ns - st.median;
                hsdr_stats_free(&st);
            }
            if (hsdr_time_full(ts, pool, 0, HSDR_STAGE_BIT(s), &pol, &st) == 0) {
                doubled = st.median - full_ns;
                hsdr_stats_free(&st);
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

static cJSON *run_case(run_state *rs, const hsdr_case *c, const hsdr_inputs *in, const char *key, char *line,
                       size_t linen)
{
    const hsdr_variant *v = c->variant;
    cJSON *row = case_row(c, key);
    char err[512] = "";
    hsdr_validation val;
    hsdr_validate(c, in, &val);
    cJSON *vo = cJSON_AddObjectToObject(row, "validation");
    cJSON_AddBoolToObject(vo, "passed", val.passed);
    cJSON_AddStringToObject(vo, "detail", val.detail);
    if (!val.passed) {
        cJSON_AddStringToObject(row, "status", "failed");
        snprintf(line, linen, "FAILED validation: %s", val.detail);
        return row;
    }
    hsdr_pool *pool = pool_for(&rs->pools, c->threads, err, sizeof err);
    hsdr_timing_setup ts;
    if (!pool || hsdr_timing_setup_create(&ts, c, in, c->threads, c->mode, err, sizeof err) != 0) {
        cJSON_AddStringToObject(row, "status", "error");
        cJSON_AddStringToObject(row, "error", err);
        snprintf(line, linen, "ERROR: %s", err);
        return row;
    }
    /* one full run fills every intermediate buffer (stage-alone runs read them) */
    hsdr_timing_policy pol = main_policy(rs->m);
    hsdr_stats st;
    if (hsdr_timing_run_serial(&ts) != 0 || hsdr_time_full(&ts, pool, 0, 0, &pol, &st) != 0) {
        snprintf(err, sizeof err, "%s", ts.err[0] ? ts.err : "out of memory for samples");
        hsdr_timing_setup_free(&ts);
        cJSON_AddStringToObject(row, "status", "error");
        cJSON_AddStringToObject(row, "error", err);
        snprintf(line, linen, "ERROR: %s", err);
        return row;
    }
    cJSON_AddStringToObject(row, "status", "ok");
    /* the ceiling, measured in this run with this thread count: hot, the read bandwidth of a working set of this
     * footprint (cache-resident when it fits); cold, the DRAM streaming read bandwidth (64 MiB reads from buffers
     * rotating over more than 4x the last-level cache) */
    hsdr_bw_result bw = {0};
    double ceiling = NAN;
    size_t bw_bytes = c->mode == HSDR_MODE_HOT ? in->weight_bytes : (size_t)64 << 20;
    if (v->device) {
        /* a device: its plain streaming read of the same bytes per launch, on the same clock (cold: rotating over
         * more than 3x its L2) */
        double bps;
        if (v->device->read_bandwidth(in->weight_bytes, c->mode == HSDR_MODE_COLD, &bps, err, sizeof err) == 0)
            ceiling = bps;
        cJSON_AddStringToObject(row, "device", v->device->describe());
    } else if (hsdr_read_bandwidth_cached(pool, bw_bytes, c->mode, &bw, err, sizeof err) == 0) {
        ceiling = bw.bytes_per_s;
    }
    double floor_ns = ceiling > 0 ? (double)in->weight_bytes / ceiling * 1e9 : NAN;
    add_nullable(row, "ceiling_bytes_per_s", ceiling);
    add_nullable(row, "bytes_floor_ns", floor_ns);
    add_stats(row, &st);
    double gbs = (double)in->weight_bytes / st.median;
    cJSON_AddNumberToObject(row, "gb_per_s", gbs);
    add_nullable(row, "pct_of_ceiling", 100.0 * floor_ns / st.median);
    char dominant[32] = "";
    if (rs->opt->stages != STAGES_NONE)
        time_stages(rs, &ts, pool, st.median, row, dominant, sizeof dominant);
    if (dominant[0])
        cJSON_AddStringToObject(row, "dominant_stage", dominant);
    else
        cJSON_AddNullToObject(row, "dominant_stage");
    if (v->prepare) {
        cJSON *cv = cJSON_AddObjectToObject(row, "convert");
        cJSON_AddNumberToObject(cv, "time_ns", ts.convert_ns);
        cJSON_AddNumberToObject(cv, "footprint_bytes", (double)ts.footprint);
        /* the bytes this variant actually streams: its converted footprint (the row's gb_per_s and pct_of_ceiling
         * stay on the PTQ1_0 bytes, the format floor every variant is compared with) */
        cJSON_AddNumberToObject(cv, "gb_per_s", (double)ts.footprint / st.median);
        add_nullable(cv, "pct_of_ceiling", ceiling > 0 ? 100.0 * (double)ts.footprint / ceiling * 1e9 / st.median : NAN);
    } else {
        cJSON_AddNullToObject(row, "convert");
    }
    if (!v->needs_x) {
        cJSON *oc = cJSON_AddObjectToObject(row, "occupancy");
        cJSON_AddNumberToObject(oc, "mean", in->occ_mean);
        cJSON_AddNumberToObject(oc, "p5", in->occ_p5);
        cJSON_AddNumberToObject(oc, "p95", in->occ_p95);
    }
    cJSON_AddNumberToObject(row, "critical_path_depth", critical_path(v, c->K));
    /* output error of the timed path (y from the last repetition: validated above, deterministic) */
    if (hsdr_timing_run_serial(&ts) != 0)
        for (int r = 0; r < in->N; r++)
            ts.exec.y[r] = NAN; /* the device failed now: the error fields say so (NaN) */
    double nmse, max_rel, pnmse, pmax;
    output_error(ts.exec.y, NULL, in->y_exact, in->N, &nmse, &max_rel);
    output_error(in->y_q8, NULL, in->y_exact, in->N, &pnmse, &pmax);
    cJSON *eo = cJSON_AddObjectToObject(row, "error");
    cJSON_AddNumberToObject(eo, "nmse", nmse);
    cJSON_AddNumberToObject(eo, "max_rel", max_rel);
    cJSON_AddNumberToObject(eo, "production_nmse", pnmse);
    cJSON_AddNumberToObject(eo, "production_max_rel", pmax);
    snprintf(line, linen, "%10.1f us  %6.2f GB/s  %5.1f%% of %.1f GB/s %s ceiling%s%s", st.median / 1e3, gbs,
             100.0 * floor_ns / st.median, ceiling / 1e9, hsdr_mode_name(c->mode), dominant[0] ? "  dominant: " : "",
             dominant);
    hsdr_stats_free(&st);
    hsdr_timing_setup_free(&ts);
    return row;
}

/* ---- after the run: ratios, break-even, summary ---- */

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double jmedian(const cJSON *o)
{
    return jnum(cJSON_GetObjectItemCaseSensitive(o, "time_ns"), "median");
}

/* Same configuration apart from the variant (and R, F, b). */
static int same_config(const cJSON *a, const cJSON *b)
{
    return jnum(a, "K") == jnum(b, "K") && jnum(a, "N") == jnum(b, "N") && jnum(a, "threads") == jnum(b, "threads") &&
           strcmp(jstr(a, "distribution"), jstr(b, "distribution")) == 0 &&
           strcmp(jstr(a, "mode"), jstr(b, "mode")) == 0 && strcmp(jstr(a, "shape"), jstr(b, "shape")) == 0;
}

/* The production row for a row: the production variant of the same backend if measured, else any production. */
static const cJSON *production_for(cJSON **rows, size_t n, const cJSON *row)
{
    const cJSON *any = NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *p = rows[i];
        if (strcmp(jstr(p, "family"), "production") != 0 || strcmp(jstr(p, "status"), "ok") != 0 ||
            !same_config(p, row))
            continue;
        if (strcmp(jstr(p, "backend"), jstr(row, "backend")) == 0)
            return p;
        if (!any)
            any = p;
    }
    return any;
}

static void add_ratios(cJSON **rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(jstr(rows[i], "status"), "ok") != 0)
            continue;
        const cJSON *p = production_for(rows, n, rows[i]);
        if (p) {
            cJSON_AddNumberToObject(rows[i], "ratio_to_production", jmedian(rows[i]) / jmedian(p));
            cJSON_AddStringToObject(rows[i], "production_variant", jstr(p, "variant"));
        } else {
            cJSON_AddNullToObject(rows[i], "ratio_to_production");
            cJSON_AddNullToObject(rows[i], "production_variant");
        }
    }
}

/* State-set time per row t(R) = a + b / R (least squares over the R sweep) against the direct variant's time per
 * row c: state sets win when R > b / (c - a). */
static cJSON *breakeven(cJSON **rows, size_t n)
{
    cJSON *out = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const cJSON *d = rows[i];
        if (strcmp(jstr(d, "family"), "direct") != 0 || strcmp(jstr(d, "status"), "ok") != 0)
            continue;
        double c = jmedian(d) / jnum(d, "N");
        /* every state-set variant of the same backend and configuration */
        for (size_t j = 0; j < n; j++) {
            const cJSON *s0 = rows[j];
            const char *fam = jstr(s0, "family");
            if ((strcmp(fam, "stateset") != 0 && strcmp(fam, "tile64") != 0) ||
                strcmp(jstr(s0, "status"), "ok") != 0 || !same_config(s0, d) ||
                strcmp(jstr(s0, "backend"), jstr(d, "backend")) != 0)
                continue;
            /* only the first row of each state-set variant starts a fit */
            int first = 1;
            for (size_t k = 0; k < j; k++)
                if (strcmp(jstr(rows[k], "variant"), jstr(s0, "variant")) == 0 && same_config(rows[k], s0) &&
                    strcmp(jstr(rows[k], "status"), "ok") == 0)
                    first = 0;
            if (!first)
                continue;
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            int m = 0;
            for (size_t k = 0; k < n; k++) {
                const cJSON *s = rows[k];
                if (strcmp(jstr(s, "variant"), jstr(s0, "variant")) != 0 || !same_config(s, s0) ||
                    strcmp(jstr(s, "status"), "ok") != 0)
                    continue;
                double x = 1.0 / jnum(s, "R"), y = jmedian(s) / jnum(s, "N");
                sx += x, sy += y, sxx += x * x, sxy += x * y;
                m++;
            }
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "K", jnum(d, "K"));
            cJSON_AddNumberToObject(o, "N", jnum(d, "N"));
            cJSON_AddNumberToObject(o, "threads", jnum(d, "threads"));
            cJSON_AddStringToObject(o, "distribution", jstr(d, "distribution"));
            cJSON_AddStringToObject(o, "mode", jstr(d, "mode"));
            cJSON_AddStringToObject(o, "shape", jstr(d, "shape"));
            cJSON_AddStringToObject(o, "stateset", jstr(s0, "variant"));
            cJSON_AddStringToObject(o, "direct", jstr(d, "variant"));
            cJSON_AddNumberToObject(o, "r_values", m);
            double det = m * sxx - sx * sx;
            if (m < 2 || det <= 0) {
                cJSON_AddNullToObject(o, "break_even_R");
                cJSON_AddStringToObject(o, "note", "needs at least two R values");
            } else {
                double b = (m * sxy - sx * sy) / det, a = (sy - b * sx) / m;
                cJSON *fit = cJSON_AddObjectToObject(o, "fit");
                cJSON_AddNumberToObject(fit, "a_ns_per_row", a);
                cJSON_AddNumberToObject(fit, "b_ns_per_tile_row", b);
                cJSON_AddNumberToObject(fit, "direct_ns_per_row", c);
                if (a >= c) {
                    cJSON_AddNullToObject(o, "break_even_R");
                    cJSON_AddStringToObject(o, "note", "never: state sets cost more per row than direct even at "
                                                       "unlimited reuse");
                } else if (b <= 0) {
                    cJSON_AddNumberToObject(o, "break_even_R", 1);
                    cJSON_AddStringToObject(o, "note", "no measurable build cost: state sets win at every R");
                } else {
                    cJSON_AddNumberToObject(o, "break_even_R", b / (c - a));
                    cJSON_AddStringToObject(o, "note", "state sets are faster for R above this");
                }
            }
            cJSON_AddItemToArray(out, o);
        }
    }
    return out;
}

static void print_summary(cJSON **rows, size_t n, const cJSON *be)
{
    printf("\n%-14s %6s %6s %4s %3s %-4s %-10s %11s %7s %6s %7s %-11s\n", "variant", "K", "N", "R", "thr", "mode",
           "dist", "median us", "GB/s", "%ceil", "x prod", "dominant");
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = rows[i];
        const char *status = jstr(r, "status");
        printf("%-14s %6.0f %6.0f %4.0f %3.0f %-4s %-10s ", jstr(r, "variant"), jnum(r, "K"), jnum(r, "N"),
               jnum(r, "R"), jnum(r, "threads"), jstr(r, "mode"), jstr(r, "distribution"));
        if (strcmp(status, "ok") != 0) {
            printf("%s\n", strcmp(status, "failed") == 0 ? "FAILED VALIDATION (not timed)" : "ERROR");
            continue;
        }
        double ratio = jnum(r, "ratio_to_production");
        char rbuf[16] = "-";
        if (!isnan(ratio))
            snprintf(rbuf, sizeof rbuf, "%.2f", ratio);
        printf("%11.1f %7.2f %6.1f %7s %-11s\n", jmedian(r) / 1e3, jnum(r, "gb_per_s"), jnum(r, "pct_of_ceiling"), rbuf,
               jstr(r, "dominant_stage"));
    }
    const cJSON *o;
    if (cJSON_GetArraySize(be) > 0)
        printf("\nbreak-even R (state sets vs direct, time per row fitted as a + b/R):\n");
    cJSON_ArrayForEach(o, be)
    {
        double R = jnum(o, "break_even_R");
        printf("  K=%-6.0f threads=%.0f %-10s %-4s %-13s vs %-11s: ", jnum(o, "K"), jnum(o, "threads"),
               jstr(o, "distribution"), jstr(o, "mode"), jstr(o, "stateset"), jstr(o, "direct"));
        if (isnan(R))
            printf("none (%s)\n", jstr(o, "note"));
        else
            printf("R* = %.1f\n", R);
    }
}

/* ---- the command ---- */

static int parse_args(int argc, char **argv, run_options *o)
{
    static const char *sets[64];
    *o = (run_options){.matrix_path = NULL, .out_dir = "results/latest", .shard_i = 0, .shard_n = 1, .sets = sets};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--filter") == 0 && has) {
            o->filter = argv[++i];
        } else if (strcmp(a, "--out") == 0 && has) {
            o->out_dir = argv[++i];
        } else if (strcmp(a, "--shard") == 0 && has) {
            char tail;
            if (sscanf(argv[++i], "%d/%d%c", &o->shard_i, &o->shard_n, &tail) != 2 || o->shard_n < 1 ||
                o->shard_i < 0 || o->shard_i >= o->shard_n) {
                fprintf(stderr, "hsdr run: --shard '%s': expected i/n with 0 <= i < n\n", argv[i]);
                return -1;
            }
        } else if (strcmp(a, "--set") == 0 && has) {
            if (o->nsets == 64) {
                fprintf(stderr, "hsdr run: too many --set options\n");
                return -1;
            }
            sets[o->nsets++] = argv[++i];
        } else if (strcmp(a, "--stages") == 0 && has) {
            const char *s = argv[++i];
            if (strcmp(s, "both") == 0)
                o->stages = STAGES_BOTH;
            else if (strcmp(s, "alone") == 0)
                o->stages = STAGES_ALONE;
            else if (strcmp(s, "ablation") == 0)
                o->stages = STAGES_ABLATION;
            else if (strcmp(s, "none") == 0)
                o->stages = STAGES_NONE;
            else {
                fprintf(stderr, "hsdr run: --stages '%s': expected both, alone, ablation or none\n", s);
                return -1;
            }
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--resume") == 0) {
            o->resume = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "hsdr run: unknown or incomplete option '%s'\n", a);
            return -1;
        } else if (!o->matrix_path) {
            o->matrix_path = a;
        } else {
            fprintf(stderr, "hsdr run: more than one matrix given ('%s', '%s')\n", o->matrix_path, a);
            return -1;
        }
    }
    if (!o->matrix_path)
        o->matrix_path = "matrix.yaml";
    return 0;
}

/* ---- interruption: SIGINT / SIGTERM stop the run at the next case boundary ---- */

/* The first SIGINT or SIGTERM: its number. The loop polls it between cases, so a case is never cut in half and
 * every row written is whole. */
static volatile sig_atomic_t stop_signal;
/* Set once the cases are over: the results files are being written, which takes moments, and a process ended now
 * would leave the old results.jsonl beside a journal of the new rows. Signals are then ignored. */
static volatile sig_atomic_t writing_results;

static void on_stop_signal(int sig)
{
    if (writing_results)
        return;
    if (stop_signal) {
        /* A second signal: the user will not wait for the current case. The default action ends the process when
         * the handler returns (the signal is blocked until then); the journal keeps whole rows only. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
    static const char msg_int[] = "\nhsdr run: SIGINT: stopping after the current case (a second signal: at once)\n";
    static const char msg_term[] = "\nhsdr run: SIGTERM: stopping after the current case (a second signal: at once)\n";
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

/* The command line that continues this run: the same arguments, shell-quoted where needed, plus --resume. */
static void resume_command(int argc, char **argv, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "hsdr run");
    int has_resume = 0;
    for (int i = 0; i < argc && len < n; i++) {
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

/* Fields a finished run adds from all rows together: recomputed over the merged rows. */
static void strip_run_fields(cJSON *row)
{
    cJSON_DeleteItemFromObjectCaseSensitive(row, "partial");
    cJSON_DeleteItemFromObjectCaseSensitive(row, "ratio_to_production");
    cJSON_DeleteItemFromObjectCaseSensitive(row, "production_variant");
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

static int write_breakeven(const char *out_dir, const cJSON *be)
{
    cJSON *bdoc = cJSON_CreateObject();
    cJSON_AddStringToObject(bdoc, "schema", "hsdr-breakeven/1");
    cJSON_AddItemReferenceToObject(bdoc, "rows", (cJSON *)be);
    char *txt = cJSON_Print(bdoc);
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/breakeven.json", out_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int rc = 0;
    if (!f || !txt || fputs(txt, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "hsdr run: cannot write %s\n", path);
        rc = -1;
    }
    cJSON_free(txt);
    cJSON_Delete(bdoc);
    return rc;
}

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
    snprintf(path, sizeof path, "%s/breakeven.json", out_dir);
    if (unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "hsdr run: warning: cannot remove %s: %s\n", path, strerror(errno));
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
    run_options opt;
    if (parse_args(argc, argv, &opt) != 0)
        return HSDR_EXIT_USAGE;
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
    hsdr_inputs in = {0};
    int have_inputs = 0;
    char input_err[512] = "";
    size_t done = nkept;
    double t_start = hsdr_now_ns();
    for (size_t i = 0; i < m.ncases; i++) {
        if (stop_signal)
            break; /* the case boundary: every row so far is whole and in the journal */
        if (rows[i])
            continue; /* done before the interruption (--resume) */
        const hsdr_case *c = &m.cases[i];
        char key[256], line[768];
        hsdr_case_key(c, key, sizeof key);
        if (!have_inputs || in.K != c->K || in.N != c->N || in.dist != c->dist || in.seed != c->seed) {
            if (have_inputs)
                hsdr_inputs_free(&in);
            have_inputs = 0;
            input_err[0] = '\0';
            hsdr_read_bandwidth_cache_clear(); /* ceilings measured next to the cases that use them */
            if (hsdr_inputs_bytes(c->K, c->N) > hsdr_timing_memory_cap())
                snprintf(input_err, sizeof input_err, "refused: inputs need %zu bytes, above the %zu-byte cap",
                         hsdr_inputs_bytes(c->K, c->N), hsdr_timing_memory_cap());
            else if (hsdr_inputs_build(&in, c->K, c->N, c->dist, c->seed, input_err, sizeof input_err) == 0)
                have_inputs = 1;
        }
        cJSON *row;
        if (!have_inputs) {
            row = case_row(c, key);
            cJSON_AddStringToObject(row, "status", "error");
            cJSON_AddStringToObject(row, "error", input_err);
            snprintf(line, sizeof line, "ERROR: %s", input_err);
        } else {
            row = run_case(&rs, c, &in, key, line, sizeof line);
        }
        cJSON_AddItemReferenceToObject(row, "context", rs.context);
        rows[i] = row;
        done++;
        if (journal_append(&rs, partial, row) != 0)
            fprintf(stderr, "hsdr run: warning: could not append to %s: %s\n", hsdr_results_partial_path(partial),
                    strerror(errno));
        if (!opt.quiet)
            printf("[%zu/%zu %.0fs] %s: %s\n", i + 1, m.ncases, (hsdr_now_ns() - t_start) / 1e9, key, line);
        fflush(stdout);
    }
    writing_results = 1;
    if (have_inputs)
        hsdr_inputs_free(&in);
    /* A signal after the last case changes nothing: the run is complete. */
    int interrupted = done < m.ncases ? stop_signal : 0;
    /* from here on rows[0..done) are the done rows in the order of the expansion */
    size_t k = 0;
    for (size_t i = 0; i < m.ncases; i++)
        if (rows[i])
            rows[k++] = rows[i];
    size_t failed = 0, errors = 0;
    for (size_t i = 0; i < done; i++) {
        const char *status = jstr(rows[i], "status");
        failed += strcmp(status, "failed") == 0;
        errors += strcmp(status, "error") == 0;
    }
    add_ratios(rows, done);
    cJSON *be = breakeven(rows, done);
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
        } else if (write_breakeven(opt.out_dir, be) != 0) {
            rc = HSDR_EXIT_USAGE;
        }
        hsdr_results_partial_close(partial, rc == HSDR_EXIT_OK);
        if (!opt.quiet)
            print_summary(rows, done, be);
        if (nkept)
            printf("\nhsdr run: %zu cases, %zu of them kept from %s and %zu run in %.1f s", m.ncases, nkept, kept_from,
                   m.ncases - nkept, (hsdr_now_ns() - t_start) / 1e9);
        else
            printf("\nhsdr run: %zu cases in %.1f s", m.ncases, (hsdr_now_ns() - t_start) / 1e9);
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
