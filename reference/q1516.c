/* Exact group value (double-double) and Q15.16 materialization (spec/lns8.md sections 3 and 6). */
#include <math.h>

#include "hsdr.h"
#include "lns8_const.h"

hsdr_dd hsdr_group_sum_dd(const int32_t A[8], double d, int e)
{
    hsdr_dd acc = {0.0, 0.0};
    for (int p = 0; p < 8; p++) {
        if (A[p] == 0)
            continue;
        hsdr_dd term = hsdr_dd_two_prod((double)A[p], hsdr_lns8_cp_hi[p]); /* exact: |A| < 2^23 */
        term.lo += (double)A[p] * hsdr_lns8_cp_lo[p];
        acc = hsdr_dd_add(acc, term);
    }
    /* times d (exact fp16 value) and 2^(e - 9) */
    acc = hsdr_dd_mul_d(acc, d);
    acc.hi = ldexp(acc.hi, e - 9);
    acc.lo = ldexp(acc.lo, e - 9);
    return acc;
}

double hsdr_group_sum(const int32_t A[8], double d, int e)
{
    return hsdr_dd_to_double(hsdr_group_sum_dd(A, d, e));
}

int64_t hsdr_q1516_scale(const int32_t A[8])
{
    int64_t S = 0;
    for (int p = 0; p < 8; p++)
        S += (int64_t)A[p] * hsdr_lns8_c31[p]; /* |S| <= 2^54 */
    return S;
}

int64_t hsdr_q1516_materialize(int64_t S, double d, int e)
{
    return (int64_t)rint(ldexp((double)S * d, e + 16 - 31 - 9));
}

int64_t hsdr_q1516_group(const int32_t A[8], double d, int e)
{
    return hsdr_q1516_materialize(hsdr_q1516_scale(A), d, e);
}

int64_t hsdr_q1516_group_correct(const int32_t A[8], double d, int e)
{
    hsdr_dd v = hsdr_group_sum_dd(A, d, e);
    v.hi = ldexp(v.hi, 16);
    v.lo = ldexp(v.lo, 16);
    double r = rint(v.hi); /* nearest integer to hi, ties to even */
    double f = v.hi - r;   /* exact, in [-0.5, 0.5]; |lo| <= ulp(hi) / 2, so only f = +-0.5 can move r */
    /* f = +-0.5 means hi is a tie and r is the even neighbour: lo decides, and lo = 0 keeps the even one. */
    if (f == 0.5 && v.lo > 0.0)
        r += 1.0;
    else if (f == -0.5 && v.lo < 0.0)
        r -= 1.0;
    return (int64_t)r;
}

double hsdr_q1516_bound(double d, int e)
{
    double s = fabs(ldexp(d, e));
    return s <= 4.0 ? 1.0 : 1.0 + s / 8.0;
}
