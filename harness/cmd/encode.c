/* `hsdr encode`: its option (getopt_long, cli.h; negative operands are values, not options), then the LNS8 codes
 * of the values by the reference encoder (lns8.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "lns8.h"
#include "util.h"

/* 1 when s is a whole number as strtof reads it ("-3", "-inf"): an operand of encode, never an option. */
static int is_number(const char *s)
{
    char *end;
    (void)strtof(s, &end);
    return end != s && *end == '\0';
}

int hsdr_cmd_encode(int argc, char **argv)
{
    static const struct option longopts[] = {{"prescale", required_argument, NULL, 'p'}, HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    int automatic = 0;
    long e = 0;
    /* "+": the options come before the values, and a value that reads as a number ("-3") ends them ("--" too) */
    optind = 0;
    for (int c;;) {
        const int next = optind ? optind : 1;
        if (next < argc && is_number(argv[next])) {
            optind = next;
            break;
        }
        if ((c = hsdr_getopt("encode", argc, argv, "+:h", longopts)) == -1)
            break;
        if (c != 'p')
            return hsdr_getopt_exit(c);
        automatic = strcmp(optarg, "auto") == 0;
        if (!automatic && hsdr_parse_long("--prescale", optarg, -1000, 1000, &e) != 0)
            return HSDR_EXIT_USAGE;
    }
    const int first = optind;
    int n = argc - first;
    if (n <= 0) {
        fprintf(stderr, "hsdr encode: give values to encode\n");
        return HSDR_EXIT_USAGE;
    }
    float *x = malloc(sizeof(float) * (size_t)n);
    uint8_t *codes = malloc((size_t)n);
    int rc = HSDR_EXIT_USAGE;
    if (!x || !codes)
        goto out;
    for (int i = 0; i < n; i++) {
        char *end;
        const char *s = argv[first + i];
        x[i] = strtof(s, &end); /* accepts inf and nan spellings: NaN is refused below, by the encoder */
        if (end == s || *end != '\0') {
            fprintf(stderr, "hsdr encode: argument %d '%s' is not a number\n", i + 1, s);
            goto out;
        }
    }
    size_t bad = 0;
    int st = 0, ei = (int)e;
    if (automatic)
        st = hsdr_lns8_auto_prescale(x, (size_t)n, &ei, &bad);
    if (st == 0)
        st = hsdr_lns8_encode(x, (size_t)n, ei, codes, &bad);
    if (st != 0) {
        fprintf(stderr, "hsdr encode: value %zu ('%s'): %s\n", bad + 1, argv[first + bad], hsdr_lns8_strerror(st));
        goto out;
    }
    printf("prescale_e %d\n", ei);
    for (int i = 0; i < n; i++)
        printf("%-16.9g 0x%02x  k=%-3d %s decodes to %.9g\n", (double)x[i], codes[i], codes[i] & 0x7f,
               (codes[i] & 0x80) ? "-" : "+", ldexp(hsdr_lns8_decode(codes[i]), ei));
    rc = HSDR_EXIT_OK;
out:
    free(x);
    free(codes);
    return rc;
}

