/* After `hsdr run` (block): the summary table of the rows (per case its time, paired ratio to production and
 * dominant stage), the break-even fits of the state-set variants against direct (breakeven.h), and the files of a
 * complete run; the plan printed before the cases and the last line after them. Depends on results.h, breakeven.h,
 * matrix.h and run_case.h (the options). */
#ifndef HSDR_RUN_REPORT_H
#define HSDR_RUN_REPORT_H
#include <cjson/cJSON.h>
#include <stddef.h>

#include "matrix.h"
#include "run_case.h"

/* Before the cases: "hsdr run: SOURCE: E cases expanded, S skipped[, F after --filter ...]; shard i/n runs C", a hint
 * when a filter selected nothing, and (unless --quiet, always with --dry-run) the skip reasons counted. */
void hsdr_run_print_plan(const hsdr_matrix *m, const run_options *opt, size_t expanded, size_t filtered);
/* The last line of a run that finished: how many cases, kept and run, in how long, their outcomes, where. */
void hsdr_run_print_done(const hsdr_matrix *m, const run_options *opt, size_t nkept, const char *kept_from,
                         double seconds, size_t failed, size_t errors);

/* The summary table of rows[0..n) and the break-even fits be, on stdout. */
void hsdr_run_print_summary(cJSON **rows, size_t n, const cJSON *be);
/* The rows that failed validation and those with an error. */
void hsdr_run_count_status(cJSON **rows, size_t n, size_t *failed, size_t *errors);
/* A complete run's files: DIR/results.jsonl + .csv of rows[0..n), and DIR/breakeven.json of be. 0, or -1 (said on
 * stderr). */
int hsdr_run_write_complete(const char *out_dir, cJSON **rows, size_t n, const cJSON *be);

#endif
