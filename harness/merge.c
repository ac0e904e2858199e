/* `hsdr merge`: union of result files, duplicate keys refused unless identical, sorted by key; the break-even fits
 * of the joined rows beside them. */
#include "merge.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakeven.h"
#include "results.h"
#include "util.h"

typedef struct {
    cJSON *row;
    const char *key;
    const char *path; /* the input file and line it came from */
    size_t line;
    size_t order; /* position over all inputs: ties sort by input order */
} merge_row;

static int cmp_merge_row(const void *pa, const void *pb)
{
    const merge_row *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* 1 when both rows print to the same bytes, 0 when not, -1 when out of memory. */
static int identical_rows(const cJSON *a, const cJSON *b)
{
    char *ta = hsdr_results_print(a), *tb = hsdr_results_print(b);
    int same = ta && tb ? strcmp(ta, tb) == 0 : -1;
    free(ta);
    free(tb);
    return same;
}

/* DIR/breakeven.json beside DIR/results.jsonl, fitted from the merged rows as `hsdr run` fits its own (the shards of
 * an R sweep only give the whole fit together); with rows of an interrupted run among them, none: an old file there
 * is removed, as `hsdr run` does when interrupted. 0, or -1 after a message. */
static int write_fits(const char *out_dir, cJSON *const *rows, size_t n, int partial)
{
    char err[1200];
    if (partial) {
        if (hsdr_breakeven_remove(out_dir, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr merge: %s\n", err);
            return -1;
        }
        printf("no breakeven.json: a fit over part of an R sweep would be a wrong fit\n");
        return 0;
    }
    cJSON *fits = hsdr_breakeven_fit(rows, n);
    int rc = fits ? hsdr_breakeven_write(out_dir, fits, err, sizeof err) : -1;
    if (rc != 0)
        fprintf(stderr, "hsdr merge: %s\n", fits ? err : "out of memory");
    else
        printf("and %s/breakeven.json (%d state-set fit%s)\n", out_dir, cJSON_GetArraySize(fits),
               cJSON_GetArraySize(fits) == 1 ? "" : "s");
    cJSON_Delete(fits);
    return rc;
}

int hsdr_merge(const char *out_dir, const char *base, char *const *inputs, int ninputs)
{
    int rc = HSDR_EXIT_USAGE;
    char err[1024];
    cJSON ***file_rows = calloc((size_t)ninputs, sizeof *file_rows);
    size_t **file_lines = calloc((size_t)ninputs, sizeof *file_lines);
    size_t *file_n = calloc((size_t)ninputs, sizeof *file_n);
    merge_row *all = NULL;
    cJSON **kept = NULL;
    size_t total = 0, nkept = 0, dropped = 0;
    int partial = 0; /* an input holds rows of an interrupted run */
    if (!file_rows || !file_lines || !file_n)
        goto out;
    for (int f = 0; f < ninputs; f++) {
        if (hsdr_results_read_lines(inputs[f], &file_rows[f], &file_lines[f], &file_n[f], err, sizeof err) != 0) {
            fprintf(stderr, "hsdr merge: %s\n", err);
            goto out;
        }
        total += file_n[f];
        size_t at;
        const cJSON *mark = hsdr_results_partial_marker(file_rows[f], file_n[f], &at);
        if (mark) {
            partial = 1;
            char what[160];
            hsdr_results_partial_describe(mark, what, sizeof what);
            fprintf(stderr,
                    "hsdr merge: note: %s:%zu: rows of an interrupted run (%s): they keep their \"partial\" mark "
                    "(complete that run with `hsdr run ... --resume`, then merge again)\n",
                    inputs[f], file_lines[f][at], what);
        }
    }
    all = malloc((total ? total : 1) * sizeof *all);
    kept = malloc((total ? total : 1) * sizeof *kept);
    if (!all || !kept) {
        fprintf(stderr, "hsdr merge: out of memory\n");
        goto out;
    }
    size_t k = 0;
    for (int f = 0; f < ninputs; f++)
        for (size_t i = 0; i < file_n[f]; i++, k++) {
            all[k].row = file_rows[f][i];
            all[k].key = cJSON_GetObjectItemCaseSensitive(all[k].row, "key")->valuestring;
            all[k].path = inputs[f];
            all[k].line = file_lines[f][i];
            all[k].order = k;
        }
    qsort(all, total, sizeof *all, cmp_merge_row);
    long conflicts = 0;
    size_t first = 0; /* the first row of the current key: the one kept */
    for (size_t i = 0; i < total; i++) {
        if (i == 0 || strcmp(all[i].key, all[first].key) != 0) {
            first = i;
            kept[nkept++] = all[i].row;
            continue;
        }
        int same = identical_rows(all[first].row, all[i].row);
        if (same < 0) {
            fprintf(stderr, "hsdr merge: out of memory\n");
            goto out;
        }
        if (same)
            dropped++;
        else if (conflicts++ < 20)
            fprintf(stderr, "hsdr merge: key '%s' differs between %s:%zu and %s:%zu\n", all[i].key, all[first].path,
                    all[first].line, all[i].path, all[i].line);
    }
    if (conflicts) {
        fprintf(stderr, "hsdr merge: %ld conflicting row%s: nothing written\n", conflicts, conflicts == 1 ? "" : "s");
        goto out;
    }
    if (hsdr_results_write(out_dir, base, kept, nkept, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr merge: %s\n", err);
        goto out;
    }
    printf("merged %zu row%s from %d file%s (%zu identical repeat%s dropped) into %s/%s.jsonl and %s/%s.csv\n", nkept,
           nkept == 1 ? "" : "s", ninputs, ninputs == 1 ? "" : "s", dropped, dropped == 1 ? "" : "s", out_dir, base,
           out_dir, base);
    if (strcmp(base, "results") == 0 && write_fits(out_dir, kept, nkept, partial) != 0)
        goto out;
    rc = HSDR_EXIT_OK;
out:
    for (int f = 0; f < ninputs && file_rows && file_lines && file_n; f++) {
        hsdr_results_free(file_rows[f], file_n[f]);
        free(file_lines[f]);
    }
    free(file_rows);
    free(file_lines);
    free(file_n);
    free(all);
    free(kept);
    return rc;
}
