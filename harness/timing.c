#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "machine.h"
#include "markers.h"
#include "ptq1_0.h"
#include "stats.h"
#include "util.h"

size_t hsdr_timing_memory_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t quarter = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz / 4 : (size_t)1 << 30;
    size_t four_gib = (size_t)4 << 30;
    return quarter < four_gib ? quarter : four_gib;
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

void hsdr_timing_setup_free(hsdr_timing_setup *ts)
{
    if (ts->dev)
        ts->v->device->destroy(ts->dev);
    if (ts->copies) {
        if (ts->v->prepare && ts->copies[0])
            ts->v->release(ts->copies[0]); /* the others are memcpy copies inside raw_block */
        free(ts->copies);
    }
    free(ts->raw_block);
    if (ts->scratch)
        for (int t = 0; t < ts->nthreads; t++)
            free(ts->scratch[t]);
    free(ts->scratch);
    free(ts->r0);
    free(ts->r1);
    free(ts->exec.act);
    free(ts->exec.y);
    memset(ts, 0, sizeof *ts);
}

/* A device variant's setup: the variant uploads its copies (cold: more than 3x the device's L2 in rotation). */
static int device_setup(hsdr_timing_setup *ts, const hsdr_inputs *in, hsdr_mode mode, char *err, size_t errlen)
{
    const hsdr_device_ops *d = ts->v->device;
    size_t n = 1;
    if (mode == HSDR_MODE_COLD)
        n = 3 * d->l2_bytes() / in->weight_bytes + 2;
    double convert_ns = 0.0;
    size_t footprint = in->weight_bytes;
    if (d->create(ts->v, &ts->exec, in->W, (int)n, &ts->dev, &convert_ns, &footprint, err, errlen) != 0) {
        ts->dev = NULL;
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        hsdr_timing_setup_free(ts);
        return hsdr_errorf(err, errlen, "device setup failed: %s", why);
    }
    ts->ncopies = n;
    ts->convert_ns = convert_ns;
    ts->footprint = ts->copy_bytes = footprint;
    return 0;
}

