/* The hand-off cost of the thread pool (threads.h), and the rule that uses it to choose a GEMV's threads.
 *
 * A hand-off is one hsdr_pool_run_n of an empty task: the caller publishes the call, the workers see it and come
 * back, the caller sees them done -- what every GEMV of a token pays on top of its reads. Timed one call at a time
 * (the monotonic clock around each), on a pool pinned as every timed pool is:
 *   back to back   calls one after another (gap 0)
 *   after a gap    the caller works alone for G us first (spinning on the clock, as encoding or the previous GEMV's
 *                  tail does on thread 0), G = 10, 50, 200: past the workers' 50 us spin they sleep and the call pays
 *                  a futex wake-up; held (hsdr_pool_hold) they still spin. Both are measured: not held, then held.
 *   barrier        one call of 64 hsdr_pool_barrier in a row, less the median empty held call, / 64
 * The split rule: a GEMV of B bytes on n threads is predicted to take handoff(n) + B / min(n x r1, C), r1 one
 * thread's read bandwidth, C the ceiling of all the pool's threads, handoff(n) the measured back-to-back held call on
 * n threads; it gets the n of least predicted time (the fewest on a tie). Nothing in it is a constant. */
#ifndef HSDR_HANDOFF_H
#define HSDR_HANDOFF_H
#include <stddef.h>

#include "stats.h"
#include "threads.h"

enum { HSDR_HANDOFF_GAPS = 4, HSDR_HANDOFF_BARRIERS = 64 };
extern const int hsdr_handoff_gap_us[HSDR_HANDOFF_GAPS]; /* 0, 10, 50, 200 */

typedef struct {
    int threads;
    hsdr_stats call[2][HSDR_HANDOFF_GAPS]; /* [held][gap]: ns per call (samples owned) */
    hsdr_stats barrier;                    /* ns per barrier, held (samples owned) */
} hsdr_handoff_result;

/* The hand-off of pool measured over `calls` timed calls per cell (>= 10). Call from the pool's creating thread;
 * leaves the pool not held. 0, or -1 (out of memory) with a message. */
int hsdr_handoff_measure(hsdr_pool *pool, int calls, hsdr_handoff_result *out, char *err, size_t errlen);
void hsdr_handoff_result_free(hsdr_handoff_result *r);

/* `hsdr bandwidth --handoff`: a pinned pool per thread count, its hand-off measured; a table, or one JSON line per
 * thread count (schema hsdr-handoff/1, with the machine context). 0, or 1 when a pool could not be made. */
int hsdr_handoff_report(const int *threads, int nthreads_list, int json);

/* ---- the split rule ---- */

typedef struct {
    int threads;                   /* the pool's */
    double per_thread_bytes_per_s; /* one thread's cold read */
    double ceiling_bytes_per_s;    /* all the pool's threads' cold read */
    double *handoff_ns;            /* [n] for n = 1..threads ([0] unused): median back-to-back held call on n */
} hsdr_split_model;

/* The rule's inputs for pool: handoff(n) measured now on the pool (run_n, held), one thread's cold read of 256 MiB
 * (hsdr_ceiling on a one-thread pool made for it: measured once per process), and the ceiling given
 * (ceiling_bytes_per_s, the caller's all-thread read). 0, or -1 with a message. */
int hsdr_split_model_measure(hsdr_pool *pool, double ceiling_bytes_per_s, hsdr_split_model *m, char *err,
                             size_t errlen);
void hsdr_split_model_free(hsdr_split_model *m);
/* The predicted time (ns) of reading `bytes` on n threads (1..m->threads) under m. */
double hsdr_split_predict_ns(const hsdr_split_model *m, double bytes, int n);
/* The threads (1..m->threads) with the least predicted time for a GEMV of `bytes` (the fewest on a tie); every
 * thread when the model's numbers are not positive and finite. */
int hsdr_split_threads(const hsdr_split_model *m, double bytes);

#endif
