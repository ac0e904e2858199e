/* The machine facts of the results' context block (docs/results-schema.md), from hwloc, /proc, /sys and the build. */
#include "machine.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef HSDR_VERSION
#define HSDR_VERSION "dev"
#endif
#include "build_info.h" /* HSDR_BUILD_COMMIT, refreshed at every build */
#ifndef HSDR_BUILD_DIRTY
#define HSDR_BUILD_DIRTY (-1) /* 1: the sources had uncommitted changes when this binary was built; -1: unknown */
#endif
#ifndef HSDR_BUILD_COMMIT
#define HSDR_BUILD_COMMIT "unknown"
#endif
#ifndef HSDR_BUILD_TYPE
#define HSDR_BUILD_TYPE "unknown"
#endif
#ifndef HSDR_COMPILER
#define HSDR_COMPILER "unknown"
#endif
#ifndef HSDR_C_FLAGS
#define HSDR_C_FLAGS "unknown"
#endif

static const size_t LLC_FALLBACK_BYTES = (size_t)32 << 20;

/* ---- the topology, loaded once ---------------------------------------------------------------------------------- */

static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topo; /* NULL when hwloc failed; lives until the process ends */

static void load_topology(void)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return;
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return;
    }
    topo = t;
}

struct hwloc_topology *hsdr_machine_topology(void)
{
    pthread_once(&topo_once, load_topology);
    return topo;
}

static int count_objs(hwloc_obj_type_t type)
{
    hwloc_topology_t t = hsdr_machine_topology();
    return t ? hwloc_get_nbobjs_by_type(t, type) : 0;
}

int hsdr_machine_logical_cpus(void)
{
    int n = count_objs(HWLOC_OBJ_PU);
    if (n < 1) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int)online : 1;
    }
    return n;
}

int hsdr_machine_cores(void)
{
    int n = count_objs(HWLOC_OBJ_CORE);
    return n >= 1 ? n : hsdr_machine_logical_cpus();
}

size_t hsdr_machine_cache_bytes(int level)
{
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
    hwloc_topology_t t = hsdr_machine_topology();
    if (!t || level < 1 || level > 3)
        return 0;
    /* the first instance (the one of core 0); L1CACHE holds data and unified L1s, instruction caches are L1ICACHE */
    hwloc_obj_t o = hwloc_get_obj_by_type(t, types[level - 1], 0);
    return o && o->attr ? (size_t)o->attr->cache.size : 0;
}

/* HSDR_LLC_BYTES: a positive byte count in decimal; a malformed value is a usage error (exit 2), named with the
 * position of its first bad character, so that a test or a run never silently sizes by the real cache instead. */
static size_t llc_override(void)
{
    const char *env = getenv("HSDR_LLC_BYTES");
    if (!env || !*env)
        return 0;
    size_t v = 0;
    const char *c = env;
    for (; *c >= '0' && *c <= '9' && v <= (SIZE_MAX - 9) / 10; c++)
        v = 10 * v + (size_t)(*c - '0');
    if (*c || v == 0) {
        fprintf(stderr, "HSDR_LLC_BYTES='%s': character %d: expected a positive number of bytes (decimal digits, "
                "below 2^64 / 10)\n", env, *c ? (int)(c - env) + 1 : 1);
        exit(2);
    }
    return v;
}

size_t hsdr_machine_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_bytes > 0 ? (size_t)pages * (size_t)page_bytes : 0;
}

void *hsdr_machine_stream_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    const size_t align = bytes >= huge ? huge : 64;
    const size_t n = (bytes + align - 1) / align * align;
    void *mem = NULL;
    if (n == 0 || posix_memalign(&mem, align, n) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == huge)
        madvise(mem, n, MADV_HUGEPAGE); /* before the first touch; a refusal changes nothing */
#endif
    return mem;
}

int hsdr_machine_llc_overridden(void)
{
    return llc_override() != 0;
}

