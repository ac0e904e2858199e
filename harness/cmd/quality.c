/* `hsdr quality`: its options (getopt_long, cli.h), then the study (quality.h): synthetic, or --gguf (real
 * weights). Depends on cli.h, quality.h and machine.h (the default thread count). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "machine.h"
#include "quality.h"
#include "util.h"

/* 0: options read; 1: --help printed; -1: a usage error (printed). */
static int parse(int argc, char **argv, hsdr_quality_options *o)
{
    static const struct option longopts[] = {{"model", required_argument, NULL, 'm'},
                                             {"variants", required_argument, NULL, 'V'},
                                             {"json", required_argument, NULL, 'j'},
                                             {"flns", required_argument, NULL, 'F'},
                                             {"layers", required_argument, NULL, 'l'},
                                             {"seeds", required_argument, NULL, 'S'},
                                             {"tokens", required_argument, NULL, 'T'},
                                             {"vocab", required_argument, NULL, 'v'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"gguf", required_argument, NULL, 'g'},
                                             {"activations", required_argument, NULL, 'a'},
                                             {"tensors", required_argument, NULL, 'G'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    *o = (hsdr_quality_options){.model = "bonsai2-27b", .layers = 2, .seeds = 4, .tokens = 2, .vocab = 0,
                           .threads = hsdr_machine_cores(), .F = 8, .b = 12, .seed = 1};
    optind = 0;
    for (int c; (c = hsdr_getopt("quality", argc, argv, ":h", longopts)) != -1;) {
        const char *v = optarg;
        long n = 0;
        if (c == 'm') {
            o->model = v;
        } else if (c == 'g') {
            o->gguf = v;
        } else if (c == 'a') {
            o->activations = v;
        } else if (c == 'G') {
            o->tensors = v;
        } else if (c == 'V') {
            o->variants = v;
        } else if (c == 'j') {
            o->json_path = v;
        } else if (c == 'F') {
            int F, b, used = 0;
            if (sscanf(v, "%d,%d%n", &F, &b, &used) != 2 || v[used] || F < 0 || F > 16 || b < 1 || b > 30) {
                fprintf(stderr, "hsdr quality: --flns '%s': expected F,b (F in 0..16, b in 1..30)\n", v);
                return -1;
            }
            o->F = F, o->b = b;
        } else if (c == 'l') {
            if (hsdr_parse_long("--layers", v, 1, 64, &n) != 0)
                return -1;
            o->layers = (int)n;
        } else if (c == 'S') {
            if (hsdr_parse_long("--seeds", v, 1, 10000, &n) != 0)
                return -1;
            o->seeds = (int)n;
        } else if (c == 'T') {
            if (hsdr_parse_long("--tokens", v, 1, 10000, &n) != 0)
                return -1;
            o->tokens = (int)n;
        } else if (c == 'v') {
            if (hsdr_parse_long("--vocab", v, 2, 1 << 24, &n) != 0)
                return -1;
            o->vocab = (int)n;
        } else if (c == 't') {
            if (hsdr_parse_long("--threads", v, 1, 1024, &n) != 0)
                return -1;
            o->threads = (int)n;
        } else if (c == 's') {
            if (hsdr_parse_long("--seed", v, 0, 0x7fffffffL, &n) != 0)
                return -1;
            o->seed = (uint64_t)n;
        } else {
            return c == HSDR_GETOPT_HELP ? 1 : -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr quality: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (!o->gguf && (o->activations || o->tensors)) {
        fprintf(stderr, "hsdr quality: --activations and --tensors need --gguf FILE (the weights they feed)\n");
        return -1;
    }
    return 0;
}

int hsdr_cmd_quality(int argc, char **argv)
{
    hsdr_quality_options o;
    const int parsed = parse(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
    return o.gguf ? hsdr_quality_real(&o) : hsdr_quality(&o);
}
