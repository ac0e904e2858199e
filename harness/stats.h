/* The harness's small statistics, one implementation each (timing, bandwidth, compare, profile, states, inputs). */
#ifndef HSDR_STATS_H
#define HSDR_STATS_H
#include <stddef.h>
#include <stdint.h>

/* qsort comparators */
int hsdr_cmp_double(const void *a, const void *b);
int hsdr_cmp_int(const void *a, const void *b);
/* Linear interpolation between the closest ranks of sorted[0..n) (n >= 1) at quantile q in [0, 1]; monotone in q
 * and exact when neighbours are equal. */
double hsdr_quantile(const double *sorted, size_t n, double q);
/* Nearest-rank percentile of sorted[0..n) (n >= 1). */
int hsdr_nearest_rank(const int *sorted, size_t n, double q);

/* Timing statistics of one subject (harness/timing.c), spelled the same way in every output (results.h). */
typedef struct {
    double median, p10, p25, p75, p90, min, mean, rel_spread; /* ns per launch; rel_spread = (p75 - p25) / median */
    int reps;
    int launches_per_sample;
    const char *stop; /* noise | time_limit | max_reps */
    double *samples;  /* reps samples in ns per launch, in round order (owned; hsdr_stats_free) */
    double *ref_samples; /* NULL, or per round the sample of the subject's reference taken right before its own
                          * (owned): the partner of a paired ratio, adjacent in time */
} hsdr_stats;
void hsdr_stats_free(hsdr_stats *st);
/* The summary fields of st from its reps samples; _with: sorted (reps doubles) as scratch, no allocation. */
void hsdr_stats_summarize(hsdr_stats *st);
void hsdr_stats_summarize_with(hsdr_stats *st, double *sorted);

/* ---- bootstrap (compare, paired ratios): a fixed seed, so the same samples always give the same interval ---- */
#define HSDR_BOOTSTRAP_RESAMPLES 2000  /* resamples per interval */
#define HSDR_BOOTSTRAP_SEED 0x68736472u /* "hsdr"; reset for every interval */
uint64_t hsdr_splitmix64(uint64_t *state);
/* Median of sorted[0..n) (n >= 1). */
double hsdr_sorted_median(const double *sorted, size_t n);
/* Median of one bootstrap resample of sorted[0..n): n indices drawn with replacement (rng), counted into counts[n],
 * the middle rank(s) found by walking the counts -- O(n), no sort per resample. */
double hsdr_resample_median(const double *sorted, size_t n, uint32_t *counts, uint64_t *rng);
/* Median of one block bootstrap resample of x: nb blocks (consecutive runs of blocks[k] values) drawn with
 * replacement and concatenated into scratch (hsdr_blocks_total(blocks, nb) doubles). */
double hsdr_block_resample_median(const double *x, const int *blocks, int nb, double *scratch, uint64_t *rng);
size_t hsdr_blocks_total(const int *blocks, int nb);
/* 1 when blocks holds nb > 1 positive lengths summing to n: samples that come in blocks to resample whole. */
int hsdr_blocks_cover(const int *blocks, int nb, size_t n);
/* Two subjects measured side by side (a[i], b[i] from round i): *ratio = the median of the per-round ratios
 * a[i] / b[i], [*lo, *hi] its central `confidence` bootstrap interval. Drift between rounds moves a[i] and b[i]
 * together and cancels. blocks (nb > 1 block lengths summing to n; NULL: none): the rounds come in blocks -- the
 * visits of hsdr run -- whose rounds share the machine's state, so whole blocks are resampled (the interval then
 * holds the visits' disagreement, which rounds resampled one by one would hide). -1 (outputs NaN) when n == 0, a
 * sample is not positive and finite, or out of memory. */
int hsdr_paired_ratio(const double *a, const double *b, size_t n, const int *blocks, int nb, double confidence,
                      double *ratio, double *lo, double *hi);

#endif
