/* Double-double arithmetic (about 106 significant bits) for references that must be "fp64 or better".
 * Requires strict IEEE evaluation: the project compiles with -ffp-contract=off and never with -ffast-math. */
#ifndef HSDR_DD_H
#define HSDR_DD_H
#include <math.h>

typedef struct {
    double hi, lo;
} hsdr_dd;

static inline hsdr_dd hsdr_dd_two_sum(double a, double b)
{
    double s = a + b, bb = s - a;
    return (hsdr_dd){s, (a - (s - bb)) + (b - bb)};
}

static inline hsdr_dd hsdr_dd_quick_two_sum(double a, double b) /* requires |a| >= |b| or a == 0 */
{
    double s = a + b;
    return (hsdr_dd){s, b - (s - a)};
}

static inline hsdr_dd hsdr_dd_two_prod(double a, double b)
{
    double p = a * b;
    return (hsdr_dd){p, fma(a, b, -p)};
}

static inline hsdr_dd hsdr_dd_add(hsdr_dd a, hsdr_dd b)
{
    hsdr_dd s = hsdr_dd_two_sum(a.hi, b.hi);
    hsdr_dd t = hsdr_dd_two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = hsdr_dd_quick_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return hsdr_dd_quick_two_sum(s.hi, s.lo);
}

static inline hsdr_dd hsdr_dd_add_d(hsdr_dd a, double b)
{
    return hsdr_dd_add(a, (hsdr_dd){b, 0.0});
}

static inline hsdr_dd hsdr_dd_mul_d(hsdr_dd a, double b)
{
    hsdr_dd p = hsdr_dd_two_prod(a.hi, b);
    p.lo += a.lo * b;
    return hsdr_dd_quick_two_sum(p.hi, p.lo);
}

static inline double hsdr_dd_to_double(hsdr_dd a)
{
    return a.hi + a.lo;
}

#endif
