/* `hsdr check`: run every applicable (case, implementation) pair of loaded vector files and compare.
 * Implementations are the registry's variants (restricted by backend / name glob). */
#ifndef HSDR_CHECK_H
#define HSDR_CHECK_H
#include <stdio.h>

#include "vectors.h"

typedef struct {
    const char *backend; /* NULL: all */
    const char *variant; /* glob, NULL: all */
    int verbose;         /* also print passing pairs */
} check_options;

typedef struct {
    long passed, failed;
} check_totals;

/* Number of registry variants selected by the options (0 means the filters match nothing). */
int hsdr_check_count_selected(const check_options *opt);
/* Checks one file, printing one line per failing pair to out; accumulates into totals. */
void hsdr_check_file(const vec_file *f, const check_options *opt, check_totals *totals, FILE *out);

/* `hsdr check`'s work (harness/cmd/check.c reads the options): the PATHs (files, and directories: their *.json
 * files, sorted) loaded and validated first, case ids unique across them, then every selected variant on every case;
 * "N passed, M failed" on stdout. Exit 0, 1 when a pair failed or no selected variant can run here, 2 on a
 * malformed or unreadable file. */
int hsdr_check_paths(const check_options *o, char *const *paths, int npaths);

#endif
