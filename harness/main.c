/* hsdr: the command-line entry of hsdr-bench. Exit codes: 0 success, 1 a check failed, 2 bad usage or bad input;
 * `hsdr run` stopped by SIGINT / SIGTERM: 128 + the signal (130, 143). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bandwidth.h"
#include "check.h"
#include "compare.h"
#include "schema.h"
#include "fp16.h"
#include "kernel.h"
#include "lns8.h"
#include "markers.h"
#include "merge.h"
#include "profile.h"
#include "quality.h"
#include "run.h"
#include "states.h"
#include "util.h"
#include "vectors.h"

#ifndef HSDR_VERSION
#define HSDR_VERSION "dev"
#endif

static const char usage_text[] =
            "usage: hsdr <command> [options]\n"
            "\n"
            "commands:\n"
            "  run [MATRIX] [--filter GLOB] [--out DIR] [--shard i/n] [--set AXIS=VALUES]... [--stages both|alone|\n"
            "      ablation|none] [--resume] [--dry-run] [--quiet]\n"
            "        expand the experiment matrix (default matrix.yaml), validate every case against the reference,\n"
            "        time it hot or cold with per-stage attribution; JSON Lines + CSV under DIR (results/latest).\n"
            "        The cases of one configuration (inputs, threads, mode) run in rounds, each variant beside its\n"
            "        backend's production variant (paired ratios), over `visits` visits spread across the run.\n"
            "        SIGINT/SIGTERM: stop at the end of the current pass; DIR/results.jsonl + .csv hold the finished\n"
            "        rows, each marked \"partial\" (exit 130/143). --resume (same arguments): keep the rows finished\n"
            "        in DIR, refuse rows of other cases, seeds or settings, run only the missing cases\n"
            "  profile --model bonsai2-27b|bonsai-8b|bonsai-4b [--tokens 128] [--layers 4] [--variants LIST]\n"
            "      [--threads N|cores] [--no-head] [--dist D] [--seed S] [--json FILE]\n"
            "        every GEMV of decode tokens on real shapes: ms/token, GEMV-only tokens/s, per-tensor share\n"
            "  quality [--model M] [--layers 2] [--seeds 4] [--tokens 2] [--vocab V] [--variants LIST] [--threads N]\n"
            "      [--flns F,b] [--seed S] [--json FILE]\n"
            "        SYNTHETIC model-shaped accuracy study: ternary FFN layers + head on real shapes, exact activations\n"
            "        vs production Q8_0 vs each HSDR path: per-layer and final cosine, NMSE, KL of the softmax head\n"
            "  bandwidth [--threads 1,2] [--sizes 32K,4M,256M] [--mode hot|cold|both] [--backend cpu|cuda|vulkan] [--json]\n"
            "        measured read bandwidth per thread count and working set (the roofline ceiling); --backend cuda or\n"
            "        vulkan: the device's streaming read per launch (CUDA events, Vulkan timestamps)\n"
            "  compare A.jsonl B.jsonl [--threshold T] [--confidence 0.95] [--raw] [--json]\n"
            "        per case FASTER / SLOWER / SAME / AMBIGUOUS for B against A: each time over its own run's\n"
            "        production (paired per round) or ceiling, so that drift between the runs cancels; --raw: times\n"
            "  schema [--json | --markdown | --csv]\n"
            "        the fields of a result row (hsdr-results/2): type, unit, presence, meaning\n"
            "  merge OUT_DIR IN.jsonl... [--base results]\n"
            "        join result files (e.g. shards of one matrix) into OUT_DIR/results.jsonl + .csv\n"
            "        and the break-even fits of the joined rows (OUT_DIR/breakeven.json)\n"
            "  check [--backend B] [--variant GLOB] [-v] PATH...\n"
            "        check every implementation against JSON test vectors (schema hsdr-vectors/1); a PATH may be a\n"
            "        directory (its *.json files). Prints failing pairs, then 'N passed, M failed'.\n"
            "  list [--json]\n"
            "        the registry: every variant, its backend, family, outputs, stages, and why it cannot run here\n"
            "  encode [--prescale E|auto] X...\n"
            "        LNS8 codes of the fp32 values X (spec/lns8.md section 2)\n"
            "  states [--K N] [--vectors N] [--seed S] [--json]\n"
            "        occupied LNS8 states per tile and activation quantization error, per distribution\n"
            "  help | --version\n"
            "\n"
            "exit status: 0 success, 1 a check failed, 2 bad usage or malformed input; run stopped by a signal:\n"
            "128 + its number (130 SIGINT, 143 SIGTERM)\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
}

/* `hsdr CMD --help`: CMD's entry of the usage text (its lines up to the next command's). 0 when CMD has one. */
static int command_help(const char *cmd)
{
    const size_t n = strlen(cmd);
    int printing = 0, found = 0;
    for (const char *line = usage_text; *line;) {
        const char *eol = strchr(line, '\n');
        const size_t len = eol ? (size_t)(eol - line + 1) : strlen(line);
        const int command_line = line[0] == ' ' && line[1] == ' ' && line[2] != ' ';
        if (command_line)
            printing = strncmp(line + 2, cmd, n) == 0 && (line[2 + n] == ' ' || line[2 + n] == '\n');
        else if (line[0] != ' ')
            printing = 0;
        if (printing) {
            if (!found)
                fputs("usage: hsdr", stdout);
            fwrite(line + (found ? 0 : 1), 1, len - (found ? 0 : 1), stdout);
            found = 1;
        }
        line += len;
    }
    return found ? 0 : -1;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand PATHs: files as given, directories into their *.json files (sorted). */
static int expand_paths(char **args, int nargs, char ***out, int *nout)
{
    char **list = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < nargs; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0) {
            fprintf(stderr, "hsdr check: %s: %s\n", args[i], strerror(errno));
            goto fail;
        }
        char **found = NULL;
        int nfound = 0;
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(args[i]);
            if (!d) {
                fprintf(stderr, "hsdr check: %s: %s\n", args[i], strerror(errno));
                goto fail;
            }
            struct dirent *de;
            while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".json"))
                    continue;
                char **g = realloc(found, sizeof(char *) * (size_t)(nfound + 1));
                size_t len = strlen(args[i]) + strlen(de->d_name) + 2;
                char *p = malloc(len);
                if (!g || !p) {
                    free(p);
                    free(g ? g : found);
                    closedir(d);
                    goto fail;
                }
                found = g;
                snprintf(p, len, "%s%s%s", args[i], has_suffix(args[i], "/") ? "" : "/", de->d_name);
                found[nfound++] = p;
            }
            closedir(d);
            if (nfound == 0) {
                fprintf(stderr, "hsdr check: %s: directory holds no *.json file\n", args[i]);
                free(found);
                goto fail;
            }
            qsort(found, (size_t)nfound, sizeof(char *), cmp_str);
        } else {
            found = malloc(sizeof(char *));
            if (!found || !(found[0] = strdup(args[i]))) {
                free(found);
                goto fail;
            }
            nfound = 1;
        }
        if (n + nfound > cap) {
            cap = (n + nfound) * 2;
            char **g = realloc(list, sizeof(char *) * (size_t)cap);
            if (!g) {
                for (int j = 0; j < nfound; j++)
                    free(found[j]);
                free(found);
                goto fail;
            }
            list = g;
        }
        for (int j = 0; j < nfound; j++)
            list[n++] = found[j];
        free(found);
    }
    *out = list;
    *nout = n;
    return 0;
