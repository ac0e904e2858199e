/* `hsdr merge`: its options (getopt_long, cli.h), then the merge (merge.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "merge.h"
#include "util.h"

static void merge_usage(void)
{
    fprintf(stderr, "usage: hsdr %s\n", hsdr_command_find("merge")->synopsis);
}

int hsdr_cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {{"base", required_argument, NULL, 'b'}, HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    const char *base = "results";
    optind = 0;
    for (int c; (c = hsdr_getopt("merge", argc, argv, ":h", longopts)) != -1;) {
        if (c != 'b')
            return hsdr_getopt_exit(c);
        if (!optarg[0] || strchr(optarg, '/')) {
            fprintf(stderr, "hsdr merge: --base needs a file name without '/'\n");
            return HSDR_EXIT_USAGE;
        }
        base = optarg;
    }
    if (argc - optind < 2) {
        fprintf(stderr, "hsdr merge: give an output directory and at least one input file\n");
        merge_usage();
        return HSDR_EXIT_USAGE;
    }
    return hsdr_merge(argv[optind], base, argv + optind + 1, argc - optind - 1);
}
