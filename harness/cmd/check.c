/* `hsdr check`: its options (getopt_long, cli.h), then the check of the vector files (check.h) or, with --gguf, of
 * a model file's real weights (check_gguf.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "check_gguf.h"
#include "cli.h"
#include "commands.h"
#include "util.h"

int hsdr_cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {{"backend", required_argument, NULL, 'b'},
                                             {"variant", required_argument, NULL, 'V'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"gguf", required_argument, NULL, 'g'},
                                             {"tensors", required_argument, NULL, 'T'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"dist", required_argument, NULL, 'd'},
                                             {"rows", required_argument, NULL, 'r'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    check_options opt = {0};
    check_gguf_options g = {.dist = HSDR_DIST_GAUSSIAN};
    const char *gguf_only = NULL; /* an option that needs --gguf */
    int have_seed = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("check", argc, argv, ":hv", longopts)) != -1;) {
        long v;
        if (c == 'b') {
            opt.backend = optarg;
        } else if (c == 'V') {
            opt.variant = optarg;
        } else if (c == 'v') {
            opt.verbose = 1;
        } else if (c == 'g') {
            g.path = optarg;
        } else if (c == 'T') {
            g.globs = optarg;
            gguf_only = "--tensors";
        } else if (c == 's') {
            char *end;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (!optarg[0] || *end || optarg[0] == '-' || s >= 1ULL << 53) {
                fprintf(stderr, "hsdr check: --seed '%s': expected an integer in 0..2^53-1\n", optarg);
                return HSDR_EXIT_USAGE;
            }
            g.seed = s;
            have_seed = 1;
            gguf_only = "--seed";
        } else if (c == 'd') {
            if (hsdr_dist_from_name(optarg, &g.dist) != 0) {
                fprintf(stderr, "hsdr check: --dist '%s': expected gaussian, laplace, student-t3 or bonsai\n", optarg);
                return HSDR_EXIT_USAGE;
            }
            gguf_only = "--dist";
        } else if (c == 'r') {
            if (hsdr_parse_long("--rows", optarg, 1, 1L << 30, &v) != 0)
                return HSDR_EXIT_USAGE;
            g.rows = (int)v;
            gguf_only = "--rows";
        } else {
            return hsdr_getopt_exit(c);
        }
    }
    if (gguf_only && !g.path) {
        fprintf(stderr, "hsdr check: %s applies to --gguf FILE only\n", gguf_only);
        return HSDR_EXIT_USAGE;
    }
    if (g.path && optind < argc) {
        fprintf(stderr, "hsdr check: --gguf checks the model file; give vector files ('%s') in another call\n",
                argv[optind]);
        return HSDR_EXIT_USAGE;
    }
    if (!g.path && optind == argc) {
        fprintf(stderr, "hsdr check: give at least one vector file or directory, or --gguf FILE\n");
        return HSDR_EXIT_USAGE;
    }
    if (hsdr_check_count_selected(&opt) == 0) {
        fprintf(stderr, "hsdr check: no variant matches%s%s%s%s (see `hsdr list`)\n", opt.backend ? " --backend " : "",
                opt.backend ? opt.backend : "", opt.variant ? " --variant " : "", opt.variant ? opt.variant : "");
        return HSDR_EXIT_USAGE;
    }
    if (g.path) {
        if (!have_seed) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            g.seed = ((uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec) & ((1ULL << 53) - 1);
        }
        return hsdr_check_gguf(&opt, &g, stdout);
    }
    return hsdr_check_paths(&opt, argv + optind, argc - optind);
}
