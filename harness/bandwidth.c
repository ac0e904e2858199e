/* Measured read bandwidth (bandwidth.h): the read kernels, the hot/cold measurement, the per-process cache and log,
 * and `hsdr bandwidth`. */
#include "bandwidth.h"

#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HSDR_BW_X86 1
#endif

#include "cli.h"
#include "kernel.h"
#include "machine.h"
#include "results.h"
#include "stats.h"
#include "util.h"

static const double NOISE_TARGET = 0.02;    /* (p75 - p25) / median */
static const double TIME_LIMIT_S = 0.3;     /* of timed repetitions */
static const double SAMPLE_MIN_NS = 200e3;  /* a host sample this long hides the ~1 us pool dispatch */
static const size_t COLD_CAP_BYTES = (size_t)1 << 30;
static const size_t MAX_WORKING_SET = (size_t)1 << 36;

/* ---- the read kernels -------------------------------------------------------------------------------------------
 * Sum of the 64-bit words, the last partial word zero-padded. The sum is consumed (stored and folded into a volatile
 * sink), so no read can be dropped; several independent accumulators keep the adds off the critical path so the
 * loads alone set the pace. */

typedef uint64_t (*sum_kernel)(const unsigned char *p, size_t n);

static uint64_t sum_tail(const unsigned char *p, size_t n)
{
    uint64_t s = 0, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        s += w;
    }
    if (n) {
        w = 0;
        memcpy(&w, p, n);
        s += w;
    }
    return s;
}

static uint64_t sum_portable(const unsigned char *p, size_t n)
{
    uint64_t acc[8] = {0};
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            acc[k] += w;
        }
    uint64_t s = 0;
    for (int k = 0; k < 8; k++)
        s += acc[k];
    return s + sum_tail(p + i, n - i);
}

#ifdef HSDR_BW_X86
/* 8 x 32-byte loads (four cache lines) per iteration into 8 accumulators; p is 32-byte aligned. */
__attribute__((target("avx2"))) static uint64_t sum_avx2(const unsigned char *p, size_t n)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    size_t i = 0;
    for (; i + 256 <= n; i += 256) {
        const __m256i *q = (const __m256i *)(const void *)(p + i);
        a0 = _mm256_add_epi64(a0, _mm256_load_si256(q + 0));
        a1 = _mm256_add_epi64(a1, _mm256_load_si256(q + 1));
        a2 = _mm256_add_epi64(a2, _mm256_load_si256(q + 2));
        a3 = _mm256_add_epi64(a3, _mm256_load_si256(q + 3));
        a4 = _mm256_add_epi64(a4, _mm256_load_si256(q + 4));
        a5 = _mm256_add_epi64(a5, _mm256_load_si256(q + 5));
        a6 = _mm256_add_epi64(a6, _mm256_load_si256(q + 6));
        a7 = _mm256_add_epi64(a7, _mm256_load_si256(q + 7));
    }
    for (; i + 32 <= n; i += 32)
        a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i *)(const void *)(p + i)));
    a0 = _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
                          _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256((__m256i *)(void *)lanes, a0);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + sum_tail(p + i, n - i);
}
#endif

static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
static sum_kernel chosen_kernel = sum_portable;
static const char *chosen_name = "portable";

static int cpu_has_avx2(void)
{
#ifdef HSDR_BW_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0; /* libgcc also checks that the OS saves the AVX state */
#else
    return 0;
#endif
}

static void choose_kernel(void)
{
#ifdef HSDR_BW_X86
    if (cpu_has_avx2()) {
        chosen_kernel = sum_avx2;
        chosen_name = "avx2";
    }
#endif
}

const char *hsdr_bw_kernel_name(void)
{
    pthread_once(&kernel_once, choose_kernel);
    return chosen_name;
}

uint64_t hsdr_bw_read_sum(const void *buf, size_t bytes, int kernel)
{
    pthread_once(&kernel_once, choose_kernel);
    sum_kernel k = kernel < 0 ? chosen_kernel : sum_portable;
#ifdef HSDR_BW_X86
    if (kernel == 1 && cpu_has_avx2())
        k = sum_avx2;
#endif
    return k(buf, bytes);
}

