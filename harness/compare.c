/* `hsdr compare`: B relative to A per key, from the raw samples, with a verdict allowed to be AMBIGUOUS. */
#include "compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"
#include "stats.h"
#include "util.h"

static const char *const verdict_names[] = {"SAME", "FASTER", "SLOWER", "AMBIGUOUS"};

const char *hsdr_verdict_name(hsdr_verdict v)
{
    return (unsigned)v < sizeof verdict_names / sizeof verdict_names[0] ? verdict_names[v] : "?";
}

/* ---- statistics -------------------------------------------------------------------------------------------------- */

static int usable(const double *x, size_t n)
{
    if (!x || n < HSDR_COMPARE_MIN_SAMPLES)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || x[i] <= 0.0)
            return 0;
    return 1;
}

/* A figure's sorted samples (num, and den when it is a quotient) and the bootstrap scratch. */
typedef struct {
    double *num, *den;
    size_t nn, nd;
    double scale;
    const double *raw;  /* num in its own order, for a block resample */
    const int *blocks;
    int nblocks;
    double *scratch;    /* a block resample */
} sorted_figure;

static void figure_free(sorted_figure *s)
{
    free(s->num);
    free(s->den);
    free(s->scratch);
}

static int figure_sort(const hsdr_figure *f, sorted_figure *s)
{
    memset(s, 0, sizeof *s);
    s->nn = f->n;
    s->nd = f->den ? f->nd : 0;
    s->scale = f->den ? f->den_scale : 1.0;
    s->num = malloc(f->n * sizeof *s->num);
    s->den = s->nd ? malloc(s->nd * sizeof *s->den) : NULL;
    if (hsdr_blocks_cover(f->blocks, f->nblocks, f->n)) {
        s->raw = f->num;
        s->blocks = f->blocks;
        s->nblocks = f->nblocks;
        s->scratch = malloc(hsdr_blocks_total(f->blocks, f->nblocks) * sizeof *s->scratch);
    }
    if (!s->num || (s->nd && !s->den) || (s->blocks && !s->scratch)) {
        figure_free(s);
        return -1;
    }
    memcpy(s->num, f->num, f->n * sizeof *s->num);
    qsort(s->num, s->nn, sizeof *s->num, hsdr_cmp_double);
    if (s->nd) {
        memcpy(s->den, f->den, s->nd * sizeof *s->den);
        qsort(s->den, s->nd, sizeof *s->den, hsdr_cmp_double);
    }
    return 0;
}

static double figure_value(const sorted_figure *s)
{
    double v = hsdr_sorted_median(s->num, s->nn);
    return s->nd ? v / (hsdr_sorted_median(s->den, s->nd) * s->scale) : v;
}

static double figure_resample(const sorted_figure *s, uint32_t *counts, uint64_t *rng)
{
    double v = s->blocks ? hsdr_block_resample_median(s->raw, s->blocks, s->nblocks, s->scratch, rng)
                         : hsdr_resample_median(s->num, s->nn, counts, rng);
    return s->nd ? v / (hsdr_resample_median(s->den, s->nd, counts, rng) * s->scale) : v;
}

/* The value of a figure (NaN when out of memory). */
static double figure_of(const hsdr_figure *f)
{
    sorted_figure s;
    if (!f->num || f->n == 0 || figure_sort(f, &s) != 0)
        return NAN;
    const double v = figure_value(&s);
    figure_free(&s);
    return v;
}

static int figure_usable(const hsdr_figure *f)
{
    return usable(f->num, f->n) && (!f->den || (usable(f->den, f->nd) && f->den_scale > 0.0));
}

