/* The machine context block (every field, its JSON type, caches ordered) and the read-bandwidth measurement: the read
 * kernels agree with a scalar sum on random buffers, 64 KiB hot on one thread, the cache and the log. No speed target
 * beyond a sanity floor (> 1 GB/s for an L2-resident buffer): performance lives in benchmarks, not in unit tests. */
#include <stdalign.h>
#include <string.h>

#include "bandwidth.h"
#include "machine.h"
#include "rng.h"
#include "testing.h"
#include "threads.h"

static void check_type(const cJSON *o, const char *name, int (*is)(const cJSON *), int nullable, const char *what)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    CHECK(v != NULL, "context lacks '%s'", name);
    if (v)
        CHECK(is(v) || (nullable && cJSON_IsNull(v)), "context '%s' is not %s%s", name, what,
              nullable ? " or null" : "");
}

static int is_string(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring[0] != '\0';
}

static int is_positive_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble == (double)(long)v->valuedouble;
}

static int is_object(const cJSON *v)
{
    return cJSON_IsObject(v);
}

static void test_context(void)
{
    cJSON *ctx = hsdr_machine_context();
    CHECK(ctx != NULL, "no context");
    if (!ctx)
        return;
    char *txt = cJSON_PrintUnformatted(ctx);
    printf("context: %s\n", txt ? txt : "?");
    cJSON_free(txt);
    static const char *const strings[] = {"hsdr_version", "commit", "compiler", "c_flags", "build_type", "hostname",
                                          "started", "os"};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        check_type(ctx, strings[i], is_string, 0, "a non-empty string");
    check_type(ctx, "cpu_model", is_string, 1, "a non-empty string");
    check_type(ctx, "governor", is_string, 1, "a non-empty string");
    check_type(ctx, "logical_cpus", is_positive_int, 0, "a positive integer");
    check_type(ctx, "cores", is_positive_int, 0, "a positive integer");
    check_type(ctx, "caches", is_object, 0, "an object");
    const cJSON *dirty = cJSON_GetObjectItemCaseSensitive(ctx, "dirty");
    CHECK(dirty == NULL || cJSON_IsBool(dirty), "'dirty' present but not a boolean");
    const cJSON *started = cJSON_GetObjectItemCaseSensitive(ctx, "started");
    if (cJSON_IsString(started)) {
        const char *s = started->valuestring;
        CHECK(strlen(s) == 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
                  s[19] == 'Z',
              "started '%s' is not YYYY-MM-DDTHH:MM:SSZ", s);
    }
    const cJSON *cores = cJSON_GetObjectItemCaseSensitive(ctx, "cores");
    const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(ctx, "logical_cpus");
    if (cJSON_IsNumber(cores) && cJSON_IsNumber(cpus)) {
        CHECK(cores->valuedouble <= cpus->valuedouble, "cores %g > logical CPUs %g", cores->valuedouble,
              cpus->valuedouble);
        CHECK(cores->valuedouble == hsdr_machine_cores(), "cores disagree with hsdr_machine_cores");
        CHECK(cpus->valuedouble == hsdr_machine_logical_cpus(), "logical_cpus disagree");
    }

    /* caches: positive integers, L1d <= L2 <= L3 among those present, each equal to hsdr_machine_cache_bytes */
    const cJSON *caches = cJSON_GetObjectItemCaseSensitive(ctx, "caches");
    static const char *const names[] = {"L1d", "L2", "L3"};
    double prev = 0, largest = 0;
    const cJSON *c;
    int nlevels = 0;
    cJSON_ArrayForEach(c, caches)
    {
        int known = 0;
        for (int i = 0; i < 3; i++)
            known |= strcmp(c->string, names[i]) == 0;
        CHECK(known, "unexpected cache key '%s'", c->string);
    }
    for (int level = 1; level <= 3; level++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(caches, names[level - 1]);
        size_t bytes = hsdr_machine_cache_bytes(level);
        if (!v) {
            CHECK(bytes == 0, "%s missing from the context but hwloc says %zu", names[level - 1], bytes);
            continue;
        }
        nlevels++;
        CHECK(is_positive_int(v), "cache %s is not a positive integer", names[level - 1]);
        CHECK(v->valuedouble == (double)bytes, "cache %s %g != %zu", names[level - 1], v->valuedouble, bytes);
        CHECK(v->valuedouble >= prev, "cache %s (%g) smaller than the level below (%g)", names[level - 1],
              v->valuedouble, prev);
        prev = v->valuedouble;
        if (v->valuedouble > largest)
            largest = v->valuedouble;
    }
    size_t llc = hsdr_machine_llc_bytes();
    CHECK(llc > 0, "LLC 0");
    if (nlevels)
        CHECK((double)llc >= largest, "LLC %zu below the largest cache in the context %g", llc, largest);
    else
        CHECK(llc == (size_t)32 << 20, "no cache known but LLC %zu is not the 32 MiB fallback", llc);
    CHECK(hsdr_machine_topology() != NULL, "hwloc topology not loaded");

    /* facts fixed for the process do not change between calls */
    cJSON *again = hsdr_machine_context();
    const cJSON *s2 = again ? cJSON_GetObjectItemCaseSensitive(again, "started") : NULL;
    CHECK(cJSON_IsString(started) && cJSON_IsString(s2) && strcmp(started->valuestring, s2->valuestring) == 0,
          "'started' changed between calls");
    cJSON_Delete(again);
    cJSON_Delete(ctx);
}

