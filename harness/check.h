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

#endif
