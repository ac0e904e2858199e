/* Where state sets start to pay: per configuration, each state-set variant's time per row fitted as a + b / R over
 * its R sweep against the direct variant of the same backend and configuration (c per row): R* = b / (c - a). Fitted
 * from finished results rows, so that `hsdr run` and `hsdr merge` (the shards of one sweep) write the same
 * DIR/breakeven.json (schema hsdr-breakeven/1, docs/results-schema.md). */
#ifndef HSDR_BREAKEVEN_H
#define HSDR_BREAKEVEN_H
#include <cjson/cJSON.h>
#include <stddef.h>

/* One object per (direct row, state-set variant) of the same backend and configuration: K, N, threads, distribution,
 * mode, shape, stateset, direct, r_values, fit {a_ns_per_row, b_ns_per_tile_row, direct_ns_per_row} (when two or
 * more R values were timed), break_even_R (null when none) and a note in words. Rows that are not "ok" take no part.
 * Caller frees (cJSON_Delete). */
cJSON *hsdr_breakeven_fit(cJSON *const *rows, size_t n);

/* Write {"schema": "hsdr-breakeven/1", "rows": fits} to DIR/breakeven.json through a temporary file and a rename.
 * 0, or -1 with a message naming the file in err. */
int hsdr_breakeven_write(const char *dir, const cJSON *fits, char *err, size_t errlen);

/* Remove DIR/breakeven.json (rows of an interrupted run: a fit over part of an R sweep is a wrong fit, and an older
 * file describes other rows). 0 also when there was none, or -1 with a message naming the file in err. */
int hsdr_breakeven_remove(const char *dir, char *err, size_t errlen);

#endif
