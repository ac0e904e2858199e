/* The pool's hand-off cost and the split rule (handoff.h). */
#include "handoff.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "machine.h"
#include "results.h"
#include "util.h"

const int hsdr_handoff_gap_us[HSDR_HANDOFF_GAPS] = {0, 10, 50, 200};

enum { WARM_CALLS = 50, SPLIT_CALLS = 300 };

typedef struct {
    hsdr_pool *pool;
} barrier_task;

static void empty_task(int tid, int nthreads, void *arg)
{
    (void)tid, (void)nthreads, (void)arg;
}

static void barrier_task_fn(int tid, int nthreads, void *arg)
{
    (void)tid, (void)nthreads;
    const barrier_task *b = arg;
    for (int i = 0; i < HSDR_HANDOFF_BARRIERS; i++)
        hsdr_pool_barrier(b->pool);
}

/* The caller alone for gap_ns: spinning on the clock, as thread 0 does while it encodes. */
static void caller_work(double gap_ns)
{
    if (gap_ns <= 0)
        return;
    const double t0 = hsdr_now_ns();
    while (hsdr_now_ns() - t0 < gap_ns) {
    }
}

/* `calls` timed calls of fn on n threads, each after gap_ns of caller-only work, into st (samples allocated). */
static int time_calls(hsdr_pool *pool, int n, void (*fn)(int, int, void *), void *arg, double gap_ns, int calls,
                      hsdr_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!(st->samples = malloc(sizeof(double) * (size_t)calls)))
        return -1;
    for (int i = 0; i < WARM_CALLS; i++)
        hsdr_pool_run_n(pool, n, fn, arg);
    for (int i = 0; i < calls; i++) {
        caller_work(gap_ns);
        const double t0 = hsdr_now_ns();
        hsdr_pool_run_n(pool, n, fn, arg);
        st->samples[i] = hsdr_now_ns() - t0;
    }
    st->reps = calls;
    st->launches_per_sample = 1;
    st->stop = "max_reps";
    hsdr_stats_summarize(st);
    return 0;
}

void hsdr_handoff_result_free(hsdr_handoff_result *r)
{
    for (int h = 0; h < 2; h++)
        for (int g = 0; g < HSDR_HANDOFF_GAPS; g++)
            hsdr_stats_free(&r->call[h][g]);
    hsdr_stats_free(&r->barrier);
}

int hsdr_handoff_measure(hsdr_pool *pool, int calls, hsdr_handoff_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->threads = hsdr_pool_threads(pool);
    if (calls < 10)
        calls = 10;
    const int n = out->threads;
    for (int h = 0; h < 2; h++) {
        hsdr_pool_hold(pool, h);
        for (int g = 0; g < HSDR_HANDOFF_GAPS; g++)
            if (time_calls(pool, n, empty_task, NULL, hsdr_handoff_gap_us[g] * 1e3, calls, &out->call[h][g]) != 0)
                goto oom;
    }
    barrier_task b = {pool};
    if (time_calls(pool, n, barrier_task_fn, &b, 0.0, calls, &out->barrier) != 0)
        goto oom;
    hsdr_pool_hold(pool, 0);
    const double empty_ns = out->call[1][0].median;
    for (int i = 0; i < out->barrier.reps; i++)
        out->barrier.samples[i] = (out->barrier.samples[i] - empty_ns) / HSDR_HANDOFF_BARRIERS;
    hsdr_stats_summarize(&out->barrier);
    return 0;
oom:
    hsdr_pool_hold(pool, 0);
    hsdr_handoff_result_free(out);
    return hsdr_errorf(err, errlen, "hand-off: out of memory for %d samples", calls);
}

static void print_json(const hsdr_handoff_result *r, const hsdr_pool *pool, const cJSON *context)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "schema", "hsdr-handoff/1");
    cJSON_AddNumberToObject(o, "threads", r->threads);
    cJSON_AddStringToObject(o, "pinning", hsdr_pool_pinning(pool));
    cJSON_AddStringToObject(o, "task", "empty");
    cJSON *calls = cJSON_AddArrayToObject(o, "calls");
    for (int h = 0; h < 2; h++)
        for (int g = 0; g < HSDR_HANDOFF_GAPS; g++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddBoolToObject(c, "held", h);
            cJSON_AddNumberToObject(c, "gap_us", hsdr_handoff_gap_us[g]);
            hsdr_results_add_time(c, "time_ns", &r->call[h][g], NULL);
            cJSON_AddItemToArray(calls, c);
        }
    cJSON_AddNumberToObject(o, "barriers_per_call", HSDR_HANDOFF_BARRIERS);
    hsdr_results_add_time(o, "barrier_ns", &r->barrier, NULL);
    if (context)
        cJSON_AddItemToObject(o, "context", cJSON_Duplicate(context, 1));
    hsdr_results_emit(o);
}

enum { REPORT_CALLS = 1000 };

