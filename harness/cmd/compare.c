/* `hsdr compare`: its options (getopt_long, cli.h), then the report (compare.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "util.h"

static int parse_fraction(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(v > 0.0 && v < 1.0)) {
        fprintf(stderr, "hsdr compare: %s: '%s' is not a number in (0, 1)\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static void compare_usage(void)
{
    fprintf(stderr, "usage: hsdr %s\n", hsdr_command_find("compare")->synopsis);
}

int hsdr_cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {{"threshold", required_argument, NULL, 't'},
                                             {"confidence", required_argument, NULL, 'c'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"raw", no_argument, NULL, 'r'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    double threshold = HSDR_COMPARE_THRESHOLD, confidence = 0.95;
    int json = 0, raw = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("compare", argc, argv, ":h", longopts)) != -1;) {
        if (c == 't' || c == 'c') {
            if (parse_fraction(c == 't' ? "--threshold" : "--confidence", optarg,
                               c == 't' ? &threshold : &confidence) != 0)
                return HSDR_EXIT_USAGE;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'r') {
            raw = 1;
        } else {
            return hsdr_getopt_exit(c);
        }
    }
    const int npaths = argc - optind;
    if (npaths > 2) {
        fprintf(stderr, "hsdr compare: give exactly two result files (a third: '%s')\n", argv[optind + 2]);
        compare_usage();
        return HSDR_EXIT_USAGE;
    }
    if (npaths != 2) {
        fprintf(stderr, "hsdr compare: give exactly two result files, A and B\n");
        compare_usage();
        return HSDR_EXIT_USAGE;
    }
    return hsdr_compare_report(argv[optind], argv[optind + 1], threshold, confidence, raw, json);
}
