/* Result files: rows of every field type round-trip through hsdr_results_write / hsdr_results_read; the CSV mirror
 * has the documented columns, empty cells for absent values, RFC 4180 quoting and exact numbers; no temporary file is
 * left; the progress file and the journal of a resumed run; the reader's errors name file:line. Fresh random rows
 * under a printed seed. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel.h"
#include "results.h"
#include "schema.h"
#include "rng.h"
#include "testing.h"
#include "util.h"

static char tmp_root[256];

/* ---- a small RFC 4180 reader for the checks ---- */
typedef struct {
    char ***cells; /* rows of cells */
    size_t *ncells;
    size_t nrows;
} csv_table;

static void csv_free(csv_table *t)
{
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncells[r]; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
    free(t->ncells);
    memset(t, 0, sizeof *t);
}

static void csv_push_cell(csv_table *t, const char *buf, size_t len)
{
    size_t r = t->nrows - 1;
    t->cells[r] = realloc(t->cells[r], (t->ncells[r] + 1) * sizeof(char *));
    char *cell = malloc(len + 1);
    memcpy(cell, buf, len);
    cell[len] = '\0';
    t->cells[r][t->ncells[r]++] = cell;
}

static void csv_new_row(csv_table *t)
{
    t->cells = realloc(t->cells, (t->nrows + 1) * sizeof *t->cells);
    t->ncells = realloc(t->ncells, (t->nrows + 1) * sizeof *t->ncells);
    t->cells[t->nrows] = NULL;
    t->ncells[t->nrows++] = 0;
}

/* Returns 0, or -1 on a malformed quote. Every record ends with '\n'. */
static int csv_parse(const char *s, csv_table *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = strlen(s) + 1, len = 0;
    char *buf = malloc(cap);
    int at_record_start = 1;
    while (*s) {
        if (at_record_start) {
            csv_new_row(t);
            at_record_start = 0;
        }
        len = 0;
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s) {
                    free(buf);
                    return -1;
                }
                if (*s == '"' && s[1] == '"') {
                    buf[len++] = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    buf[len++] = *s++;
                }
            }
            if (*s != ',' && *s != '\n') {
                free(buf);
                return -1;
            }
        } else {
            while (*s && *s != ',' && *s != '\n') {
                if (*s == '"') {
                    free(buf);
                    return -1; /* a quote inside an unquoted cell */
                }
                buf[len++] = *s++;
            }
        }
        csv_push_cell(t, buf, len);
        if (*s == '\n')
            at_record_start = 1;
        if (*s)
            s++;
    }
    free(buf);
    return 0;
}

static const char *csv_cell(const csv_table *t, size_t row, const char *column)
{
    for (size_t c = 0; c < t->ncells[0]; c++)
        if (strcmp(t->cells[0][c], column) == 0)
            return c < t->ncells[row] ? t->cells[row][c] : NULL;
    return NULL;
}

/* ---- helpers ---- */
static char *path_in(const char *dir, const char *name)
{
    static char buf[4][1024];
    static int which;
    char *p = buf[which++ & 3];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* body with every '@' replaced by row */
static void expand(char *out, size_t n, const char *body, const char *row)
{
    size_t len = 0, rl = strlen(row);
    for (; *body && len + rl + 1 < n; body++) {
        if (*body == '@') {
            memcpy(out + len, row, rl);
            len += rl;
        } else {
            out[len++] = *body;
        }
    }
    out[len] = '\0';
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Names in dir, sorted-insensitive check: returns how many entries, and whether one ends in .tmp. */
static int count_entries(const char *dir, int *tmp_found)
{
    int n = 0;
    *tmp_found = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        n++;
        size_t len = strlen(de->d_name);
        if (len >= 4 && strcmp(de->d_name + len - 4, ".tmp") == 0)
            *tmp_found = 1;
    }
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* A row with the fields every row has (schema hsdr-results/2). */
static cJSON *base_row(const char *key, const char *status)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "schema", HSDR_RESULTS_SCHEMA);
    cJSON_AddStringToObject(r, "key", key);
    cJSON_AddStringToObject(r, "variant", "ref.direct");
    cJSON_AddStringToObject(r, "backend", "reference");
    cJSON_AddStringToObject(r, "family", "direct");
    cJSON_AddNumberToObject(r, "K", 5120);
    cJSON_AddNumberToObject(r, "N", 256);
    cJSON_AddNumberToObject(r, "R", 1);
    cJSON_AddNumberToObject(r, "cols", 1);
    cJSON_AddNumberToObject(r, "threads", 1);
    cJSON_AddStringToObject(r, "distribution", "gaussian");
    cJSON_AddStringToObject(r, "mode", "hot");
    cJSON_AddStringToObject(r, "shape", "");
    cJSON_AddNumberToObject(r, "seed", 1234567);
    cJSON_AddStringToObject(r, "status", status);
    cJSON_AddNumberToObject(r, "weight_bytes", 1146880);
    return r;
}

