/* `hsdr run`: its options (getopt_long, cli.h), the matrix expanded (matrix.h), --resume's kept rows and the
 * journal and signals (run_resume.h), the cases (run_case.h), then the results and the summary (run_report.h) or,
 * when stopped, the partial rows and the resume command. Depends on those blocks and on cli.h. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakeven.h"
#include "case.h"
#include "cli.h"
#include "commands.h"
#include "machine.h"
#include "matrix.h"
#include "results.h"
#include "run_real.h"
#include "run_case.h"
#include "run_report.h"
#include "run_resume.h"
#include "util.h"

/* 0: options read; 1: --help printed; -1: a usage error (printed). */
static int parse_args(int argc, char **argv, run_options *o)
{
    static const struct option longopts[] = {{"filter", required_argument, NULL, 'f'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"shard", required_argument, NULL, 'S'},
                                             {"set", required_argument, NULL, 's'},
                                             {"stages", required_argument, NULL, 't'},
                                             {"dry-run", no_argument, NULL, 'n'},
                                             {"gguf", required_argument, NULL, 'g'},
                                             {"activations", required_argument, NULL, 'a'},
                                             {"token", required_argument, NULL, 'T'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"resume", no_argument, NULL, 'r'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    static const char *sets[64];
    *o = (run_options){.matrix_path = NULL, .out_dir = "results/latest", .shard_i = 0, .shard_n = 1, .sets = sets};
    int have_token = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("run", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'f') {
            o->filter = optarg;
        } else if (c == 'o') {
            o->out_dir = optarg;
        } else if (c == 'S') {
            char tail;
            if (sscanf(optarg, "%d/%d%c", &o->shard_i, &o->shard_n, &tail) != 2 || o->shard_n < 1 ||
                o->shard_i < 0 || o->shard_i >= o->shard_n) {
                fprintf(stderr, "hsdr run: --shard '%s': expected i/n with 0 <= i < n\n", optarg);
                return -1;
            }
        } else if (c == 's') {
            if (o->nsets == 64) {
                fprintf(stderr, "hsdr run: too many --set options\n");
                return -1;
            }
            sets[o->nsets++] = optarg;
        } else if (c == 't') {
            const char *v = optarg;
            if (strcmp(v, "both") == 0)
                o->stages = STAGES_BOTH;
            else if (strcmp(v, "alone") == 0)
                o->stages = STAGES_ALONE;
            else if (strcmp(v, "ablation") == 0)
                o->stages = STAGES_ABLATION;
            else if (strcmp(v, "none") == 0)
                o->stages = STAGES_NONE;
            else {
                fprintf(stderr, "hsdr run: --stages '%s': expected both, alone, ablation or none\n", v);
                return -1;
            }
        } else if (c == 'n') {
            o->dry_run = 1;
        } else if (c == 'g') {
            o->gguf = optarg;
        } else if (c == 'a') {
            o->activations = optarg;
        } else if (c == 'T') {
            long t;
            if (hsdr_parse_long("--token", optarg, 0, 1L << 30, &t) != 0)
                return -1;
            o->token = (int)t;
            have_token = 1;
        } else if (c == 'q') {
            o->quiet = 1;
        } else if (c == 'r') {
            o->resume = 1;
        } else {
            return c == HSDR_GETOPT_HELP ? 1 : -1;
        }
    }
    if (o->activations && !o->gguf) {
        fprintf(stderr, "hsdr run: --activations feeds the tensors of a model file: give --gguf FILE too\n");
        return -1;
    }
    if (have_token && !o->activations) {
        fprintf(stderr, "hsdr run: --token picks a row of the --activations sets: give --activations DIR too\n");
        return -1;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "hsdr run: more than one matrix given ('%s', '%s')\n", argv[optind], argv[optind + 1]);
        return -1;
    }
    o->matrix_path = optind < argc ? argv[optind] : "matrix.yaml";
    return 0;
}

/* The journal of the finished rows (run_resume.h), appended as each row is done. */
typedef struct {
    hsdr_partial *journal;
} journal_ctx;

static void journal_row(const run_state *rs, cJSON *row, void *ctx)
{
    hsdr_partial *journal = ((journal_ctx *)ctx)->journal;
    if (hsdr_run_journal_append(rs, journal, row) != 0)
        fprintf(stderr, "hsdr run: warning: could not append to %s: %s\n", hsdr_results_partial_path(journal),
                strerror(errno));
}

