/* `hsdr help [COMMAND]`: the overview, or one command's help, from the table of cli.h. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "util.h"

int hsdr_cmd_help(int argc, char **argv)
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