/* the kernels against a plain sum of 64-bit words, on random lengths and contents (the tail paths included) */
static void test_read_kernels(hsdr_rng *rng)
{
    enum { MAXLEN = 5000 };
    static alignas(64) unsigned char buf[MAXLEN + 64];
    int avx2 = strcmp(hsdr_bw_kernel_name(), "avx2") == 0;
    printf("read kernel: %s\n", hsdr_bw_kernel_name());
    for (int trial = 0; trial < 300; trial++) {
        size_t n = trial < 40 ? (size_t)trial : (size_t)hsdr_rng_below(rng, MAXLEN);
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (unsigned char)hsdr_rng_u64(rng);
        uint64_t want = 0;
        for (size_t i = 0; i < n; i += 8) {
            uint64_t w = 0;
            memcpy(&w, buf + i, n - i < 8 ? n - i : 8);
            want += w;
        }
        uint64_t portable = hsdr_bw_read_sum(buf, n, 0), chosen = hsdr_bw_read_sum(buf, n, -1);
        CHECK(portable == want, "portable kernel, %zu bytes: %llx != %llx", n, (unsigned long long)portable,
              (unsigned long long)want);
        CHECK(chosen == want, "chosen kernel, %zu bytes: %llx != %llx", n, (unsigned long long)chosen,
              (unsigned long long)want);
        if (avx2) {
            uint64_t v = hsdr_bw_read_sum(buf, n, 1);
            CHECK(v == want, "avx2 kernel, %zu bytes: %llx != %llx", n, (unsigned long long)v,
                  (unsigned long long)want);
        }
    }
}

static int log_count(void)
{
    cJSON *log = hsdr_bandwidth_log();
    int n = cJSON_GetArraySize(log);
    cJSON_Delete(log);
    return n;
}