/* The timing fields an ok row must have, minimal: time_ns with its statistics (median v), samples, the rest null. */
static void add_timing(cJSON *r, double v, const double *samples, int n)
{
    cJSON_AddNullToObject(r, "ceiling_bytes_per_s");
    cJSON_AddNullToObject(r, "ceiling");
    cJSON_AddNullToObject(r, "bytes_floor_ns");
    cJSON *t = cJSON_AddObjectToObject(r, "time_ns");
    const char *const stats[] = {"median", "p10", "p25", "p75", "p90", "min", "mean", "rel_spread"};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        cJSON_AddNumberToObject(t, stats[i], v);
    cJSON_AddNumberToObject(t, "reps", n);
    cJSON_AddStringToObject(t, "stop", "max_reps");
    cJSON_AddNumberToObject(t, "launches_per_sample", 1);
    cJSON_AddItemToObject(r, "samples_ns", cJSON_CreateDoubleArray(samples, n));
    cJSON_AddItemToObject(r, "rounds_per_visit", cJSON_CreateIntArray(&n, 1));
    cJSON_AddNumberToObject(r, "gb_per_s", 1.0);
    cJSON_AddNullToObject(r, "pct_of_ceiling");
    cJSON_AddNullToObject(r, "ratio_to_production");
    cJSON_AddNullToObject(r, "ratio_to_production_ci");
    cJSON_AddNullToObject(r, "ratio_to_production_samples");
    cJSON_AddNullToObject(r, "production_variant");
    cJSON_AddNullToObject(r, "dominant_stage");
    cJSON_AddNullToObject(r, "convert");
    cJSON_AddNumberToObject(r, "critical_path_depth", 1);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    const char *const errs[] = {"nmse", "max_rel", "production_nmse", "production_max_rel"};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        cJSON_AddNumberToObject(e, errs[i], 0.0);
}

/* A row with every kind of field the schema has: nested objects, null, arrays (of numbers and of objects), booleans,
 * integers, fractions, large values, strings needing JSON escapes. */
static cJSON *full_row(void)
{
    cJSON *r = base_row("variant=ref.direct K=5120 N=256 R=1 threads=1 dist=gaussian mode=hot F=8 b=12", "ok");
    cJSON_AddNumberToObject(r, "flns_F", 8);
    cJSON_AddNumberToObject(r, "flns_b", 12);
    cJSON *val = cJSON_AddObjectToObject(r, "validation");
    cJSON_AddBoolToObject(val, "passed", 1);
    cJSON_AddStringToObject(val, "detail", "A exact (20480 ints), y within 2^-20 sum|terms| (256 rows)");
    cJSON_AddNumberToObject(r, "ceiling_bytes_per_s", 1.9e10);
    cJSON *cl = cJSON_AddObjectToObject(r, "ceiling");
    cJSON_AddNumberToObject(cl, "bytes", 2097152);
    cJSON_AddNumberToObject(cl, "rel_spread", 0.004);
    cJSON_AddNumberToObject(cl, "reps", 2);
    cJSON_AddNumberToObject(cl, "age_s", 12.5);
    const double csamples[] = {110000.0, 110400.0};
    cJSON_AddItemToObject(cl, "samples_ns", cJSON_CreateDoubleArray(csamples, 2));
    cJSON_AddNumberToObject(r, "bytes_floor_ns", 60362.1);
    cJSON *t = cJSON_AddObjectToObject(r, "time_ns");
    cJSON_AddNumberToObject(t, "median", 812345.0);
    cJSON_AddNumberToObject(t, "p10", 800000.0);
    cJSON_AddNumberToObject(t, "p25", 805000.0);
    cJSON_AddNumberToObject(t, "p75", 835000.0);
    cJSON_AddNumberToObject(t, "p90", 830000.0);
    cJSON_AddNumberToObject(t, "min", 799000.0);
    cJSON_AddNumberToObject(t, "mean", 815000.0);
    cJSON_AddNumberToObject(t, "rel_spread", 0.0375);
    cJSON_AddNumberToObject(t, "reps", 3);
    cJSON_AddStringToObject(t, "stop", "noise");
    cJSON_AddNumberToObject(t, "launches_per_sample", 1);
    const double samples[] = {812000.0, 811000.5, 1.0 / 3.0};
    cJSON_AddItemToObject(r, "samples_ns", cJSON_CreateDoubleArray(samples, 3));
    const int rounds[2] = {2, 1};
    cJSON_AddItemToObject(r, "rounds_per_visit", cJSON_CreateIntArray(rounds, 2));
    cJSON_AddNumberToObject(r, "gb_per_s", 1.41);
    cJSON_AddNumberToObject(r, "pct_of_ceiling", 7.4);
    cJSON_AddNullToObject(r, "ratio_to_production");
    cJSON_AddNullToObject(r, "ratio_to_production_ci");
    cJSON_AddNullToObject(r, "ratio_to_production_samples");
    cJSON_AddStringToObject(r, "production_variant", "ref.q8_0");
    cJSON *st = cJSON_AddObjectToObject(r, "stages");
    cJSON *enc = cJSON_AddObjectToObject(st, hsdr_stage_name(HSDR_STAGE_ENCODE));
    cJSON_AddNumberToObject(enc, "alone_ns", 2100.0);
    cJSON_AddNumberToObject(enc, "ablation_ns", 2300.25);
    cJSON_AddNumberToObject(enc, "doubled_ns", 2200.0);
    cJSON *red = cJSON_AddObjectToObject(st, hsdr_stage_name(HSDR_STAGE_REDUCE));
    cJSON_AddNumberToObject(red, "alone_ns", 600000.0);
    cJSON_AddNullToObject(red, "ablation_ns");
    cJSON_AddNullToObject(red, "doubled_ns");
    cJSON_AddStringToObject(r, "dominant_stage", "reduce");
    cJSON *conv = cJSON_AddObjectToObject(r, "convert");
    cJSON_AddNumberToObject(conv, "time_ns", 5.1e6);
    cJSON_AddNumberToObject(conv, "footprint_bytes", 2359296);
    cJSON_AddNumberToObject(conv, "gb_per_s", 2.9);
    cJSON_AddNullToObject(conv, "pct_of_ceiling");
    cJSON *occ = cJSON_AddObjectToObject(r, "occupancy");
    cJSON_AddNumberToObject(occ, "mean", 42.8);
    cJSON_AddNumberToObject(occ, "p5", 38);
    cJSON_AddNumberToObject(occ, "p95", 48);
    cJSON_AddNumberToObject(r, "critical_path_depth", 31);
    cJSON *e = cJSON_AddObjectToObject(r, "error");
    cJSON_AddNumberToObject(e, "nmse", 6.2e-4);
    cJSON_AddNumberToObject(e, "max_rel", 0.03);
    cJSON_AddNumberToObject(e, "production_nmse", 3.1e-5);
    cJSON_AddNumberToObject(e, "production_max_rel", 0.004);
    cJSON *ctx = cJSON_AddObjectToObject(r, "context");
    cJSON_AddStringToObject(ctx, "commit", "8d56731");
    cJSON_AddBoolToObject(ctx, "dirty", 0);
    cJSON_AddStringToObject(ctx, "cpu_model", "AMD EPYC 9654 96-Core Processor, \"Genoa\"");
    cJSON_AddNullToObject(ctx, "governor");
    cJSON *ceil = cJSON_AddArrayToObject(ctx, "ceilings");
    cJSON *c0 = cJSON_CreateObject();
    cJSON_AddNumberToObject(c0, "threads", 1);
    cJSON_AddStringToObject(c0, "mode", "cold");
    cJSON_AddItemToArray(ceil, c0);
    cJSON_AddStringToObject(ctx, "hostname", "line\nbreak\ttab \xc3\xa9");
    return r;
}