/* ---- one measurement -------------------------------------------------------------------------------------------- */

typedef struct {
    alignas(64) uint64_t sum; /* one cache line per thread */
} thread_slot;

typedef struct {
    unsigned char *base;
    size_t bytes;  /* the working set */
    size_t stride; /* between copies: bytes rounded up to 64 */
    int copies;
    int first_copy; /* the copy the sample's first pass reads */
    int passes;
    int init; /* 1: write the thread's parts of every copy (first touch by the thread that reads them) */
    sum_kernel kernel;
    thread_slot *slots;
    hsdr_pool *pool;
} bw_task;

static volatile uint64_t bw_sink; /* where every sum ends: the reads have an observable effect */

/* Thread tid's contiguous part [lo, hi) of the working set, boundaries on 64-byte lines. */
static void thread_part(size_t bytes, int tid, int n, size_t *lo, size_t *hi)
{
    size_t lines = bytes / 64;
    *lo = lines * (size_t)tid / (size_t)n * 64;
    *hi = tid == n - 1 ? bytes : lines * (size_t)(tid + 1) / (size_t)n * 64;
}

static void bw_thread(int tid, int nthreads, void *arg)
{
    bw_task *t = arg;
    size_t lo, hi;
    thread_part(t->bytes, tid, nthreads, &lo, &hi);
    if (t->init) {
        for (int c = 0; c < t->copies; c++)
            memset(t->base + (size_t)c * t->stride + lo, 0x5a ^ (c & 0xff), hi - lo);
        return;
    }
    uint64_t s = 0;
    int c = t->first_copy;
    for (int k = 0; k < t->passes; k++) {
        s += t->kernel(t->base + (size_t)c * t->stride + lo, hi - lo);
        if (++c == t->copies)
            c = 0;
    }
    t->slots[tid].sum += s;
}

/* The engine's host launch: `count` passes over the working set from copy `copy` on, in one pool run. */
static int bw_launch(hsdr_subject *s, size_t copy, int count)
{
    bw_task *t = s->ctx;
    t->first_copy = (int)copy;
    t->passes = count;
    hsdr_pool_run(t->pool, bw_thread, t);
    return 0;
}

hsdr_timing_policy hsdr_bw_policy(int device)
{
    return (hsdr_timing_policy){.warmup = device ? 2 : 8, .min_reps = 5, .max_reps = 300,
                                .noise_target = NOISE_TARGET, .time_limit_s = TIME_LIMIT_S,
                                .min_sample_ns = device ? 0.0 : SAMPLE_MIN_NS};
}

void hsdr_bw_result_free(hsdr_bw_result *r)
{
    hsdr_stats_free(&r->time);
}

static void fmt_bytes(size_t b, char *buf, size_t n)
{
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    for (int u = 0; u < 3; u++) {
        size_t unit = (size_t)1 << (30 - 10 * u);
        if (b >= unit && b % unit == 0) {
            snprintf(buf, n, "%zu %s", b / unit, units[u]);
            return;
        }
        if (b >= unit) {
            snprintf(buf, n, "%.1f %s", (double)b / (double)unit, units[u]);
            return;
        }
    }
    snprintf(buf, n, "%zu B", b);
}

/* ---- the log of every measurement, and the ceiling cache ----------------------------------------------------- */

typedef struct {
    const char *backend;
    int threads;
    size_t bytes;
    hsdr_mode mode;
    double bytes_per_s, rel_spread;
    int reps;
} bw_entry;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bw_entry *measured; /* every measurement, in order */
static int nmeasured, measured_cap;

static int log_result(const hsdr_bw_result *r)
{
    pthread_mutex_lock(&log_lock);
    int rc = 0;
    if (nmeasured == measured_cap) {
        int grown = measured_cap ? measured_cap * 2 : 16;
        bw_entry *g = realloc(measured, sizeof *g * (size_t)grown);
        if (g) {
            measured = g;
            measured_cap = grown;
        } else {
            rc = -1;
        }
    }
    if (rc == 0)
        measured[nmeasured++] = (bw_entry){r->backend, r->threads, r->bytes, r->mode, r->bytes_per_s,
                                           r->time.rel_spread, r->time.reps};
    pthread_mutex_unlock(&log_lock);
    return rc;
}

