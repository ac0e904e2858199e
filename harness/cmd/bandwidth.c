/* `hsdr bandwidth`: its options (getopt_long, cli.h), then the measurements (bandwidth.h). */
#include <stdio.h>

#include "bandwidth.h"
#include "cli.h"
#include "commands.h"
#include "handoff.h"
#include "util.h"

int hsdr_cmd_bandwidth(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"sizes", required_argument, NULL, 's'},
                                             {"mode", required_argument, NULL, 'm'},
                                             {"backend", required_argument, NULL, 'b'},
                                             {"handoff", no_argument, NULL, 'o'},
                                             HSDR_OPTION_HELP,
                                             {NULL, 0, NULL, 0}};
    hsdr_bandwidth_options o = {0};
    int handoff = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("bandwidth", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'j')
            o.json = 1;
        else if (c == 't')
            o.threads = optarg;
        else if (c == 's')
            o.sizes = optarg;
        else if (c == 'm')
            o.mode = optarg;
        else if (c == 'b')
            o.backend = optarg;
        else if (c == 'o')
            handoff = 1;
        else
            return hsdr_getopt_exit(c);
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr bandwidth: unexpected argument '%s'\nusage: hsdr %s\n", argv[optind],
                hsdr_command_find("bandwidth")->synopsis);
        return HSDR_EXIT_USAGE;
    }
    if (!handoff)
        return hsdr_bandwidth_report(&o);
    if (o.backend || o.sizes || o.mode) { /* the host's thread pool: only the thread counts and the format vary */
        fprintf(stderr, "hsdr bandwidth: --handoff measures the host's thread pool: it takes --threads and --json "
                "only, not %s\nusage: hsdr %s\n", o.backend ? "--backend" : o.sizes ? "--sizes" : "--mode",
                hsdr_command_find("bandwidth")->synopsis);
        return HSDR_EXIT_USAGE;
    }
    int threads[64], n = hsdr_bandwidth_threads(o.threads, threads);
    return n < 0 ? HSDR_EXIT_USAGE : hsdr_handoff_report(threads, n, o.json);
}
