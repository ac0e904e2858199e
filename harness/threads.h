/* A pinned thread pool for microsecond-scale parallel work (a GEMV over a few hundred KiB of weights).
 *
 * The thread that creates the pool is thread 0 and works too; workers 1..n-1 are created once and wait between calls
 * by spinning on an atomic generation counter for a short while (50 us; 10 ms while held), then sleeping on a
 * futex, so back-to-back calls cost about a microsecond and an idle pool burns no CPU. Inside a call (a barrier,
 * the caller waiting for the workers) threads spin up to 2 ms before sleeping: a futex wake-up can cost hundreds of
 * microseconds on a VM. An unpinned pool with more threads than the CPUs its creator may run on never spins (a
 * spinning thread would take the CPU of the one it waits for). A call that follows a pause of more than 50 us (10 ms
 * held) pays a wake-up: timing loops should make an untimed call first. `hsdr bandwidth --handoff` measures all of
 * this (harness/handoff.h). */
#ifndef HSDR_THREADS_H
#define HSDR_THREADS_H
#include <stddef.h>

typedef struct hsdr_pool hsdr_pool;

/* nthreads >= 1. pin: bind thread i to core i (hwloc, one PU of the core, cores in hwloc's logical order); with more
 * threads than cores, to PUs (first one PU of every core, then the second ones, ...); with more threads than PUs, or
 * when binding fails, the pool runs unpinned and hsdr_pool_pinning says why. The creating thread's binding is
 * restored by hsdr_pool_destroy (call both from the same thread). NULL with a message in err on error. */
hsdr_pool *hsdr_pool_create(int nthreads, int pin, char *err, size_t errlen);

/* Run fn(tid, nthreads, arg) on every thread -- the calling thread (which must be the creating thread) runs tid 0 --
 * and return when all have finished; writes made by fn on any thread are visible to the caller afterwards. Not
 * reentrant: fn must not call hsdr_pool_run on the same pool. */
void hsdr_pool_run(hsdr_pool *p, void (*fn)(int tid, int nthreads, void *arg), void *arg);

/* The same on the first n threads only (n clipped to 1..threads): fn(tid, n, arg) for tid < n; workers n.. skip
 * the call without being waited for (a small GEMV on fewer threads pays no hand-off to the others). Barriers inside
 * fn count n threads. hsdr_pool_run(p, ...) is hsdr_pool_run_n(p, threads, ...). */
void hsdr_pool_run_n(hsdr_pool *p, int n, void (*fn)(int tid, int nthreads, void *arg), void *arg);

/* Hold the workers spinning between calls (on != 0) for a burst of calls with caller-only work between them (a
 * token's GEMVs): a call after a gap of up to 10 ms finds them awake instead of paying a futex wake-up; still
 * bounded (idle longer than that, they sleep) and never on a pool that does not spin (oversubscribed, unpinned).
 * Holding wakes sleeping workers at once (an empty call). hsdr_pool_hold(p, 0) releases: they sleep again after
 * the normal 50 us. Call from the creating thread, outside a call. */
void hsdr_pool_hold(hsdr_pool *p, int on);
int hsdr_pool_held(const hsdr_pool *p);
/* Workers asleep between calls right now (0..threads-1): what tests read to see that an idle pool sleeps. */
int hsdr_pool_sleeping(const hsdr_pool *p);

/* A barrier usable inside fn: all nthreads threads must call it; writes before it are visible to every thread
 * after it. */
void hsdr_pool_barrier(hsdr_pool *p);

int hsdr_pool_threads(const hsdr_pool *p);
/* 1 when every thread is bound to its own core or PU. */
int hsdr_pool_pinned(const hsdr_pool *p);
/* "pinned: thread i -> core i (hwloc)", "pinned: thread i -> PU ... (hwloc; 4 threads > 2 cores)" or
 * "not pinned: <reason>". Owned by the pool. */
const char *hsdr_pool_pinning(const hsdr_pool *p);

/* Joins the workers and frees the pool; NULL is a no-op. */
void hsdr_pool_destroy(hsdr_pool *p);

#endif
