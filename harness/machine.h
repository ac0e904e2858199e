/* The machine a run happens on: the "context" block of every results row (docs/results-schema.md) and the cache and
 * core counts the harness sizes its work from. The hwloc topology is loaded once, on first use. */
#ifndef HSDR_MACHINE_H
#define HSDR_MACHINE_H
#include <cjson/cJSON.h>
#include <stddef.h>

/* A new object (caller deletes): hsdr_version, commit, dirty (only when the source tree is at the built commit and
 * `git status --porcelain` answers; else absent), compiler, c_flags, build_type, cpu_model (string or null),
 * logical_cpus, cores, caches {"L1d", "L2", "L3"} (bytes of one instance as hwloc reports it; a level hwloc does not
 * report is absent), governor (string or null), hostname, started (UTC ISO 8601 of the first call), os (uname).
 * The run adds threads_pinned, pinning, ceilings, matrix... itself. NULL only when out of memory. */
cJSON *hsdr_machine_context(void);

/* Largest cache of one instance (hwloc); 32 MiB if unknown. The environment variable HSDR_LLC_BYTES (bytes, decimal)
 * replaces it, for tests of what is sized from it (cold copies, bandwidth working sets) on a machine whose cache
 * would make them slow; a malformed value exits 2 with its position. */
size_t hsdr_machine_llc_bytes(void);
int hsdr_machine_llc_overridden(void); /* 1 when HSDR_LLC_BYTES sets it */
int hsdr_machine_cores(void);          /* physical cores (hwloc), >= 1 */
int hsdr_machine_logical_cpus(void);   /* PUs (hwloc), >= 1 */
size_t hsdr_machine_memory_bytes(void); /* physical memory (sysconf), 0 when not reported */
/* Memory that a kernel or a read streams through (weight copies, the bandwidth buffer), freed with free(): from 2 MiB
 * on, 2 MiB-aligned and advised MADV_HUGEPAGE before its first touch, so that with transparent huge pages in
 * "madvise" mode the weights and the read ceiling measured beside them stream through the same page size (with 4 KiB
 * pages each thread's stream takes a TLB miss per page). NULL when out of memory or bytes is 0. */
void *hsdr_machine_stream_alloc(size_t bytes);
/* Bytes of one instance of the level-1 data cache (level 1), L2 (2) or L3 (3); 0 when not reported. */
size_t hsdr_machine_cache_bytes(int level);

/* The process's hwloc topology (hwloc_topology_t), loaded on first use; NULL when hwloc failed. Shared: never
 * destroy it or modify it. */
struct hwloc_topology *hsdr_machine_topology(void);

#endif