cJSON *hsdr_bandwidth_log(void)
{
    cJSON *a = cJSON_CreateArray();
    pthread_mutex_lock(&log_lock);
    for (int i = 0; a && i < nmeasured; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "backend", measured[i].backend);
        cJSON_AddNumberToObject(o, "threads", measured[i].threads);
        cJSON_AddNumberToObject(o, "bytes", (double)measured[i].bytes);
        cJSON_AddStringToObject(o, "mode", hsdr_mode_name(measured[i].mode));
        cJSON_AddNumberToObject(o, "bytes_per_s", measured[i].bytes_per_s);
        cJSON_AddNumberToObject(o, "rel_spread", measured[i].rel_spread);
        cJSON_AddNumberToObject(o, "reps", measured[i].reps);
        cJSON_AddItemToArray(a, o);
    }
    pthread_mutex_unlock(&log_lock);
    return a;
}

/* Measure subject s (a read of r->bytes per launch) into r and log it. */
static int measure_read(hsdr_subject *s, const hsdr_timing_policy *pol, hsdr_bw_result *r, char *err, size_t errlen)
{
    if (hsdr_measure(&s, 1, pol, &r->time, err, errlen) != 0)
        return -1;
    r->bytes_per_s = r->time.median > 0 ? (double)r->bytes / (r->time.median * 1e-9) : 0;
    r->measured_at_ns = hsdr_now_ns();
    if (log_result(r) != 0) {
        hsdr_bw_result_free(r);
        return hsdr_errorf(err, errlen, "read bandwidth: out of memory recording the measurement");
    }
    return 0;
}

struct hsdr_read_subject {
    bw_task task;
    hsdr_rotation rot;
    unsigned char *mem;
    int copies;
    size_t total;
    char note[sizeof ((hsdr_bw_result *)0)->note];
};

int hsdr_read_subject_create(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_read_subject **out, hsdr_subject *s,
                             char *err, size_t errlen)
{
    char size_text[32];
    fmt_bytes(bytes, size_text, sizeof size_text);
    *out = NULL;
    if (!pool)
        return hsdr_errorf(err, errlen, "read bandwidth: no pool given");
    if (bytes == 0 || bytes > MAX_WORKING_SET)
        return hsdr_errorf(err, errlen, "read bandwidth: working set of %zu bytes: expected 1 byte .. 64 GiB", bytes);
    if (mode != HSDR_MODE_HOT && mode != HSDR_MODE_COLD)
        return hsdr_errorf(err, errlen, "read bandwidth: mode %d is neither hot nor cold", (int)mode);
    pthread_once(&kernel_once, choose_kernel);
    hsdr_read_subject *r = calloc(1, sizeof *r);
    if (!r)
        return hsdr_errorf(err, errlen, "read bandwidth: out of memory");
    int nthreads = hsdr_pool_threads(pool);
    size_t stride = (bytes + 63) / 64 * 64;
    int copies = 1;
    if (mode == HSDR_MODE_COLD) {
        size_t llc = hsdr_machine_llc_bytes();
        size_t want = 4 * llc / stride + 1; /* total > 4 x LLC; 1 when the working set alone exceeds it */
        if (want > 1 && want * stride > COLD_CAP_BYTES) {
            copies = (int)(COLD_CAP_BYTES / stride > 1 ? COLD_CAP_BYTES / stride : 1);
            char llc_text[32], cap_text[32];
            fmt_bytes(llc, llc_text, sizeof llc_text);
            fmt_bytes((size_t)copies * stride, cap_text, sizeof cap_text);
            snprintf(r->note, sizeof r->note,
                     "cold rotation capped at 1 GiB: %d copies of %s = %s, not above 4 x LLC (%s): some reads may "
                     "hit the cache",
                     copies, size_text, cap_text, llc_text);
        } else {
            copies = (int)want;
        }
    }
    size_t total = (size_t)copies * stride;
    const size_t memory = hsdr_machine_memory_bytes();
    if (memory && total > memory / 2) {
        char total_text[32], phys_text[32];
        fmt_bytes(total, total_text, sizeof total_text);
        fmt_bytes(memory, phys_text, sizeof phys_text);
        free(r);
        return hsdr_errorf(err, errlen, "read bandwidth: %s %s needs %s, more than half of this machine's %s",
                           size_text, hsdr_mode_name(mode), total_text, phys_text);
    }
    thread_slot *slots = aligned_alloc(64, sizeof(thread_slot) * (size_t)nthreads);
    unsigned char *mem = hsdr_machine_stream_alloc(total); /* huge pages from 2 MiB, as the weight copies */
    if (!slots || !mem) {
        char total_text[32];
        fmt_bytes(total, total_text, sizeof total_text);
        free(slots);
        free(mem);
        free(r);
        return hsdr_errorf(err, errlen, "read bandwidth: out of memory allocating %s (%d %s of %s, %s)", total_text,
                           copies, copies == 1 ? "copy" : "copies", size_text, hsdr_mode_name(mode));
    }
    memset(slots, 0, sizeof(thread_slot) * (size_t)nthreads);
    r->task = (bw_task){.base = mem, .bytes = bytes, .stride = stride, .copies = copies, .first_copy = 0,
                        .passes = 1, .init = 1, .kernel = chosen_kernel, .slots = slots, .pool = pool};
    hsdr_pool_run(pool, bw_thread, &r->task);
    r->task.init = 0;
    r->rot = (hsdr_rotation){.n = (size_t)copies};
    r->mem = mem;
    r->copies = copies;
    r->total = total;
    *s = (hsdr_subject){.name = "read", .launch = bw_launch, .ctx = &r->task, .wake = pool, .rot = &r->rot,
                        .count = 1};
    *out = r;
    return 0;
}