size_t hsdr_machine_llc_bytes(void)
{
    const size_t forced = llc_override();
    if (forced)
        return forced;
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                             HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
    hwloc_topology_t t = hsdr_machine_topology();
    size_t largest = 0;
    for (size_t i = 0; t && i < sizeof types / sizeof types[0]; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, types[i], 0);
        if (o && o->attr && (size_t)o->attr->cache.size > largest)
            largest = (size_t)o->attr->cache.size;
    }
    return largest ? largest : LLC_FALLBACK_BYTES;
}

/* ---- the other facts ------------------------------------------------------------------------------------------ */

/* The first line of a small file, without its newline, in buf: 0, or -1 when unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *got = fgets(buf, (int)n, f);
    fclose(f);
    if (!got)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int cpu_model(char *buf, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    int found = -1;
    while (f && found != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        colon += 1 + (colon[1] == ' ');
        snprintf(buf, n, "%s", colon);
        buf[strcspn(buf, "\n")] = '\0';
        found = 0;
    }
    if (f)
        fclose(f);
    if (found != 0) { /* not x86 Linux: hwloc may know it */
        hwloc_topology_t t = hsdr_machine_topology();
        hwloc_obj_t pkg = t ? hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0) : NULL;
        const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
        if (m) {
            snprintf(buf, n, "%s", m);
            found = 0;
        }
    }
    return found;
}

static void add_string_or_null(cJSON *o, const char *name, const char *value)
{
    if (value)
        cJSON_AddStringToObject(o, name, value);
    else
        cJSON_AddNullToObject(o, name);
}

/* facts fixed for the process: computed at the first call */
static pthread_once_t facts_once = PTHREAD_ONCE_INIT;
static char started[32];

static void process_facts(void)
{
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

cJSON *hsdr_machine_context(void)
{
    pthread_once(&facts_once, process_facts);

    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "hsdr_version", HSDR_VERSION);
    cJSON_AddStringToObject(o, "commit", HSDR_BUILD_COMMIT);
    if (HSDR_BUILD_DIRTY >= 0) /* the build's own record: a later change of the tree does not alter the binary */
        cJSON_AddBoolToObject(o, "dirty", HSDR_BUILD_DIRTY);
    cJSON_AddStringToObject(o, "compiler", HSDR_COMPILER);
    const char *flags = HSDR_C_FLAGS;
    flags += strspn(flags, " "); /* CMake joins an empty CMAKE_C_FLAGS with a space */
    cJSON_AddStringToObject(o, "c_flags", flags);
    cJSON_AddStringToObject(o, "build_type", HSDR_BUILD_TYPE);

    char buf[512];
    add_string_or_null(o, "cpu_model", cpu_model(buf, sizeof buf) == 0 ? buf : NULL);
    cJSON_AddNumberToObject(o, "logical_cpus", hsdr_machine_logical_cpus());
    cJSON_AddNumberToObject(o, "cores", hsdr_machine_cores());
    cJSON *caches = cJSON_AddObjectToObject(o, "caches");
    static const char *const cache_names[] = {"L1d", "L2", "L3"};
    for (int level = 1; caches && level <= 3; level++) {
        size_t bytes = hsdr_machine_cache_bytes(level);
        if (bytes)
            cJSON_AddNumberToObject(caches, cache_names[level - 1], (double)bytes);
    }
    if (caches && hsdr_machine_llc_overridden()) /* what cold copies were sized from instead of the real LLC */
        cJSON_AddNumberToObject(caches, "llc_override", (double)hsdr_machine_llc_bytes());
    add_string_or_null(o, "governor",
                       read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof buf) == 0
                           ? buf
                           : NULL);
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        cJSON_AddStringToObject(o, "hostname", buf);
    } else {
        cJSON_AddNullToObject(o, "hostname");
    }
    cJSON_AddStringToObject(o, "started", started);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(o, "os", buf);
    } else {
        cJSON_AddNullToObject(o, "os");
    }
    return o;
}
