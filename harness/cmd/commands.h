/* The commands of `hsdr` (harness/main.c dispatches argv[1] to them), one file each in harness/cmd/: each reads its
 * options with getopt_long (cli.h; argv[0] is the command's name) and calls the blocks of harness/ below it. Each
 * returns the exit status. Blocks never include this header. */
#ifndef HSDR_CMD_COMMANDS_H
#define HSDR_CMD_COMMANDS_H

int hsdr_cmd_run(int argc, char **argv);
int hsdr_cmd_profile(int argc, char **argv);
int hsdr_cmd_quality(int argc, char **argv);
int hsdr_cmd_bandwidth(int argc, char **argv);
int hsdr_cmd_compare(int argc, char **argv);
int hsdr_cmd_schema(int argc, char **argv);
int hsdr_cmd_merge(int argc, char **argv);
int hsdr_cmd_check(int argc, char **argv);
int hsdr_cmd_list(int argc, char **argv);
int hsdr_cmd_encode(int argc, char **argv);
int hsdr_cmd_states(int argc, char **argv);
int hsdr_cmd_inspect(int argc, char **argv);
int hsdr_cmd_help(int argc, char **argv);

#endif