void hsdr_read_subject_free(hsdr_read_subject *r)
{
    if (!r)
        return;
    uint64_t sink = 0;
    for (int t = 0; t < hsdr_pool_threads(r->task.pool); t++)
        sink += r->task.slots[t].sum;
    bw_sink += sink;
    free(r->mem);
    free(r->task.slots);
    free(r);
}

int hsdr_read_bandwidth(hsdr_pool *pool, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                        size_t errlen)
{
    if (!out)
        return hsdr_errorf(err, errlen, "read bandwidth: no result given");
    memset(out, 0, sizeof *out);
    hsdr_read_subject *r;
    hsdr_subject s;
    if (hsdr_read_subject_create(pool, bytes, mode, &r, &s, err, errlen) != 0)
        return -1;
    const hsdr_timing_policy pol = hsdr_bw_policy(0);
    out->backend = "cpu";
    out->threads = hsdr_pool_threads(pool);
    out->mode = mode;
    out->bytes = bytes;
    out->buffers = r->copies;
    out->footprint_bytes = r->total;
    snprintf(out->note, sizeof out->note, "%s", r->note);
    int rc = measure_read(&s, &pol, out, err, errlen);
    hsdr_read_subject_free(r);
    return rc;
}

int hsdr_device_read_bandwidth(const hsdr_variant *v, size_t bytes, hsdr_mode mode, hsdr_bw_result *out, char *err,
                               size_t errlen)
{
    const hsdr_device_ops *d = v->device;
    memset(out, 0, sizeof *out);
    if (bytes < 16)
        return hsdr_errorf(err, errlen, "device read bandwidth: working set of %zu bytes: expected at least 16", bytes);
    const size_t copies = mode == HSDR_MODE_COLD ? 3 * d->l2_bytes() / bytes + 2 : 1;
    hsdr_device_run *run = NULL;
    char why[256] = "";
    if (d->read_create(bytes, (int)copies, &run, why, sizeof why) != 0)
        return hsdr_errorf(err, errlen, "device read bandwidth: %s", why);
    hsdr_rotation rot = {.n = copies};
    hsdr_subject s = {.name = "read", .dev = d, .run = run, .stage = -1, .rot = &rot, .count = 1};
    const hsdr_timing_policy pol = hsdr_bw_policy(1);
    out->backend = v->backend;
    out->mode = mode;
    out->bytes = bytes;
    out->buffers = (int)copies;
    out->footprint_bytes = copies * bytes;
    int rc = measure_read(&s, &pol, out, err, errlen);
    d->destroy(run);
    return rc;
}

