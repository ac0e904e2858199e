/* Interruption and resumption of `hsdr run` (run_resume.h): the stop signals, the journal, --resume, the partial
 * rows. Depends on run_case.h, results.h, breakeven.h (an interrupted run removes the fit) and matrix.h. */
#include "run_resume.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "breakeven.h"
#include "case.h"
#include "matrix.h"
#include "results.h"
#include "util.h"

/* ---- interruption: SIGINT / SIGTERM stop the run at the next case boundary ---- */

/* The first SIGINT or SIGTERM: its number. The loop polls it between configurations (the cases timed together in
 * rounds), so a configuration is never cut in half and every row written is whole. */
static volatile sig_atomic_t stop_signal;
/* Set once the cases are over: the results files are being written, which takes moments, and a process ended now
 * would leave the old results.jsonl beside a journal of the new rows. Signals are then ignored. */
static volatile sig_atomic_t writing_results;

static void on_stop_signal(int sig)
{
    if (writing_results)
        return;
    if (stop_signal) {
        /* A second signal: the user will not wait for the configurations in flight. The default action ends the
         * process when the handler returns (the signal is blocked until then); the journal keeps whole rows only. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
    static const char msg_int[] = "\nhsdr run: SIGINT: stopping after the current cases (one configuration's rounds; "
                                  "a second signal: at once)\n";
    static const char msg_term[] = "\nhsdr run: SIGTERM: stopping after the current cases (one configuration's rounds; "
                                   "a second signal: at once)\n";
    ssize_t ignored = sig == SIGINT ? write(STDERR_FILENO, msg_int, sizeof msg_int - 1)
                                    : write(STDERR_FILENO, msg_term, sizeof msg_term - 1);
    (void)ignored;
}

static const int stop_signals[2] = {SIGINT, SIGTERM};

void hsdr_run_stop_handlers_install(hsdr_stop_handlers *h)
{
    stop_signal = 0;
    writing_results = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT); /* one handler at a time: a second signal never interrupts the first */
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART; /* file writes and pool waits go on as if nothing happened */
    for (int i = 0; i < 2; i++) {
        h->installed[i] = 0;
        if (sigaction(stop_signals[i], NULL, &h->old[i]) != 0)
            continue;
        /* An ignored signal stays ignored: a shell starts background jobs of a script with SIGINT ignored so that
         * Ctrl-C on the script leaves them running, and nohup-like launchers rely on the same. */
        if (h->old[i].sa_handler == SIG_IGN)
            continue;
        h->installed[i] = sigaction(stop_signals[i], &sa, NULL) == 0;
    }
}

void hsdr_run_stop_handlers_restore(hsdr_stop_handlers *h)
{
    for (int i = 0; i < 2; i++)
        if (h->installed[i])
            sigaction(stop_signals[i], &h->old[i], NULL);
}

const char *hsdr_run_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

void hsdr_run_resume_command(int argc, char **argv, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "hsdr run");
    int has_resume = 0;
    for (int i = 1; i < argc && len < n; i++) {
        const char *a = argv[i];
        has_resume |= strcmp(a, "--resume") == 0;
        int plain = *a != '\0';
        for (const char *c = a; *c && plain; c++)
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%", *c) != NULL;
        if (plain) {
            len += (size_t)snprintf(buf + len, n - len, " %s", a);
            continue;
        }
        len += (size_t)snprintf(buf + len, n - len, " '");
        for (const char *c = a; *c && len < n; c++)
            len += (size_t)snprintf(buf + len, n - len, *c == '\'' ? "'\\''" : "%c", *c);
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "'");
    }
    if (!has_resume && len < n)
        snprintf(buf + len, n - len, " --resume");
}

int hsdr_run_stop_signal(void)
{
    return stop_signal;
}

void hsdr_run_signals_writing(void)
{
    writing_results = 1;
}

/* ---- the settings the rows were measured under ---- */

