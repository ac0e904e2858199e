#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hsdr_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int hsdr_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

double hsdr_quantile(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return sorted[n - 1];
    return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

int hsdr_nearest_rank(const int *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return sorted[rank ? (rank > n ? n : rank) - 1 : 0];
}

uint64_t hsdr_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double hsdr_sorted_median(const double *sorted, size_t n)
{
    return n & 1 ? sorted[n / 2] : sorted[n / 2 - 1] + (sorted[n / 2] - sorted[n / 2 - 1]) / 2;
}

double hsdr_resample_median(const double *sorted, size_t n, uint32_t *counts, uint64_t *rng)
{
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[((hsdr_splitmix64(rng) >> 32) * (uint64_t)n) >> 32]++;
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

double hsdr_block_resample_median(const double *x, const int *blocks, int nb, double *scratch, uint64_t *rng)
{
    size_t m = 0;
    for (int k = 0; k < nb; k++) {
        int b = (int)(((hsdr_splitmix64(rng) >> 32) * (uint64_t)nb) >> 32), start = 0;
        for (int j = 0; j < b; j++)
            start += blocks[j];
        memcpy(scratch + m, x + start, sizeof(double) * (size_t)blocks[b]);
        m += (size_t)blocks[b];
    }
    qsort(scratch, m, sizeof(double), hsdr_cmp_double);
    return hsdr_sorted_median(scratch, m);
}

int hsdr_blocks_cover(const int *blocks, int nb, size_t n)
{
    size_t sum = 0;
    for (int k = 0; blocks && k < nb; k++) {
        if (blocks[k] < 1)
            return 0;
        sum += (size_t)blocks[k];
    }
    return blocks && nb > 1 && sum == n;
}

size_t hsdr_blocks_total(const int *blocks, int nb)
{
    size_t n = 0, most = 0;
    for (int k = 0; k < nb; k++) {
        n += (size_t)blocks[k];
        most = (size_t)blocks[k] > most ? (size_t)blocks[k] : most;
    }
    return most * (size_t)nb > n ? most * (size_t)nb : n; /* a resample of nb blocks holds at most this many */
}

int hsdr_paired_ratio(const double *a, const double *b, size_t n, const int *blocks, int nb, double confidence,
                      double *ratio, double *lo, double *hi)
{
    *ratio = *lo = *hi = NAN;
    if (n == 0 || !(confidence > 0.0 && confidence < 1.0))
        return -1;
    const int by_block = hsdr_blocks_cover(blocks, nb, n);
    const size_t scratch_n = by_block ? hsdr_blocks_total(blocks, nb) : n;
    double *r = malloc(n * sizeof *r), *boot = malloc(HSDR_BOOTSTRAP_RESAMPLES * sizeof *boot);
    double *scratch = malloc(scratch_n * sizeof *scratch);
    uint32_t *counts = malloc(n * sizeof *counts);
    int rc = -1;
    if (!r || !boot || !scratch || !counts)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (!(a[i] > 0.0 && b[i] > 0.0 && isfinite(a[i]) && isfinite(b[i])))
            goto out;
        r[i] = a[i] / b[i];
    }
    uint64_t rng = HSDR_BOOTSTRAP_SEED;
    if (by_block) { /* whole visits resampled: rounds of one visit share the machine's state */
        for (size_t i = 0; i < HSDR_BOOTSTRAP_RESAMPLES; i++)
            boot[i] = hsdr_block_resample_median(r, blocks, nb, scratch, &rng);
    }
    qsort(r, n, sizeof *r, hsdr_cmp_double);
    *ratio = hsdr_sorted_median(r, n);
    if (!by_block) /* rounds resampled with replacement: each round contributes its one ratio */
        for (size_t i = 0; i < HSDR_BOOTSTRAP_RESAMPLES; i++)
            boot[i] = hsdr_resample_median(r, n, counts, &rng);
    qsort(boot, HSDR_BOOTSTRAP_RESAMPLES, sizeof *boot, hsdr_cmp_double);
    *lo = hsdr_quantile(boot, HSDR_BOOTSTRAP_RESAMPLES, (1.0 - confidence) / 2);
    *hi = hsdr_quantile(boot, HSDR_BOOTSTRAP_RESAMPLES, 1.0 - (1.0 - confidence) / 2);
    /* the interval holds the estimate (a block median need not straddle the whole-sample median) */
    *lo = *lo < *ratio ? *lo : *ratio;
    *hi = *hi > *ratio ? *hi : *ratio;
    rc = 0;
out:
    free(r);
    free(boot);
    free(scratch);
    free(counts);
    return rc;
}

void hsdr_stats_free(hsdr_stats *st)
{
    free(st->samples);
    free(st->ref_samples);
    st->samples = st->ref_samples = NULL;
}

/* The summary of samples[0..n) into st, using sorted (n doubles) as scratch. */
void hsdr_stats_summarize_with(hsdr_stats *st, double *sorted)
{
    const size_t n = (size_t)st->reps;
    if (n == 0)
        return;
    memcpy(sorted, st->samples, sizeof(double) * n);
    qsort(sorted, n, sizeof(double), hsdr_cmp_double);
    st->median = hsdr_quantile(sorted, n, 0.5);
    st->p10 = hsdr_quantile(sorted, n, 0.1);
    st->p25 = hsdr_quantile(sorted, n, 0.25);
    st->p75 = hsdr_quantile(sorted, n, 0.75);
    st->p90 = hsdr_quantile(sorted, n, 0.9);
    st->min = sorted[0];
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m += sorted[i];
    st->mean = m / (double)n;
    st->rel_spread = st->median > 0 ? (st->p75 - st->p25) / st->median : 0.0;
}

void hsdr_stats_summarize(hsdr_stats *st)
{
    double *sorted = malloc(sizeof(double) * (size_t)(st->reps > 0 ? st->reps : 1));
    if (sorted)
        hsdr_stats_summarize_with(st, sorted);
    free(sorted);
}