hsdr_verdict hsdr_compare_figures(const hsdr_figure *a, const hsdr_figure *b, double threshold, double confidence,
                                  double *ratio, double *lo, double *hi)
{
    double r = NAN, l = 0.0, h = INFINITY;
    hsdr_verdict v = HSDR_AMBIGUOUS;
    sorted_figure sa = {0}, sb = {0};
    double *boot = NULL;
    uint32_t *counts = NULL;
    const int have_a = a->num && a->n > 0 && figure_sort(a, &sa) == 0;
    const int have_b = have_a && b->num && b->n > 0 && figure_sort(b, &sb) == 0;
    if (have_b) {
        const double fa = figure_value(&sa), fb = figure_value(&sb);
        if (fa > 0.0 && isfinite(fa) && isfinite(fb))
            r = fb / fa; /* a report may show it; a verdict needs the checks below */
    }
    if (!have_b || !(threshold > 0.0 && threshold < 1.0 && confidence > 0.0 && confidence < 1.0) ||
        !figure_usable(a) || !figure_usable(b))
        goto out;
    size_t most = sa.nn;
    most = sa.nd > most ? sa.nd : most;
    most = sb.nn > most ? sb.nn : most;
    most = sb.nd > most ? sb.nd : most;
    boot = malloc(HSDR_COMPARE_RESAMPLES * sizeof *boot);
    counts = malloc(most * sizeof *counts);
    if (!boot || !counts)
        goto out;
    uint64_t rng = HSDR_COMPARE_SEED;
    for (size_t i = 0; i < HSDR_COMPARE_RESAMPLES; i++) {
        double fa = figure_resample(&sa, counts, &rng);
        double fb = figure_resample(&sb, counts, &rng);
        boot[i] = fb / fa;
    }
    qsort(boot, HSDR_COMPARE_RESAMPLES, sizeof *boot, hsdr_cmp_double);
    l = hsdr_quantile(boot, HSDR_COMPARE_RESAMPLES, (1.0 - confidence) / 2);
    h = hsdr_quantile(boot, HSDR_COMPARE_RESAMPLES, 1.0 - (1.0 - confidence) / 2);
    if (h < 1.0 - threshold)
        v = HSDR_FASTER;
    else if (l > 1.0 + threshold)
        v = HSDR_SLOWER;
    else if (l >= 1.0 - threshold && h <= 1.0 + threshold)
        v = HSDR_SAME;
    else
        v = HSDR_AMBIGUOUS;
out:
    if (have_a)
        figure_free(&sa);
    if (have_b)
        figure_free(&sb);
    free(boot);
    free(counts);
    if (ratio)
        *ratio = r;
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    return v;
}

hsdr_verdict hsdr_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                                  double confidence, double *ratio, double *lo, double *hi)
{
    const hsdr_figure fa = {a, na, NULL, 0, 1.0, NULL, 0}, fb = {b, nb, NULL, 0, 1.0, NULL, 0};
    return hsdr_compare_figures(&fa, &fb, threshold, confidence, ratio, lo, hi);
}

/* ---- the command ------------------------------------------------------------------------------------------------- */

/* Outcomes of one key: the four verdicts, then the keys that get none. */
enum { NOT_COMPARABLE = HSDR_AMBIGUOUS + 1, ONLY_IN_A, ONLY_IN_B, N_OUTCOMES };
static const char *outcome_name(int o)
{
    static const char *const extra[] = {"NOT_COMPARABLE", "ONLY_IN_A", "ONLY_IN_B"};
    return o < NOT_COMPARABLE ? hsdr_verdict_name((hsdr_verdict)o) : extra[o - NOT_COMPARABLE];
}

static const int report_order[N_OUTCOMES] = {HSDR_FASTER, HSDR_SLOWER,    HSDR_SAME, HSDR_AMBIGUOUS,
                                             NOT_COMPARABLE, ONLY_IN_A, ONLY_IN_B};

typedef struct {
    const char *path;
    cJSON **rows;
    size_t *lines;
    size_t n;
    size_t *by_key; /* row indices sorted by key, then line */
} results_file;

static const cJSON **sort_rows; /* qsort has no context argument */

