#include "stats.h"

#include <math.h>

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
