/* The streamed CUDA kernels' knobs (tma_knobs.h). */
#include "tma_knobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

hsdr_tma_knobs hsdr_tma_knobs_default(void)
{
    const hsdr_tma_knobs d = {4, 2, 256, 0, 0};
    return d;
}

int hsdr_tma_knobs_parse(const char *text, hsdr_tma_knobs *kn, char *err, size_t errlen)
{
    static const struct {
        const char *what;
        int lo, hi;
    } field[5] = {{"stages (passes in flight per CTA)", 1, HSDR_TMA_MAX_STAGES},
                  {"rows per thread in a pass", 1, HSDR_TMA_MAX_ROWS_PER_THREAD},
                  {"threads per CTA aimed at", 32, HSDR_TMA_MAX_THREADS},
                  {"CTAs per SM at most (0: as many as fit)", 0, HSDR_TMA_MAX_CTAS},
                  {"first passes requested before the wait for activations (1) or after (0)", 0, 1}};
    *kn = hsdr_tma_knobs_default();
    if (!text || !*text)
        return 0;
    int v[5] = {0, 0, 0, kn->ctas_per_sm, kn->early};
    const char *p = text;
    for (int i = 0; i < 5; i++) {
        char *end;
        errno = 0;
        const long n = strtol(p, &end, 10);
        const bool last = *end == '\0' && i >= 2; /* the fourth and fifth fields are optional */
        if (end == p || *p == ' ' || *p == '+' || errno || (*end != ',' && !last) || (i == 4 && *end != '\0') ||
            n < field[i].lo || n > field[i].hi) {
            if (err)
                snprintf(err, errlen,
                         "HSDR_TMA='%s': field %d (%s) at offset %d: want an integer %d..%d, fields separated by "
                         "',' (STAGES,ROWS,THREADS[,CTAS_PER_SM[,EARLY]])",
                         text, i + 1, field[i].what, (int)(p - text), field[i].lo, field[i].hi);
            *kn = hsdr_tma_knobs_default();
            return -1;
        }
        v[i] = (int)n;
        if (last)
            break;
        p = end + 1;
    }
    kn->stages = v[0], kn->rows_per_thread = v[1], kn->threads = v[2], kn->ctas_per_sm = v[3], kn->early = v[4];
    return 0;
}

/* HSDR_TMA is read once per process: every launch asks for the knobs, and the environment does not change. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static hsdr_tma_knobs env_knobs;
static int env_rc;
static char env_err[256];

static void read_env(void)
{
    env_rc = hsdr_tma_knobs_parse(getenv("HSDR_TMA"), &env_knobs, env_err, sizeof env_err);
}

int hsdr_tma_knobs_of(hsdr_tma_knobs *kn, char *err, size_t errlen)
{
    pthread_once(&env_once, read_env);
    *kn = env_knobs;
    if (env_rc != 0 && err)
        snprintf(err, errlen, "%s", env_err);
    return env_rc;
}