fail:
    for (int j = 0; j < n; j++)
        free(list[j]);
    free(list);
    return -1;
}

static int cmd_check(int argc, char **argv)
{
    check_options opt = {0};
    char **paths = argv;
    int npaths = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 || strcmp(argv[i], "--variant") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hsdr check: %s needs a value\n", argv[i]);
                return HSDR_EXIT_USAGE;
            }
            if (argv[i][2] == 'b')
                opt.backend = argv[++i];
            else
                opt.variant = argv[++i];
        } else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            opt.verbose = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "hsdr check: unknown option '%s'\n", argv[i]);
            return HSDR_EXIT_USAGE;
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (npaths == 0) {
        fprintf(stderr, "hsdr check: give at least one vector file or directory\n");
        return HSDR_EXIT_USAGE;
    }
    if (hsdr_check_count_selected(&opt) == 0) {
        fprintf(stderr, "hsdr check: no variant matches%s%s%s%s (see `hsdr list`)\n", opt.backend ? " --backend " : "",
                opt.backend ? opt.backend : "", opt.variant ? " --variant " : "", opt.variant ? opt.variant : "");
        return HSDR_EXIT_USAGE;
    }
    char **files;
    int nfiles;
    if (expand_paths(paths, npaths, &files, &nfiles) != 0)
        return HSDR_EXIT_USAGE;
    /* Load and validate everything first: a malformed file stops the run before any case runs. */
    vec_file *loaded = calloc((size_t)nfiles, sizeof *loaded);
    int rc = HSDR_EXIT_USAGE, nloaded = 0;
    char err[1024];
    if (!loaded) {
        fprintf(stderr, "hsdr check: out of memory\n");
        goto out;
    }
    for (; nloaded < nfiles; nloaded++)
        if (vec_load(files[nloaded], &loaded[nloaded], err, sizeof err) != 0) {
            fprintf(stderr, "hsdr check: %s\n", err);
            goto out;
        }
    /* Case ids are unique across all files. */
    for (int a = 0; a < nfiles; a++)
        for (int b = a + 1; b < nfiles; b++)
            for (size_t i = 0; i < loaded[a].ncases; i++)
                for (size_t j = 0; j < loaded[b].ncases; j++)
                    if (strcmp(loaded[a].cases[i].id, loaded[b].cases[j].id) == 0) {
                        fprintf(stderr, "hsdr check: case id '%s' appears in both %s:%d and %s:%d\n",
                                loaded[a].cases[i].id, files[a], loaded[a].cases[i].line, files[b],
                                loaded[b].cases[j].line);
                        goto out;
                    }
    int runnable = 0;
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if ((opt.backend && strcmp(opt.backend, v->backend) != 0) ||
            (opt.variant && !hsdr_glob_match(opt.variant, v->name)))
            continue;
        const char *why = hsdr_variant_unavailable(v);
        if (why)
            printf("skip: variant %s unavailable here: %s\n", v->name, why);
        else
            runnable++;
    }
    if (runnable == 0) { /* asked for a backend or variants of which none can run: nothing was checked */
        fprintf(stderr, "hsdr check: none of the selected variants can run here (see the skip lines)\n");
        rc = HSDR_EXIT_FAIL;
        goto out;
    }
    check_totals totals = {0, 0};
    for (int i = 0; i < nfiles; i++)
        hsdr_check_file(&loaded[i], &opt, &totals, stdout);
    printf("%ld passed, %ld failed\n", totals.passed, totals.failed);
    rc = totals.failed ? HSDR_EXIT_FAIL : HSDR_EXIT_OK;
