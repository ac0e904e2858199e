/* `hsdr profile`: its options (getopt_long, cli.h), then the profile (profile.h). Depends on cli.h, profile.h,
 * shapes.h (the model names), machine.h (--threads cores) and inputs.h (--dist). --model and --gguf exclude each
 * other; --tensors needs --gguf. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "inputs.h"
#include "machine.h"
#include "profile.h"
#include "shapes.h"
#include "util.h"

/* 0: options read; 1: --help printed; -1: a usage error (printed). */
static int parse(int argc, char **argv, hsdr_profile_options *o)
{
    static const struct option longopts[] = {{"model", required_argument, NULL, 'm'},
                                             {"gguf", required_argument, NULL, 'g'},
                                             {"tensors", required_argument, NULL, 'n'},
                                             {"variants", required_argument, NULL, 'V'},
                                             {"json", required_argument, NULL, 'j'},
                                             {"dist", required_argument, NULL, 'd'},
                                             {"tokens", required_argument, NULL, 'T'},
                                             {"layers", required_argument, NULL, 'l'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"no-head", no_argument, NULL, 'H'},
                                             {"split", required_argument, NULL, 'S'},
                                             {"hot", no_argument, NULL, 'C'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    *o = (hsdr_profile_options){
        .tokens = 128, .layers = 0, .threads = 1, .head = 1, .dist = HSDR_DIST_BONSAI, .seed = 1};
    optind = 0;
    for (int c; (c = hsdr_getopt("profile", argc, argv, ":h", longopts)) != -1;) {
        const char *v = optarg;
        if (c == 'H') {
            o->head = 0;
        } else if (c == 'C') {
            o->hot = 1;
        } else if (c == 'm') {
            o->model = v;
        } else if (c == 'g') {
            o->gguf = v;
        } else if (c == 'n') {
            o->tensors = v;
        } else if (c == 'V') {
            o->variants = v;
        } else if (c == 'j') {
            o->json_path = v;
        } else if (c == 'S') {
            if (strcmp(v, "all") != 0 && strcmp(v, "auto") != 0 && strcmp(v, "tune") != 0) {
                fprintf(stderr, "hsdr profile: --split '%s': expected all, auto or tune\n", v);
                return -1;
            }
            o->split = !strcmp(v, "auto") ? HSDR_SPLIT_AUTO : !strcmp(v, "tune") ? HSDR_SPLIT_TUNE : HSDR_SPLIT_ALL;
        } else if (c == 'd') {
            if (hsdr_dist_from_name(v, &o->dist) != 0) {
                fprintf(stderr, "hsdr profile: --dist '%s': unknown distribution\n", v);
                return -1;
            }
        } else if (c == 't' && strcmp(v, "cores") == 0) {
            o->threads = hsdr_machine_cores();
        } else if (c == 'T' || c == 'l' || c == 't' || c == 's') {
            const char *name = c == 'T' ? "--tokens" : c == 'l' ? "--layers" : c == 't' ? "--threads" : "--seed";
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 100000) {
                fprintf(stderr, "hsdr profile: %s '%s': expected an integer in 1..100000\n", name, v);
                return -1;
            }
            if (c == 'T')
                o->tokens = (int)n;
            else if (c == 'l')
                o->layers = (int)n;
            else if (c == 't')
                o->threads = (int)n;
            else
                o->seed = (uint64_t)n;
        } else {
            return c == HSDR_GETOPT_HELP ? 1 : -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr profile: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->model && o->gguf) {
        fprintf(stderr, "hsdr profile: give --model or --gguf, not both (the shapes come from one of them)\n");
        return -1;
    }
    if (o->tensors && !o->gguf) {
        fprintf(stderr, "hsdr profile: --tensors selects tensors of a --gguf file; no --gguf given\n");
        return -1;
    }
    if (!o->model && !o->gguf) {
        size_t n;
        const hsdr_model *ms = hsdr_models(&n);
        fprintf(stderr, "hsdr profile: --model is required (");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", ms[i].name);
        fprintf(stderr, "), or --gguf FILE\n");
        return -1;
    }
    return 0;
}

int hsdr_cmd_profile(int argc, char **argv)
{
    hsdr_profile_options o;
    const int parsed = parse(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
    return hsdr_profile(&o);
}