static const char *row_key(const cJSON *row)
{
    return cJSON_GetObjectItemCaseSensitive(row, "key")->valuestring; /* the reader checked it is a string */
}

static int cmp_index_by_key(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int c = strcmp(row_key(sort_rows[a]), row_key(sort_rows[b]));
    return c ? c : (a > b) - (a < b);
}

static void results_file_free(results_file *f)
{
    hsdr_results_free(f->rows, f->n);
    free(f->lines);
    free(f->by_key);
}

/* Read, index by key, refuse a key that appears twice in one file. */
static int results_file_load(results_file *f, const char *path)
{
    char err[1024];
    memset(f, 0, sizeof *f);
    f->path = path;
    if (hsdr_results_read_lines(path, &f->rows, &f->lines, &f->n, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr compare: %s\n", err);
        return -1;
    }
    f->by_key = malloc((f->n ? f->n : 1) * sizeof *f->by_key);
    if (!f->by_key) {
        fprintf(stderr, "hsdr compare: %s: out of memory\n", path);
        results_file_free(f);
        return -1;
    }
    for (size_t i = 0; i < f->n; i++)
        f->by_key[i] = i;
    sort_rows = (const cJSON **)f->rows;
    qsort(f->by_key, f->n, sizeof *f->by_key, cmp_index_by_key);
    for (size_t i = 1; i < f->n; i++) {
        size_t prev = f->by_key[i - 1], cur = f->by_key[i];
        if (strcmp(row_key(f->rows[prev]), row_key(f->rows[cur])) == 0) {
            fprintf(stderr, "hsdr compare: %s:%zu: key '%s' already at line %zu\n", path, f->lines[cur],
                    row_key(f->rows[cur]), f->lines[prev]);
            results_file_free(f);
            return -1;
        }
    }
    return 0;
}

/* The row of that key, or NULL. */
static const cJSON *find_key(const results_file *f, const char *key)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(row_key(f->rows[f->by_key[mid]]), key);
        if (c == 0)
            return f->rows[f->by_key[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The numbers of array `field` (a dotted path) of a row with status ok; NULL with the reason in why when it has none
 * usable. Caller frees. */
static double *row_array(const cJSON *row, const char *field, const char *side, size_t *n, char *why, size_t whylen)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(row, "status");
    if (!cJSON_IsString(status)) {
        snprintf(why, whylen, "%s has no status", side);
        return NULL;
    }
    if (strcmp(status->valuestring, "ok") != 0) {
        snprintf(why, whylen, "%s status %s", side, status->valuestring);
        return NULL;
    }
    const cJSON *samples = row;
    char path[64];
    snprintf(path, sizeof path, "%s", field);
    for (char *save = NULL, *t = strtok_r(path, ".", &save); t; t = strtok_r(NULL, ".", &save))
        samples = cJSON_IsObject(samples) ? cJSON_GetObjectItemCaseSensitive(samples, t) : NULL;
    if (!cJSON_IsArray(samples)) {
        snprintf(why, whylen, "%s has no %s", side, field);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(samples);
    if (count < HSDR_COMPARE_MIN_SAMPLES) {
        snprintf(why, whylen, "%s has %zu %s (needs %d)", side, count, field, HSDR_COMPARE_MIN_SAMPLES);
        return NULL;
    }
    double *x = malloc(count * sizeof *x);
    if (!x) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    size_t i = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, samples)
    {
        if (!cJSON_IsNumber(s) || !(s->valuedouble > 0.0) || !isfinite(s->valuedouble)) {
            snprintf(why, whylen, "%s %s[%zu] is not a positive number", side, field, i);
            free(x);
            return NULL;
        }
        x[i++] = s->valuedouble;
    }
    *n = count;
    return x;
}

/* What a key's rows are compared on: each time over its own run's production variant of the same round (paired),
 * over its own run's ceiling (a production row has no production to pair with), or the raw times (--raw, and rows
 * of older files that carry neither). Both rows of a key must have the figure. */
typedef enum { FIGURE_PAIRED, FIGURE_CEILING, FIGURE_RAW } figure_kind;
static const char *const figure_names[] = {"paired", "ceiling", "raw"};

static int has_array(const cJSON *row, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(row, a);
    if (b)
        o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, b) : NULL;
    return cJSON_IsArray(o);
}

static figure_kind figure_for(const cJSON *ra, const cJSON *rb, int raw)
{
    if (raw)
        return FIGURE_RAW;
    if (has_array(ra, "ratio_to_production_samples", NULL) && has_array(rb, "ratio_to_production_samples", NULL))
        return FIGURE_PAIRED;
    if (has_array(ra, "ceiling", "samples_ns") && has_array(rb, "ceiling", "samples_ns"))
        return FIGURE_CEILING;
    return FIGURE_RAW;
}

/* The rounds of each visit of a row (rounds_per_visit), when it has several that add up to n; else NULL. Caller
 * frees. */
static int *row_blocks(const cJSON *row, size_t n, int *nb)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, "rounds_per_visit"), *e;
    const int count = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    int *b = count > 1 ? malloc(sizeof(int) * (size_t)count) : NULL;
    int k = 0;
    if (!b)
        return NULL;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1) || e->valuedouble > (double)n)
            break;
        b[k++] = (int)e->valuedouble;
    }
    if (k != count || !hsdr_blocks_cover(b, count, n)) {
        free(b);
        return NULL;
    }
    *nb = count;
    return b;
}

