/* Interruption and resumption of `hsdr run` (block): SIGINT / SIGTERM handlers that stop the run at the next pass
 * boundary, the journal of finished rows (DIR/results.partial.jsonl), the "partial" rows an interrupted run writes,
 * the command that resumes it, and --resume's reading of the rows a previous run left (refusing rows of other
 * cases, seeds or settings). Depends on run_case.h (the run's options and state), results.h and matrix.h. */
#ifndef HSDR_RUN_RESUME_H
#define HSDR_RUN_RESUME_H
#include <cjson/cJSON.h>
#include <signal.h>
#include <stddef.h>

#include "matrix.h"
#include "results.h"
#include "run_case.h"

/* The handlers replaced (an ignored signal stays ignored). */
typedef struct {
    struct sigaction old[2];
    int installed[2];
} hsdr_stop_handlers;
/* The first SIGINT or SIGTERM stops the run at the next pass boundary (hsdr_run_stop_signal says which); a second
 * one ends the process at once. */
void hsdr_run_stop_handlers_install(hsdr_stop_handlers *h);
void hsdr_run_stop_handlers_restore(hsdr_stop_handlers *h);
/* The first stop signal received since the install, or 0. */
int hsdr_run_stop_signal(void);
/* The cases are over and the results are being written: signals are ignored from now on. */
void hsdr_run_signals_writing(void);
/* "SIGINT", "SIGTERM" or "signal". */
const char *hsdr_run_signal_name(int sig);
/* The command line that continues this run: the same arguments (argv[1..] as given), shell-quoted where needed,
 * plus --resume. */
void hsdr_run_resume_command(int argc, char **argv, char *buf, size_t n);

/* What, besides the case keys and seeds, decides the rows' numbers (the matrix's timing settings, --stages):
 * --resume refuses rows measured under others. */
cJSON *hsdr_run_settings(const hsdr_matrix *m, const run_options *opt);
/* The journal of this run (DIR/results.partial.jsonl): a fresh run starts it empty (saying so when an interrupted
 * run's rows are discarded); a resumed one rewrites it with the kept rows among rows[0..ncases) (nkept of them,
 * dropping a torn last line) and appends after them, so that a second interruption loses nothing either. NULL with
 * the reason in err. */
hsdr_partial *hsdr_run_journal_open(const run_options *opt, cJSON *const *rows, size_t ncases, size_t nkept,
                                    char *err, size_t errlen);
/* Append a finished row to the journal, with the context as it stands now. 0 or -1 (errno). */
int hsdr_run_journal_append(const run_state *rs, hsdr_partial *journal, const cJSON *row);
/* --resume: the rows of m's cases that an interrupted run left in opt->out_dir (journal, else results.jsonl) into
 * kept[case index], *nkept of them, kept_from naming the file (empty: nothing to resume). 0, or -1 with the message
 * (file:line, what differs) on stderr. */
int hsdr_run_load_previous_rows(const hsdr_matrix *m, const run_options *opt, const cJSON *settings, cJSON **kept,
                                size_t *nkept, char *kept_from, size_t kept_from_n);
/* An interrupted run: results.jsonl + .csv hold the done rows, each marked "partial", so that every reader sees
 * that cases are missing; breakeven.json is removed (a fit over part of an R sweep is a wrong fit, and an older one
 * describes other rows); with no row done there is no results file at all (an empty one could carry no mark).
 * 0, or -1 (said on stderr). */
int hsdr_run_write_interrupted(const char *out_dir, cJSON **rows, size_t done, size_t total, int sig);
/* The end of an interrupted run: its files (hsdr_run_write_interrupted), what was done and the command that runs
 * the rest (argc, argv: the command's own, as given). Returns the exit status: 128 + sig, or 2 when the files could
 * not be written. */
int hsdr_run_end_interrupted(int argc, char **argv, const run_options *opt, cJSON **rows, size_t done, size_t total,
                             size_t failed, size_t errors, int sig);

#endif