int hsdr_timing_setup_create(hsdr_timing_setup *ts, const hsdr_case *c, const hsdr_inputs *in, int nthreads,
                             hsdr_mode mode, char *err, size_t errlen)
{
    const hsdr_variant *v = c->variant;
    memset(ts, 0, sizeof *ts);
    ts->v = v;
    ts->nthreads = nthreads;
    ts->exec = (hsdr_exec){.K = in->K, .N = in->N, .R = v->uses_R ? c->R : 1, .flns_F = c->flns_F,
                           .flns_b = c->flns_b, .x = in->x};
    ts->exec.y = malloc(sizeof(float) * (size_t)in->N);
    if (v->device)
        return ts->exec.y ? device_setup(ts, in, mode, err, errlen)
                          : hsdr_errorf(err, errlen, "out of memory for y (%d rows)", in->N);
    size_t act = v->act_bytes ? v->act_bytes(in->K) : 0;
    ts->exec.act = act ? aligned_alloc(64, align64(act)) : NULL;
    ts->scratch = calloc((size_t)nthreads, sizeof(void *));
    ts->r0 = malloc(sizeof(int) * (size_t)nthreads);
    ts->r1 = malloc(sizeof(int) * (size_t)nthreads);
    if (!ts->exec.y || (act && !ts->exec.act) || !ts->scratch || !ts->r0 || !ts->r1)
        goto oom;
    size_t sb = v->scratch_bytes ? v->scratch_bytes(in->K, ts->exec.R) : 0;
    for (int t = 0; t < nthreads; t++) {
        if (!(ts->scratch[t] = aligned_alloc(64, align64(sb ? sb : 64))))
            goto oom;
        memset(ts->scratch[t], 0, align64(sb ? sb : 64)); /* variants may keep state there: it starts zeroed */
    }
    /* rows split evenly over the threads; a thread builds its own activation tiles for every R rows of its range,
     * so with T threads there are at least T builds per matvec (rounding ranges up to multiples of R instead would
     * leave threads idle when R approaches N / T) */
    int chunk = (in->N + nthreads - 1) / nthreads;
    for (int t = 0; t < nthreads; t++) {
        long a = (long)t * chunk, b = (long)(t + 1) * chunk;
        ts->r0[t] = (int)(a < in->N ? a : in->N);
        ts->r1[t] = (int)(b < in->N ? b : in->N);
    }
    /* the first copy: prepared (timed: the `convert` stage) or the raw weights */
    void *first = NULL;
    size_t bytes = in->weight_bytes;
    if (v->prepare) {
        double t0 = hsdr_now_ns();
        if (v->prepare(in->W, in->K, in->N, &first, &bytes, err, errlen) != 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", err);
            hsdr_timing_setup_free(ts);
            return hsdr_errorf(err, errlen, "prepare (convert) failed: %s", why);
        }
        ts->convert_ns = hsdr_now_ns() - t0;
    }
    ts->footprint = bytes;
    ts->copy_bytes = bytes;
    /* cold: copies totalling more than 4x the last-level cache, visited in rotation */
    size_t n = 1;
    if (mode == HSDR_MODE_COLD) {
        size_t want = 4 * hsdr_machine_llc_bytes();
        n = want / bytes + 2;
        if (n > 65536)
            n = 65536;
    }
    size_t cap = hsdr_timing_memory_cap();
    if (n * align64(bytes) > cap) {
        n = cap / align64(bytes);
        if (n < (mode == HSDR_MODE_COLD ? 2u : 1u)) {
            if (first)
                v->release(first);
            hsdr_timing_setup_free(ts);
            return hsdr_errorf(err, errlen, "refused: %s mode needs %zu bytes of weight copies, above the %zu-byte cap",
                               hsdr_mode_name(mode), (mode == HSDR_MODE_COLD ? 2 : 1) * align64(bytes), cap);
        }
    }
    ts->ncopies = n;
    ts->copies = calloc(n, sizeof(void *));
    /* copy 0: the prepared buffer itself (or the first raw copy); the others live in one block, made by memcpy */
    size_t first_raw = v->prepare ? 1 : 0;
    ts->raw_block = n > first_raw ? aligned_alloc(64, (n - first_raw) * align64(bytes)) : NULL;
    if (!ts->copies || (n > first_raw && !ts->raw_block)) {
        if (first)
            v->release(first);
        goto oom;
    }
    const void *src = v->prepare ? first : (const void *)in->W;
    if (v->prepare)
        ts->copies[0] = first;
    for (size_t i = first_raw; i < n; i++) {
        ts->copies[i] = (char *)ts->raw_block + (i - first_raw) * align64(bytes);
        memcpy(ts->copies[i], src, bytes);
    }
    ts->exec.weights = ts->copies[0];
    return 0;
oom:
    hsdr_timing_setup_free(ts);
    return hsdr_errorf(err, errlen, "out of memory setting up K=%d N=%d (weights %zu bytes)", in->K, in->N,
                       in->weight_bytes);
}

/* One full device run on copy 0, y copied back into ts->exec.y. */
static int device_full(hsdr_timing_setup *ts)
{
    const hsdr_device_ops *d = ts->v->device;
    double ns;
    if (d->time(ts->dev, ts->exec.x, 0, -1, 0, 0, &ns, ts->err, sizeof ts->err) != 0 ||
        d->output(ts->dev, ts->exec.y, ts->err, sizeof ts->err) != 0)
        return -1;
    return 0;
}

int hsdr_timing_run_serial(hsdr_timing_setup *ts)
{
    if (ts->dev)
        return device_full(ts);
    hsdr_exec e = ts->exec;
    if (ts->v->prologue)
        ts->v->prologue(&e);
    ts->v->rows(&e, 0, e.N, ts->scratch[0]);
    return 0;
}

typedef struct {
    hsdr_timing_setup *ts;
    hsdr_pool *pool;
    const void *weights;
    unsigned skip, twice;
    int stage; /* -1: full run */
} rep_arg;

static void rep_fn(int tid, int nthreads, void *arg)
{
    rep_arg *a = arg;
    const hsdr_variant *v = a->ts->v;
    hsdr_exec e = a->ts->exec;
    e.weights = a->weights;
    e.skip = a->skip;
    e.twice = a->twice;
    if (a->stage >= 0) {
        const char *region = hsdr_stage_name((hsdr_stage)a->stage);
        hsdr_markers_start(region);
        v->stage(&e, (hsdr_stage)a->stage, a->ts->r0[tid], a->ts->r1[tid], a->ts->scratch[tid]);
        hsdr_markers_stop(region);
        return;
    }
    hsdr_markers_start("matvec");
    if (tid == 0 && v->prologue)
        v->prologue(&e);
    if (nthreads > 1)
        hsdr_pool_barrier(a->pool);
    v->rows(&e, a->ts->r0[tid], a->ts->r1[tid], a->ts->scratch[tid]);
    hsdr_markers_stop("matvec");
}

