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
#include "cli.h"
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
    static const struct option longopts[] = {{"backend", required_argument, NULL, 'b'},
                                             {"variant", required_argument, NULL, 'V'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    check_options opt = {0};
    optind = 0;
    for (int c; (c = hsdr_getopt("check", argc, argv, ":hv", longopts)) != -1;) {
        if (c == 'b')
            opt.backend = optarg;
        else if (c == 'V')
            opt.variant = optarg;
        else if (c == 'v')
            opt.verbose = 1;
        else
            return hsdr_getopt_exit(c);
    }
    char **paths = argv + optind;
    const int npaths = argc - optind;
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
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'}, HSDR_OPTION_HELP, {NULL, 0, NULL, 0}};
    int json = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("list", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'j')
            json = 1;
        else
            return hsdr_getopt_exit(c);
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr list: unexpected argument '%s'\n", argv[optind]);
        return HSDR_EXIT_USAGE;
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

/* 1 when s is a whole number as strtof reads it ("-3", "-inf"): an operand of encode, never an option. */
static int is_number(const char *s)
{
    char *end;
    (void)strtof(s, &end);
    return end != s && *end == '\0';
}

static int cmd_encode(int argc, char **argv)
{
    static const struct option longopts[] = {{"prescale", required_argument, NULL, 'p'}, HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    int automatic = 0;
    long e = 0;
    /* "+": the options come before the values, and a value that reads as a number ("-3") ends them ("--" too) */
    optind = 0;
    for (int c;;) {
        const int next = optind ? optind : 1;
        if (next < argc && is_number(argv[next])) {
            optind = next;
            break;
        }
        if ((c = hsdr_getopt("encode", argc, argv, "+:h", longopts)) == -1)
            break;
        if (c != 'p')
            return hsdr_getopt_exit(c);
        automatic = strcmp(optarg, "auto") == 0;
        if (!automatic && hsdr_parse_long("--prescale", optarg, -1000, 1000, &e) != 0)
            return HSDR_EXIT_USAGE;
    }
    const int first = optind;
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
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"K", required_argument, NULL, 'K'},
                                             {"vectors", required_argument, NULL, 'n'},
                                             {"seed", required_argument, NULL, 's'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    states_options opt = {.K = 5120, .vectors = 64, .seed = 1, .json = 0};
    optind = 0;
    for (int c; (c = hsdr_getopt("states", argc, argv, ":h", longopts)) != -1;) {
        long v;
        if (c == 'j') {
            opt.json = 1;
        } else if (c == 'K') {
            if (hsdr_parse_long("--K", optarg, 1024, 1 << 20, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.K = (int)v;
        } else if (c == 'n') {
            if (hsdr_parse_long("--vectors", optarg, 1, 1 << 20, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.vectors = (int)v;
        } else if (c == 's') {
            if (hsdr_parse_long("--seed", optarg, 0, 0x7fffffffL, &v) != 0)
                return HSDR_EXIT_USAGE;
            opt.seed = (uint64_t)v;
        } else {
            return hsdr_getopt_exit(c);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr states: unexpected argument '%s'\n", argv[optind]);
        return HSDR_EXIT_USAGE;
    }
    return hsdr_states_run(&opt, stdout) == 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
    static const struct option longopts[] = {HSDR_OPTION_HELP, {NULL, 0, NULL, 0}};
    optind = 0;
    for (int c; (c = hsdr_getopt("help", argc, argv, ":h", longopts)) != -1;)
        return hsdr_getopt_exit(c);
    if (optind == argc) {
        hsdr_usage_overview(stdout);
        return HSDR_EXIT_OK;
    }
    const hsdr_command *c = optind + 1 == argc ? hsdr_command_find(argv[optind]) : NULL;
    if (!c) {
        if (optind + 1 == argc)
            fprintf(stderr, "hsdr help: unknown command '%s'\n", argv[optind]);
        else
            fprintf(stderr, "hsdr help: give one command (a second: '%s')\n", argv[optind + 1]);
        fprintf(stderr, "usage: hsdr %s\n", hsdr_command_find("help")->synopsis);
        return HSDR_EXIT_USAGE;
    }
    hsdr_usage_command(c, stdout);
    return HSDR_EXIT_OK;
}

/* The command of each name of the table in cli.c (a name without a function here fails the test cli.help_all). */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", hsdr_cmd_run},         {"profile", hsdr_cmd_profile}, {"quality", hsdr_cmd_quality},
    {"bandwidth", hsdr_cmd_bandwidth}, {"schema", hsdr_cmd_schema}, {"compare", hsdr_cmd_compare},
    {"merge", hsdr_cmd_merge},     {"check", cmd_check},          {"list", cmd_list},
    {"encode", cmd_encode},        {"states", cmd_states},        {"help", cmd_help},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        hsdr_usage_overview(stderr);
        return HSDR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        hsdr_usage_overview(stdout);
        return HSDR_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("%s\n", hsdr_version());
        return HSDR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            hsdr_markers_init();
            atexit(hsdr_markers_close);
            /* argv[1] is the command: getopt_long reads argv[1..] and names the program in no message */
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "hsdr: unknown %s '%s'\n\n", cmd[0] == '-' ? "option" : "command", cmd);
    hsdr_usage_overview(stderr);
    return HSDR_EXIT_USAGE;
}