/* The cache of hsdr_ceiling: the latest measurement per (backend, bytes, mode, threads). */
static hsdr_bw_result *cache;
static int ncache, cache_cap;

void hsdr_ceiling_cache_clear(void)
{
    for (int i = 0; i < ncache; i++)
        hsdr_bw_result_free(&cache[i]);
    free(cache);
    cache = NULL;
    ncache = cache_cap = 0;
}

int hsdr_ceiling(const hsdr_variant *v, hsdr_pool *pool, size_t bytes, hsdr_mode mode, double max_age_s,
                 const hsdr_bw_result **out, char *err, size_t errlen)
{
    const int device = v && v->device;
    const char *backend = device ? v->backend : "cpu";
    const int threads = device ? 0 : hsdr_pool_threads(pool);
    int slot = -1;
    for (int i = 0; i < ncache && slot < 0; i++)
        if (strcmp(cache[i].backend, backend) == 0 && cache[i].bytes == bytes && cache[i].mode == mode &&
            cache[i].threads == threads)
            slot = i;
    if (slot >= 0 && (hsdr_now_ns() - cache[slot].measured_at_ns) * 1e-9 <= max_age_s) {
        *out = &cache[slot];
        return 0;
    }
    hsdr_bw_result r;
    if ((device ? hsdr_device_read_bandwidth(v, bytes, mode, &r, err, errlen)
                : hsdr_read_bandwidth(pool, bytes, mode, &r, err, errlen)) != 0)
        return -1;
    if (slot < 0) {
        if (ncache == cache_cap) {
            int grown = cache_cap ? 2 * cache_cap : 16;
            hsdr_bw_result *g = realloc(cache, sizeof *g * (size_t)grown);
            if (!g) {
                hsdr_bw_result_free(&r);
                return hsdr_errorf(err, errlen, "read bandwidth: out of memory caching the measurement");
            }
            cache = g;
            cache_cap = grown;
        }
        slot = ncache++;
    } else {
        hsdr_bw_result_free(&cache[slot]);
    }
    cache[slot] = r;
    *out = &cache[slot];
    return 0;
}

/* ---- hsdr bandwidth ------------------------------------------------------------------------------------------- */

enum { MAX_LIST = 64, MAX_CLI_THREADS = 1024 };

typedef struct {
    size_t bytes;
    const char *label; /* "L1d/2" ... for the default sizes, else NULL */
} size_item;

/* "64K", "4M", "1G", "512", "64KiB": binary units. 0 or -1. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (shift && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
        end += strlen(end);
    else if (!shift && strcmp(end, "B") == 0)
        end++;
    if (*end != '\0' || v == 0 || v > (MAX_WORKING_SET >> shift))
        return -1;
    *out = (size_t)v << shift;
    return 0;
}

/* Splits a comma-separated list in place; the items in items[], their count returned (-1: too many or empty item). */
static int split_list(char *s, char **items)
{
    int n = 0;
    for (char *tok = s;; n++) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (n == MAX_LIST || !*tok)
            return -1;
        items[n] = tok;
        if (!comma)
            return n + 1;
        tok = comma + 1;
    }
}

static int cmp_size_item(const void *a, const void *b)
{
    size_t x = ((const size_item *)a)->bytes, y = ((const size_item *)b)->bytes;
    return (x > y) - (x < y);
}

