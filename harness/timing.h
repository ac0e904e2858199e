/* Timing of one variant on one configuration: buffers (rotating weight copies for cold runs), per-thread scratch,
 * row ranges, and the measurement loops (warm-up, repetitions until the noise target, the time limit or the
 * repetition cap; every sample kept). */
#ifndef HSDR_TIMING_H
#define HSDR_TIMING_H
#include <stddef.h>

#include "case.h"
#include "inputs.h"
#include "threads.h"

typedef struct {
    const hsdr_variant *v;
    hsdr_exec exec;          /* template: weights = copies[0]; y, act and x owned here */
    void **copies;           /* ncopies weight buffers (prepared form, or raw PTQ1_0) */
    size_t ncopies;
    void *raw_block;         /* copies made by memcpy (all but a prepared copy 0) live in one allocation */
    size_t copy_bytes;       /* bytes of one copy (footprint when prepared) */
    void **scratch;          /* per thread */
    int nthreads;
    int *r0, *r1;            /* per-thread row ranges */
    double convert_ns;       /* time of the first prepare(), 0 without one */
    size_t footprint;        /* prepared bytes, or the PTQ1_0 bytes */
    size_t next_copy;
    hsdr_device_run *dev;    /* device variants: the variant's device state (no host copies, no scratch) */
    char err[256];           /* why the last device call failed */
} hsdr_timing_setup;

/* Memory a setup may use for cold copies (bytes): min(4 GiB, a quarter of physical memory). Device variants: weight
 * copies on the device totalling more than 3x its L2 (cold), made by the variant. */
size_t hsdr_timing_memory_cap(void);
/* 0, or -1 with a message (an out-of-memory message names the bytes needed). */
int hsdr_timing_setup_create(hsdr_timing_setup *ts, const hsdr_case *c, const hsdr_inputs *in, int nthreads,
                             hsdr_mode mode, char *err, size_t errlen);
void hsdr_timing_setup_free(hsdr_timing_setup *ts);
/* prologue + rows over all rows on the calling thread (validation, warming intermediate buffers); a device variant:
 * one full run, y copied back. 0, or -1 with the device's message in ts->err. */
int hsdr_timing_run_serial(hsdr_timing_setup *ts);
/* One full matvec on the pool (prologue on thread 0, barrier, rows on every thread), on the first weight copy:
 * what a timed repetition runs, for callers that use the output (profile, quality). */
int hsdr_timing_run_pool(hsdr_timing_setup *ts, hsdr_pool *pool);

typedef struct {
    int warmup, min_reps, max_reps;
    double noise_target; /* stop when (p75 - p25) / median is at most this */
    double time_limit_s;
} hsdr_timing_policy;

typedef struct {
    double median, p10, p25, p75, p90, min, mean, rel_spread;
    int reps;
    const char *stop; /* noise | time_limit | max_reps */
    double *samples;  /* reps samples in ns, in order (owned; hsdr_stats_free) */
} hsdr_stats;
void hsdr_stats_free(hsdr_stats *st);

/* The full matvec (prologue, barrier, rows) with ablation masks; or one stage alone (stage >= 0). Host variants
 * are timed with the monotonic clock around the pool's run, device variants by the device's clock. 0, or -1 (out of
 * memory, or the device's message in ts->err). */
int hsdr_time_full(hsdr_timing_setup *ts, hsdr_pool *pool, unsigned skip, unsigned twice,
                   const hsdr_timing_policy *pol, hsdr_stats *st);
int hsdr_time_stage(hsdr_timing_setup *ts, hsdr_pool *pool, hsdr_stage s, const hsdr_timing_policy *pol,
                    hsdr_stats *st);

#endif