out:
    for (int i = 0; i < nloaded; i++)
        vec_free(&loaded[i]);
    free(loaded);
    for (int i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    return rc;
}

static void outputs_string(unsigned o, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{HSDR_OUT_CODEC, "codec"},   {HSDR_OUT_Y_EXACT, "y_exact"}, {HSDR_OUT_Y_Q8_0, "y_q8_0"},
                 {HSDR_OUT_Y_Q8_1, "y_q8_1"},  {HSDR_OUT_Y_LNS8, "y_lns8"},   {HSDR_OUT_A, "A"},
                 {HSDR_OUT_C, "C"},
                 {HSDR_OUT_Q1516, "q15_16"}, {HSDR_OUT_FLNS, "flns"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (o & names[i].bit) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? "," : "", names[i].name);
        }
}

static void stages_string(unsigned s, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < HSDR_STAGE_COUNT; i++)
        if (s & HSDR_STAGE_BIT(i)) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? "," : "", hsdr_stage_name((hsdr_stage)i));
        }
}

static int cmd_list(int argc, char **argv)
{
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else {
            fprintf(stderr, "hsdr list: unknown argument '%s'\n", argv[i]);
            return HSDR_EXIT_USAGE;
        }
    }
    char outs[128], stages[160];
    int w = (int)strlen("variant"); /* the name column fits the longest name */
    for (size_t i = 0; i < hsdr_registry_count; i++)
        if ((int)strlen(hsdr_registry[i].name) > w)
            w = (int)strlen(hsdr_registry[i].name);
    if (!json)
        printf("%-*s %-9s %-10s %-4s %-30s %s\n", w, "variant", "backend", "family", "prec", "outputs", "status / idea");
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        const char *why = hsdr_variant_unavailable(v);
        outputs_string(v->outputs, outs, sizeof outs);
        stages_string(v->stages, stages, sizeof stages);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", v->name);
            cJSON_AddStringToObject(o, "backend", v->backend);
            cJSON_AddStringToObject(o, "family", v->family);
            cJSON_AddStringToObject(o, "summary", v->summary);
            cJSON_AddStringToObject(o, "outputs", outs);
            cJSON_AddStringToObject(o, "stages", stages);
            cJSON_AddNumberToObject(o, "precision", v->precision);
            cJSON_AddBoolToObject(o, "available", why == NULL);
            if (why)
                cJSON_AddStringToObject(o, "unavailable_because", why);
            char *txt = cJSON_PrintUnformatted(o);
            printf("%s\n", txt ? txt : "{}");
            cJSON_free(txt);
            cJSON_Delete(o);
        } else {
            printf("%-*s %-9s %-10s fp%-2d %-30s %s%s\n", w, v->name, v->backend, v->family, v->precision, outs,
                   why ? "UNAVAILABLE: " : "", why ? why : v->summary);
            printf("%-*s   stages: %s\n", w, "", stages);
        }
    }
    return HSDR_EXIT_OK;
}