/* One measurement as a line of schema hsdr-bandwidth/2 (docs/results-schema.md). */
static void print_json_row(const hsdr_variant *device, const char *pinning, const size_item *size,
                           const hsdr_bw_result *r, const cJSON *context)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "schema", "hsdr-bandwidth/2");
    cJSON_AddStringToObject(o, "backend", r->backend);
    if (device)
        cJSON_AddStringToObject(o, "device", device->device->describe());
    cJSON_AddNumberToObject(o, "threads", r->threads);
    cJSON_AddNumberToObject(o, "bytes", (double)size->bytes);
    if (size->label)
        cJSON_AddStringToObject(o, "size_label", size->label);
    cJSON_AddStringToObject(o, "mode", hsdr_mode_name(r->mode));
    cJSON_AddNumberToObject(o, "bytes_per_s", r->bytes_per_s);
    cJSON_AddNumberToObject(o, "gb_per_s", r->bytes_per_s * 1e-9);
    hsdr_results_add_time(o, "time_ns", &r->time, "samples_ns"); /* ns per read of the working set */
    cJSON_AddNumberToObject(o, "buffers", r->buffers);
    cJSON_AddNumberToObject(o, "footprint_bytes", (double)r->footprint_bytes);
    if (r->note[0])
        cJSON_AddStringToObject(o, "note", r->note);
    if (!device) {
        cJSON_AddStringToObject(o, "kernel", hsdr_bw_kernel_name());
        cJSON_AddStringToObject(o, "pinning", pinning);
    }
    if (context)
        cJSON_AddItemToObject(o, "context", cJSON_Duplicate(context, 1));
    hsdr_results_emit(o);
}

static void print_header(void)
{
    char model[256] = "unknown CPU";
    cJSON *ctx = hsdr_machine_context();
    const cJSON *m = ctx ? cJSON_GetObjectItemCaseSensitive(ctx, "cpu_model") : NULL;
    if (cJSON_IsString(m))
        snprintf(model, sizeof model, "%s", m->valuestring);
    cJSON_Delete(ctx);
    printf("read bandwidth in GB/s (1e9 bytes/s), median of repetitions; kernel %s; hot: one buffer re-read, "
           "cold: rotating copies > 4 x LLC\n",
           hsdr_bw_kernel_name());
    printf("machine: %s, %d cores, %d logical CPUs; caches (one instance each, hwloc):", model, hsdr_machine_cores(),
           hsdr_machine_logical_cpus());
    static const char *const names[] = {"L1d", "L2", "L3"};
    for (int level = 1; level <= 3; level++) {
        size_t b = hsdr_machine_cache_bytes(level);
        char text[32] = "not reported";
        if (b)
            fmt_bytes(b, text, sizeof text);
        printf(" %s %s%s", names[level - 1], text, level < 3 ? "," : "\n");
    }
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hsdr bandwidth: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: hsdr %s\n", hsdr_command_find("bandwidth")->synopsis);
    return HSDR_EXIT_USAGE;
}

/* `hsdr bandwidth --backend B`: the device's plain streaming read (the ceiling device rows are held to), through
 * the device ops of the first variant of that backend in the registry. */
static int device_bandwidth(const char *backend, const size_item *sizes, int nsizes, const hsdr_mode *modes,
                            int nmodes, int json)
{
    const hsdr_variant *v = NULL;
    for (size_t i = 0; i < hsdr_registry_count && !v; i++)
        if (strcmp(hsdr_registry[i].backend, backend) == 0 && hsdr_registry[i].device)
            v = &hsdr_registry[i];
    if (!v)
        return usage_error("--backend: no device variant of backend '%s' in the registry (see hsdr list)", backend);
    const char *why = hsdr_variant_unavailable(v);
    if (why) {
        fprintf(stderr, "hsdr bandwidth: backend %s unavailable here: %s\n", backend, why);
        return HSDR_EXIT_FAIL;
    }
    cJSON *context = json ? hsdr_machine_context() : NULL;
    if (!json)
        printf("%s streaming read (16-byte loads, timed by the device's clock; cold: rotating over more than 3x the "
               "L2 of %zu MiB), median of the launches\n%-14s", v->device->describe(), v->device->l2_bytes() >> 20,
               "bytes");
    for (int m = 0; m < nmodes && !json; m++)
        printf(" %12s", hsdr_mode_name(modes[m]));
    if (!json)
        printf("\n");
    char err[512];
    int rc = HSDR_EXIT_OK;
    for (int s = 0; s < nsizes && rc == HSDR_EXIT_OK; s++) {
        char text[32];
        fmt_bytes(sizes[s].bytes, text, sizeof text);
        if (!json)
            printf("%-14s", text);
        for (int m = 0; m < nmodes; m++) {
            hsdr_bw_result r;
            if (hsdr_device_read_bandwidth(v, sizes[s].bytes, modes[m], &r, err, sizeof err) != 0) {
                fprintf(stderr, "hsdr bandwidth: %s\n", err);
                rc = HSDR_EXIT_FAIL;
                break;
            }
            if (json)
                print_json_row(v, NULL, &sizes[s], &r, context);
            else
                printf(" %7.1f GB/s%c", r.bytes_per_s / 1e9, r.time.rel_spread > NOISE_TARGET ? '*' : ' ');
            hsdr_bw_result_free(&r);
        }
        if (!json)
            printf("\n");
    }
    cJSON_Delete(context);
    return rc;
}

