/* The pinned thread pool (threads.h).
 *
 * Three wait points, one pattern: a 32-bit atomic word that the waiter watches change. A waiter spins on it (pause)
 * for a while (SPIN_NS between calls, HOLD_SPIN_NS while held, IN_CALL_SPIN_NS inside one; never when
 * oversubscribed), then announces itself in a sleeper count and sleeps on the word with a futex; whoever changes
 * the word wakes the futex only when the sleeper count is non-zero, so a busy pool never makes a system call. The
 * sleeper increment and the word's change are both sequentially consistent read-modify-writes followed by a load of
 * the other one (Dekker): either the waiter sees the new word or the changer sees the sleeper, and FUTEX_WAIT
 * re-checks the word in the kernel, so no wake-up is lost.
 *   gen        bumped by hsdr_pool_run_n (and destroy); workers wait for it to move past the last one they saw
 *   remaining  workers still running the current call; the caller waits for 0 (the last worker wakes it)
 *   bar_gen    bumped by the last thread to arrive at a barrier; the others wait for it to move
 * A call on n threads of T (run_n) leaves workers n..T-1 out: the caller waits for the n - 1 active ones only, so
 * an inactive worker may still be on its way to seeing call g when call g + 1 is published. Each call's n sits in a
 * ring (call_n[g % CALL_RING]) and a worker trusts the n it read for g only if gen still equals g after reading it
 * (a seqlock read): a slot is rewritten only for call g + CALL_RING, published after g + 1. If gen has moved on, the
 * worker was not active in g (the caller would have waited for it) and it just looks again. A hold (hsdr_pool_hold)
 * stretches the workers' spin between calls from SPIN_NS to HOLD_SPIN_NS. */
#include "threads.h"

#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() ((void)0)
#endif

#include "machine.h"
#include "util.h"

enum { MAX_THREADS = 4096 };
/* How long a waiter spins before it sleeps: workers between calls (an idle pool stops burning CPU after this), and
 * threads waiting inside a call -- at a barrier, or the caller for the workers to finish -- which are busy anyway and
 * whose wake-up from a futex can cost hundreds of microseconds on a VM (a halted vCPU), inside the timed region. */
static const long SPIN_NS = 50000;
static const long IN_CALL_SPIN_NS = 2000000;
/* Between calls while the pool is held (a token's GEMVs with caller-only work between them): long enough for any
 * encoding or bookkeeping between two GEMVs, short enough that a caller that forgets to release does not keep the
 * cores busy for more than a few milliseconds of idling. */
static const long HOLD_SPIN_NS = 10000000;
enum { CALL_RING = 4 };

typedef struct {
    hsdr_pool *pool;
    int tid;
} worker_arg;

struct hsdr_pool {
    /* each group of hot atomics on its own cache line: workers poll gen while they decrement remaining */
    alignas(64) atomic_uint gen;
    atomic_uint gen_sleepers;
    atomic_int hold;                  /* hsdr_pool_hold: workers spin up to HOLD_SPIN_NS between calls */
    atomic_uint call_n[CALL_RING];    /* threads of call g at [g % CALL_RING] (seqlock read: see the head) */
    void (*fn)(int tid, int nthreads, void *arg); /* written before gen moves, read by the active after: no race */
    void *arg;
    int active;                       /* threads of the current call, read by them at barriers */
    atomic_int stop;
    alignas(64) atomic_uint remaining;
    atomic_uint caller_sleeping;
    alignas(64) atomic_uint bar_count;
    atomic_uint bar_gen;
    atomic_uint bar_sleepers;
    alignas(64) int nthreads;
    atomic_long spin_ns; /* SPIN_NS, or 0: never spin; set once pinning is known */
    pthread_t *threads; /* workers 1..nthreads-1 at [tid - 1] */
    worker_arg *args;
    int started;        /* workers created so far */
    int pinned;
    hwloc_bitmap_t caller_binding; /* the creating thread's binding before the pool pinned it; NULL: untouched */
    char pinning[256];
};