static const char *stage_timing_name(enum stage_timing s)
{
    return s == STAGES_ALONE ? "alone" : s == STAGES_ABLATION ? "ablation" : s == STAGES_NONE ? "none" : "both";
}

/* What, besides the case keys and seeds, decides the rows' numbers: --resume refuses rows measured under others. */
cJSON *hsdr_run_settings(const hsdr_matrix *m, const run_options *opt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "warmup", m->warmup);
    cJSON_AddNumberToObject(o, "repetitions_min", m->min_reps);
    cJSON_AddNumberToObject(o, "repetitions_max", m->max_reps);
    cJSON_AddNumberToObject(o, "noise_target", m->noise_target);
    cJSON_AddNumberToObject(o, "time_limit_s", m->time_limit_s);
    cJSON_AddNumberToObject(o, "ceiling_interval_s", m->ceiling_interval_s);
    cJSON_AddNumberToObject(o, "visits", m->visits);
    cJSON_AddStringToObject(o, "stages", stage_timing_name(opt->stages));
    if (opt->gguf)
        cJSON_AddStringToObject(o, "gguf", opt->gguf);
    if (opt->activations) {
        cJSON_AddStringToObject(o, "activations", opt->activations);
        cJSON_AddNumberToObject(o, "token", opt->token);
    }
    return o;
}

/* The journal line of a finished row: the row with the context as it stands now, so that a row resumed from the
 * journal is as self-contained as a row of results.jsonl (its ceiling is in its own context). */
int hsdr_run_journal_append(const run_state *rs, hsdr_partial *journal, const cJSON *row)
{
    cJSON *copy = cJSON_Duplicate(row, 1), *ctx = cJSON_Duplicate(rs->context, 1);
    int rc = -1;
    if (copy && ctx) {
        hsdr_run_add_facts(ctx, &rs->pools);
        if (cJSON_ReplaceItemInObjectCaseSensitive(copy, "context", ctx)) {
            ctx = NULL;
            rc = hsdr_results_partial_append(journal, copy);
        }
    }
    cJSON_Delete(ctx);
    cJSON_Delete(copy);
    return rc;
}

/* ---- --resume: the rows an interrupted run of the same cases left ---- */

typedef struct {
    const char *key;
    size_t index; /* in the expansion */
} case_key;

static int cmp_case_key(const void *a, const void *b)
{
    return strcmp(((const case_key *)a)->key, ((const case_key *)b)->key);
}

/* The mark of the interrupted run: a resumed run's rows carry none (or the new one, if interrupted again). Every
 * other field, the paired ratios included, was measured with the row's own rounds and stays. */
static void strip_run_fields(cJSON *row)
{
    cJSON_DeleteItemFromObjectCaseSensitive(row, "partial");
}

/* Reads DIR/results.partial.jsonl (the journal: every row finished before the interruption), or without one
 * DIR/results.jsonl (written by an interrupted run, or a complete one being extended), and files each row under its
 * case: kept[i] = the row of case i, or NULL. Every row must be a case of this expansion (key) with the same input
 * seed and settings, once; otherwise nothing is kept, the message names file:line, and -1 is returned. */