/* The figure of kind k of one row (arrays owned by the caller: free num, den and blocks). 0, or -1 with why. */
static int row_figure(const cJSON *row, figure_kind k, const char *side, hsdr_figure *f, char *why, size_t whylen)
{
    memset(f, 0, sizeof *f);
    f->den_scale = 1.0;
    if (k == FIGURE_PAIRED) {
        f->num = row_array(row, "ratio_to_production_samples", side, &f->n, why, whylen);
        if (f->num)
            f->blocks = row_blocks(row, f->n, &f->nblocks);
        return f->num ? 0 : -1;
    }
    if (!(f->num = row_array(row, "samples_ns", side, &f->n, why, whylen)))
        return -1;
    f->blocks = row_blocks(row, f->n, &f->nblocks);
    if (k == FIGURE_RAW)
        return 0;
    /* time / floor: the ceiling's samples are reads of ceiling.bytes; the floor reads weight_bytes at that rate */
    const cJSON *wb = cJSON_GetObjectItemCaseSensitive(row, "weight_bytes");
    const cJSON *cb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "ceiling"), "bytes");
    if (!cJSON_IsNumber(wb) || !cJSON_IsNumber(cb) || !(cb->valuedouble > 0)) {
        snprintf(why, whylen, "%s has no weight_bytes or ceiling.bytes", side);
        free((double *)f->num);
        free((int *)f->blocks);
        return -1;
    }
    f->den_scale = wb->valuedouble / cb->valuedouble;
    if (!(f->den = row_array(row, "ceiling.samples_ns", side, &f->nd, why, whylen))) {
        free((double *)f->num);
        free((int *)f->blocks);
        return -1;
    }
    return 0;
}