int hsdr_bandwidth_threads(const char *value, int *threads)
{
    int n = 0;
    if (!value) {
        for (int t = 1; t <= hsdr_machine_logical_cpus() && t <= MAX_LIST; t++)
            threads[n++] = t;
        return n;
    }
    char copy[1024], *items[MAX_LIST];
    snprintf(copy, sizeof copy, "%s", value);
    if ((n = split_list(copy, items)) < 0) {
        usage_error("--threads: '%s' is not a comma-separated list (at most 64 items, none empty)", value);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        char *end;
        errno = 0;
        long v = strtol(items[k], &end, 10);
        if (errno || end == items[k] || *end || v < 1 || v > MAX_CLI_THREADS) {
            usage_error("--threads: '%s' is not an integer in 1..%d", items[k], MAX_CLI_THREADS);
            return -1;
        }
        threads[k] = (int)v;
    }
    return n;
}

int hsdr_bandwidth_report(const hsdr_bandwidth_options *o)
{
    const char *backend = o->backend && strcmp(o->backend, "cpu") != 0 ? o->backend : NULL;
    const int json = o->json;
    int threads[MAX_LIST], nthreads_list = 0;
    size_item sizes[MAX_LIST];
    int nsizes = 0;
    hsdr_mode modes[2] = {HSDR_MODE_HOT, HSDR_MODE_COLD};
    int nmodes = 2;
    char *items[MAX_LIST];
    if (o->mode && strcmp(o->mode, "both") != 0) {
        if (hsdr_mode_from_name(o->mode, &modes[0]) != 0)
            return usage_error("--mode: '%s' is not hot, cold or both", o->mode);
        nmodes = 1;
    }
    if (o->threads && (nthreads_list = hsdr_bandwidth_threads(o->threads, threads)) < 0)
        return HSDR_EXIT_USAGE;
    if (o->sizes) {
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", o->sizes);
        if ((nsizes = split_list(copy, items)) < 0)
            return usage_error("--sizes: '%s' is not a comma-separated list (at most 64 items, none empty)", o->sizes);
        for (int k = 0; k < nsizes; k++) {
            size_t b;
            if (parse_size(items[k], &b) != 0)
                return usage_error("--sizes: '%s' is not a size (a positive integer of bytes with an optional K, M or "
                                   "G suffix, binary units, at most 64G)",
                                   items[k]);
            sizes[k] = (size_item){b, NULL};
        }
    }
    if (backend) {
        if (nsizes == 0) { /* one 5120 x 17408 GEMV's bytes, 8 times that, and 1 GiB */
            static const size_t defaults[] = {19496960, 155975680, (size_t)1 << 30};
            for (int k = 0; k < 3; k++)
                sizes[nsizes++] = (size_item){defaults[k], NULL};
        }
        return device_bandwidth(backend, sizes, nsizes, modes, nmodes, json);
    }
    if (nthreads_list == 0)
        nthreads_list = hsdr_bandwidth_threads(NULL, threads);
    if (nsizes == 0) {
        static const char *const labels[] = {"L1d/2", "L2/2", "L3/2"};
        for (int level = 1; level <= 3; level++) {
            size_t b = hsdr_machine_cache_bytes(level) / 2;
            if (b >= 64)
                sizes[nsizes++] = (size_item){b, labels[level - 1]};
        }
        sizes[nsizes++] = (size_item){(size_t)256 << 20, "DRAM"};
    }
    qsort(sizes, (size_t)nsizes, sizeof sizes[0], cmp_size_item);

    /* results[t][s][m] */
    size_t cells = (size_t)nthreads_list * (size_t)nsizes * (size_t)nmodes;
    hsdr_bw_result *results = calloc(cells, sizeof *results);
    char (*pinning)[256] = calloc((size_t)nthreads_list, sizeof *pinning);
    cJSON *context = json ? hsdr_machine_context() : NULL;
    int rc = HSDR_EXIT_OK;
    char err[512];
    if (!results || !pinning) {
        fprintf(stderr, "hsdr bandwidth: out of memory\n");
        rc = HSDR_EXIT_FAIL;
        goto out;
    }
    for (int t = 0; t < nthreads_list; t++) {
        hsdr_pool *pool = hsdr_pool_create(threads[t], 1, err, sizeof err);
        if (!pool) {
            fprintf(stderr, "hsdr bandwidth: %s\n", err);
            rc = HSDR_EXIT_FAIL;
            goto out;
        }
        snprintf(pinning[t], sizeof pinning[t], "%s", hsdr_pool_pinning(pool));
        for (int s = 0; s < nsizes && rc == HSDR_EXIT_OK; s++)
            for (int m = 0; m < nmodes; m++) {
                hsdr_bw_result *r = &results[((size_t)t * (size_t)nsizes + (size_t)s) * (size_t)nmodes + (size_t)m];
                if (hsdr_read_bandwidth(pool, sizes[s].bytes, modes[m], r, err, sizeof err) != 0) {
                    fprintf(stderr, "hsdr bandwidth: %d thread%s: %s\n", threads[t], threads[t] == 1 ? "" : "s", err);
                    rc = HSDR_EXIT_FAIL;
                    break;
                }
                if (json)
                    print_json_row(NULL, pinning[t], &sizes[s], r, context);
            }
        hsdr_pool_destroy(pool);
        if (rc != HSDR_EXIT_OK)
            goto out;
    }
    if (json)
        goto out;

    print_header();
    for (int t = 0; t < nthreads_list; t++)
        printf("%d thread%s: %s\n", threads[t], threads[t] == 1 ? "" : "s", pinning[t]);
    printf("\n%-22s", "working set");
    for (int t = 0; t < nthreads_list; t++)
        for (int m = 0; m < nmodes; m++) {
            char head[32];
            snprintf(head, sizeof head, "%dT %s", threads[t], hsdr_mode_name(modes[m]));
            printf(" %9s", head);
        }
    printf("\n");
    int noisy = 0;
    for (int s = 0; s < nsizes; s++) {
        char label[48], text[32];
        fmt_bytes(sizes[s].bytes, text, sizeof text);
        if (sizes[s].label)
            snprintf(label, sizeof label, "%s (%s)", text, sizes[s].label);
        else
            snprintf(label, sizeof label, "%s", text);
        printf("%-22s", label);
        for (int t = 0; t < nthreads_list; t++)
            for (int m = 0; m < nmodes; m++) {
                const hsdr_bw_result *r =
                    &results[((size_t)t * (size_t)nsizes + (size_t)s) * (size_t)nmodes + (size_t)m];
                int mark = r->time.rel_spread > NOISE_TARGET;
                noisy |= mark;
                printf(" %8.1f%c", r->bytes_per_s * 1e-9, mark ? '*' : ' ');
            }
        printf("\n");
    }
    if (noisy)
        printf("* relative spread (p75 - p25) / median still above %.0f%% when the time (%.1f s) or repetition limit "
               "stopped it: read as approximate\n",
               NOISE_TARGET * 100, TIME_LIMIT_S);
    for (size_t c = 0; c < cells; c++)
        if (results[c].note[0]) {
            printf("note: %s\n", results[c].note);
            break;
        }
out:
    cJSON_Delete(context);
    for (size_t c = 0; results && c < cells; c++)
        hsdr_bw_result_free(&results[c]);
    free(results);
    free(pinning);
    return rc;
}
