/* The harness's small statistics, one implementation each (timing, bandwidth, compare, profile, states, inputs). */
#ifndef HSDR_STATS_H
#define HSDR_STATS_H
#include <stddef.h>

/* qsort comparators */
int hsdr_cmp_double(const void *a, const void *b);
int hsdr_cmp_int(const void *a, const void *b);
/* Linear interpolation between the closest ranks of sorted[0..n) (n >= 1) at quantile q in [0, 1]; monotone in q
 * and exact when neighbours are equal. */
double hsdr_quantile(const double *sorted, size_t n, double q);
/* Nearest-rank percentile of sorted[0..n) (n >= 1). */
int hsdr_nearest_rank(const int *sorted, size_t n, double q);

#endif