static void futex_wait(atomic_uint *word, unsigned expected)
{
    /* EAGAIN (the word already moved) and EINTR both just mean "look again" */
    syscall(SYS_futex, (void *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *word)
{
    syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Wait until *word != value: spin up to spin_ns (HOLD_SPIN_NS while *hold, when hold is given), then sleep. */
static void wait_while_equal(atomic_uint *word, unsigned value, atomic_uint *sleepers, long spin_ns,
                             const atomic_int *hold)
{
    if (spin_ns > 0) {
        long start = (long)hsdr_now_ns();
        for (unsigned iter = 1;; iter++) {
            if (atomic_load_explicit(word, memory_order_acquire) != value)
                return;
            cpu_relax();
            if ((iter & 15) == 0) {
                long limit = hold && atomic_load_explicit(hold, memory_order_relaxed) ? HOLD_SPIN_NS : spin_ns;
                if ((long)hsdr_now_ns() - start > limit)
                    break;
            }
        }
    }
    atomic_fetch_add(sleepers, 1);
    while (atomic_load(word) == value)
        futex_wait(word, value);
    atomic_fetch_sub(sleepers, 1);
}

/* Move *word on by one and wake its sleepers, if any. */
static void advance_and_wake(atomic_uint *word, atomic_uint *sleepers)
{
    atomic_fetch_add(word, 1);
    if (atomic_load(sleepers) != 0)
        futex_wake_all(word);
}

static void nothing(int tid, int nthreads, void *arg)
{
    (void)tid, (void)nthreads, (void)arg;
}

static void *worker_main(void *varg)
{
    const worker_arg *wa = varg;
    hsdr_pool *p = wa->pool;
    unsigned seen = 0; /* gen starts at 0; each call moves it by one; an inactive worker may skip calls */
    for (;;) {
        long spin_ns = atomic_load_explicit(&p->spin_ns, memory_order_relaxed);
        wait_while_equal(&p->gen, seen, &p->gen_sleepers, spin_ns, &p->hold);
        if (atomic_load(&p->stop))
            return NULL;
        unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
        unsigned n = atomic_load_explicit(&p->call_n[g % CALL_RING], memory_order_acquire);
        seen = g;
        if (atomic_load_explicit(&p->gen, memory_order_acquire) != g || wa->tid >= (int)n)
            continue; /* not active in call g: moved on without us, or left out of it */
        p->fn(wa->tid, (int)n, p->arg);
        if (atomic_fetch_sub(&p->remaining, 1) == 1 && atomic_load(&p->caller_sleeping) != 0)
            futex_wake_all(&p->remaining);
    }
}

void hsdr_pool_run(hsdr_pool *p, void (*fn)(int tid, int nthreads, void *arg), void *arg)
{
    hsdr_pool_run_n(p, p->nthreads, fn, arg);
}

void hsdr_pool_run_n(hsdr_pool *p, int n, void (*fn)(int tid, int nthreads, void *arg), void *arg)
{
    n = n < 1 ? 1 : n > p->nthreads ? p->nthreads : n;
    if (n == 1) {
        p->active = 1;
        fn(0, 1, arg);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->active = n;
    /* the caller alone moves gen: the next call is gen + 1; its slot was last read for the call CALL_RING back */
    unsigned next = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
    atomic_store_explicit(&p->call_n[next % CALL_RING], (unsigned)n, memory_order_release);
    atomic_store(&p->remaining, (unsigned)(n - 1));
    advance_and_wake(&p->gen, &p->gen_sleepers);
    fn(0, n, arg);
    /* wait for remaining == 0 */
    long spin_ns = atomic_load_explicit(&p->spin_ns, memory_order_relaxed) ? IN_CALL_SPIN_NS : 0;
    if (spin_ns > 0) {
        long start = (long)hsdr_now_ns();
        for (unsigned iter = 1; atomic_load_explicit(&p->remaining, memory_order_acquire) != 0; iter++) {
            cpu_relax();
            if ((iter & 15) == 0 && (long)hsdr_now_ns() - start > spin_ns)
                break;
        }
    }
    if (atomic_load(&p->remaining) != 0) {
        atomic_fetch_add(&p->caller_sleeping, 1);
        for (unsigned r; (r = atomic_load(&p->remaining)) != 0;)
            futex_wait(&p->remaining, r);
        atomic_fetch_sub(&p->caller_sleeping, 1);
    }
}

void hsdr_pool_barrier(hsdr_pool *p)
{
    if (p->active <= 1) {
        atomic_thread_fence(memory_order_seq_cst);
        return;
    }
    unsigned g = atomic_load(&p->bar_gen); /* read before arriving: it cannot move until this thread arrives */
    if (atomic_fetch_add(&p->bar_count, 1) == (unsigned)p->active - 1) {
        atomic_store(&p->bar_count, 0); /* nobody can arrive at the next barrier before bar_gen moves */
        advance_and_wake(&p->bar_gen, &p->bar_sleepers);
    } else {
        long spin_ns = atomic_load_explicit(&p->spin_ns, memory_order_relaxed) ? IN_CALL_SPIN_NS : 0;
        wait_while_equal(&p->bar_gen, g, &p->bar_sleepers, spin_ns, NULL);
    }
}

void hsdr_pool_hold(hsdr_pool *p, int on)
{
    atomic_store(&p->hold, on != 0);
    if (on && p->nthreads > 1 && atomic_load_explicit(&p->spin_ns, memory_order_relaxed) > 0)
        hsdr_pool_run(p, nothing, NULL); /* workers asleep now wake here and spin from now on */
}

int hsdr_pool_held(const hsdr_pool *p)
{
    return atomic_load(&((hsdr_pool *)p)->hold);
}

int hsdr_pool_sleeping(const hsdr_pool *p)
{
    return (int)atomic_load(&((hsdr_pool *)p)->gen_sleepers);
}

int hsdr_pool_threads(const hsdr_pool *p)
{
    return p->nthreads;
}

int hsdr_pool_pinned(const hsdr_pool *p)
{
    return p->pinned;
}

const char *hsdr_pool_pinning(const hsdr_pool *p)
{
    return p->pinning;
}

/* ---- pinning -------------------------------------------------------------------------------------------------- */

/* The PU for each thread: one per core while there are enough cores, else the first PU of every core, then the
 * second ones... Returns 0 with sets[i] filled (caller frees), or -1 with the reason in why. */
static int choose_pus(hwloc_topology_t topo, int n, hwloc_bitmap_t *sets, int *by_core, char *why, size_t whylen)
{
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (npus < n)
        return hsdr_errorf(why, whylen, "%d threads > %d PUs", n, npus);
    *by_core = ncores >= n;
    int filled = 0;
    if (ncores <= 0) { /* hwloc reported no cores: PUs in order */
        for (; filled < n; filled++) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)filled);
            if (!pu || !(sets[filled] = hwloc_bitmap_dup(pu->cpuset)))
                goto fail;
        }
        return 0;
    }
    for (int k = 0; filled < n; k++) {
        int placed = 0;
        for (int c = 0; c < ncores && filled < n; c++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
            hwloc_obj_t pu = core ? hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU,
                                                                        (unsigned)k)
                                  : NULL;
            if (!pu)
                continue;
            if (!(sets[filled] = hwloc_bitmap_dup(pu->cpuset)))
                goto fail;
            filled++;
            placed++;
        }
        if (!placed) /* PUs outside any core: not worth a special case */
            break;
    }
    if (filled == n)
        return 0;
fail:
    for (int i = 0; i < filled; i++)
        hwloc_bitmap_free(sets[i]);
    return hsdr_errorf(why, whylen, "hwloc could not list a PU for each of %d threads", n);
}

