/* `hsdr compare`: B relative to A per key, from the raw samples, with a verdict allowed to be AMBIGUOUS. */
#include "compare.h"

#include <cjson/cJSON.h>
#include <errno.h>
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

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Median of sorted x[0..n-1]. */
static double sorted_median(const double *x, size_t n)
{
    return n & 1 ? x[n / 2] : x[n / 2 - 1] + (x[n / 2] - x[n / 2 - 1]) / 2;
}

/* Median of one bootstrap resample of sorted x: draw n indices with replacement, count them, and walk the counts to
 * the middle rank(s) -- O(n), no sorting per resample. */
static double resample_median(const double *sorted, size_t n, uint32_t *counts, uint64_t *rng)
{
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[((splitmix64(rng) >> 32) * (uint64_t)n) >> 32]++;
    size_t lo_rank = (n - 1) / 2, hi_rank = n / 2, cum = 0;
    double lo = 0.0;
    for (size_t i = 0; i < n; i++) {
        size_t next = cum + counts[i];
        if (lo_rank >= cum && lo_rank < next)
            lo = sorted[i];
        if (hi_rank >= cum && hi_rank < next)
            return lo + (sorted[i] - lo) / 2;
        cum = next;
    }
    return lo; /* not reached: the counts sum to n */
}

static int usable(const double *x, size_t n)
{
    if (!x || n < HSDR_COMPARE_MIN_SAMPLES)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || x[i] <= 0.0)
            return 0;
    return 1;
}

