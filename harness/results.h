/* Result files of schema hsdr-results/2 (harness/schema.c, docs/results-schema.md): DIR/BASE.jsonl (one JSON object per
 * case, one line each) and its CSV mirror DIR/BASE.csv, both written under a temporary name and renamed when complete;
 * a progress file DIR/BASE.partial.jsonl that `hsdr run --resume` continues from; and the reader used by `hsdr compare`
 * and `hsdr merge`. */
#ifndef HSDR_RESULTS_H
#define HSDR_RESULTS_H
#include <cjson/cJSON.h>
#include <stddef.h>

#include "schema.h"
#include "stats.h"

/* Write rows (cJSON objects of schema hsdr-results/2, each checked against the table: hsdr_schema_check_row) to
 * DIR/BASE.jsonl and DIR/BASE.csv: mkdir -p DIR, write each to a temporary name in DIR (".BASE.jsonl.<pid>.<n>.tmp"),
 * fsync, then rename both. Never leaves a half-written file under the final names; on failure the temporary files are
 * removed (only a process killed mid-write can leave a hidden *.tmp, and the next write of BASE in DIR removes those of
 * processes no longer running). Rows are printed with hsdr_results_print. 0, or -1 with a message in err. */
int hsdr_results_write(const char *dir, const char *base, cJSON *const *rows, size_t n, char *err, size_t errlen);

/* Progress file (journal) of `hsdr run`: rows appended to DIR/BASE.partial.jsonl as they complete, each line in one
 * write(2), so that a run stopped at any point leaves whole rows (and at worst a torn last line without its newline,
 * which hsdr_results_read_journal drops). hsdr_results_partial_open starts an empty file; hsdr_results_partial_reopen
 * (a resumed run) replaces it by the keep rows in one rename and appends after them. hsdr_results_partial_close(p, 1)
 * deletes it once the final write succeeded, hsdr_results_partial_close(p, 0) keeps it (clearly named partial) for
 * --resume when the run was interrupted. open/reopen: NULL with a message in err; append: 0 or -1. */
typedef struct hsdr_partial hsdr_partial;
hsdr_partial *hsdr_results_partial_open(const char *dir, const char *base, char *err, size_t errlen);
hsdr_partial *hsdr_results_partial_reopen(const char *dir, const char *base, cJSON *const *keep, size_t nkeep,
                                          char *err, size_t errlen);
int hsdr_results_partial_append(hsdr_partial *p, const cJSON *row);
const char *hsdr_results_partial_path(const hsdr_partial *p);
void hsdr_results_partial_close(hsdr_partial *p, int remove_it); /* p may be NULL */

/* The "partial" object ({"done", "total", "interrupted_by"}) that marks every row of a results file written by an
 * interrupted run (docs/results-schema.md): the first one among rows (its index in *index when not NULL), or NULL
 * when the rows carry none (a complete run). */
const cJSON *hsdr_results_partial_marker(cJSON *const *rows, size_t n, size_t *index);
/* "7 of 39 cases done, interrupted by SIGINT": a marker in words, for the notes of merge and compare. */
void hsdr_results_partial_describe(const cJSON *mark, char *buf, size_t n);

/* Read a JSONL results file: every non-empty line must be a JSON object with "schema": "hsdr-results/2" (or /1,
 * converted on reading: hsdr_schema_upgrade_row) and a string "key"; errors name file:line (and the column for
 * malformed JSON). An empty file gives 0 rows. Caller frees with hsdr_results_free. */
int hsdr_results_read(const char *path, cJSON ***rows, size_t *n, char *err, size_t errlen);
/* The same, also giving the 1-based line number of every row in *lines (caller frees; lines may be NULL). */
int hsdr_results_read_lines(const char *path, cJSON ***rows, size_t **lines, size_t *n, char *err, size_t errlen);
/* A journal (BASE.partial.jsonl): as hsdr_results_read_lines, except that bytes after the last newline (a row whose
 * writer was killed) are not read; their count goes to *torn_bytes. */
int hsdr_results_read_journal(const char *path, cJSON ***rows, size_t **lines, size_t *n, size_t *torn_bytes,
                              char *err, size_t errlen);
void hsdr_results_free(cJSON **rows, size_t n);

/* A row's fields as its readers use them: a string field or "" when absent or not a string; a number field or NaN;
 * the median of time_ns or NaN. */
const char *hsdr_row_str(const cJSON *row, const char *name);
double hsdr_row_num(const cJSON *row, const char *name);
double hsdr_row_median(const cJSON *row);

/* A row (any cJSON value) as one line of JSON, the layout of cJSON_PrintUnformatted but with exact numbers:
 * integers when integral (below 1e17), else the shortest of %.15g / %.16g / %.17g that reads back to the same double
 * (cJSON's own printer rounds to 15 digits whenever that is "close"); NaN and infinities as null. Every JSONL line
 * written here comes from it. Caller frees (free); NULL when out of memory or the value is not printable. */
char *hsdr_results_print(const cJSON *item);
/* o as one JSON line on stdout (hsdr_results_print; "{}" when it cannot be printed), flushed; o deleted. The
 * JSON Lines of `hsdr bandwidth --json`, `bandwidth --handoff --json` and `compare --json`. */
void hsdr_results_emit(cJSON *o);

/* The CSV columns, in order: the schema's fields marked CSV (harness/schema.c) as dotted paths, then for every
 * canonical stage (hsdr_stage_name) its stages.NAME.X fields as stage_NAME_X. Missing, null or non-scalar values are
 * empty cells; strings are quoted per RFC 4180 when they hold a comma, a quote or a line break; numbers as in
 * hsdr_results_print; booleans true / false. Returns the count; *names (when names is not NULL) points to a static
 * list. */
size_t hsdr_results_csv_columns(const char ***names);

/* The one spelling of timing statistics in every output: o.name = {"median", "p10", "p25", "p75", "p90", "min",
 * "mean", "rel_spread", "reps", "stop", "launches_per_sample"} (ns per launch), and, when samples_name is not NULL,
 * o.samples_name = the samples in order. */
void hsdr_results_add_time(cJSON *o, const char *name, const hsdr_stats *st, const char *samples_name);

#endif
