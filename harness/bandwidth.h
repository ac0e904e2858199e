/* Measured read bandwidth: the roofline ceiling every time is compared with (bytes floor = bytes / ceiling), and the
 * `hsdr bandwidth` command.
 *
 * A working set of `bytes` is split evenly over the pool's threads, each reading its contiguous part (64-byte
 * aligned) with a streaming sum over 32-byte lanes (AVX2 when the CPU has it, chosen at run time; else portable C).
 *   hot   the same buffer again and again: cache-resident when it fits
 *   cold  rotating copies of the working set whose total exceeds 4x the last-level cache (capped at 1 GiB), each
 *         read once per rotation, so reads come from DRAM (a working set above 4x LLC is cold by itself: one copy)
 * One repetition reads the working set `passes` times inside one hsdr_pool_run (passes chosen so that a repetition
 * lasts >= 200 us, which keeps the ~1 us dispatch out of the figure); repetitions run until the relative spread
 * (p90 - p10) / median of the per-pass times is below 2% (at least 5), or 0.3 s, or 3000 repetitions. */
#ifndef HSDR_BANDWIDTH_H
#define HSDR_BANDWIDTH_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "threads.h"

typedef struct {
    double bytes_per_s;     /* bytes / median_ns */
    double median_ns;       /* median time to read the working set once (all threads) */
    int reps;               /* timed repetitions */
    double rel_spread;      /* (p90 - p10) / median of the repetitions */
    int passes_per_rep;     /* reads of the working set per repetition */
    int buffers;            /* copies in the rotation: 1 for hot */
    size_t footprint_bytes; /* memory read across the rotation: buffers x working set (rounded to 64 bytes) */
    const char *stop;       /* "noise" | "time_limit" | "max_reps" (static string) */
    char note[256];         /* "" or why the cold rotation is not what was asked (capped at 1 GiB) */
} hsdr_bw_result;

/* Read bandwidth of `bytes` (>= 1) over the pool's threads in mode hot or cold. 0, or -1 with a message in err (out
 * of memory, bad argument). Call from the pool's creating thread. Every measurement goes into hsdr_bandwidth_log. */
int hsdr_read_bandwidth(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                        size_t errlen);

/* Cached: (bytes rounded up to a power of two, threads, mode) is measured once, at the rounded size, until the
 * cache is cleared. */
int hsdr_read_bandwidth_cached(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                               size_t errlen);
/* Forget the cached measurements: `hsdr run` clears them at every new input configuration, so each case's ceiling
 * is measured minutes, not the whole run, away from it (a shared machine's bandwidth drifts). */
void hsdr_read_bandwidth_cache_clear(void);

/* Every measurement made so far in this process, in order: a new JSON array of
 * {"threads", "bytes", "mode", "bytes_per_s"} (the context's "ceilings"). Caller deletes. */
cJSON *hsdr_bandwidth_log(void);

/* The read kernel, exposed for tests: the sum (mod 2^64) of the buffer's little-endian 64-bit words, the last partial
 * word zero-padded. kernel: 0 portable C, 1 AVX2 (only where the CPU has it), -1 the one chosen at run time.
 * buf must be 32-byte aligned. */
uint64_t hsdr_bw_read_sum(const void *buf, size_t bytes, int kernel);
/* "avx2" or "portable": the kernel chosen at run time. */
const char *hsdr_bw_kernel_name(void);

/* `hsdr bandwidth [--threads 1,2] [--sizes 32K,256K,4M,64M,256M] [--mode hot|cold|both] [--json]`: 0, 1 when a
 * measurement failed (out of memory), 2 on bad arguments. */
int hsdr_cmd_bandwidth(int argc, char **argv);

#endif
