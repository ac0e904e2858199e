#include "timing.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "machine.h"
#include "markers.h"
#include "ptq1_0.h"
#include "stats.h"
#include "util.h"

size_t hsdr_timing_memory_cap(void)
{
    const size_t memory = hsdr_machine_memory_bytes();
    size_t quarter = memory ? memory / 4 : (size_t)1 << 30;
    size_t four_gib = (size_t)4 << 30;
    return quarter < four_gib ? quarter : four_gib;
}

/* The cap of one setup's copies set by hsdr_timing_copy_share (0: not set). */
static _Atomic size_t share_cap;

void hsdr_timing_copy_share(size_t setups)
{
    const size_t memory = hsdr_machine_memory_bytes();
    size_t half = memory ? memory / 2 : (size_t)2 << 30;
    atomic_store(&share_cap, setups > 0 ? half / setups : 0);
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* ---- the engine ---- */

static void nothing(int tid, int nthreads, void *arg)
{
    (void)tid, (void)nthreads, (void)arg;
}

int hsdr_sample(hsdr_subject *s, double *ns)
{
    const int count = s->count > 0 ? s->count : 1;
    const size_t ncopies = s->rot ? s->rot->n : 1;
    size_t copy = 0;
    if (s->rot) {
        copy = s->rot->next;
        s->rot->next = (s->rot->next + (size_t)count) % ncopies;
        s->rot->launches += (size_t)count;
    }
    double t = 0.0;
    if (s->before && s->before(s) != 0)
        return -1;
    if (s->dev) {
        const hsdr_device_ops *d = s->dev;
        if (d->mark(s->run, 0, s->err, sizeof s->err) != 0)
            return -1;
        for (int i = 0; i < count; i++)
            if (d->enqueue(s->run, (int)((copy + (size_t)i) % ncopies), s->stage, s->skip, s->twice, s->err,
                           sizeof s->err) != 0)
                return -1;
        if (d->mark(s->run, 1, s->err, sizeof s->err) != 0 || d->elapsed(s->run, &t, s->err, sizeof s->err) != 0)
            return -1;
    } else {
        if (s->wake && hsdr_pool_threads(s->wake) > 1)
            hsdr_pool_run(s->wake, nothing, NULL); /* workers asleep after a pause wake here, not on the clock */
        const double t0 = hsdr_now_ns();
        const int rc = s->launch(s, copy, count);
        t = hsdr_now_ns() - t0;
        if (rc != 0)
            return -1;
    }
    *ns = t / count;
    return 0;
}

enum { MAX_LAUNCHES_PER_SAMPLE = 1 << 20 };

/* Launches per sample so that one sample lasts at least min_ns, from the fastest launch seen (ns). */
static int calibrated_count(double fastest_ns, double min_ns)
{
    if (!(fastest_ns > 0))
        return MAX_LAUNCHES_PER_SAMPLE;
    const double want = min_ns / fastest_ns;
    return want < 1 ? 1 : want >= MAX_LAUNCHES_PER_SAMPLE ? MAX_LAUNCHES_PER_SAMPLE : (int)want + 1;
}

int hsdr_measure(hsdr_subject *const *subjects, int n, const hsdr_timing_policy *pol, hsdr_stats *stats, char *err,
                 size_t errlen)
{
    const int cap = pol->max_reps > 0 ? pol->max_reps : 1;
    double *sorted = malloc(sizeof(double) * (size_t)cap);
    double *fastest = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    int failed = -1; /* the subject whose sample failed */
    memset(stats, 0, sizeof *stats * (size_t)n);
    for (int i = 0; i < n; i++) {
        const hsdr_subject *ref = subjects[i]->ref;
        if (!(stats[i].samples = malloc(sizeof(double) * (size_t)cap)) ||
            (ref && ref != subjects[i] && !(stats[i].ref_samples = malloc(sizeof(double) * (size_t)cap))))
            goto oom;
    }
    if (!sorted || !fastest)
        goto oom;
    for (int i = 0; i < n; i++)
        if (subjects[i]->count < 1)
            subjects[i]->count = 1;
    for (int w = 0; w < pol->warmup; w++)
        for (int i = 0; i < n; i++) {
            double ns;
            if (hsdr_sample(subjects[i], &ns) != 0) {
                failed = i;
                goto fail;
            }
            if (pol->min_sample_ns > 0) {
                if (w == 0 || ns < fastest[i])
                    fastest[i] = ns;
                subjects[i]->count = calibrated_count(fastest[i], pol->min_sample_ns);
            }
        }
    const double start = hsdr_now_ns(), limit = pol->time_limit_s * 1e9 * n;
    const char *stop = "max_reps";
    int reps = 0;
    while (reps < cap) {
        for (int i = 0; i < n; i++) {
            hsdr_subject *ref = stats[i].ref_samples ? subjects[i]->ref : NULL;
            double discarded;
            if (ref && ((pol->rewarm && hsdr_sample(ref, &discarded) != 0) ||
                        hsdr_sample(ref, &stats[i].ref_samples[reps]) != 0)) {
                snprintf(subjects[i]->err, sizeof subjects[i]->err, "its reference %.40s: %.190s",
                         ref->name ? ref->name : "subject", ref->err);
                failed = i;
                goto fail;
            }
            if ((pol->rewarm && hsdr_sample(subjects[i], &discarded) != 0) ||
                hsdr_sample(subjects[i], &stats[i].samples[reps]) != 0) {
                failed = i;
                goto fail;
            }
        }
        reps++;
        if (reps < pol->min_reps)
            continue;
        int quiet = 1;
        for (int i = 0; i < n && quiet; i++) {
            stats[i].reps = reps;
            hsdr_stats_summarize_with(&stats[i], sorted);
            quiet = stats[i].rel_spread <= pol->noise_target;
        }
        if (quiet) {
            stop = "noise";
            break;
        }
        if (hsdr_now_ns() - start >= limit) {
            stop = "time_limit";
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        stats[i].reps = reps;
        stats[i].stop = stop;
        stats[i].launches_per_sample = subjects[i]->count;
        hsdr_stats_summarize_with(&stats[i], sorted);
    }
    free(sorted);
    free(fastest);
    return 0;
oom:
    hsdr_errorf(err, errlen, "out of memory for %d samples of %d subjects", cap, n);
    goto out;
fail:
    hsdr_errorf(err, errlen, "%s: %s", subjects[failed]->name ? subjects[failed]->name : "subject",
                subjects[failed]->err);
out:
    for (int i = 0; i < n; i++)
        hsdr_stats_free(&stats[i]);
    free(sorted);
    free(fastest);
    return -1;
}

/* ---- weight copies ---- */

/* Copies of `bytes` that mode needs: hot 1; cold more than 4x the last-level cache in total (at most 65536), within
 * the memory cap and the run's share (at least 2). 0 when even that does not fit. */
static size_t copies_for(size_t bytes, hsdr_mode mode)
{
    size_t n = 1;
    if (mode == HSDR_MODE_COLD) {
        n = 4 * hsdr_machine_llc_bytes() / bytes + 2;
        if (n > 65536)
            n = 65536;
    }
    size_t cap = hsdr_timing_memory_cap();
    const size_t share = atomic_load(&share_cap);
    if (share > 0 && share < cap)
        cap = share;
    if (n * align64(bytes) > cap) {
        n = cap / align64(bytes);
        if (n < (mode == HSDR_MODE_COLD ? 2u : 1u))
            return 0;
    }
    return n;
}

static int refuse(size_t bytes, hsdr_mode mode, char *err, size_t errlen)
{
    return hsdr_errorf(err, errlen, "refused: %s mode needs %zu bytes of weight copies, above the %zu-byte cap",
                       hsdr_mode_name(mode), (mode == HSDR_MODE_COLD ? 2 : 1) * align64(bytes),
                       hsdr_timing_memory_cap());
}

int hsdr_weight_copies_create(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, hsdr_mode mode, char *err,
                              size_t errlen)
{
    memset(wc, 0, sizeof *wc);
    const size_t n = copies_for(bytes, mode);
    if (n == 0)
        return refuse(bytes, mode, err, errlen);
    return hsdr_weight_copies_create_n(wc, W, bytes, n, err, errlen);
}

int hsdr_weight_copies_create_n(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, size_t n, char *err,
                                size_t errlen)
{
    memset(wc, 0, sizeof *wc);
    if (n < 1)
        n = 1;
    wc->copies = calloc(n, sizeof(void *));
    wc->block = hsdr_machine_stream_alloc(n * align64(bytes));
    if (!wc->copies || !wc->block) {
        hsdr_weight_copies_free(wc);
        return hsdr_errorf(err, errlen, "out of memory for %zu weight copies of %zu bytes", n, bytes);
    }
    for (size_t i = 0; i < n; i++) {
        wc->copies[i] = (char *)wc->block + i * align64(bytes);
        memcpy(wc->copies[i], W, bytes);
    }
    wc->bytes = bytes;
    wc->rot.n = n;
    return 0;
}

int hsdr_weight_copies_borrow(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, char *err, size_t errlen)
{
    memset(wc, 0, sizeof *wc);
    if (!(wc->copies = calloc(1, sizeof(void *))))
        return hsdr_errorf(err, errlen, "out of memory");
    wc->copies[0] = (void *)W; /* block stays NULL: nothing of ours to free but the index */
    wc->bytes = bytes;
    wc->rot.n = 1;
    return 0;
}

void hsdr_weight_copies_free(hsdr_weight_copies *wc)
{
    free(wc->copies);
    free(wc->block);
    memset(wc, 0, sizeof *wc);
}

/* ---- the timing setup ---- */

float *hsdr_timing_columns(const hsdr_inputs *in, int cols)
{
    const size_t K = (size_t)in->K;
    float *x = malloc(sizeof(float) * K * (size_t)(cols > 0 ? cols : 1));
    if (!x)
        return NULL;
    memcpy(x, in->x, sizeof(float) * K);
    for (int c = 1; c < cols; c++) {
        hsdr_rng rng; /* column c: the case's seed, moved by the column (column 0 is the inputs' own draw) */
        hsdr_rng_seed(&rng, in->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)c));
        if (hsdr_dist_fill(in->dist, &rng, x + (size_t)c * K, K, NULL) != 0) {
            free(x);
            return NULL;
        }
    }
    return x;
}

