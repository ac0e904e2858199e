/* Minimal test helpers: failure counting with file:line, and a fresh seed per run (printed; HSDR_TEST_SEED replays). */
#ifndef HSDR_TESTING_H
#define HSDR_TESTING_H
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long test_failures = 0, test_checks = 0;

#define CHECK(cond, ...)                                                                                            \
    do {                                                                                                           \
        test_checks++;                                                                                             \
        if (!(cond)) {                                                                                             \
            if (test_failures++ < 20) {                                                                            \
                fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                           \
                fprintf(stderr, __VA_ARGS__);                                                                      \
                fputc('\n', stderr);                                                                               \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)

/* A fresh seed each run unless HSDR_TEST_SEED is set; always printed so a failure can be replayed. */
static inline uint64_t test_seed(const char *suite)
{
    const char *env = getenv("HSDR_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    printf("%s: seed %" PRIu64 " (replay with HSDR_TEST_SEED=%" PRIu64 ")\n", suite, seed, seed);
    return seed;
}

static inline int test_finish(const char *suite)
{
    printf("%s: %ld checks, %ld failed\n", suite, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

#endif