int hsdr_timing_run_pool(hsdr_timing_setup *ts, hsdr_pool *pool)
{
    if (ts->dev)
        return device_full(ts);
    rep_arg a = {ts, pool, ts->copies[0], 0, 0, -1};
    hsdr_pool_run(pool, rep_fn, &a);
    return 0;
}

void hsdr_stats_free(hsdr_stats *st)
{
    free(st->samples);
    st->samples = NULL;
}

static void summarize(hsdr_stats *st, double *sorted)
{
    int n = st->reps;
    memcpy(sorted, st->samples, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), hsdr_cmp_double);
    st->median = hsdr_quantile(sorted, (size_t)n, 0.5);
    st->p10 = hsdr_quantile(sorted, (size_t)n, 0.1);
    st->p25 = hsdr_quantile(sorted, (size_t)n, 0.25);
    st->p75 = hsdr_quantile(sorted, (size_t)n, 0.75);
    st->p90 = hsdr_quantile(sorted, (size_t)n, 0.9);
    st->min = sorted[0];
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m += sorted[i];
    st->mean = m / n;
    st->rel_spread = st->median > 0 ? (st->p75 - st->p25) / st->median : 0.0;
}

/* One repetition on the next weight copy: host variants timed by the monotonic clock around the pool's run, device
 * variants by the device (their launches only). */
static int one_rep(hsdr_timing_setup *ts, hsdr_pool *pool, rep_arg *a, double *ns)
{
    const size_t copy = ts->next_copy;
    ts->next_copy = (ts->next_copy + 1) % ts->ncopies;
    if (ts->dev)
        return ts->v->device->time(ts->dev, ts->exec.x, (int)copy, a->stage, a->skip, a->twice, ns, ts->err,
                                   sizeof ts->err);
    a->weights = ts->copies[copy];
    double t0 = hsdr_now_ns();
    hsdr_pool_run(pool, rep_fn, a);
    *ns = hsdr_now_ns() - t0;
    return 0;
}

static int measure(hsdr_timing_setup *ts, hsdr_pool *pool, rep_arg *a, const hsdr_timing_policy *pol, hsdr_stats *st)
{
    memset(st, 0, sizeof *st);
    int cap = pol->max_reps > 0 ? pol->max_reps : 1;
    st->samples = malloc(sizeof(double) * (size_t)cap);
    double *sorted = malloc(sizeof(double) * (size_t)cap);
    if (!st->samples || !sorted) {
        free(sorted);
        hsdr_stats_free(st);
        return -1;
    }
    double start = hsdr_now_ns(), limit = pol->time_limit_s * 1e9, sample;
    for (int w = 0; w < pol->warmup; w++)
        if (one_rep(ts, pool, a, &sample) != 0)
            goto fail;
    st->stop = "max_reps";
    while (st->reps < cap) {
        if (one_rep(ts, pool, a, &sample) != 0)
            goto fail;
        double t1 = hsdr_now_ns();
        st->samples[st->reps++] = sample;
        if (st->reps >= pol->min_reps) {
            summarize(st, sorted);
            if (st->rel_spread <= pol->noise_target) {
                st->stop = "noise";
                break;
            }
            if (t1 - start >= limit) {
                st->stop = "time_limit";
                break;
            }
        }
    }
    summarize(st, sorted);
    free(sorted);
    return 0;
fail:
    free(sorted);
    hsdr_stats_free(st);
    return -1;
}

int hsdr_time_full(hsdr_timing_setup *ts, hsdr_pool *pool, unsigned skip, unsigned twice,
                   const hsdr_timing_policy *pol, hsdr_stats *st)
{
    rep_arg a = {ts, pool, NULL, skip, twice, -1};
    return measure(ts, pool, &a, pol, st);
}

int hsdr_time_stage(hsdr_timing_setup *ts, hsdr_pool *pool, hsdr_stage s, const hsdr_timing_policy *pol,
                    hsdr_stats *st)
{
    rep_arg a = {ts, pool, NULL, 0, 0, (int)s};
    return measure(ts, pool, &a, pol, st);
}