static void test_bandwidth(void)
{
    char err[256];
    hsdr_pool *pool = hsdr_pool_create(1, 1, err, sizeof err);
    CHECK(pool != NULL, "pool: %s", err);
    if (!pool)
        return;
    CHECK(log_count() == 0, "log not empty before any measurement");

    hsdr_bw_result r;
    int rc = hsdr_read_bandwidth(pool, 64 << 10, HSDR_MODE_HOT, &r, err, sizeof err);
    CHECK(rc == 0, "64 KiB hot: %s", err);
    printf("64 KiB hot, 1 thread: %.2f GB/s (median %.0f ns, %d reps, spread %.3f, stop %s, %d passes/sample)\n",
           r.bytes_per_s * 1e-9, r.time.median, r.time.reps, r.time.rel_spread, r.time.stop ? r.time.stop : "?",
           r.time.launches_per_sample);
    CHECK(r.bytes_per_s > 1e9, "64 KiB hot read at %.3g bytes/s: not even 1 GB/s", r.bytes_per_s);
    CHECK(r.time.reps >= 3 && r.time.median > 0 && r.buffers == 1 && r.time.launches_per_sample >= 1,
          "result fields");
    /* a sample lasts at least the policy's 200 us: the pool dispatch stays out of the per-pass time */
    CHECK(r.time.median * r.time.launches_per_sample >= 0.5 * hsdr_bw_policy(0).min_sample_ns,
          "%d passes of %.0f ns per sample", r.time.launches_per_sample, r.time.median);
    CHECK(r.footprint_bytes == 64 << 10 && r.bytes == 64 << 10 && r.threads == 1 && strcmp(r.backend, "cpu") == 0,
          "hot footprint %zu", r.footprint_bytes);
    hsdr_bw_result_free(&r);

    cJSON *log = hsdr_bandwidth_log();
    CHECK(cJSON_GetArraySize(log) == 1, "log holds %d entries after one measurement", cJSON_GetArraySize(log));
    const cJSON *e = cJSON_GetArrayItem(log, 0);
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(e, "threads");
    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(e, "bytes");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(e, "mode");
    const cJSON *bps = cJSON_GetObjectItemCaseSensitive(e, "bytes_per_s");
    CHECK(cJSON_IsNumber(threads) && threads->valuedouble == 1, "log threads");
    CHECK(cJSON_IsNumber(bytes) && bytes->valuedouble == 65536, "log bytes");
    CHECK(cJSON_IsString(mode) && strcmp(mode->valuestring, "hot") == 0, "log mode");
    CHECK(cJSON_IsNumber(bps) && bps->valuedouble == r.bytes_per_s, "log bytes_per_s");
    cJSON_Delete(log);

    /* the ceiling cache: measured once per key, reused while younger than the interval, then measured again */
    const hsdr_bw_result *c1, *c2;
    CHECK(hsdr_ceiling(NULL, pool, 65536, HSDR_MODE_HOT, 3600, &c1, err, sizeof err) == 0, "ceiling: %s", err);
    CHECK(log_count() == 2, "the first ceiling call did not measure once");
    const double first_bps = c1->bytes_per_s, first_at = c1->measured_at_ns;
    CHECK(hsdr_ceiling(NULL, pool, 65536, HSDR_MODE_HOT, 3600, &c2, err, sizeof err) == 0, "ceiling: %s", err);
    CHECK(log_count() == 2, "the second ceiling call measured again");
    CHECK(c2->bytes_per_s == first_bps && c2->measured_at_ns == first_at, "cached results differ");
    CHECK(hsdr_ceiling(NULL, pool, 65536, HSDR_MODE_COLD, 3600, &c2, err, sizeof err) == 0, "ceiling: %s", err);
    CHECK(log_count() == 3, "another mode is another key");
    CHECK(hsdr_ceiling(NULL, pool, 65536, HSDR_MODE_HOT, 0, &c2, err, sizeof err) == 0, "ceiling: %s", err);
    CHECK(log_count() == 4 && c2->measured_at_ns > first_at, "an interval of 0 s did not measure again");
    hsdr_ceiling_cache_clear();

    /* a small cold measurement: a rotation above 4x LLC (or capped at 1 GiB with a note) */
    CHECK(hsdr_read_bandwidth(pool, 256 << 10, HSDR_MODE_COLD, &r, err, sizeof err) == 0, "cold: %s", err);
    printf("256 KiB cold, 1 thread: %.2f GB/s over %d copies (%zu bytes)\n", r.bytes_per_s * 1e-9, r.buffers,
           r.footprint_bytes);
    CHECK(r.footprint_bytes > 4 * hsdr_machine_llc_bytes() || r.note[0], "cold footprint %zu not above 4 x LLC",
          r.footprint_bytes);
    CHECK(r.bytes_per_s > 0, "cold bandwidth %g", r.bytes_per_s);
    CHECK(log_count() == 5, "log after the cold measurement");
    hsdr_bw_result_free(&r);

    CHECK(hsdr_read_bandwidth(pool, 0, HSDR_MODE_HOT, &r, err, sizeof err) == -1, "0 bytes accepted");
    CHECK(strstr(err, "0 bytes") != NULL, "message '%s'", err);
    CHECK(log_count() == 5, "a refused measurement was logged");
    hsdr_pool_destroy(pool);
}

int main(void)
{
    uint64_t seed = test_seed("machine");
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    test_context();
    test_read_kernels(&rng);
    test_bandwidth();
    return test_finish("machine");
}
