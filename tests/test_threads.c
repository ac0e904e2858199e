/* The thread pool: every tid runs exactly once per call, the barrier orders writes, a parallel sum equals the serial
 * one, pools come and go without leaks (ASan), more threads than cores still work, and the pinning string. Calls on
 * fewer threads (run_n) in a random order of n: each tid < n once, the others never, barriers over the n; a held
 * pool runs the same, and once released its workers go to sleep (the sleeper count, and CPU time, not wall time). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "machine.h"
#include "rng.h"
#include "testing.h"
#include "threads.h"

enum { MAX_T = 8 };

typedef struct {
    atomic_int runs[MAX_T]; /* calls seen per tid */
    atomic_int bad_n;       /* calls that saw a wrong nthreads */
    int expect_n;
} count_arg;

static void count_tid(int tid, int nthreads, void *arg)
{
    count_arg *a = arg;
    if (nthreads != a->expect_n || tid < 0 || tid >= nthreads)
        atomic_fetch_add(&a->bad_n, 1);
    else
        atomic_fetch_add(&a->runs[tid], 1);
}

/* each thread writes its slot, barrier, each reads all: every slot must hold this round's value */
typedef struct {
    hsdr_pool *pool;
    int round;
    int slots[MAX_T];           /* plain ints: the barrier must order them */
    int seen_wrong[MAX_T];
} barrier_arg;

static void barrier_round(int tid, int nthreads, void *arg)
{
    barrier_arg *a = arg;
    for (int phase = 0; phase < 3; phase++) {
        a->slots[tid] = a->round * 16 + phase * 4 + tid % 4 + 1;
        hsdr_pool_barrier(a->pool);
        for (int t = 0; t < nthreads; t++)
            if (a->slots[t] != a->round * 16 + phase * 4 + t % 4 + 1)
                a->seen_wrong[tid]++;
        hsdr_pool_barrier(a->pool); /* nobody overwrites a slot before everyone has read it */
    }
}

typedef struct {
    const uint32_t *x;
    size_t n;
    uint64_t partial[MAX_T];
} sum_arg;

static void sum_part(int tid, int nthreads, void *arg)
{
    sum_arg *a = arg;
    size_t lo = a->n * (size_t)tid / (size_t)nthreads, hi = a->n * (size_t)(tid + 1) / (size_t)nthreads;
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++)
        s += a->x[i];
    a->partial[tid] = s;
}