hsdr_verdict hsdr_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                                  double confidence, double *ratio, double *lo, double *hi)
{
    double r = NAN, l = 0.0, h = INFINITY;
    hsdr_verdict v = HSDR_AMBIGUOUS;
    double *sa = NULL, *sb = NULL, *boot = NULL;
    uint32_t *counts = NULL;
    if (!(threshold > 0.0 && threshold < 1.0 && confidence > 0.0 && confidence < 1.0) || !usable(a, na) ||
        !usable(b, nb)) {
        /* the ratio of medians still, when it can be formed: a report may show it, never a verdict on it */
        if (a && b && na > 0 && nb > 0 && (sa = malloc(na * sizeof *sa)) && (sb = malloc(nb * sizeof *sb))) {
            memcpy(sa, a, na * sizeof *sa);
            memcpy(sb, b, nb * sizeof *sb);
            qsort(sa, na, sizeof *sa, hsdr_cmp_double);
            qsort(sb, nb, sizeof *sb, hsdr_cmp_double);
            double ma = sorted_median(sa, na), mb = sorted_median(sb, nb);
            if (ma > 0.0 && isfinite(ma) && isfinite(mb))
                r = mb / ma;
        }
        goto out;
    }
    sa = malloc(na * sizeof *sa);
    sb = malloc(nb * sizeof *sb);
    boot = malloc(HSDR_COMPARE_RESAMPLES * sizeof *boot);
    counts = malloc((na > nb ? na : nb) * sizeof *counts);
    if (!sa || !sb || !boot || !counts)
        goto out;
    memcpy(sa, a, na * sizeof *sa);
    memcpy(sb, b, nb * sizeof *sb);
    qsort(sa, na, sizeof *sa, hsdr_cmp_double);
    qsort(sb, nb, sizeof *sb, hsdr_cmp_double);
    r = sorted_median(sb, nb) / sorted_median(sa, na);
    uint64_t rng = HSDR_COMPARE_SEED;
    for (size_t i = 0; i < HSDR_COMPARE_RESAMPLES; i++) {
        double ma = resample_median(sa, na, counts, &rng);
        double mb = resample_median(sb, nb, counts, &rng);
        boot[i] = mb / ma;
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
    free(sa);
    free(sb);
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

/* The raw samples of a row with status ok; NULL with the reason in why when it has none usable. Caller frees. */
static double *row_samples(const cJSON *row, const char *side, size_t *n, char *why, size_t whylen)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(row, "status");
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(row, "samples_ns");
    if (!cJSON_IsString(status)) {
        snprintf(why, whylen, "%s has no status", side);
        return NULL;
    }
    if (strcmp(status->valuestring, "ok") != 0) {
        snprintf(why, whylen, "%s status %s", side, status->valuestring);
        return NULL;
    }
    if (!cJSON_IsArray(samples)) {
        snprintf(why, whylen, "%s has no samples_ns", side);
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(samples);
    if (count < HSDR_COMPARE_MIN_SAMPLES) {
        snprintf(why, whylen, "%s has %zu samples (needs %d)", side, count, HSDR_COMPARE_MIN_SAMPLES);
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
            snprintf(why, whylen, "%s samples_ns[%zu] is not a positive number", side, i);
            free(x);
            return NULL;
        }
        x[i++] = s->valuedouble;
    }
    *n = count;
    return x;
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
    double median_a, median_b, ratio, lo, hi;
    size_t na, nb;
    char why[160];
} comparison;

static void compare_one(comparison *c, const cJSON *ra, const cJSON *rb, double threshold, double confidence)
{
    size_t na = 0, nb = 0;
    double *a = row_samples(ra, "A", &na, c->why, sizeof c->why);
    double *b = a ? row_samples(rb, "B", &nb, c->why, sizeof c->why) : NULL;
    if (!a || !b) {
        c->outcome = NOT_COMPARABLE;
    } else {
        c->outcome = (int)hsdr_compare_samples(a, na, b, nb, threshold, confidence, &c->ratio, &c->lo, &c->hi);
        qsort(a, na, sizeof *a, hsdr_cmp_double);
        qsort(b, nb, sizeof *b, hsdr_cmp_double);
        c->median_a = sorted_median(a, na);
        c->median_b = sorted_median(b, nb);
        c->na = na;
        c->nb = nb;
    }
    free(a);
    free(b);
}

static void print_json(const comparison *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", c->key);
    cJSON_AddStringToObject(o, "verdict", outcome_name(c->outcome));
    if (c->outcome < NOT_COMPARABLE) {
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
    char *txt = hsdr_results_print(o);
    printf("%s\n", txt ? txt : "{}");
    free(txt);
    cJSON_Delete(o);
}

static void print_text(const comparison *c, int key_width)
{
    char ma[32] = "-", mb[32] = "-", ratio[32] = "-", interval[64] = "-";
    if (c->outcome < NOT_COMPARABLE) {
        format_time(c->median_a, ma, sizeof ma);
        format_time(c->median_b, mb, sizeof mb);
        snprintf(ratio, sizeof ratio, "%.4f", c->ratio);
        snprintf(interval, sizeof interval, "[%.4f, %.4f]", c->lo, c->hi);
    }
    printf("%-*s  %10s  %10s  %7s  %-18s  %s%s%s\n", key_width, c->key, ma, mb, ratio, interval,
           outcome_name(c->outcome), c->outcome == NOT_COMPARABLE ? ": " : "",
           c->outcome == NOT_COMPARABLE ? c->why : "");
}

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
    fprintf(stderr, "usage: hsdr compare A.jsonl B.jsonl [--threshold 0.02] [--confidence 0.95] [--json]\n");
}

int hsdr_cmd_compare(int argc, char **argv)
{
    double threshold = 0.02, confidence = 0.95;
    int json = 0;
    const char *paths[2];
    int npaths = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threshold") == 0 || strcmp(argv[i], "--confidence") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hsdr compare: %s needs a value\n", argv[i]);
                return HSDR_EXIT_USAGE;
            }
            if (parse_fraction(argv[i], argv[i + 1], argv[i][2] == 't' ? &threshold : &confidence) != 0)
                return HSDR_EXIT_USAGE;
            i++;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "hsdr compare: unknown option '%s'\n", argv[i]);
            compare_usage();
            return HSDR_EXIT_USAGE;
        } else if (npaths == 2) {
            fprintf(stderr, "hsdr compare: give exactly two result files (a third: '%s')\n", argv[i]);
            compare_usage();
            return HSDR_EXIT_USAGE;
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (npaths != 2) {
        fprintf(stderr, "hsdr compare: give exactly two result files, A and B\n");
        compare_usage();
        return HSDR_EXIT_USAGE;
    }
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
            compare_one(c, fa.rows[i], rb, threshold, confidence);
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
        printf("B relative to A: ratio = median(B) / median(A) of the raw samples, %g%% bootstrap interval "
               "(%d resamples); SAME when the interval lies within 1 +- %g, AMBIGUOUS when it crosses a bound\n",
               100.0 * confidence, HSDR_COMPARE_RESAMPLES, threshold);
        printf("%-*s  %10s  %10s  %7s  %-18s  %s\n", key_width, "key", "median A", "median B", "ratio", "interval",
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
        cJSON_AddNumberToObject(o, "confidence", confidence);
        cJSON_AddNumberToObject(o, "resamples", HSDR_COMPARE_RESAMPLES);
        cJSON *cs = cJSON_AddObjectToObject(o, "counts");
        for (int k = 0; k < N_OUTCOMES; k++)
            cJSON_AddNumberToObject(cs, outcome_name(report_order[k]), (double)counts[report_order[k]]);
        char *txt = hsdr_results_print(o);
        printf("%s\n", txt ? txt : "{}");
        free(txt);
        cJSON_Delete(o);
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