int hsdr_run_load_previous_rows(const hsdr_matrix *m, const run_options *opt, const cJSON *settings, cJSON **kept,
                              size_t *nkept, char *from, size_t fromlen)
{
    char journal[1024], results[1024], err[1200];
    snprintf(journal, sizeof journal, "%s/results.partial.jsonl", opt->out_dir);
    snprintf(results, sizeof results, "%s/results.jsonl", opt->out_dir);
    const char *path = access(journal, F_OK) == 0 ? journal : access(results, F_OK) == 0 ? results : NULL;
    *nkept = 0;
    from[0] = '\0';
    if (!path)
        return 0;
    snprintf(from, fromlen, "%s", path);
    cJSON **rows = NULL;
    size_t *lines = NULL, n = 0, torn = 0;
    int rc = path == journal ? hsdr_results_read_journal(path, &rows, &lines, &n, &torn, err, sizeof err)
                             : hsdr_results_read_lines(path, &rows, &lines, &n, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "hsdr run --resume: %s\n", err);
        return -1;
    }
    if (torn)
        printf("hsdr run --resume: %s: %zu bytes after the last complete row dropped (a row cut off when the run was "
               "killed)\n", path, torn);
    case_key *index = malloc((m->ncases ? m->ncases : 1) * sizeof *index);
    char(*keys)[256] = malloc((m->ncases ? m->ncases : 1) * sizeof *keys);
    size_t *first_line = calloc(m->ncases ? m->ncases : 1, sizeof *first_line);
    rc = -1;
    if (!index || !keys || !first_line) {
        fprintf(stderr, "hsdr run --resume: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < m->ncases; i++) {
        hsdr_case_key(&m->cases[i], keys[i], sizeof keys[i]);
        index[i] = (case_key){keys[i], i};
    }
    qsort(index, m->ncases, sizeof *index, cmp_case_key);
    for (size_t r = 0; r < n; r++) {
        const char *key = cJSON_GetObjectItemCaseSensitive(rows[r], "key")->valuestring;
        case_key probe = {key, 0};
        const case_key *hit = bsearch(&probe, index, m->ncases, sizeof *index, cmp_case_key);
        if (!hit) {
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s' is not a case of this run (%s with these --set, --filter and "
                    "--shard options): the directory holds results of another matrix or other options; resume with "
                    "the command that started it, or give another --out\n",
                    path, lines[r], key, m->source);
            goto out;
        }
        size_t c = hit->index;
        if (first_line[c]) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s' already at line %zu\n", path, lines[r], key,
                    first_line[c]);
            goto out;
        }
        first_line[c] = lines[r];
        const cJSON *seed = cJSON_GetObjectItemCaseSensitive(rows[r], "seed");
        if (!cJSON_IsNumber(seed)) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s': field 'seed': missing or not a number\n", path,
                    lines[r], key);
            goto out;
        }
        if (seed->valuedouble != (double)m->cases[c].seed) { /* 53-bit seeds: exact in a double */
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s': field 'seed' is %.0f, this run's inputs use seed %llu "
                    "(another matrix seed): refusing to mix the two runs\n",
                    path, lines[r], key, seed->valuedouble, (unsigned long long)m->cases[c].seed);
            goto out;
        }
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(rows[r], "status");
        if (!cJSON_IsString(status) || (strcmp(status->valuestring, "ok") != 0 &&
                                        strcmp(status->valuestring, "failed") != 0 &&
                                        strcmp(status->valuestring, "error") != 0)) {
            fprintf(stderr, "hsdr run --resume: %s:%zu: key '%s': field 'status': expected ok, failed or error\n",
                    path, lines[r], key);
            goto out;
        }
        /* rows written before the settings were recorded carry none: their keys and seeds are all there is */
        const cJSON *their = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rows[r], "context"),
                                                               "settings");
        if (their && !cJSON_Compare(their, settings, 1)) {
            char *a = hsdr_results_print(their), *b = hsdr_results_print(settings);
            fprintf(stderr,
                    "hsdr run --resume: %s:%zu: key '%s': field 'context.settings' is %s, this run's is %s: refusing "
                    "to mix rows timed under other settings\n",
                    path, lines[r], key, a ? a : "?", b ? b : "?");
            free(a);
            free(b);
            goto out;
        }
    }
    /* all rows belong here: hand them over, in the order of the expansion */
    for (size_t r = 0; r < n; r++) {
        const char *key = cJSON_GetObjectItemCaseSensitive(rows[r], "key")->valuestring;
        case_key probe = {key, 0};
        const case_key *hit = bsearch(&probe, index, m->ncases, sizeof *index, cmp_case_key);
        strip_run_fields(rows[r]);
        kept[hit->index] = rows[r];
        rows[r] = NULL;
        (*nkept)++;
    }
    rc = 0;