static int cmd_encode(int argc, char **argv)
{
    int automatic = 0;
    long e = 0;
    int first = 0;
    if (argc >= 2 && strcmp(argv[0], "--prescale") == 0) {
        if (strcmp(argv[1], "auto") == 0)
            automatic = 1;
        else if (hsdr_parse_long("--prescale", argv[1], -1000, 1000, &e) != 0)
            return HSDR_EXIT_USAGE;
        first = 2;
    }
    int n = argc - first;
    if (n <= 0) {
        fprintf(stderr, "hsdr encode: give values to encode\n");
        return HSDR_EXIT_USAGE;
    }
    float *x = malloc(sizeof(float) * (size_t)n);
    uint8_t *codes = malloc((size_t)n);
    int rc = HSDR_EXIT_USAGE;
    if (!x || !codes)
        goto out;
    for (int i = 0; i < n; i++) {
        char *end;
        const char *s = argv[first + i];
        x[i] = strtof(s, &end); /* accepts inf and nan spellings: NaN is refused below, by the encoder */
        if (end == s || *end != '\0') {
            fprintf(stderr, "hsdr encode: argument %d '%s' is not a number\n", i + 1, s);
            goto out;
        }
    }
    size_t bad = 0;
    int st = 0, ei = (int)e;
    if (automatic)
        st = hsdr_lns8_auto_prescale(x, (size_t)n, &ei, &bad);
    if (st == 0)
        st = hsdr_lns8_encode(x, (size_t)n, ei, codes, &bad);
    if (st != 0) {
        fprintf(stderr, "hsdr encode: value %zu ('%s'): %s\n", bad + 1, argv[first + bad], hsdr_lns8_strerror(st));
        goto out;
    }
    printf("prescale_e %d\n", ei);
    for (int i = 0; i < n; i++)
        printf("%-16.9g 0x%02x  k=%-3d %s decodes to %.9g\n", (double)x[i], codes[i], codes[i] & 0x7f,
               (codes[i] & 0x80) ? "-" : "+", ldexp(hsdr_lns8_decode(codes[i]), ei));
    rc = HSDR_EXIT_OK;
out:
    free(x);
    free(codes);
    return rc;
}

static int cmd_states(int argc, char **argv)
{
    states_options opt = {.K = 5120, .vectors = 64, .seed = 1, .json = 0};
    for (int i = 0; i < argc; i++) {
        long v;
        if (strcmp(argv[i], "--json") == 0) {
            opt.json = 1;
        } else if (i + 1 < argc && strcmp(argv[i], "--K") == 0) {
            if (hsdr_parse_long("--K", argv[++i], 1024, 1 << 20, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.K = (int)v;
        } else if (i + 1 < argc && strcmp(argv[i], "--vectors") == 0) {
            if (hsdr_parse_long("--vectors", argv[++i], 1, 1 << 20, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.vectors = (int)v;
        } else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0) {
            if (hsdr_parse_long("--seed", argv[++i], 0, 0x7fffffffL, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.seed = (uint64_t)v;
        } else {
            fprintf(stderr, "hsdr states: unknown or incomplete argument '%s'\n", argv[i]);
            return HSDR_EXIT_USAGE;
        }
    }
    return hsdr_states_run(&opt, stdout) == 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return HSDR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) && strcmp(cmd, "schema") != 0 &&
        command_help(cmd) == 0)
        return HSDR_EXIT_OK;
    hsdr_markers_init();
    atexit(hsdr_markers_close);
    if (strcmp(cmd, "run") == 0)
        return hsdr_cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "profile") == 0)
        return hsdr_cmd_profile(argc - 2, argv + 2);
    if (strcmp(cmd, "quality") == 0)
        return hsdr_cmd_quality(argc - 2, argv + 2);
    if (strcmp(cmd, "bandwidth") == 0)
        return hsdr_cmd_bandwidth(argc - 2, argv + 2);
    if (strcmp(cmd, "schema") == 0)
        return hsdr_cmd_schema(argc - 2, argv + 2);
    if (strcmp(cmd, "compare") == 0)
        return hsdr_cmd_compare(argc - 2, argv + 2);
    if (strcmp(cmd, "merge") == 0)
        return hsdr_cmd_merge(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "encode") == 0)
        return cmd_encode(argc - 2, argv + 2);
    if (strcmp(cmd, "states") == 0)
        return cmd_states(argc - 2, argv + 2);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return HSDR_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("hsdr %s\n", HSDR_VERSION);
        return HSDR_EXIT_OK;
    }
    fprintf(stderr, "hsdr: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return HSDR_EXIT_USAGE;
}