void hsdr_timing_setup_free(hsdr_timing_setup *ts)
{
    if (ts->dev)
        ts->v->device->destroy(ts->dev);
    hsdr_weight_copies_free(&ts->own);
    if (ts->scratch)
        for (int t = 0; t < ts->nthreads; t++)
            free(ts->scratch[t]);
    free(ts->scratch);
    free(ts->r0);
    free(ts->r1);
    free(ts->exec.act);
    free(ts->exec.y);
    if (ts->exec.cols > 1)
        free((float *)ts->exec.x);
    memset(ts, 0, sizeof *ts);
}

/* A device variant's setup: the variant uploads its copies (cold: more than 3x the device's L2 in rotation) and
 * works out its launches; the activations are uploaded once, here. */
static int device_setup(hsdr_timing_setup *ts, const hsdr_inputs *in, hsdr_mode mode, char *err, size_t errlen)
{
    const hsdr_device_ops *d = ts->v->device;
    size_t n = 1;
    if (mode == HSDR_MODE_COLD)
        n = 3 * d->l2_bytes() / in->weight_bytes + 2;
    double convert_ns = 0.0;
    size_t footprint = in->weight_bytes;
    char why[256] = "";
    if (d->create(ts->v, &ts->exec, in->W, (int)n, &ts->dev, &convert_ns, &footprint, why, sizeof why) != 0) {
        ts->dev = NULL;
        hsdr_timing_setup_free(ts);
        return hsdr_errorf(err, errlen, "device setup failed: %s", why);
    }
    if (d->set_input(ts->dev, ts->exec.x, why, sizeof why) != 0) {
        hsdr_timing_setup_free(ts);
        return hsdr_errorf(err, errlen, "device input upload failed: %s", why);
    }
    ts->dev_rot = (hsdr_rotation){.n = n};
    ts->rot = &ts->dev_rot;
    ts->convert_ns = convert_ns;
    ts->footprint = footprint;
    return 0;
}