int hsdr_handoff_report(const int *threads, int nthreads_list, int json)
{
    cJSON *context = json ? hsdr_machine_context() : NULL;
    int rc = HSDR_EXIT_OK;
    if (!json) {
        printf("hand-off: one hsdr_pool_run of an empty task, timed call by call (%d calls per cell), median (p90) "
               "in us;\ngap: the caller alone for that long before each call (the workers spin 50 us between calls, "
               "10 ms held);\nbarrier: one of %d in a row inside a held call, less the empty call\n\n",
               REPORT_CALLS, HSDR_HANDOFF_BARRIERS);
        printf("%-8s", "threads");
        for (int h = 0; h < 2; h++)
            for (int g = 0; g < HSDR_HANDOFF_GAPS; g++) {
                char head[32];
                snprintf(head, sizeof head, "%s gap %d", h ? "held" : "free", hsdr_handoff_gap_us[g]);
                printf(" %16s", head);
            }
        printf(" %16s  pinning\n", "barrier");
    }
    for (int t = 0; t < nthreads_list && rc == HSDR_EXIT_OK; t++) {
        char err[512];
        hsdr_pool *pool = hsdr_pool_create(threads[t], 1, err, sizeof err);
        hsdr_handoff_result r;
        if (!pool || hsdr_handoff_measure(pool, REPORT_CALLS, &r, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr bandwidth: %d thread%s: %s\n", threads[t], threads[t] == 1 ? "" : "s", err);
            hsdr_pool_destroy(pool);
            rc = HSDR_EXIT_FAIL;
            break;
        }
        if (json) {
            print_json(&r, pool, context);
        } else {
            printf("%-8d", threads[t]);
            for (int h = 0; h < 2; h++)
                for (int g = 0; g < HSDR_HANDOFF_GAPS; g++) {
                    char cell[32];
                    snprintf(cell, sizeof cell, "%.2f (%.2f)", r.call[h][g].median / 1e3, r.call[h][g].p90 / 1e3);
                    printf(" %16s", cell);
                }
            char cell[32];
            snprintf(cell, sizeof cell, "%.3f (%.3f)", r.barrier.median / 1e3, r.barrier.p90 / 1e3);
            printf(" %16s  %s\n", cell, hsdr_pool_pinning(pool));
        }
        fflush(stdout);
        hsdr_handoff_result_free(&r);
        hsdr_pool_destroy(pool);
    }
    cJSON_Delete(context);
    return rc;
}

/* ---- the split rule ------------------------------------------------------------------------------------------- */

int hsdr_split_model_measure(hsdr_pool *pool, double ceiling_bytes_per_s, hsdr_split_model *m, char *err,
                             size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->threads = hsdr_pool_threads(pool);
    m->ceiling_bytes_per_s = ceiling_bytes_per_s;
    if (!(m->handoff_ns = calloc((size_t)m->threads + 1, sizeof(double))))
        return hsdr_errorf(err, errlen, "split rule: out of memory");
    hsdr_pool_hold(pool, 1);
    for (int n = 1; n <= m->threads; n++) {
        hsdr_stats st;
        if (time_calls(pool, n, empty_task, NULL, 0.0, SPLIT_CALLS, &st) != 0) {
            hsdr_pool_hold(pool, 0);
            hsdr_split_model_free(m);
            return hsdr_errorf(err, errlen, "split rule: out of memory");
        }
        m->handoff_ns[n] = st.median;
        hsdr_stats_free(&st);
    }
    hsdr_pool_hold(pool, 0);
    /* one thread's read: a pool of its own (pinned to the caller's core; the caller's binding comes back after) */
    hsdr_pool *one = hsdr_pool_create(1, 1, err, errlen);
    const hsdr_bw_result *bw;
    int rc = one ? hsdr_ceiling(NULL, one, (size_t)256 << 20, HSDR_MODE_COLD, INFINITY, &bw, err, errlen) : -1;
    if (rc == 0)
        m->per_thread_bytes_per_s = bw->bytes_per_s;
    hsdr_pool_destroy(one);
    if (rc != 0)
        hsdr_split_model_free(m);
    return rc;
}

void hsdr_split_model_free(hsdr_split_model *m)
{
    free(m->handoff_ns);
    m->handoff_ns = NULL;
}

double hsdr_split_predict_ns(const hsdr_split_model *m, double bytes, int n)
{
    double read = n * m->per_thread_bytes_per_s;
    if (read > m->ceiling_bytes_per_s)
        read = m->ceiling_bytes_per_s;
    return m->handoff_ns[n] + bytes / read * 1e9;
}

int hsdr_split_threads(const hsdr_split_model *m, double bytes)
{
    if (!m->handoff_ns || !(m->per_thread_bytes_per_s > 0) || !(m->ceiling_bytes_per_s > 0) ||
        !isfinite(m->per_thread_bytes_per_s) || !isfinite(m->ceiling_bytes_per_s))
        return m->threads;
    int best = 1;
    double best_ns = hsdr_split_predict_ns(m, bytes, 1);
    for (int n = 2; n <= m->threads; n++) {
        const double ns = hsdr_split_predict_ns(m, bytes, n);
        if (ns < best_ns) {
            best = n;
            best_ns = ns;
        }
    }
    return best;
}
