/* Fractional-LNS tree over the 8 phases of a group (spec/lns8.md section 5). */
#include <math.h>

#include "flns_tables.h"
#include "hsdr.h"

int hsdr_flns_params_ok(int F, int b)
{
    return F >= 0 && F <= HSDR_FLNS_F_MAX && b >= 4 && b <= HSDR_FLNS_B_MAX;
}

int32_t hsdr_flns_lc_at(int F, uint32_t c)
{
    return hsdr_flns_lc[F][c];
}

int32_t hsdr_flns_kplus_at(int F, int64_t d)
{
    return d < hsdr_flns_kplus_len[F] ? hsdr_flns_kplus[F][d] : 0;
}

int32_t hsdr_flns_kminus_at(int F, int64_t d)
{
    return d < hsdr_flns_kminus_len[F] ? hsdr_flns_kminus[F][d] : 0;
}

static int bitlen32(uint32_t n)
{
    return n ? 32 - __builtin_clz(n) : 0;
}

hsdr_flns hsdr_flns_from_phase(int32_t a, int p, int F, int b)
{
    if (a == 0)
        return (hsdr_flns){0, 0};
    uint32_t n = a < 0 ? (uint32_t)0 - (uint32_t)a : (uint32_t)a;
    int z = bitlen32(n) - b;
    uint32_t c = n;
    if (z > 0) {
        c = (n + (1u << (z - 1))) >> z;
        if (c == (1u << b)) {
            c = 1u << (b - 1);
            z++;
        }
    } else {
        z = 0;
    }
    int32_t lambda = (int32_t)((p + 8 * z) << F) + hsdr_flns_lc_at(F, c);
    return (hsdr_flns){lambda, (int8_t)(a < 0 ? -1 : 1)};
}

hsdr_flns hsdr_flns_combine(hsdr_flns x, hsdr_flns y, int F)
{
    if (x.sign == 0)
        return y;
    if (y.sign == 0)
        return x;
    hsdr_flns hi = x, lo = y; /* on equal lambda the first operand is hi */
    if (y.lambda > x.lambda) {
        hi = y;
        lo = x;
    }
    int64_t d = (int64_t)hi.lambda - lo.lambda;
    if (hi.sign == lo.sign)
        return (hsdr_flns){(int32_t)(hi.lambda + hsdr_flns_kplus_at(F, d)), hi.sign};
    if (d == 0)
        return (hsdr_flns){0, 0};
    return (hsdr_flns){(int32_t)(hi.lambda + hsdr_flns_kminus_at(F, d)), hi.sign};
}

hsdr_flns hsdr_flns_tree(const int32_t A[8], int F, int b)
{
    hsdr_flns leaf[8], mid[4], top[2];
    for (int p = 0; p < 8; p++)
        leaf[p] = hsdr_flns_from_phase(A[p], p, F, b);
    for (int i = 0; i < 4; i++)
        mid[i] = hsdr_flns_combine(leaf[2 * i], leaf[2 * i + 1], F);
    for (int i = 0; i < 2; i++)
        top[i] = hsdr_flns_combine(mid[2 * i], mid[2 * i + 1], F);
    return hsdr_flns_combine(top[0], top[1], F);
}

double hsdr_flns_value(hsdr_flns r, int F, int e, double d)
{
    if (r.sign == 0)
        return 0.0;
    double log2v = ((double)r.lambda / (double)(1 << F) - 74.0) / 8.0;
    return r.sign * exp2(log2v) * ldexp(d, e);
}
