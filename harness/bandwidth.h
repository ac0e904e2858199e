/* Measured read bandwidth: the roofline ceiling every time is compared with (bytes floor = bytes / ceiling), and the
 * `hsdr bandwidth` report.
 *
 * A working set of `bytes` is split evenly over the pool's threads, each reading its contiguous part (64-byte
 * aligned) with a streaming sum over 32-byte lanes (AVX2 when the CPU has it, chosen at run time; else portable C).
 *   hot   the same buffer again and again: cache-resident when it fits
 *   cold  rotating copies of the working set whose total exceeds 4x the last-level cache (capped at 1 GiB), each
 *         read once per rotation, so reads come from DRAM (a working set above 4x LLC is cold by itself: one copy)
 * One launch reads the working set once; a host sample runs `passes` launches inside one hsdr_pool_run. Timed by the
 * engine of harness/timing.c like every kernel (hsdr_bw_policy). Device backends read with their own streaming
 * kernel (hsdr_device_ops.read_create), timed the same way. */
#ifndef HSDR_BANDWIDTH_H
#define HSDR_BANDWIDTH_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "threads.h"
#include "timing.h"

typedef struct {
    const char *backend;    /* "cpu", or the device variant's backend */
    int threads;            /* host: the pool's threads; device: 0 */
    hsdr_mode mode;
    size_t bytes;           /* the working set: bytes read per launch */
    double bytes_per_s;     /* bytes / time.median */
    hsdr_stats time;        /* ns per read of the working set, from harness/timing.c (samples owned here) */
    int buffers;            /* copies in the rotation: 1 for hot */
    size_t footprint_bytes; /* memory read across the rotation: buffers x working set */
    double measured_at_ns;  /* hsdr_now_ns() at the end of the measurement */
    char note[256];         /* "" or why the cold rotation is not what was asked (capped at 1 GiB) */
} hsdr_bw_result;
void hsdr_bw_result_free(hsdr_bw_result *r);

/* The policy of a read measurement: warm-up (the passes per launch calibrated so a host sample lasts >= 200 us,
 * which keeps the ~1 us pool dispatch out of the figure; a device sample is one launch, like a kernel's), then
 * repetitions until (p75 - p25) / median <= 2%, 0.3 s or 300 repetitions (every row that uses a ceiling carries
 * its samples: a few hundred give its median well inside the 2%). */
hsdr_timing_policy hsdr_bw_policy(int device);

/* Read bandwidth of `bytes` (>= 1) over the pool's threads in mode hot or cold, timed by harness/timing.c. 0, or -1
 * with a message in err (out of memory, bad argument). Call from the pool's creating thread. Every measurement
 * goes into hsdr_bandwidth_log. out owns its samples (hsdr_bw_result_free). */
/* A read of `bytes` on every thread of the pool (cold: rotating over copies that exceed 4x the LLC, as
 * hsdr_read_bandwidth) as a timing subject *s, to be measured beside other subjects in one hsdr_measure: a ceiling
 * sampled between them, under the same drift. *r owns the buffers until hsdr_read_subject_free. 0, or -1 with a
 * message. */
typedef struct hsdr_read_subject hsdr_read_subject;
int hsdr_read_subject_create(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_read_subject **r, hsdr_subject *s,
                             char *err, size_t errlen);
void hsdr_read_subject_free(hsdr_read_subject *r);
int hsdr_read_bandwidth(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                        size_t errlen);
/* The same on a device: its plain streaming read (read_create), one launch per sample, cold rotating over more than
 * 3x its L2. */
int hsdr_device_read_bandwidth(const hsdr_variant *v, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                               size_t errlen);

/* The ceiling of the rows of one run: a read of `bytes` in mode on device variant v's device (v NULL or host: the
 * pool's threads), measured once per (backend, bytes, mode, threads) and reused by every case of that size until it
 * is older than max_age_s, then measured again (a shared machine's bandwidth drifts). *out points into the cache
 * (valid until hsdr_ceiling_cache_clear). 0, or -1 with a message. */
int hsdr_ceiling(const hsdr_variant *v, hsdr_pool *pool, size_t bytes, hsdr_mode mode, double max_age_s,
                 const hsdr_bw_result **out, char *err, size_t errlen);
void hsdr_ceiling_cache_clear(void);

/* Every measurement made so far in this process, in order: a new JSON array of {"backend", "threads", "bytes",
 * "mode", "bytes_per_s", "rel_spread", "reps"} (the context's "ceilings"). Caller deletes. */
cJSON *hsdr_bandwidth_log(void);

/* The read kernel, exposed for tests: the sum (mod 2^64) of the buffer's little-endian 64-bit words, the last partial
 * word zero-padded. kernel: 0 portable C, 1 AVX2 (only where the CPU has it), -1 the one chosen at run time.
 * buf must be 32-byte aligned. */
uint64_t hsdr_bw_read_sum(const void *buf, size_t bytes, int kernel);
/* "avx2" or "portable": the kernel chosen at run time. */
const char *hsdr_bw_kernel_name(void);

/* What `hsdr bandwidth` measures (harness/cmd/bandwidth.c reads the options); NULL: the default. */
typedef struct {
    const char *threads; /* comma list of thread counts (default 1 .. the logical CPUs) */
    const char *sizes;   /* comma list of sizes, K/M/G suffixes (default half of each cache level, and 256M) */
    const char *mode;    /* hot, cold or both (default) */
    const char *backend; /* cpu (default) or a device backend */
    int json;
} hsdr_bandwidth_options;
/* The thread counts of a --threads value (NULL: 1 .. the logical CPUs, at most 64) into threads[0..64): their
 * number, or -1 after a usage message naming the value. */
int hsdr_bandwidth_threads(const char *value, int *threads);
/* The bandwidth table (or JSON rows) of o: 0, 1 when a measurement failed (out of memory), 2 on a bad value (the
 * message names the option and the value). */
int hsdr_bandwidth_report(const hsdr_bandwidth_options *o);

#endif