void hsdr_timing_setup_threads(hsdr_timing_setup *ts, int n)
{
    if (ts->dev || !ts->r0)
        return;
    n = n < 1 ? 1 : n > ts->nthreads ? ts->nthreads : n;
    ts->active = n;
    /* rows split evenly over the threads; a thread builds its own activation tiles for every R rows of its range,
     * so with T threads there are at least T builds per matvec (rounding ranges up to multiples of R instead would
     * leave threads idle when R approaches N / T) */
    const int N = ts->exec.N, chunk = (N + n - 1) / n;
    for (int t = 0; t < ts->nthreads; t++) {
        long a = (long)t * chunk, b = (long)(t + 1) * chunk;
        ts->r0[t] = (int)(t < n && a < N ? a : N);
        ts->r1[t] = (int)(t < n && b < N ? b : N);
    }
    /* A full matvec splits its rows dynamically (as ggml's CPU mat-mul does): the active threads claim chunks of
     * about N / 4n rows, multiples of 16 (the row groups of the interleaved CPU forms), from one counter, so a
     * thread slowed by its core's neighbours (the lent host's vCPUs) takes fewer chunks instead of holding up the
     * GEMV's end. Variants whose time depends on R keep the static ranges: their activation tiles are built per R
     * rows of one thread's range. */
    ts->chunk = 0;
    if (n > 1 && !ts->v->uses_R) {
        const int want = (N + 4 * n - 1) / (4 * n);
        ts->chunk = (want + 15) / 16 * 16;
    }
}