/* A failed row: identifying fields, status, validation, context; no timing fields. */
static cJSON *failed_row(void)
{
    cJSON *r = base_row("variant=ref.flns K=5120 N=256 R=1 threads=1 dist=laplace mode=cold F=8 b=12", "failed");
    cJSON *val = cJSON_AddObjectToObject(r, "validation");
    cJSON_AddBoolToObject(val, "passed", 0);
    cJSON_AddStringToObject(val, "detail", "y[3]: got 1.5, expected 1.25");
    cJSON *ctx = cJSON_AddObjectToObject(r, "context");
    cJSON_AddStringToObject(ctx, "commit", "8d56731");
    return r;
}

/* An errored row whose key holds a comma and quotes. */
static cJSON *quoted_row(void)
{
    cJSON *r = base_row("variant=x, \"quoted\" K=128", "error");
    cJSON_AddStringToObject(r, "error_message", "cannot allocate 2 GiB, \"no memory\"\nsecond line");
    return r;
}

static void test_columns(void)
{
    const char **names;
    size_t n = hsdr_results_csv_columns(&names);
    CHECK(n == hsdr_results_csv_columns(NULL), "count without names");
    const char *must[] = {"key", "variant", "status", "time_ns.median", "time_ns.p10", "time_ns.reps", "error.nmse",
                          "occupancy.mean", "convert.time_ns", "context.commit", "context.cpu_model", "gb_per_s",
                          "bytes_floor_ns", "validation.passed", "error_message", "cols", "ceiling.rel_spread",
                          "time_ns.p25", "time_ns.launches_per_sample"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        int found = 0;
        for (size_t c = 0; c < n; c++)
            found += strcmp(names[c], must[i]) == 0;
        CHECK(found == 1, "column %s appears %d times", must[i], found);
    }
    for (size_t c = 0; c < n; c++) {
        CHECK(strstr(names[c], "samples") == NULL, "column %s: no samples in the CSV", names[c]);
        CHECK(strncmp(names[c], "context.", 8) != 0 || strcmp(names[c], "context.commit") == 0 ||
                  strcmp(names[c], "context.cpu_model") == 0,
              "column %s: no context but commit and cpu_model", names[c]);
        CHECK(!strpbrk(names[c], ",\" \n"), "column %s needs no quoting", names[c]);
        for (size_t d = 0; d < c; d++)
            CHECK(strcmp(names[c], names[d]) != 0, "column %s twice", names[c]);
    }
    /* the stage columns close the list, in the order of the canonical stages */
    CHECK(n > 2 * (size_t)HSDR_STAGE_COUNT, "n = %zu", n);
    size_t first = n - 2 * (size_t)HSDR_STAGE_COUNT;
    for (int s = 0; s < HSDR_STAGE_COUNT; s++) {
        char alone[64], abl[64];
        snprintf(alone, sizeof alone, "stage_%s_alone_ns", hsdr_stage_name((hsdr_stage)s));
        snprintf(abl, sizeof abl, "stage_%s_ablation_ns", hsdr_stage_name((hsdr_stage)s));
        CHECK(strcmp(names[first + 2 * (size_t)s], alone) == 0, "column %zu: %s, expected %s", first + 2 * (size_t)s,
              names[first + 2 * (size_t)s], alone);
        CHECK(strcmp(names[first + 2 * (size_t)s + 1], abl) == 0, "expected %s", abl);
    }
}

