/* hsdr: the command-line entry of hsdr-bench: the global options, then the command of argv[1] (harness/cmd/, one
 * file each). Exit codes: 0 success, 1 a check failed, 2 bad usage or bad input; `hsdr run` stopped by SIGINT /
 * SIGTERM: 128 + the signal (130, 143). Depends on cmd/commands.h, cli.h (the table of commands), markers.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd/commands.h"
#include "markers.h"
#include "util.h"

/* The command of each name of the table in cli.c (a name without a function here fails the test cli.help_all). */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", hsdr_cmd_run},       {"profile", hsdr_cmd_profile},     {"quality", hsdr_cmd_quality},
    {"bandwidth", hsdr_cmd_bandwidth}, {"schema", hsdr_cmd_schema}, {"compare", hsdr_cmd_compare},
    {"merge", hsdr_cmd_merge},   {"check", hsdr_cmd_check},         {"list", hsdr_cmd_list},
    {"encode", hsdr_cmd_encode}, {"states", hsdr_cmd_states},       {"inspect", hsdr_cmd_inspect},
    {"help", hsdr_cmd_help},
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