/* 4 significant digits in ns, us, ms or s. */
static void format_time(double ns, char *buf, size_t n)
{
    if (ns < 1e3)
        snprintf(buf, n, "%#.4g ns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%#.4g us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, n, "%#.4g ms", ns / 1e6);
    else
        snprintf(buf, n, "%#.4g s", ns / 1e9);
}

typedef struct {
    const char *key;
    int outcome;
    figure_kind kind;
    double median_a, median_b; /* raw medians, ns */
    double figure_a, figure_b, ratio, lo, hi;
    size_t na, nb;
    char why[160];
} comparison;

static void compare_one(comparison *c, const cJSON *ra, const cJSON *rb, int raw, double threshold, double confidence)
{
    hsdr_figure a, b;
    c->kind = figure_for(ra, rb, raw);
    if (row_figure(ra, c->kind, "A", &a, c->why, sizeof c->why) != 0) {
        c->outcome = NOT_COMPARABLE;
        return;
    }
    if (row_figure(rb, c->kind, "B", &b, c->why, sizeof c->why) != 0) {
        c->outcome = NOT_COMPARABLE;
    } else {
        c->outcome = (int)hsdr_compare_figures(&a, &b, threshold, confidence, &c->ratio, &c->lo, &c->hi);
        c->median_a = hsdr_row_median(ra);
        c->median_b = hsdr_row_median(rb);
        c->figure_a = figure_of(&a);
        c->figure_b = figure_of(&b);
        c->na = a.n;
        c->nb = b.n;
        free((double *)b.num);
        free((double *)b.den);
        free((int *)b.blocks);
    }
    free((double *)a.num);
    free((double *)a.den);
    free((int *)a.blocks);
}

static void print_json(const comparison *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", c->key);
    cJSON_AddStringToObject(o, "verdict", outcome_name(c->outcome));
    if (c->outcome < NOT_COMPARABLE) {
        cJSON_AddStringToObject(o, "figure", figure_names[c->kind]);
        cJSON_AddNumberToObject(o, "figure_a", c->figure_a);
        cJSON_AddNumberToObject(o, "figure_b", c->figure_b);
        cJSON_AddNumberToObject(o, "median_a_ns", c->median_a);
        cJSON_AddNumberToObject(o, "median_b_ns", c->median_b);
        cJSON_AddNumberToObject(o, "ratio", c->ratio);
        cJSON_AddNumberToObject(o, "lo", c->lo);
        cJSON_AddNumberToObject(o, "hi", c->hi);
        cJSON_AddNumberToObject(o, "n_a", (double)c->na);
        cJSON_AddNumberToObject(o, "n_b", (double)c->nb);
    } else if (c->outcome == NOT_COMPARABLE) {
        cJSON_AddStringToObject(o, "reason", c->why);
    }
    hsdr_results_emit(o);
}

/* A figure for the text report: a time, or a ratio to production / to the floor. */
static void format_figure(figure_kind k, double v, char *buf, size_t n)
{
    if (k == FIGURE_RAW)
        format_time(v, buf, n);
    else
        snprintf(buf, n, "%.4fx", v);
}

static void print_text(const comparison *c, int key_width)
{
    char fa[32] = "-", fb[32] = "-", ratio[32] = "-", interval[64] = "-";
    const char *kind = "-";
    if (c->outcome < NOT_COMPARABLE) {
        kind = figure_names[c->kind];
        format_figure(c->kind, c->figure_a, fa, sizeof fa);
        format_figure(c->kind, c->figure_b, fb, sizeof fb);
        snprintf(ratio, sizeof ratio, "%.4f", c->ratio);
        snprintf(interval, sizeof interval, "[%.4f, %.4f]", c->lo, c->hi);
    }
    printf("%-*s  %-7s  %10s  %10s  %7s  %-18s  %s%s%s\n", key_width, c->key, kind, fa, fb, ratio, interval,
           outcome_name(c->outcome), c->outcome == NOT_COMPARABLE ? ": " : "",
           c->outcome == NOT_COMPARABLE ? c->why : "");
}

int hsdr_compare_report(const char *path_a, const char *path_b, double threshold, double confidence, int raw,
                        int json)
{
    const char *paths[2] = {path_a, path_b};
    results_file fa, fb;
    int rc = HSDR_EXIT_USAGE;
    int loaded_a = results_file_load(&fa, paths[0]) == 0;
    int loaded_b = loaded_a && results_file_load(&fb, paths[1]) == 0;
    comparison *cmp = NULL;
    if (!loaded_b)
        goto out;
    /* an interrupted run's missing cases would read as ONLY_IN: say why, on stderr (stdout may be JSON) */
    for (int side = 0; side < 2; side++) {
        const results_file *f = side ? &fb : &fa;
        size_t at;
        const cJSON *mark = hsdr_results_partial_marker(f->rows, f->n, &at);
        if (mark) {
            char what[160];
            hsdr_results_partial_describe(mark, what, sizeof what);
            fprintf(stderr, "hsdr compare: note: %s %s:%zu: rows of an interrupted run (%s): its missing cases show "
                    "as ONLY_IN_%s\n", side ? "B" : "A", f->path, f->lines[at], what, side ? "A" : "B");
        }
    }
    cmp = calloc(fa.n + fb.n + 1, sizeof *cmp);
    if (!cmp) {
        fprintf(stderr, "hsdr compare: out of memory\n");
        goto out;
    }
    /* A's keys in A's order, then the keys only B has in B's order */
    size_t nc = 0;
    long counts[N_OUTCOMES] = {0};
    int key_width = 3;
    for (size_t i = 0; i < fa.n; i++) {
        comparison *c = &cmp[nc++];
        c->key = row_key(fa.rows[i]);
        const cJSON *rb = find_key(&fb, c->key);
        if (rb)
            compare_one(c, fa.rows[i], rb, raw, threshold, confidence);
        else
            c->outcome = ONLY_IN_A;
    }
    for (size_t i = 0; i < fb.n; i++)
        if (!find_key(&fa, row_key(fb.rows[i]))) {
            cmp[nc].key = row_key(fb.rows[i]);
            cmp[nc++].outcome = ONLY_IN_B;
        }
    for (size_t i = 0; i < nc; i++) {
        counts[cmp[i].outcome]++;
        int len = (int)strlen(cmp[i].key);
        key_width = len > key_width ? len : key_width;
    }
    if (!json) {
        printf("A: %s (%zu rows)\nB: %s (%zu rows)\n", fa.path, fa.n, fb.path, fb.n);
        printf("B relative to A: ratio = figure(B) / figure(A), %g%% bootstrap interval (%d resamples); SAME when the "
               "interval lies within 1 +- %g, AMBIGUOUS when it crosses a bound. Figures %s: paired = the median of "
               "the per-round ratios to the run's own production variant; ceiling = the median time over the floor "
               "at the run's own ceiling (production rows); raw = the median time\n",
               100.0 * confidence, HSDR_COMPARE_RESAMPLES, threshold,
               raw ? "(--raw: every key raw)" : "(each time normalized within its own run, so that drift between the "
                                                 "runs cancels)");
        printf("%-*s  %-7s  %10s  %10s  %7s  %-18s  %s\n", key_width, "key", "figure", "A", "B", "ratio", "interval",
               "verdict");
    }
    for (size_t i = 0; i < nc; i++) {
        if (json)
            print_json(&cmp[i]);
        else
            print_text(&cmp[i], key_width);
    }
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "a", fa.path);
        cJSON_AddStringToObject(o, "b", fb.path);
        cJSON_AddNumberToObject(o, "threshold", threshold);
        cJSON_AddBoolToObject(o, "raw", raw);
        cJSON_AddNumberToObject(o, "confidence", confidence);
        cJSON_AddNumberToObject(o, "resamples", HSDR_COMPARE_RESAMPLES);
        cJSON *cs = cJSON_AddObjectToObject(o, "counts");
        for (int k = 0; k < N_OUTCOMES; k++)
            cJSON_AddNumberToObject(cs, outcome_name(report_order[k]), (double)counts[report_order[k]]);
        hsdr_results_emit(o);
    } else {
        for (int k = 0; k < N_OUTCOMES; k++)
            printf("%s%ld %s", k ? ", " : "", counts[report_order[k]], outcome_name(report_order[k]));
        printf("\n");
    }
    rc = HSDR_EXIT_OK;
out:
    free(cmp);
    if (loaded_a)
        results_file_free(&fa);
    if (loaded_b)
        results_file_free(&fb);
    return rc;
}