static void test_write_read(void)
{
    char dir[320];
    snprintf(dir, sizeof dir, "%s/nested/deeper", tmp_root); /* mkdir -p */
    cJSON *rows[3] = {full_row(), failed_row(), quoted_row()};
    char err[512] = "";
    /* the writer checks every row against the schema's table: a null where none is allowed is refused, naming the
     * row, its key and the field, and nothing is written */
    cJSON *times = cJSON_GetObjectItemCaseSensitive(rows[0], "time_ns");
    cJSON_ReplaceItemInObjectCaseSensitive(times, "p90", cJSON_CreateNull());
    CHECK(hsdr_results_write(dir, "results", rows, 3, err, sizeof err) == -1 && strstr(err, "row 0") &&
              strstr(err, "field 'time_ns.p90': null, expected number"),
          "a null p90 accepted: '%s'", err);
    CHECK(access(path_in(dir, "results.jsonl"), F_OK) != 0, "a refused row left a file");
    cJSON_ReplaceItemInObjectCaseSensitive(times, "p90", cJSON_CreateNumber(830000.0));
    CHECK(hsdr_results_write(dir, "results", rows, 3, err, sizeof err) == 0, "write: %s", err);
    int tmp_found;
    CHECK(count_entries(dir, &tmp_found) == 2 && !tmp_found, "exactly results.jsonl and results.csv, no *.tmp");

    cJSON **back = NULL;
    size_t n = 0, *lines = NULL;
    CHECK(hsdr_results_read_lines(path_in(dir, "results.jsonl"), &back, &lines, &n, err, sizeof err) == 0, "read: %s",
          err);
    CHECK(n == 3, "read %zu rows", n);
    for (size_t i = 0; i < n && i < 3; i++) {
        CHECK(cJSON_Compare(rows[i], back[i], 1), "row %zu differs after the round trip", i);
        CHECK(lines[i] == i + 1, "row %zu: line %zu", i, lines[i]);
    }
    hsdr_results_free(back, n);
    free(lines);

    /* the CSV */
    char *text = hsdr_read_file(path_in(dir, "results.csv"), NULL, err, sizeof err);
    CHECK(text != NULL, "%s", err);
    const char **names;
    size_t ncol = hsdr_results_csv_columns(&names);
    /* header = the columns list, joined */
    size_t hlen = 0;
    for (size_t c = 0; c < ncol; c++)
        hlen += strlen(names[c]) + 1;
    char *header = malloc(hlen + 1);
    header[0] = '\0';
    for (size_t c = 0; c < ncol; c++) {
        strcat(header, names[c]);
        strcat(header, c + 1 < ncol ? "," : "\n");
    }
    CHECK(text && strncmp(text, header, hlen) == 0, "the CSV header is the columns list");
    free(header);
    /* the key with a comma and quotes, quoted per RFC 4180 */
    CHECK(text && strstr(text, ",\"variant=x, \"\"quoted\"\" K=128\",") != NULL, "quoted key in the CSV");
    csv_table t;
    CHECK(text && csv_parse(text, &t) == 0, "CSV parses");
    CHECK(t.nrows == 4, "%zu CSV records (header + 3)", t.nrows);
    for (size_t r = 0; r < t.nrows; r++)
        CHECK(t.ncells[r] == ncol, "record %zu: %zu cells, expected %zu", r, t.ncells[r], ncol);
    if (t.nrows == 4) {
        const struct {
            size_t row;
            const char *column, *want;
        } cells[] = {
            {1, "key", "variant=ref.direct K=5120 N=256 R=1 threads=1 dist=gaussian mode=hot F=8 b=12"},
            {1, "K", "5120"},
            {1, "flns_F", "8"},
            {1, "seed", "1234567"},
            {1, "validation.passed", "true"},
            {1, "validation.detail", "A exact (20480 ints), y within 2^-20 sum|terms| (256 rows)"},
            {1, "ceiling_bytes_per_s", "19000000000"},
            {1, "bytes_floor_ns", "60362.1"},
            {1, "time_ns.median", "812345"},
            {1, "time_ns.rel_spread", "0.0375"},
            {1, "time_ns.p90", "830000"},
            {1, "time_ns.p25", "805000"},
            {1, "cols", "1"},
            {1, "ceiling.bytes", "2097152"},
            {1, "ceiling.age_s", "12.5"},
            {1, "time_ns.stop", "noise"},
            {1, "ratio_to_production", ""},
            {1, "convert.time_ns", "5100000"},
            {1, "occupancy.mean", "42.8"},
            {1, "occupancy.p95", "48"},
            {1, "error_message", ""},
            {1, "error.nmse", "0.00062"},
            {1, "context.commit", "8d56731"},
            {1, "context.cpu_model", "AMD EPYC 9654 96-Core Processor, \"Genoa\""},
            {1, "stage_encode_alone_ns", "2100"},
            {1, "stage_encode_ablation_ns", "2300.25"},
            {1, "stage_reduce_alone_ns", "600000"},
            {1, "stage_reduce_ablation_ns", ""},
            {1, "stage_decode_alone_ns", ""},
            {2, "status", "failed"},
            {2, "validation.passed", "false"},
            {2, "time_ns.median", ""},
            {2, "gb_per_s", ""},
            {2, "stage_reduce_alone_ns", ""},
            {2, "context.cpu_model", ""},
            {2, "error.nmse", ""},
            {3, "key", "variant=x, \"quoted\" K=128"},
            {3, "status", "error"},
            {3, "error_message", "cannot allocate 2 GiB, \"no memory\"\nsecond line"},
            {3, "error.nmse", ""},
            {3, "validation.passed", ""},
        };
        for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
            const char *got = csv_cell(&t, cells[i].row, cells[i].column);
            CHECK(got && strcmp(got, cells[i].want) == 0, "row %zu column %s: got '%s', expected '%s'", cells[i].row,
                  cells[i].column, got ? got : "(no such column)", cells[i].want);
        }
    }
    csv_free(&t);
    free(text);

    /* rewriting replaces both files */
    CHECK(hsdr_results_write(dir, "results", rows + 1, 1, err, sizeof err) == 0, "rewrite: %s", err);
    CHECK(hsdr_results_read(path_in(dir, "results.jsonl"), &back, &n, err, sizeof err) == 0 && n == 1 &&
              cJSON_Compare(back[0], rows[1], 1),
          "rewritten file holds the one row");
    hsdr_results_free(back, n);
    CHECK(count_entries(dir, &tmp_found) == 2 && !tmp_found, "still two files, no *.tmp");

    /* zero rows: an empty JSONL and a header-only CSV */
    CHECK(hsdr_results_write(dir, "empty", NULL, 0, err, sizeof err) == 0, "empty write: %s", err);
    CHECK(hsdr_results_read(path_in(dir, "empty.jsonl"), &back, &n, err, sizeof err) == 0 && n == 0, "empty read");
    hsdr_results_free(back, n);

    /* a row without a key is refused and nothing is written */
    cJSON *nokey = cJSON_CreateObject();
    cJSON_AddStringToObject(nokey, "schema", HSDR_RESULTS_SCHEMA);
    cJSON *bad[2] = {rows[0], nokey};
    err[0] = '\0';
    CHECK(hsdr_results_write(dir, "refused", bad, 2, err, sizeof err) == -1 && strstr(err, "row 1") &&
              strstr(err, "'key'"),
          "missing key refused: '%s'", err);
    CHECK(access(path_in(dir, "refused.jsonl"), F_OK) != 0 && access(path_in(dir, "refused.csv"), F_OK) != 0,
          "nothing written for a refused row");
    CHECK(count_entries(dir, &tmp_found) == 4 && !tmp_found, "results.* and empty.* only");
    cJSON_Delete(nokey);
    err[0] = '\0';
    CHECK(hsdr_results_write(dir, "a/b", rows, 1, err, sizeof err) == -1 && strstr(err, "a/b"), "base with '/': '%s'",
          err);
    /* a directory that cannot be made: a path through a regular file */
    CHECK(hsdr_results_write(path_in(dir, "results.csv"), "x", rows, 1, err, sizeof err) == -1 &&
              strstr(err, "results.csv"),
          "unwritable dir: '%s'", err);

    for (int i = 0; i < 3; i++)
        cJSON_Delete(rows[i]);
}