out:
    free(index);
    free(keys);
    free(first_line);
    free(lines);
    for (size_t r = 0; r < n; r++)
        cJSON_Delete(rows[r]);
    free(rows);
    return rc;
}

/* ---- writing the results ---- */

/* An interrupted run: results.jsonl + .csv hold the done rows, each marked "partial", so that every reader sees
 * that cases are missing; breakeven.json is removed (a fit over part of an R sweep is a wrong fit, and an older one
 * describes other rows); with no row done there is no results file at all (an empty one could carry no mark). */
int hsdr_run_write_interrupted(const char *out_dir, cJSON **rows, size_t done, size_t total, int sig)
{
    char path[1024], err[1024];
    for (size_t i = 0; i < done; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(rows[i], "partial");
        cJSON *mark = cJSON_AddObjectToObject(rows[i], "partial");
        cJSON_AddNumberToObject(mark, "done", (double)done);
        cJSON_AddNumberToObject(mark, "total", (double)total);
        cJSON_AddStringToObject(mark, "interrupted_by", hsdr_run_signal_name(sig));
    }
    if (hsdr_breakeven_remove(out_dir, err, sizeof err) != 0)
        fprintf(stderr, "hsdr run: warning: %s\n", err);
    if (done == 0) {
        const char *names[] = {"results.jsonl", "results.csv"};
        for (int i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", out_dir, names[i]);
            if (unlink(path) != 0 && errno != ENOENT) {
                fprintf(stderr, "hsdr run: cannot remove %s: %s\n", path, strerror(errno));
                return -1;
            }
        }
        return 0;
    }
    if (hsdr_results_write(out_dir, "results", rows, done, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return -1;
    }
    return 0;
}

hsdr_partial *hsdr_run_journal_open(const run_options *opt, cJSON *const *rows, size_t ncases, size_t nkept,
                                    char *err, size_t errlen)
{
    cJSON **kept = malloc((nkept ? nkept : 1) * sizeof *kept);
    if (!kept) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < ncases; i++)
        if (rows[i])
            kept[k++] = rows[i];
    if (!opt->resume) {
        char journal[1100];
        struct stat st;
        snprintf(journal, sizeof journal, "%s/results.partial.jsonl", opt->out_dir);
        if (stat(journal, &st) == 0 && st.st_size > 0)
            printf("hsdr run: %s: the rows of an interrupted run are discarded (--resume continues such a run)\n",
                   journal);
    }
    hsdr_partial *partial = hsdr_results_partial_reopen(opt->out_dir, "results", kept, nkept, err, errlen);
    free(kept);
    return partial;
}

int hsdr_run_end_interrupted(int argc, char **argv, const run_options *opt, cJSON **rows, size_t done, size_t total,
                             size_t failed, size_t errors, int sig)
{
    const int written = hsdr_run_write_interrupted(opt->out_dir, rows, done, total, sig) == 0;
    char cmd[2048];
    hsdr_run_resume_command(argc, argv, cmd, sizeof cmd);
    printf("\nhsdr run: interrupted by %s after %zu of %zu cases (%zu ok, %zu failed validation, %zu errors)",
           hsdr_run_signal_name(sig), done, total, done - failed - errors, failed, errors);
    if (!written)
        printf("; the results could not be written (above)");
    else if (done)
        printf("; %s/results.jsonl (+ .csv) holds their rows, each marked \"partial\"", opt->out_dir);
    else
        printf("; no case finished, no results file written");
    printf("\nhsdr run: the remaining %zu cases run with: %s\n", total - done, cmd);
    /* as a shell reports a process ended by the signal: 128 + its number (130 SIGINT, 143 SIGTERM) */
    return written ? 128 + sig : HSDR_EXIT_USAGE;
}
