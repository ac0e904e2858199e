/* After `hsdr run` (block): the summary table of the rows (per case its time, paired ratio to production and
 * dominant stage), the break-even fits of the state-set variants against direct (breakeven.h), and the files of a
 * complete run. Depends on results.h and breakeven.h. */
#ifndef HSDR_RUN_REPORT_H
#define HSDR_RUN_REPORT_H
#include <cjson/cJSON.h>
#include <stddef.h>

/* The summary table of rows[0..n) and the break-even fits be, on stdout. */
void hsdr_run_print_summary(cJSON **rows, size_t n, const cJSON *be);
/* The rows that failed validation and those with an error. */
void hsdr_run_count_status(cJSON **rows, size_t n, size_t *failed, size_t *errors);
/* A complete run's files: DIR/results.jsonl + .csv of rows[0..n), and DIR/breakeven.json of be. 0, or -1 (said on
 * stderr). */
int hsdr_run_write_complete(const char *out_dir, cJSON **rows, size_t n, const cJSON *be);

#endif