/* Fresh random rows: every number comes back exactly from the JSONL and from the CSV. */
static void test_random_round_trip(hsdr_rng *rng)
{
    enum { NROWS = 50 };
    cJSON *rows[NROWS];
    double medians[NROWS];
    for (int i = 0; i < NROWS; i++) {
        char key[96];
        snprintf(key, sizeof key, "variant=ref.rand K=%d N=%d, \"%d\"", 128 * (1 + i), (int)hsdr_rng_below(rng, 9999),
                 i);
        rows[i] = base_row(key, "ok");
        uint64_t bits = hsdr_rng_u64(rng);
        double v;
        switch (i % 4) {
        case 0: v = hsdr_rng_uniform(rng) * 1e9; break;                          /* fractional */
        case 1: v = (double)(hsdr_rng_u64(rng) >> 12); break;                    /* large integer */
        case 2: v = ldexp(1.0 + hsdr_rng_uniform(rng), (int)(bits % 200) - 100); break; /* any magnitude */
        default: v = -hsdr_rng_uniform(rng); break;
        }
        medians[i] = v;
        double s[5];
        for (int j = 0; j < 5; j++)
            s[j] = hsdr_rng_uniform(rng) * 1e6;
        add_timing(rows[i], v, s, 5);
    }
    char dir[320], err[512] = "";
    snprintf(dir, sizeof dir, "%s/random", tmp_root);
    CHECK(hsdr_results_write(dir, "r", rows, NROWS, err, sizeof err) == 0, "%s", err);
    cJSON **back = NULL;
    size_t n = 0;
    CHECK(hsdr_results_read(path_in(dir, "r.jsonl"), &back, &n, err, sizeof err) == 0 && n == NROWS, "%s", err);
    for (size_t i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(back[i], "time_ns");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(t, "median");
        CHECK(cJSON_IsNumber(m) && m->valuedouble == medians[i], "row %zu: JSONL median %.17g, wrote %.17g", i,
              m ? m->valuedouble : NAN, medians[i]);
        CHECK(cJSON_Compare(back[i], rows[i], 1), "row %zu round trip", i);
    }
    hsdr_results_free(back, n);
    char *text = hsdr_read_file(path_in(dir, "r.csv"), NULL, err, sizeof err);
    csv_table t;
    CHECK(text && csv_parse(text, &t) == 0 && t.nrows == NROWS + 1, "random CSV");
    for (size_t i = 0; text && i < NROWS && i + 1 < t.nrows; i++) {
        const char *cell = csv_cell(&t, i + 1, "time_ns.median");
        char *end;
        double v = cell ? strtod(cell, &end) : NAN;
        CHECK(cell && *end == '\0' && v == medians[i], "row %zu: CSV median '%s', wrote %.17g", i, cell ? cell : "?",
              medians[i]);
        CHECK(cell && (medians[i] != floor(medians[i]) || fabs(medians[i]) >= 1e17 || !strpbrk(cell, ".e")),
              "integral %s printed as an integer",
              cell ? cell : "?");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(rows[i], "key");
        const char *kc = csv_cell(&t, i + 1, "key");
        CHECK(kc && strcmp(kc, k->valuestring) == 0, "key of row %zu", i);
    }
    if (text)
        csv_free(&t);
    free(text);
    for (int i = 0; i < NROWS; i++)
        cJSON_Delete(rows[i]);
}