int hsdr_timing_setup_create(hsdr_timing_setup *ts, const hsdr_case *c, const hsdr_inputs *in, int nthreads,
                             hsdr_mode mode, hsdr_pool *pool, hsdr_weight_copies *shared, char *err, size_t errlen)
{
    const hsdr_variant *v = c->variant;
    const int cols = c->cols > 1 ? c->cols : 1;
    memset(ts, 0, sizeof *ts);
    ts->v = v;
    ts->nthreads = nthreads;
    ts->pool = pool;
    ts->exec = (hsdr_exec){.K = in->K, .N = in->N, .R = v->uses_R ? c->R : 1, .flns_F = c->flns_F,
                           .flns_b = c->flns_b, .cols = cols, .x = in->x};
    if (cols > 1 && !(ts->exec.x = hsdr_timing_columns(in, cols))) {
        ts->exec.cols = 1; /* nothing owned yet */
        hsdr_timing_setup_free(ts);
        return hsdr_errorf(err, errlen, "out of memory for %d columns of K=%d activations", cols, in->K);
    }
    ts->exec.y = malloc(sizeof(float) * (size_t)in->N * (size_t)cols);
    if (v->device)
        return ts->exec.y ? device_setup(ts, in, mode, err, errlen)
                          : hsdr_errorf(err, errlen, "out of memory for y (%d rows)", in->N);
    if (cols > 1) {
        hsdr_timing_setup_free(ts);
        return hsdr_errorf(err, errlen, "%s takes one column (cols = %d)", v->name, cols);
    }
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
    hsdr_timing_setup_threads(ts, nthreads);
    if (!v->prepare && shared) {
        ts->wc = shared;
    } else {
        /* the prepared form (timed: the `convert` stage), or the raw weights, in the setup's own copies */
        void *prepared = NULL;
        size_t bytes = in->weight_bytes;
        if (v->prepare) {
            double t0 = hsdr_now_ns();
            char why[256] = "";
            if (v->prepare(in->W, in->K, in->N, &prepared, &bytes, why, sizeof why) != 0) {
                hsdr_timing_setup_free(ts);
                return hsdr_errorf(err, errlen, "prepare (convert) failed: %s", why);
            }
            ts->convert_ns = hsdr_now_ns() - t0;
        }
        const int rc = hsdr_weight_copies_create(&ts->own, prepared ? prepared : in->W, bytes, mode, err, errlen);
        if (prepared)
            v->release(prepared); /* flat and position-independent (kernel.h): the copies are what runs */
        if (rc != 0) {
            hsdr_timing_setup_free(ts);
            return -1;
        }
        ts->wc = &ts->own;
    }
    ts->rot = &ts->wc->rot;
    ts->footprint = ts->wc->bytes;
    ts->exec.weights = ts->wc->copies[0];
    return 0;
oom:
    hsdr_timing_setup_free(ts);
    return hsdr_errorf(err, errlen, "out of memory setting up K=%d N=%d (weights %zu bytes)", in->K, in->N,
                       in->weight_bytes);
}