static void check_pool(int n, int pin, hsdr_rng *rng)
{
    char err[256];
    hsdr_pool *p = hsdr_pool_create(n, pin, err, sizeof err);
    CHECK(p != NULL, "create(%d, pin=%d): %s", n, pin, err);
    if (!p)
        return;
    CHECK(hsdr_pool_threads(p) == n, "threads %d, expected %d", hsdr_pool_threads(p), n);

    /* many back-to-back runs, then some after a pause long enough for the workers to fall asleep */
    count_arg ca = {.expect_n = n};
    for (int t = 0; t < MAX_T; t++)
        atomic_init(&ca.runs[t], 0);
    atomic_init(&ca.bad_n, 0);
    const int calls = 2000;
    for (int c = 0; c < calls; c++) {
        hsdr_pool_run(p, count_tid, &ca);
        for (int t = 0; t < n; t++)
            if (atomic_load(&ca.runs[t]) != c + 1) {
                CHECK(0, "n=%d call %d: tid %d ran %d times, expected %d", n, c, t, atomic_load(&ca.runs[t]),
                      c + 1);
                c = calls;
                break;
            }
        if (c % 500 == 499) {
            struct timespec pause = {0, 2000000}; /* 2 ms: past the spin, the workers sleep */
            nanosleep(&pause, NULL);
        }
    }
    CHECK(atomic_load(&ca.bad_n) == 0, "n=%d: %d calls saw a wrong tid or nthreads", n, atomic_load(&ca.bad_n));

    barrier_arg ba = {.pool = p};
    for (int round = 0; round < 300; round++) {
        ba.round = round;
        hsdr_pool_run(p, barrier_round, &ba);
    }
    for (int t = 0; t < n; t++)
        CHECK(ba.seen_wrong[t] == 0, "n=%d: thread %d read %d stale slots after the barrier", n, t, ba.seen_wrong[t]);

    size_t len = 100000 + (size_t)(hsdr_rng_u64(rng) % 1000);
    uint32_t *x = malloc(len * sizeof *x);
    CHECK(x != NULL, "out of memory");
    if (x) {
        uint64_t serial = 0;
        for (size_t i = 0; i < len; i++)
            serial += x[i] = (uint32_t)hsdr_rng_u64(rng);
        for (int rep = 0; rep < 20; rep++) {
            sum_arg sa = {.x = x, .n = len};
            memset(sa.partial, 0xff, sizeof sa.partial); /* poisoned */
            hsdr_pool_run(p, sum_part, &sa);
            uint64_t parallel = 0;
            for (int t = 0; t < n; t++)
                parallel += sa.partial[t];
            CHECK(parallel == serial, "n=%d rep %d: parallel sum %llu != serial %llu", n, rep,
                  (unsigned long long)parallel, (unsigned long long)serial);
        }
        free(x);
    }

    const char *pinning = hsdr_pool_pinning(p);
    CHECK(pinning && (strncmp(pinning, "pinned: ", 8) == 0 || strncmp(pinning, "not pinned: ", 12) == 0),
          "pinning string '%s'", pinning ? pinning : "(null)");
    CHECK(hsdr_pool_pinned(p) == (strncmp(pinning, "pinned: ", 8) == 0), "pinned flag disagrees with '%s'", pinning);
    if (!pin)
        CHECK(strcmp(pinning, "not pinned: pinning not requested") == 0, "unpinned pool says '%s'", pinning);
    if (pin && n <= hsdr_machine_cores())
        /* binding to one's own allowed cores does not need privileges: it should work everywhere we test */
        CHECK(strcmp(pinning, "pinned: thread i -> core i (hwloc)") == 0, "n=%d <= cores: '%s'", n, pinning);
    if (pin && n > hsdr_machine_logical_cpus())
        CHECK(strncmp(pinning, "not pinned: ", 12) == 0 && strstr(pinning, "PUs"), "n=%d > PUs: '%s'", n, pinning);
    printf("threads %d pin %d: %s\n", n, pin, pinning);
    hsdr_pool_destroy(p);
}

/* Calls on n of the pool's threads, n drawn at random per call (under the seed), mixed with barrier rounds on n
 * threads and pauses past the spin; with hold, the whole burst is held and released at the end. */
