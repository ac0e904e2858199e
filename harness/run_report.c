/* Before and after `hsdr run`'s cases (run_report.h): the plan, the summary table, the counts, the complete run's
 * files and its last line. Depends on results.h, breakeven.h, matrix.h and run_case.h. */
#include "run_report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "breakeven.h"
#include "results.h"

void hsdr_run_print_plan(const hsdr_matrix *m, const run_options *opt, size_t expanded, size_t filtered)
{
    printf("hsdr run: %s: %zu cases expanded, %zu skipped", m->source, expanded, m->nskipped);
    if (opt->filter)
        printf(", %zu after --filter '%s'", filtered, opt->filter);
    printf("; shard %d/%d runs %zu\n", opt->shard_i, opt->shard_n, m->ncases);
    if (opt->filter && filtered == 0 && expanded > 0)
        printf("hsdr run: --filter '%s' selects none of the %zu cases: a glob (* ? [) must match a whole key, e.g. "
               "'variant=cpu.direct *'; without one it matches any part of the key; commas separate alternatives "
               "(`--dry-run` prints the keys)\n",
               opt->filter, expanded);
    if (!opt->dry_run && opt->quiet)
        return;
    for (size_t i = 0; i < m->nskipped; i++) { /* each reason once, with its count */
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(m->skipped[i].reason, m->skipped[j].reason) == 0;
        if (seen)
            continue;
        size_t count = 0;
        for (size_t j = i; j < m->nskipped; j++)
            count += strcmp(m->skipped[i].reason, m->skipped[j].reason) == 0;
        printf("  skipped %zu: %s\n", count, m->skipped[i].reason);
    }
}

void hsdr_run_print_done(const hsdr_matrix *m, const run_options *opt, size_t nkept, const char *kept_from,
                         double seconds, size_t failed, size_t errors)
{
    if (nkept)
        printf("\nhsdr run: %zu cases, %zu of them kept from %s and %zu run in %.1f s", m->ncases, nkept, kept_from,
               m->ncases - nkept, seconds);
    else
        printf("\nhsdr run: %zu cases in %.1f s", m->ncases, seconds);
    printf(": %zu ok, %zu failed validation, %zu errors; results in %s/results.jsonl (+ .csv, breakeven.json)\n",
           m->ncases - failed - errors, failed, errors, opt->out_dir);
}

void hsdr_run_print_summary(cJSON **rows, size_t n, const cJSON *be)
{
    printf("\n%-14s %6s %6s %4s %3s %-4s %-10s %11s %7s %6s %7s %-11s\n", "variant", "K", "N", "R", "thr", "mode",
           "dist", "median us", "GB/s", "%ceil", "x prod", "dominant");
    for (size_t i = 0; i < n; i++) {
        const cJSON *r = rows[i];
        const char *status = hsdr_row_str(r, "status");
        printf("%-14s %6.0f %6.0f %4.0f %3.0f %-4s %-10s ", hsdr_row_str(r, "variant"), hsdr_row_num(r, "K"),
               hsdr_row_num(r, "N"), hsdr_row_num(r, "R"), hsdr_row_num(r, "threads"), hsdr_row_str(r, "mode"),
               hsdr_row_str(r, "distribution"));
        if (strcmp(status, "ok") != 0) {
            printf("%s\n", strcmp(status, "failed") == 0 ? "FAILED VALIDATION (not timed)" : "ERROR");
            continue;
        }
        double ratio = hsdr_row_num(r, "ratio_to_production");
        char rbuf[16] = "-";
        if (!isnan(ratio))
            snprintf(rbuf, sizeof rbuf, "%.2f", ratio);
        printf("%11.1f %7.2f %6.1f %7s %-11s\n", hsdr_row_median(r) / 1e3, hsdr_row_num(r, "gb_per_s"),
               hsdr_row_num(r, "pct_of_ceiling"), rbuf, hsdr_row_str(r, "dominant_stage"));
    }
    const cJSON *o;
    if (cJSON_GetArraySize(be) > 0)
        printf("\nbreak-even R (state sets vs direct, time per row fitted as a + b/R):\n");
    cJSON_ArrayForEach(o, be)
    {
        double R = hsdr_row_num(o, "break_even_R");
        printf("  K=%-6.0f threads=%.0f %-10s %-4s %-13s vs %-11s: ", hsdr_row_num(o, "K"), hsdr_row_num(o, "threads"),
               hsdr_row_str(o, "distribution"), hsdr_row_str(o, "mode"), hsdr_row_str(o, "stateset"),
               hsdr_row_str(o, "direct"));
        if (isnan(R))
            printf("none (%s)\n", hsdr_row_str(o, "note"));
        else
            printf("R* = %.1f\n", R);
    }
}


void hsdr_run_count_status(cJSON **rows, size_t n, size_t *failed, size_t *errors)
{
    *failed = *errors = 0;
    for (size_t i = 0; i < n; i++) {
        const char *status = hsdr_row_str(rows[i], "status");
        *failed += strcmp(status, "failed") == 0;
        *errors += strcmp(status, "error") == 0;
    }
}

int hsdr_run_write_complete(const char *out_dir, cJSON **rows, size_t n, const cJSON *be)
{
    char err[1024];
    if (hsdr_results_write(out_dir, "results", rows, n, err, sizeof err) != 0 ||
        hsdr_breakeven_write(out_dir, be, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return -1;
    }
    return 0;
}