int hsdr_cmd_run(int argc, char **argv)
{
    /* getopt_long permutes the array it reads: a copy, so that the resume command repeats argv as given */
    char **permuted = malloc(sizeof(char *) * (size_t)(argc + 1));
    if (!permuted) {
        fprintf(stderr, "hsdr run: out of memory\n");
        return HSDR_EXIT_USAGE;
    }
    memcpy(permuted, argv, sizeof(char *) * (size_t)(argc + 1));
    run_options opt;
    const int parsed = parse_args(argc, permuted, &opt);
    free(permuted);
    if (parsed != 0)
        return parsed > 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
    char err[1024];
    hsdr_matrix_spec *spec = NULL;
    if (hsdr_matrix_load(opt.matrix_path, &spec, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    for (int i = 0; i < opt.nsets; i++)
        if (hsdr_matrix_override(spec, opt.sets[i], err, sizeof err) != 0) {
            fprintf(stderr, "hsdr run: --set: %s\n", err);
            hsdr_matrix_spec_free(spec);
            return HSDR_EXIT_USAGE;
        }
    hsdr_run_real real;
    if (hsdr_run_real_open(&real, &opt, spec) != 0) {
        hsdr_matrix_spec_free(spec);
        return HSDR_EXIT_USAGE;
    }
    hsdr_matrix m;
    int rc = hsdr_matrix_expand(spec, &m, err, sizeof err);
    hsdr_matrix_spec_free(spec);
    if (rc != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        hsdr_run_real_close(&real);
        return HSDR_EXIT_USAGE;
    }
    /* from here on every exit goes through done: (rows and settings may be NULL there) */
    rc = HSDR_EXIT_USAGE;
    cJSON **rows = NULL, *settings = NULL, *be = NULL;
    hsdr_partial *partial = NULL;
    size_t done = 0, nrows = 0, failed = 0, errors = 0;
    run_state rs = {.m = &m, .opt = &opt};
    size_t expanded = m.ncases;
    if (opt.filter)
        hsdr_matrix_filter(&m, opt.filter);
    size_t filtered = m.ncases;
    if (hsdr_matrix_shard(&m, opt.shard_i, opt.shard_n, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: %s\n", err);
        goto done;
    }
    hsdr_run_print_plan(&m, &opt, expanded, filtered);
    /* rows[i]: the row of case i, in the order of the expansion; with --resume the kept ones are filled first */
    rows = calloc(m.ncases ? m.ncases : 1, sizeof(cJSON *));
    nrows = m.ncases;
    settings = hsdr_run_settings(&m, &opt);
    if (!rows || !settings) {
        fprintf(stderr, "hsdr run: out of memory\n");
        goto done;
    }
    size_t nkept = 0;
    char kept_from[1024] = "";
    if (opt.resume) {
        if (hsdr_run_load_previous_rows(&m, &opt, settings, rows, &nkept, kept_from, sizeof kept_from) != 0)
            goto done;
        if (!kept_from[0])
            printf("hsdr run --resume: nothing to resume in %s (no results.partial.jsonl or results.jsonl): running "
                   "every case\n", opt.out_dir);
        else
            printf("hsdr run --resume: %zu of %zu cases already done in %s, %zu to run\n", nkept, m.ncases, kept_from,
                   m.ncases - nkept);
    }
    if (opt.dry_run) {
        char key[256];
        for (size_t i = 0; i < m.ncases; i++)
            if (!rows[i]) {
                hsdr_case_key(&m.cases[i], key, sizeof key);
                printf("%s\n", key);
            }
        rc = HSDR_EXIT_OK;
        goto done;
    }
    hsdr_run_real_attach(&real, &rs);
    memset(&rs.pools, 0, sizeof rs.pools);
    rs.context = hsdr_machine_context();
    cJSON_AddStringToObject(rs.context, "matrix", m.source);
    cJSON_AddNumberToObject(rs.context, "matrix_seed", (double)m.seed);
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", opt.shard_i, opt.shard_n);
    cJSON_AddStringToObject(rs.context, "shard", shard);
    cJSON_AddItemToObject(rs.context, "settings", settings);
    settings = NULL; /* the context owns it */
    hsdr_run_real_context(&real, rs.context);
    partial = hsdr_run_journal_open(&opt, rows, m.ncases, nkept, err, sizeof err);
    if (!partial) {
        fprintf(stderr, "hsdr run: %s\n", err);
        goto done;
    }
    hsdr_stop_handlers handlers;
    hsdr_run_stop_handlers_install(&handlers);
    rs.t_start = hsdr_now_ns();
    journal_ctx jc = {.journal = partial};
    done = hsdr_run_cases(&rs, rows, nkept, hsdr_run_stop_signal, journal_row, &jc);
    hsdr_run_signals_writing();
    /* A signal after the last case changes nothing: the run is complete. */
    int interrupted = done < m.ncases ? hsdr_run_stop_signal() : 0;
    /* from here on rows[0..done) are the done rows in the order of the expansion */
    size_t k = 0;
    for (size_t i = 0; i < m.ncases; i++)
        if (rows[i])
            rows[k++] = rows[i];
    nrows = done;
    hsdr_run_count_status(rows, done, &failed, &errors);
    be = hsdr_breakeven_fit(rows, done);
    /* the measured ceilings go into the context (shared by reference by every row measured in this process) */
    hsdr_run_add_facts(rs.context, &rs.pools);
    rc = HSDR_EXIT_OK;
    if (interrupted) {
        rc = hsdr_run_end_interrupted(argc, argv, &opt, rows, done, m.ncases, failed, errors, interrupted);
        hsdr_results_partial_close(partial, 0);
    } else {
        if (hsdr_run_write_complete(opt.out_dir, rows, done, be) != 0)
            rc = HSDR_EXIT_USAGE;
        hsdr_results_partial_close(partial, rc == HSDR_EXIT_OK);
        if (!opt.quiet)
            hsdr_run_print_summary(rows, done, be);
        hsdr_run_print_done(&m, &opt, nkept, kept_from, (hsdr_now_ns() - rs.t_start) / 1e9, failed, errors);
    }
    hsdr_run_stop_handlers_restore(&handlers);
    hsdr_run_pools_free(&rs.pools);
    if (rc == HSDR_EXIT_OK && (failed || errors))
        rc = HSDR_EXIT_FAIL;
done:
    for (size_t i = 0; rows && i < nrows; i++)
        cJSON_Delete(rows[i]);
    free(rows);
    cJSON_Delete(settings);
    cJSON_Delete(be);
    cJSON_Delete(rs.context);
    hsdr_matrix_free(&m);
    hsdr_run_real_close(&real);
    return rc;
}