static void check_run_n(int threads, int hold, hsdr_rng *rng)
{
    char err[256];
    hsdr_pool *p = hsdr_pool_create(threads, 1, err, sizeof err);
    CHECK(p != NULL, "create(%d): %s", threads, err);
    if (!p)
        return;
    if (hold)
        hsdr_pool_hold(p, 1);
    CHECK(hsdr_pool_held(p) == hold, "held %d, expected %d", hsdr_pool_held(p), hold);
    long expect[MAX_T] = {0};
    count_arg ca;
    for (int t = 0; t < MAX_T; t++)
        atomic_init(&ca.runs[t], 0);
    atomic_init(&ca.bad_n, 0);
    barrier_arg ba = {.pool = p};
    int bad_barrier = 0;
    for (int c = 0; c < 3000; c++) {
        int n = 1 + (int)(hsdr_rng_u64(rng) % (uint64_t)threads);
        if (c % 7 == 3) {
            memset(ba.seen_wrong, 0, sizeof ba.seen_wrong);
            ba.round = c;
            hsdr_pool_run_n(p, n, barrier_round, &ba);
            for (int t = 0; t < n; t++)
                bad_barrier += ba.seen_wrong[t];
            continue;
        }
        ca.expect_n = n;
        hsdr_pool_run_n(p, n, count_tid, &ca);
        for (int t = 0; t < n; t++)
            expect[t]++;
        for (int t = 0; t < threads; t++)
            if (atomic_load(&ca.runs[t]) != expect[t]) {
                CHECK(0, "threads %d hold %d call %d on n=%d: tid %d ran %d times, expected %ld", threads, hold, c,
                      n, t, atomic_load(&ca.runs[t]), expect[t]);
                c = 1 << 30;
                break;
            }
        if (c % 1000 == 999) {
            struct timespec pause = {0, 2000000}; /* 2 ms: past the free spin, within the held one */
            nanosleep(&pause, NULL);
        }
    }
    CHECK(atomic_load(&ca.bad_n) == 0, "threads %d hold %d: %d calls saw a wrong tid or nthreads", threads, hold,
          atomic_load(&ca.bad_n));
    CHECK(bad_barrier == 0, "threads %d hold %d: %d stale slots after barriers on n threads", threads, hold,
          bad_barrier);
    /* out-of-range n is clipped: 0 runs tid 0 alone, threads + 5 runs every thread */
    ca.expect_n = 1;
    hsdr_pool_run_n(p, 0, count_tid, &ca);
    ca.expect_n = threads;
    hsdr_pool_run_n(p, threads + 5, count_tid, &ca);
    expect[0] += 2;
    for (int t = 1; t < threads; t++)
        expect[t]++;
    for (int t = 0; t < threads; t++)
        CHECK(atomic_load(&ca.runs[t]) == expect[t], "clipped n: tid %d ran %d times, expected %ld", t,
              atomic_load(&ca.runs[t]), expect[t]);
    CHECK(atomic_load(&ca.bad_n) == 0, "clipped n: wrong tid or nthreads");
    if (hold) {
        hsdr_pool_hold(p, 0);
        CHECK(hsdr_pool_held(p) == 0, "still held after release");
    }
    /* released (or never held), idle workers sleep: every worker in the sleeper count within seconds (a bound
     * against a hang, not a timing), then an idle second costs next to no CPU */
    int sleeping = 0;
    for (int i = 0; i < 5000 && (sleeping = hsdr_pool_sleeping(p)) != threads - 1; i++) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    CHECK(sleeping == threads - 1, "threads %d hold %d: %d of %d workers asleep 5 s after the last call", threads,
          hold, sleeping, threads - 1);
    struct timespec c0, c1, idle = {0, 200000000};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    nanosleep(&idle, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
    /* a spinning worker would burn about 200 ms here; sleeping ones a few syscalls' worth */
    CHECK(cpu_ms < 50.0, "threads %d hold %d: %.1f ms of CPU in 200 ms idle: workers still spinning", threads, hold,
          cpu_ms);
    /* and a held pool left idle past the hold's spin sleeps too */
    hsdr_pool_hold(p, 1);
    for (int i = 0; i < 5000 && (sleeping = hsdr_pool_sleeping(p)) != threads - 1; i++) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    CHECK(sleeping == threads - 1, "threads %d: %d of %d workers asleep 5 s into an idle hold", threads, sleeping,
          threads - 1);
    hsdr_pool_hold(p, 0);
    printf("run_n threads %d hold %d: %s\n", threads, hold, hsdr_pool_pinning(p));
    hsdr_pool_destroy(p);
}

int main(void)
{
    uint64_t seed = test_seed("threads");
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    char err[256];

    CHECK(hsdr_pool_create(0, 0, err, sizeof err) == NULL, "0 threads accepted");
    CHECK(strstr(err, "0 threads") != NULL, "message '%s'", err);
    hsdr_pool_destroy(NULL);

    for (int n = 1; n <= 4; n++)
        for (int pin = 0; pin <= 1; pin++)
            check_pool(n, pin, &rng);
    check_pool(MAX_T, 1, &rng); /* far more threads than this 2-core machine has */
    for (int hold = 0; hold <= 1; hold++) {
        check_run_n(2, hold, &rng);
        check_run_n(4, hold, &rng);
        check_run_n(MAX_T, hold, &rng);
    }

    /* create and destroy repeatedly (ASan reports any leak), sometimes without a single run */
    for (int i = 0; i < 50; i++) {
        hsdr_pool *p = hsdr_pool_create(1 + i % 4, i % 2, err, sizeof err);
        CHECK(p != NULL, "create %d: %s", i, err);
        if (!p)
            continue;
        count_arg ca = {.expect_n = 1 + i % 4};
        if (i % 3)
            hsdr_pool_run(p, count_tid, &ca);
        hsdr_pool_destroy(p);
    }
    return test_finish("threads");
}
