/* The CLI's one table of commands (name, synopsis, description, options) and its conventions: every command's
 * options are read with glibc's getopt_long through hsdr_getopt, which answers -h / --help with the command's help
 * on stdout and an unknown option or a missing value with a message and the usage line on stderr. `hsdr --help`,
 * `hsdr CMD --help`, the README's command table (tests/cli_readme.sh) and the man page (help2man) all derive from
 * the table. Depends on nothing but libc. */
#ifndef HSDR_CLI_H
#define HSDR_CLI_H
#include <getopt.h>
#include <stdio.h>

typedef struct {
    const char *name;
    const char *synopsis;    /* after "hsdr ", one line */
    const char *description; /* lines of at most 110 characters, each ending in '\n' */
    const char *options;     /* "  --opt VALUE   meaning\n" lines; -h, --help is added */
} hsdr_command;

extern const hsdr_command hsdr_commands[];
extern const size_t hsdr_command_count;

/* The command named NAME, or NULL. */
const hsdr_command *hsdr_command_find(const char *name);
/* `hsdr --help`: every command's synopsis and description, the global options and the exit status. */
void hsdr_usage_overview(FILE *f);
/* `hsdr CMD --help`: "usage: hsdr SYNOPSIS", the description and the options. */
void hsdr_usage_command(const hsdr_command *c, FILE *f);
/* The version line of `hsdr --version`. */
const char *hsdr_version(void);

/* Every command's long options end with HSDR_OPTION_HELP and the zero entry; its optstring starts with ':' (or
 * "+:" to stop at the first operand) and holds 'h'. */
#define HSDR_OPTION_HELP {"help", no_argument, NULL, 'h'}
enum { HSDR_GETOPT_HELP = -2, HSDR_GETOPT_BAD = -3 };
/* One getopt_long step of command CMD (set optind = 0 before the first). Returns the option (its val), -1 after
 * the last; HSDR_GETOPT_HELP after printing CMD's help on stdout; HSDR_GETOPT_BAD after printing "hsdr CMD:
 * unknown option 'X'" or "hsdr CMD: X needs a value" and the usage line on stderr. */
int hsdr_getopt(const char *cmd, int argc, char **argv, const char *optstring, const struct option *longopts);
/* The exit status for a hsdr_getopt result that ends the command: 0 for help, 2 for a bad option. */
int hsdr_getopt_exit(int c);

#endif