/* hsdr_results_print: cJSON_PrintUnformatted's layout, exact numbers. */
static void test_print(hsdr_rng *rng)
{
    cJSON *rows[2] = {failed_row(), quoted_row()};
    cJSON_AddStringToObject(rows[1], "controls", "a\x01" "b\x1f\\/\b\f\r\t\xe2\x82\xac");
    cJSON_AddItemToObject(rows[1], "empty_array", cJSON_CreateArray());
    cJSON_AddItemToObject(rows[1], "empty_object", cJSON_CreateObject());
    cJSON_AddNumberToObject(rows[1], "negative", -42);
    cJSON_AddNumberToObject(rows[1], "half", 0.5);
    for (int i = 0; i < 2; i++) { /* numbers with short forms: the same bytes as cJSON */
        char *mine = hsdr_results_print(rows[i]), *theirs = cJSON_PrintUnformatted(rows[i]);
        CHECK(mine && theirs && strcmp(mine, theirs) == 0, "row %d:\n  mine   %s\n  cJSON  %s", i, mine, theirs);
        free(mine);
        cJSON_free(theirs);
        cJSON_Delete(rows[i]);
    }
    cJSON *arr = cJSON_CreateArray();
    enum { N = 2000 };
    static double want[N];
    for (int i = 0; i < N; i++) {
        uint64_t bits = hsdr_rng_u64(rng);
        want[i] = i % 2 ? ldexp(1.0 + hsdr_rng_uniform(rng), (int)(bits % 2000) - 1000)
                        : (double)(int64_t)(hsdr_rng_u64(rng) >> (bits % 64)) * (bits & 1 ? -1 : 1);
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(want[i]));
    }
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(-INFINITY));
    char *txt = hsdr_results_print(arr);
    cJSON *back = txt ? cJSON_Parse(txt) : NULL;
    CHECK(back && cJSON_GetArraySize(back) == N + 2, "exact print parses back");
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, back)
    {
        if (i < N)
            CHECK(cJSON_IsNumber(v) && v->valuedouble == want[i], "number %d: wrote %.17g, read %.17g", i, want[i],
                  v->valuedouble);
        else
            CHECK(cJSON_IsNull(v), "non-finite number %d prints as null", i);
        i++;
    }
    free(txt);
    cJSON_Delete(back);
    cJSON_Delete(arr);
}

