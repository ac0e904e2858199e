/* `hsdr compare A.jsonl B.jsonl`: per key present in both result files, is B faster, slower, the same as A, or is
 * the difference inside the noise? Each side's figure is normalized within its own run, so that the drift of a
 * machine between two runs cancels: a variant's per-round ratios to the production variant timed in the same rounds
 * (paired), a production row's time over the ceiling measured in its run, or the raw times (--raw, or rows of old
 * files). A bootstrap interval of figure(B) / figure(A) decides; the resampling uses a fixed seed, so the same
 * files always give the same report. */
#ifndef HSDR_COMPARE_H
#define HSDR_COMPARE_H
#include <stddef.h>

#include "stats.h"

typedef enum { HSDR_SAME, HSDR_FASTER, HSDR_SLOWER, HSDR_AMBIGUOUS } hsdr_verdict;

#define HSDR_COMPARE_THRESHOLD 0.02 /* default --threshold */
#define HSDR_COMPARE_MIN_SAMPLES 3   /* fewer raw samples on either side: no verdict (AMBIGUOUS / not comparable) */
#define HSDR_COMPARE_RESAMPLES HSDR_BOOTSTRAP_RESAMPLES /* bootstrap resamples per comparison */
#define HSDR_COMPARE_SEED HSDR_BOOTSTRAP_SEED           /* the fixed seed; reset for every comparison */

/* "SAME" | "FASTER" | "SLOWER" | "AMBIGUOUS" */
const char *hsdr_verdict_name(hsdr_verdict v);

/* Verdict for B relative to A. *ratio = median(b) / median(a); [*lo, *hi] = the central `confidence` percentile
 * interval of that ratio over HSDR_COMPARE_RESAMPLES bootstrap resamples (a and b resampled independently).
 * FASTER: hi < 1 - threshold; SLOWER: lo > 1 + threshold; SAME: [lo, hi] inside [1 - threshold, 1 + threshold];
 * AMBIGUOUS otherwise: the interval reaches across a boundary, so the data cannot tell. Also AMBIGUOUS, with
 * [lo, hi] = [0, inf], when either side has fewer than HSDR_COMPARE_MIN_SAMPLES samples, a sample is not finite,
 * median(a) is not positive, or threshold / confidence is outside (0, 1) (*ratio is NaN when it cannot be formed).
 * Output pointers may be NULL. Deterministic: the same inputs give bit-identical outputs. */
hsdr_verdict hsdr_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                                  double confidence, double *ratio, double *lo, double *hi);

/* A figure of one row: the median of num[0..n), or, with den, median(num) / (median(den) * den_scale) -- a time
 * over the ceiling measured in the same run, say. Paired per-round ratios are a figure without den. */
typedef struct {
    const double *num;
    size_t n;
    const double *den; /* NULL: none */
    size_t nd;
    double den_scale;
    const int *blocks; /* NULL, or nblocks > 1 lengths summing to n: num comes in blocks (visits) resampled whole */
    int nblocks;
} hsdr_figure;

/* Verdict for figure B relative to figure A, as hsdr_compare_samples (which compares two plain figures), with each
 * bootstrap resample drawing num (by blocks when it has them) and den of both sides independently. */
hsdr_verdict hsdr_compare_figures(const hsdr_figure *a, const hsdr_figure *b, double threshold, double confidence,
                                  double *ratio, double *lo, double *hi);

/* The report of `hsdr compare A.jsonl B.jsonl` (harness/cmd/compare.c reads the options): a line (json: a JSON
 * row) per key, then the counts. Exit 0 (a report, also when B is slower), 2 on an unreadable or malformed file (the
 * message names file:line). */
int hsdr_compare_report(const char *path_a, const char *path_b, double threshold, double confidence, int raw,
                        int json);

#endif
