/* `hsdr inspect`: its option (getopt_long, cli.h), then the summary of one GGUF file (inspect.h). */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "inspect.h"
#include "util.h"

int hsdr_cmd_inspect(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'}, HSDR_OPTION_HELP, {NULL, 0, NULL, 0}};
    int json = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("inspect", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'j')
            json = 1;
        else
            return hsdr_getopt_exit(c);
    }
    if (optind != argc - 1) {
        fprintf(stderr, "hsdr inspect: %s\nusage: hsdr %s\n", optind < argc ? "give one file" : "give a GGUF file",
                hsdr_command_find("inspect")->synopsis);
        return HSDR_EXIT_USAGE;
    }
    return hsdr_inspect_run(argv[optind], json, stdout);
}
