/* `hsdr schema`: its option (getopt_long, cli.h), then the table in that form (schema.h). */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "schema.h"
#include "util.h"

int hsdr_cmd_schema(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"markdown", no_argument, NULL, 'm'},
                                             {"csv", no_argument, NULL, 'c'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    const char *how = "";
    optind = 0;
    for (int c; (c = hsdr_getopt("schema", argc, argv, ":h", longopts)) != -1;) {
        if (c != 'j' && c != 'm' && c != 'c')
            return hsdr_getopt_exit(c);
        if (how[0]) {
            fprintf(stderr, "hsdr schema: give one of --json, --markdown, --csv (a second: '%s')\n", argv[optind - 1]);
            fprintf(stderr, "usage: hsdr %s\n", hsdr_command_find("schema")->synopsis);
            return HSDR_EXIT_USAGE;
        }
        how = c == 'j' ? "--json" : c == 'm' ? "--markdown" : "--csv";
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr schema: unexpected argument '%s'\n", argv[optind]);
        return HSDR_EXIT_USAGE;
    }
    return hsdr_schema_print(how);
}