int hsdr_timing_setup_copies(hsdr_timing_setup *ts, size_t n, char *err, size_t errlen)
{
    if (ts->dev || ts->wc != &ts->own || n <= ts->own.rot.n)
        return 0;
    hsdr_weight_copies more;
    if (hsdr_weight_copies_create_n(&more, ts->own.copies[0], ts->own.bytes, n, err, errlen) != 0)
        return -1;
    hsdr_weight_copies_free(&ts->own);
    ts->own = more;
    ts->rot = &ts->own.rot;
    ts->exec.weights = ts->own.copies[0];
    return 0;
}

/* One full device launch on copy 0 (a sample outside any rotation) on the activations ts->exec.x holds now (uploaded
 * first, outside the sample: callers such as hsdr quality change them between runs, as a host variant's prologue
 * would read them), y copied back into ts->exec.y. */
static int device_full(hsdr_timing_setup *ts)
{
    hsdr_subject s;
    double ns;
    if (ts->v->device->set_input(ts->dev, ts->exec.x, ts->err, sizeof ts->err) != 0)
        return -1;
    hsdr_timing_subject(ts, -1, 0, 0, &s);
    s.rot = NULL;
    if (hsdr_sample(&s, &ns) != 0) {
        snprintf(ts->err, sizeof ts->err, "%s", s.err);
        return -1;
    }
    return ts->v->device->output(ts->dev, ts->exec.y, ts->err, sizeof ts->err);
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
    const void *weights;
    unsigned skip, twice;
    int stage;        /* -1: full run */
    atomic_int next;  /* the next chunk of rows to claim (ts->chunk > 0), 0 at every pool run */
} rep_arg;

/* Thread tid's rows of a full matvec: its static range, or chunks claimed in turn until none is left. */
static void rep_rows(rep_arg *a, const hsdr_exec *e, int tid)
{
    const hsdr_timing_setup *ts = a->ts;
    if (ts->chunk <= 0) {
        ts->v->rows(e, ts->r0[tid], ts->r1[tid], ts->scratch[tid]);
        return;
    }
    for (;;) {
        const long r = (long)atomic_fetch_add_explicit(&a->next, 1, memory_order_relaxed) * ts->chunk;
        if (r >= e->N)
            return;
        ts->v->rows(e, (int)r, (int)(r + ts->chunk < e->N ? r + ts->chunk : e->N), ts->scratch[tid]);
    }
}

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
    if (v->prologue_part)
        v->prologue_part(&e, tid, nthreads); /* the activation-side work shared by every thread, split by groups */
    else if (tid == 0 && v->prologue)
        v->prologue(&e);
    if (nthreads > 1)
        hsdr_pool_barrier(a->ts->pool);
    rep_rows(a, &e, tid);
    hsdr_markers_stop("matvec");
}

int hsdr_timing_run_pool(hsdr_timing_setup *ts)
{
    if (ts->dev)
        return device_full(ts);
    rep_arg a = {ts, ts->wc->copies[0], 0, 0, -1, 0};
    hsdr_pool_run_n(ts->pool, ts->active, rep_fn, &a);
    return 0;
}

/* A host subject's launches: the pool's run of the matvec (or one stage) on consecutive weight copies. */
static int matvec_launch(hsdr_subject *s, size_t copy, int count)
{
    hsdr_timing_setup *ts = s->ctx;
    rep_arg a = {ts, NULL, s->skip, s->twice, s->stage, 0};
    for (int i = 0; i < count; i++) {
        a.weights = ts->wc->copies[(copy + (size_t)i) % ts->rot->n];
        atomic_store_explicit(&a.next, 0, memory_order_relaxed); /* the pool run's start orders it before the claims */
        hsdr_pool_run_n(ts->pool, ts->active, rep_fn, &a);
    }
    return 0;
}

void hsdr_timing_subject(hsdr_timing_setup *ts, int stage, unsigned skip, unsigned twice, hsdr_subject *s)
{
    memset(s, 0, sizeof *s);
    s->name = ts->v->name;
    s->stage = stage;
    s->skip = skip;
    s->twice = twice;
    s->rot = ts->rot;
    s->count = 1;
    if (ts->dev) {
        s->dev = ts->v->device;
        s->run = ts->dev;
    } else {
        s->launch = matvec_launch;
        s->ctx = ts;
        s->wake = ts->pool;
    }
}