static void test_partial(void)
{
    char dir[320], err[512] = "";
    snprintf(dir, sizeof dir, "%s/partial", tmp_root);
    cJSON *a = full_row(), *b = failed_row();
    hsdr_partial *p = hsdr_results_partial_open(dir, "results", err, sizeof err);
    CHECK(p != NULL, "partial open: %s", err);
    const char *path = path_in(dir, "results.partial.jsonl");
    CHECK(p && strcmp(hsdr_results_partial_path(p), path) == 0, "partial path");
    CHECK(hsdr_results_partial_append(p, a) == 0, "append a");
    /* flushed: readable by another reader while still open */
    cJSON **back = NULL;
    size_t n = 0;
    CHECK(hsdr_results_read(path, &back, &n, err, sizeof err) == 0 && n == 1 && cJSON_Compare(back[0], a, 1),
          "after one append: %s", err);
    hsdr_results_free(back, n);
    CHECK(hsdr_results_partial_append(p, b) == 0, "append b");
    hsdr_results_partial_close(p, 0); /* interrupted: kept */
    CHECK(hsdr_results_read(path, &back, &n, err, sizeof err) == 0 && n == 2 && cJSON_Compare(back[1], b, 1),
          "kept partial holds both rows: %s", err);
    hsdr_results_free(back, n);
    p = hsdr_results_partial_open(dir, "results", err, sizeof err); /* a new run starts it afresh */
    CHECK(p && hsdr_results_read(path, &back, &n, err, sizeof err) == 0 && n == 0, "reopened partial is empty");
    hsdr_results_free(back, n);
    hsdr_results_partial_close(p, 1); /* completed: removed */
    CHECK(access(path, F_OK) != 0, "partial removed after a completed run");
    hsdr_results_partial_close(NULL, 1);
    CHECK(hsdr_results_partial_append(NULL, a) == -1, "append to NULL");
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* The journal of a resumed run: reopen keeps exactly the given rows (replacing a torn tail), appends follow them; a
 * torn last line (a writer killed inside a row) is dropped by the journal reader and refused by the strict one. */
static void test_journal(void)
{
    char dir[320], err[512] = "";
    snprintf(dir, sizeof dir, "%s/journal", tmp_root);
    cJSON *a = full_row(), *b = failed_row(), *c = quoted_row();
    hsdr_partial *p = hsdr_results_partial_open(dir, "results", err, sizeof err);
    CHECK(p && hsdr_results_partial_append(p, a) == 0 && hsdr_results_partial_append(p, b) == 0, "two rows: %s", err);
    hsdr_results_partial_close(p, 0);
    const char *path = path_in(dir, "results.partial.jsonl");
    char *txt = hsdr_results_print(c);
    FILE *f = fopen(path, "a");
    CHECK(f && txt && fwrite(txt, 1, strlen(txt) / 2, f) == strlen(txt) / 2, "a torn third row");
    if (f)
        fclose(f);
    cJSON **back = NULL;
    size_t n = 0, *lines = NULL, torn = 0;
    CHECK(hsdr_results_read(path, &back, &n, err, sizeof err) == -1 && strstr(err, ":3:"),
          "the strict reader refuses the torn line 3: '%s'", err);
    CHECK(hsdr_results_read_journal(path, &back, &lines, &n, &torn, err, sizeof err) == 0 && n == 2 &&
              torn == strlen(txt) / 2 && lines[1] == 2 && cJSON_Compare(back[0], a, 1) && cJSON_Compare(back[1], b, 1),
          "the journal reader keeps the 2 whole rows, drops %zu torn bytes: %s", torn, err);
    /* resume: the two whole rows, then the third appended after them */
    p = hsdr_results_partial_reopen(dir, "results", back, n, err, sizeof err);
    CHECK(p != NULL, "reopen: %s", err);
    hsdr_results_free(back, n);
    free(lines);
    CHECK(hsdr_results_partial_append(p, c) == 0, "append after reopen");
    CHECK(hsdr_results_read(path, &back, &n, err, sizeof err) == 0 && n == 3 && cJSON_Compare(back[0], a, 1) &&
              cJSON_Compare(back[2], c, 1),
          "reopened journal: the kept rows, then the new one: %s", err);
    CHECK(hsdr_results_partial_marker(back, n, NULL) == NULL, "no partial mark on these rows");
    cJSON_AddObjectToObject(back[1], "partial");
    size_t at = 99;
    CHECK(hsdr_results_partial_marker(back, n, &at) != NULL && at == 1, "the mark found on row %zu", at);
    hsdr_results_free(back, n);
    hsdr_results_partial_close(p, 1);
    int tmp_found;
    CHECK(count_entries(dir, &tmp_found) == 0 && !tmp_found, "nothing left after the completed run");
    free(txt);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

/* A writer killed inside a write leaves its hidden temporary file; the next write of the same base removes the files
 * of processes that no longer run and leaves those of a running one (pid 1) and of other bases. */
static void test_stale_tmp(void)
{
    char dir[320], err[512] = "";
    snprintf(dir, sizeof dir, "%s/stale", tmp_root);
    mkdir(dir, 0777);
    const char *names[] = {".results.jsonl.2147483646.0.tmp", ".results.csv.2147483646.3.tmp",
                           ".results.partial.jsonl.2147483646.1.tmp", ".results.jsonl.1.0.tmp",
                           ".other.jsonl.2147483646.0.tmp"};
    const int stays[] = {0, 0, 0, 1, 1};
    for (int i = 0; i < 5; i++) {
        FILE *f = fopen(path_in(dir, names[i]), "w");
        CHECK(f && fputs("{\"half\":", f) >= 0 && fclose(f) == 0, "create %s", names[i]);
    }
    cJSON *rows[1] = {full_row()};
    CHECK(hsdr_results_write(dir, "results", rows, 1, err, sizeof err) == 0, "write: %s", err);
    for (int i = 0; i < 5; i++)
        CHECK((access(path_in(dir, names[i]), F_OK) == 0) == stays[i], "%s %s", names[i],
              stays[i] ? "kept (a running process or another base)" : "removed (its writer is gone)");
    cJSON_Delete(rows[0]);
}

static void test_read_errors(void)
{
    char dir[320];
    snprintf(dir, sizeof dir, "%s/bad", tmp_root);
    mkdir(dir, 0777);
    const char *good = "{\"schema\":\"hsdr-results/1\",\"key\":\"k1\",\"status\":\"ok\"}";
    char text[1024];
    const struct {
        const char *name, *body, *want;
    } cases[] = {
        {"malformed.jsonl", "@\n@\n{\"schema\":\"hsdr-results/1\",\"key\":\"k3\",}\n", "malformed.jsonl:3:"},
        {"noschema.jsonl", "@\n{\"key\":\"k2\"}\n", "noschema.jsonl:2: missing field 'schema'"},
        {"wrongschema.jsonl", "@\n\n{\"schema\":\"hsdr-vectors/1\",\"key\":\"k\"}\n",
         "wrongschema.jsonl:3: field 'schema': expected \"hsdr-results/2\" or \"hsdr-results/1\""},
        {"nokey.jsonl", "{\"schema\":\"hsdr-results/1\"}\n", "nokey.jsonl:1: missing field 'key'"},
        {"numkey.jsonl", "@\n{\"schema\":\"hsdr-results/1\",\"key\":7}\n",
         "numkey.jsonl:2: field 'key': expected a string"},
        {"array.jsonl", "[1,2]\n", "array.jsonl:1: expected a JSON object"},
        {"twoobjects.jsonl", "@ @\n", "twoobjects.jsonl:1:"},
        {"truncated.jsonl", "@\n{\"schema\":\"hsdr-results/1\",\"key\":\"k", "truncated.jsonl:2:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expand(text, sizeof text, cases[i].body, good);
        write_text(path_in(dir, cases[i].name), text);
        cJSON **rows = (cJSON **)1;
        size_t n = 99;
        char err[512] = "";
        CHECK(hsdr_results_read(path_in(dir, cases[i].name), &rows, &n, err, sizeof err) == -1, "%s accepted",
              cases[i].name);
        CHECK(strstr(err, cases[i].want) != NULL, "%s: message '%s' lacks '%s'", cases[i].name, err, cases[i].want);
    }
    /* blank lines and CRLF line ends are fine; line numbers count them */
    expand(text, sizeof text, "\r\n@\r\n   \n@\n", good);
    write_text(path_in(dir, "crlf.jsonl"), text);
    cJSON **rows = NULL;
    size_t n = 0, *lines = NULL;
    char err[512] = "";
    CHECK(hsdr_results_read_lines(path_in(dir, "crlf.jsonl"), &rows, &lines, &n, err, sizeof err) == 0 && n == 2 &&
              lines[0] == 2 && lines[1] == 4,
          "CRLF and blank lines: %s", err);
    hsdr_results_free(rows, n);
    free(lines);
    CHECK(hsdr_results_read(path_in(dir, "no-such.jsonl"), &rows, &n, err, sizeof err) == -1 &&
              strstr(err, "no-such.jsonl") && strstr(err, "No such file"),
          "missing file: '%s'", err);
}

/* Rows of schema hsdr-results/1 are converted on reading (hsdr_schema_upgrade_row) and can be written again (merge
 * of an old file): an error row's message moves to error_message, cols = 1, converted_from names the old schema, and
 * the fields new in /2 need not be there. */
static void test_old_rows(void)
{
    char dir[320];
    snprintf(dir, sizeof dir, "%s/old", tmp_root);
    mkdir(dir, 0777);
    write_text(path_in(dir, "v1.jsonl"),
               "{\"schema\":\"hsdr-results/1\",\"key\":\"k1\",\"variant\":\"ref.direct\",\"backend\":\"reference\","
               "\"family\":\"direct\",\"K\":128,\"N\":4,\"R\":1,\"threads\":1,\"distribution\":\"gaussian\","
               "\"mode\":\"hot\",\"shape\":\"\",\"seed\":5,\"status\":\"error\",\"weight_bytes\":112,"
               "\"error\":\"out of memory\"}\n");
    cJSON **rows = NULL;
    size_t n = 0;
    char err[512] = "";
    CHECK(hsdr_results_read(path_in(dir, "v1.jsonl"), &rows, &n, err, sizeof err) == 0 && n == 1, "read /1: %s", err);
    if (n == 1) {
        const cJSON *r = rows[0];
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(r, "error_message");
        const cJSON *cols = cJSON_GetObjectItemCaseSensitive(r, "cols");
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(r, "converted_from");
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
        CHECK(cJSON_IsString(msg) && strcmp(msg->valuestring, "out of memory") == 0 &&
                  !cJSON_GetObjectItemCaseSensitive(r, "error"),
              "the message moved to error_message");
        CHECK(cJSON_IsNumber(cols) && cols->valuedouble == 1, "cols = 1");
        CHECK(cJSON_IsString(from) && strcmp(from->valuestring, "hsdr-results/1") == 0, "converted_from");
        CHECK(cJSON_IsString(schema) && strcmp(schema->valuestring, HSDR_RESULTS_SCHEMA) == 0, "schema now /2");
        CHECK(hsdr_schema_check_row(r, err, sizeof err) == 0, "a converted row passes the check: %s", err);
        CHECK(hsdr_results_write(dir, "again", rows, 1, err, sizeof err) == 0, "a converted row is written: %s", err);
        /* without the mark, the same row lacks what /2 requires of an ok row */
        cJSON *ok = base_row("k2", "ok");
        CHECK(hsdr_schema_check_row(ok, err, sizeof err) == -1 && strstr(err, "missing"), "bare ok row: '%s'", err);
        cJSON_AddStringToObject(ok, "converted_from", "hsdr-results/1");
        CHECK(hsdr_schema_check_row(ok, err, sizeof err) == 0, "a converted row is checked on what it has: '%s'", err);
        cJSON_AddStringToObject(ok, "gb_per_s", "fast");
        CHECK(hsdr_schema_check_row(ok, err, sizeof err) == -1 && strstr(err, "'gb_per_s': expected number"),
              "a converted row's fields keep their types: '%s'", err);
        cJSON_Delete(ok);
        /* an unknown field, or a stage that is not a canonical one, is refused */
        cJSON *x = base_row("k3", "failed");
        cJSON_AddNumberToObject(x, "speedup", 2);
        CHECK(hsdr_schema_check_row(x, err, sizeof err) == -1 && strstr(err, "field 'speedup': not in the schema"),
              "unknown field: '%s'", err);
        cJSON_DeleteItemFromObjectCaseSensitive(x, "speedup");
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(x, "stages"), "warp");
        CHECK(hsdr_schema_check_row(x, err, sizeof err) == -1 && strstr(err, "'stages.warp'"), "unknown stage: '%s'",
              err);
        cJSON_Delete(x);
    }
    hsdr_results_free(rows, n);
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_results"));
    test_old_rows();
    const char *tmpdir = getenv("TMPDIR");
    snprintf(tmp_root, sizeof tmp_root, "%s/hsdr-test-results-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    test_columns();
    test_write_read();
    test_random_round_trip(&rng);
    test_print(&rng);
    test_partial();
    test_journal();
    test_stale_tmp();
    test_read_errors();
    if (!test_failures)
        remove_tree(tmp_root);
    else
        printf("test_results: files kept in %s\n", tmp_root);
    return test_finish("test_results");
}
