/* The parts of the streamed design (tma.cuh) that are not per format: its encode kernel and its knobs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tma.cuh"

__global__ void __launch_bounds__(256) hsdr_tma_quantize(const float *x, int K, int8_t *q)
{
    cudaTriggerProgrammaticLaunchCompletion(); /* the mat-vec may launch and start its weight copies now */
    cudaGridDependencySynchronize();           /* x is the previous kernel's output */
    const int j = (int)blockIdx.x * 8 + (int)(threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (j >= K / 32) /* whole warps */
        return;
    float d;
    int v, s;
    hsdr_cu_q8_1_lane(x[32 * j + lane], d, v, s);
    q[32 * j + lane] = (int8_t)v;
    if (lane == 0) {
        ((float *)(q + K))[j] = __half2float(__float2half_rn(d));
        ((int *)(q + K + K / 32 * 4))[j] = s;
    }
}

static const hsdr_tma_knobs defaults = {4, 2, 256, 0}; /* the best token of the first sweep (perf-notes, step 2) */

int hsdr_tma_knobs_of(hsdr_tma_knobs *kn, char *err, size_t errlen)
{
    static const struct {
        const char *what;
        int lo, hi;
    } field[4] = {{"stages (passes in flight per CTA)", 1, HSDR_TMA_MAX_STAGES},
                  {"rows per thread in a pass", 1, 8},
                  {"threads per CTA aimed at", 32, HSDR_TMA_MAX_THREADS},
                  {"CTAs per SM at most (0: as many as fit)", 0, 32}};
    const char *env = getenv("HSDR_TMA");
    *kn = defaults;
    if (!env || !*env)
        return 0;
    int v[4] = {0, 0, 0, defaults.ctas_per_sm};
    const char *p = env;
    for (int i = 0; i < 4; i++) {
        char *end;
        errno = 0;
        const long n = strtol(p, &end, 10);
        const bool last = *end == '\0' && i >= 2; /* the fourth field is optional */
        if (end == p || errno || (*end != ',' && !last) || (i == 3 && *end != '\0') || n < field[i].lo ||
            n > field[i].hi) {
            if (err)
                snprintf(err, errlen, "HSDR_TMA='%s': field %d (%s) at offset %d: want an integer %d..%d, fields "
                                      "separated by ',' (STAGES,ROWS,THREADS[,CTAS_PER_SM])",
                         env, i + 1, field[i].what, (int)(p - env), field[i].lo, field[i].hi);
            return -1;
        }
        v[i] = (int)n;
        if (last)
            break;
        p = end + 1;
    }
    kn->stages = v[0], kn->rows_per_thread = v[1], kn->threads = v[2], kn->ctas_per_sm = v[3];
    return 0;
}