/* Pin the caller (thread 0) and the started workers; on any failure unpin them all again. Sets p->pinning. */
static void pin_threads(hsdr_pool *p)
{
    hwloc_topology_t topo = hsdr_machine_topology();
    int n = p->nthreads, by_core = 0;
    char why[160];
    if (!topo) {
        snprintf(p->pinning, sizeof p->pinning, "not pinned: the hwloc topology could not be loaded");
        return;
    }
    hwloc_bitmap_t *sets = calloc((size_t)n, sizeof *sets);
    if (!sets) {
        snprintf(p->pinning, sizeof p->pinning, "not pinned: out of memory");
        return;
    }
    if (choose_pus(topo, n, sets, &by_core, why, sizeof why) != 0) {
        snprintf(p->pinning, sizeof p->pinning, "not pinned: %s", why);
        free(sets);
        return;
    }
    p->caller_binding = hwloc_bitmap_alloc();
    if (p->caller_binding && hwloc_get_cpubind(topo, p->caller_binding, HWLOC_CPUBIND_THREAD) != 0) {
        hwloc_bitmap_free(p->caller_binding);
        p->caller_binding = NULL;
    }
    int failed = -1, saved_errno = 0, reading_failed = !p->caller_binding;
    if (reading_failed) {
        failed = 0;
        saved_errno = errno;
    }
    for (int t = 0; t < n && failed < 0; t++) {
        int rc = t == 0 ? hwloc_set_cpubind(topo, sets[0], HWLOC_CPUBIND_THREAD)
                        : hwloc_set_thread_cpubind(topo, p->threads[t - 1], sets[t], 0);
        if (rc != 0) {
            failed = t;
            saved_errno = errno;
        }
    }
    if (failed >= 0) {
        /* back to running anywhere: the caller to its old binding, the workers to every allowed PU */
        if (p->caller_binding)
            hwloc_set_cpubind(topo, p->caller_binding, HWLOC_CPUBIND_THREAD);
        for (int t = 1; t < failed; t++)
            hwloc_set_thread_cpubind(topo, p->threads[t - 1], hwloc_topology_get_allowed_cpuset(topo), 0);
        hwloc_bitmap_free(p->caller_binding);
        p->caller_binding = NULL;
        snprintf(p->pinning, sizeof p->pinning, "not pinned: binding thread %d%s failed: %s", failed,
                 reading_failed ? " (reading its binding)" : "", strerror(saved_errno));
    } else if (by_core) {
        p->pinned = 1;
        snprintf(p->pinning, sizeof p->pinning, "pinned: thread i -> core i (hwloc)");
    } else {
        p->pinned = 1;
        int len = snprintf(p->pinning, sizeof p->pinning, "pinned: thread i -> PU");
        for (int t = 0; t < n && len > 0 && (size_t)len < sizeof p->pinning - 48; t++)
            len += snprintf(p->pinning + len, sizeof p->pinning - (size_t)len, "%s%d", t ? "," : " P#",
                            hwloc_bitmap_first(sets[t]));
        snprintf(p->pinning + len, sizeof p->pinning - (size_t)len, " (hwloc; %d threads > %d cores)", n,
                 hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    }
    for (int t = 0; t < n; t++)
        hwloc_bitmap_free(sets[t]);
    free(sets);
}

/* ---- life cycle ----------------------------------------------------------------------------------------------- */

static void stop_workers(hsdr_pool *p)
{
    if (p->started > 0) {
        atomic_store(&p->stop, 1);
        advance_and_wake(&p->gen, &p->gen_sleepers);
        for (int i = 0; i < p->started; i++)
            pthread_join(p->threads[i], NULL);
    }
}

hsdr_pool *hsdr_pool_create(int nthreads, int pin, char *err, size_t errlen)
{
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        hsdr_errorf(err, errlen, "thread pool: %d threads requested, expected 1..%d", nthreads, MAX_THREADS);
        return NULL;
    }
    size_t size = (sizeof(hsdr_pool) + 63) / 64 * 64;
    hsdr_pool *p = aligned_alloc(64, size);
    if (!p) {
        hsdr_errorf(err, errlen, "thread pool: out of memory");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    atomic_init(&p->gen, 0);
    atomic_init(&p->gen_sleepers, 0);
    atomic_init(&p->hold, 0);
    atomic_init(&p->stop, 0);
    for (int i = 0; i < CALL_RING; i++)
        atomic_init(&p->call_n[i], 0);
    atomic_init(&p->remaining, 0);
    atomic_init(&p->caller_sleeping, 0);
    atomic_init(&p->bar_count, 0);
    atomic_init(&p->bar_gen, 0);
    atomic_init(&p->bar_sleepers, 0);
    p->nthreads = nthreads;
    p->active = nthreads;
    /* spinning only pays when every thread has a CPU of its own (pinned, or no more threads than the CPUs the
     * creating thread may run on); else a spinner takes the CPU of the thread it waits for */
    cpu_set_t allowed;
    int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
    atomic_init(&p->spin_ns, cpus >= nthreads ? SPIN_NS : 0);
    if (nthreads > 1) {
        p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads);
        p->args = calloc((size_t)nthreads - 1, sizeof *p->args);
        if (!p->threads || !p->args) {
            hsdr_errorf(err, errlen, "thread pool: out of memory");
            goto fail;
        }
    }
    for (int t = 1; t < nthreads; t++) {
        p->args[t - 1] = (worker_arg){p, t};
        int rc = pthread_create(&p->threads[t - 1], NULL, worker_main, &p->args[t - 1]);
        if (rc != 0) {
            hsdr_errorf(err, errlen, "thread pool: creating worker %d of %d: %s", t, nthreads, strerror(rc));
            goto fail;
        }
        p->started++;
    }
    if (pin) {
        pin_threads(p);
        if (p->pinned)
            atomic_store_explicit(&p->spin_ns, SPIN_NS, memory_order_relaxed);
    } else {
        snprintf(p->pinning, sizeof p->pinning, "not pinned: pinning not requested");
    }
    return p;
fail:
    stop_workers(p);
    free(p->threads);
    free(p->args);
    free(p);
    return NULL;
}

void hsdr_pool_destroy(hsdr_pool *p)
{
    if (!p)
        return;
    stop_workers(p);
    if (p->caller_binding) {
        hwloc_topology_t topo = hsdr_machine_topology();
        if (topo)
            hwloc_set_cpubind(topo, p->caller_binding, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(p->caller_binding);
    }
    free(p->threads);
    free(p->args);
    free(p);
}
