/* `hsdr check`: its options (getopt_long, cli.h), then the check of the vector files (check.h). */
#include <stdio.h>

#include "check.h"
#include "cli.h"
#include "commands.h"
#include "util.h"

int hsdr_cmd_check(int argc, char **argv)
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
    if (optind == argc) {
        fprintf(stderr, "hsdr check: give at least one vector file or directory\n");
        return HSDR_EXIT_USAGE;
    }
    if (hsdr_check_count_selected(&opt) == 0) {
        fprintf(stderr, "hsdr check: no variant matches%s%s%s%s (see `hsdr list`)\n", opt.backend ? " --backend " : "",
                opt.backend ? opt.backend : "", opt.variant ? " --variant " : "", opt.variant ? opt.variant : "");
        return HSDR_EXIT_USAGE;
    }
    return hsdr_check_paths(&opt, argv + optind, argc - optind);
}
