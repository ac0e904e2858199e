/* `hsdr states`: its options (getopt_long, cli.h), then the summary (states.h): synthetic, or --activations. */
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "states.h"
#include "util.h"

int hsdr_cmd_states(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"K", required_argument, NULL, 'K'},
                                             {"vectors", required_argument, NULL, 'n'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"activations", required_argument, NULL, 'a'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    states_options opt = {.K = 5120, .vectors = 64, .seed = 1, .json = 0};
    optind = 0;
    for (int c; (c = hsdr_getopt("states", argc, argv, ":h", longopts)) != -1;) {
        long v;
        if (c == 'a') {
            opt.activations = optarg;
        } else if (c == 'j') {
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
    if (opt.activations)
        return hsdr_states_real_run(&opt, stdout);
    return hsdr_states_run(&opt, stdout) == 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
}

