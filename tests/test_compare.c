/* hsdr_compare_samples: the verdict of B relative to A on synthetic samples drawn under a fresh printed seed.
 * Clear shifts (x0.8, x1.25 with 2% noise) give FASTER / SLOWER, equal distributions with tight noise give SAME, a 3%
 * shift under 30% noise gives AMBIGUOUS (never a verdict inside the noise), fewer than 3 samples give no verdict, and
 * the bootstrap is deterministic and blind to sample order.
 *
 * The margins (why these checks cannot fail by chance): with n samples of relative noise s, the median's relative
 * standard error is about 1.25 s / sqrt(n), and the ratio's about sqrt(2) times that. n = 40, s = 2%: 0.56%, so the
 * 95% interval of a x0.8 ratio ends near 0.81, 30 standard errors below the 0.98 bound. n = 60, s = 0.3%: 0.07%,
 * so the SAME interval stays within 1 +- 0.2%, 25 standard errors inside 1 +- 2%. Statements about the ambiguous
 * case are made on counts over many independent draws, with bounds 5+ standard deviations from their expectation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "rng.h"
#include "testing.h"

#define MAXN 256

static void draw(hsdr_rng *r, double *x, size_t n, double scale, double noise)
{
    for (size_t i = 0; i < n; i++) {
        double g = hsdr_rng_gaussian(r);
        g = g > 3.0 ? 3.0 : g < -3.0 ? -3.0 : g; /* keep every time positive also at 30% noise */
        x[i] = 1000.0 * scale * (1.0 + noise * g);
    }
}

static void shuffle(hsdr_rng *r, double *x, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = hsdr_rng_below(r, (uint32_t)i);
        double t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}

/* The verdict must agree with the interval it reports. */
static void check_consistent(hsdr_verdict v, double lo, double hi, double threshold, const char *what)
{
    hsdr_verdict want = hi < 1 - threshold                          ? HSDR_FASTER
                        : lo > 1 + threshold                        ? HSDR_SLOWER
                        : lo >= 1 - threshold && hi <= 1 + threshold ? HSDR_SAME
                                                                     : HSDR_AMBIGUOUS;
    CHECK(v == want && lo <= hi, "%s: verdict %s but interval [%.6f, %.6f]", what, hsdr_verdict_name(v), lo, hi);
}

static void clear_cases(hsdr_rng *r)
{
    double a[MAXN], b[MAXN], ratio, lo, hi;
    for (int trial = 0; trial < 10; trial++) {
        draw(r, a, 40, 1.0, 0.02);
        draw(r, b, 40, 0.8, 0.02);
        hsdr_verdict v = hsdr_compare_samples(a, 40, b, 40, 0.02, 0.95, &ratio, &lo, &hi);
        CHECK(v == HSDR_FASTER, "x0.8: %s, ratio %.4f [%.4f, %.4f]", hsdr_verdict_name(v), ratio, lo, hi);
        CHECK(fabs(ratio - 0.8) < 0.03 && lo <= ratio && ratio <= hi, "x0.8: ratio %.4f [%.4f, %.4f]", ratio, lo, hi);
        check_consistent(v, lo, hi, 0.02, "x0.8");

        draw(r, b, 40, 1.25, 0.02);
        v = hsdr_compare_samples(a, 40, b, 40, 0.02, 0.95, &ratio, &lo, &hi);
        CHECK(v == HSDR_SLOWER, "x1.25: %s, ratio %.4f [%.4f, %.4f]", hsdr_verdict_name(v), ratio, lo, hi);
        CHECK(fabs(ratio - 1.25) < 0.04 && lo <= ratio && ratio <= hi, "x1.25: ratio %.4f", ratio);
        check_consistent(v, lo, hi, 0.02, "x1.25");

        /* same distribution, tight noise; unequal sample counts */
        draw(r, a, 60, 1.0, 0.003);
        draw(r, b, 47, 1.0, 0.003);
        v = hsdr_compare_samples(a, 60, b, 47, 0.02, 0.95, &ratio, &lo, &hi);
        CHECK(v == HSDR_SAME, "same: %s, ratio %.5f [%.5f, %.5f]", hsdr_verdict_name(v), ratio, lo, hi);
        check_consistent(v, lo, hi, 0.02, "same");

        /* B = A exactly: ratio exactly 1, still an honest (non-degenerate) interval */
        v = hsdr_compare_samples(a, 60, a, 60, 0.02, 0.95, &ratio, &lo, &hi);
        CHECK(v == HSDR_SAME && ratio == 1.0 && lo < 1.0 && hi > 1.0, "B == A: %s, ratio %.17g [%.5f, %.5f]",
              hsdr_verdict_name(v), ratio, lo, hi);
    }
}

static void ambiguous_cases(hsdr_rng *r)
{
    double a[MAXN], b[MAXN], ratio, lo, hi;
    /* B is A's own draws shifted by 3% and shuffled: the ratio of medians is exactly 1.03, and 30% noise spreads the
     * interval over about +-15%, across the 1.02 bound (over 1e5 draws: lo never above 0.99, hi never below 1.07). */
    for (int trial = 0; trial < 20; trial++) {
        draw(r, a, 30, 1.0, 0.30);
        for (size_t i = 0; i < 30; i++)
            b[i] = a[i] * 1.03;
        shuffle(r, b, 30);
        hsdr_verdict v = hsdr_compare_samples(a, 30, b, 30, 0.02, 0.95, &ratio, &lo, &hi);
        CHECK(v == HSDR_AMBIGUOUS, "3%% under 30%% noise: %s, ratio %.4f [%.4f, %.4f]", hsdr_verdict_name(v), ratio,
              lo, hi);
        CHECK(fabs(ratio - 1.03) < 1e-12 && lo < 1.0 && hi > 1.05, "ratio %.6f [%.4f, %.4f]", ratio, lo, hi);
        check_consistent(v, lo, hi, 0.02, "ambiguous");
    }
    /* Independent draws: the true ratio is 1.03. A correct test may call that SLOWER (rarely, at this noise), but
     * must almost never call it FASTER or SAME. Over 300 x 200 draws: FASTER at most 4 per 200, AMBIGUOUS at least
     * 187 per 200, SAME never. */
    int counts[4] = {0, 0, 0, 0};
    for (int trial = 0; trial < 200; trial++) {
        draw(r, a, 30, 1.0, 0.30);
        draw(r, b, 30, 1.03, 0.30);
        hsdr_verdict v = hsdr_compare_samples(a, 30, b, 30, 0.02, 0.95, &ratio, &lo, &hi);
        check_consistent(v, lo, hi, 0.02, "independent ambiguous");
        counts[v]++;
    }
    CHECK(counts[HSDR_SAME] == 0, "SAME %d times out of 200 with 30%% noise", counts[HSDR_SAME]);
    CHECK(counts[HSDR_FASTER] <= 8, "FASTER %d times out of 200 for a 3%% slowdown", counts[HSDR_FASTER]);
    CHECK(counts[HSDR_AMBIGUOUS] >= 160, "AMBIGUOUS only %d times out of 200 (FASTER %d, SLOWER %d)",
          counts[HSDR_AMBIGUOUS], counts[HSDR_FASTER], counts[HSDR_SLOWER]);
}

/* The interval means what it says: over many draws of equal distributions, 1 lies inside the 95% interval about
 * 95% of the time (measured: 193 of 200 on average, at least 185 over 300 x 200 draws; the bound is 170). */
static void coverage(hsdr_rng *r)
{
    double a[MAXN], b[MAXN], lo, hi;
    int covered = 0;
    for (int trial = 0; trial < 200; trial++) {
        draw(r, a, 51, 1.0, 0.05);
        draw(r, b, 51, 1.0, 0.05);
        hsdr_compare_samples(a, 51, b, 51, 0.02, 0.95, NULL, &lo, &hi);
        covered += lo <= 1.0 && 1.0 <= hi;
    }
    CHECK(covered >= 170, "the 95%% interval covered the true ratio in only %d of 200 draws", covered);
    printf("test_compare: 95%% interval covered the true ratio in %d of 200 draws\n", covered);
}

static void tiny_and_invalid(hsdr_rng *r)
{
    double a[MAXN], b[MAXN], ratio, lo, hi;
    draw(r, a, 8, 1.0, 0.01);
    draw(r, b, 8, 0.5, 0.01);
    /* fewer than 3 samples on either side: no verdict, whatever the ratio, and an interval that claims nothing */
    for (size_t na = 0; na <= 8; na++)
        for (size_t nb = 0; nb <= 8; nb++) {
            hsdr_verdict v = hsdr_compare_samples(a, na, b, nb, 0.02, 0.95, &ratio, &lo, &hi);
            if (na < HSDR_COMPARE_MIN_SAMPLES || nb < HSDR_COMPARE_MIN_SAMPLES) {
                CHECK(v == HSDR_AMBIGUOUS && lo == 0.0 && isinf(hi), "na %zu nb %zu: %s [%g, %g]", na, nb,
                      hsdr_verdict_name(v), lo, hi);
                CHECK(na && nb ? fabs(ratio - 0.5) < 0.04 : isnan(ratio), "na %zu nb %zu: ratio %g", na, nb, ratio);
            } else {
                /* 3 samples suffice for a halving with 1% noise */
                CHECK(v == HSDR_FASTER && hi < 0.6, "na %zu nb %zu: %s, ratio %.4f [%.4f, %.4f]", na, nb,
                      hsdr_verdict_name(v), ratio, lo, hi);
            }
        }
    CHECK(hsdr_compare_samples(NULL, 0, NULL, 0, 0.02, 0.95, NULL, NULL, NULL) == HSDR_AMBIGUOUS, "NULL inputs");
    /* parameters outside (0, 1), and samples that are not times */
    const double bad_params[][2] = {{0.0, 0.95}, {-0.1, 0.95}, {1.0, 0.95}, {0.02, 0.0}, {0.02, 1.0}, {NAN, 0.95}};
    for (size_t i = 0; i < sizeof bad_params / sizeof bad_params[0]; i++) {
        hsdr_verdict v = hsdr_compare_samples(a, 8, b, 8, bad_params[i][0], bad_params[i][1], &ratio, &lo, &hi);
        CHECK(v == HSDR_AMBIGUOUS && lo == 0.0 && isinf(hi), "threshold %g confidence %g: %s", bad_params[i][0],
              bad_params[i][1], hsdr_verdict_name(v));
    }
    const double poison[] = {0.0, -5.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof poison / sizeof poison[0]; i++) {
        double c[8];
        memcpy(c, a, sizeof c);
        c[3] = poison[i];
        CHECK(hsdr_compare_samples(c, 8, b, 8, 0.02, 0.95, NULL, &lo, &hi) == HSDR_AMBIGUOUS && isinf(hi),
              "sample %g in A", poison[i]);
        CHECK(hsdr_compare_samples(a, 8, c, 8, 0.02, 0.95, NULL, &lo, &hi) == HSDR_AMBIGUOUS, "sample %g in B",
              poison[i]);
    }
}

static void determinism(hsdr_rng *r)
{
    double a[MAXN], b[MAXN], out1[3], out2[3];
    for (int trial = 0; trial < 5; trial++) {
        size_t na = 3 + hsdr_rng_below(r, 200), nb = 3 + hsdr_rng_below(r, 200);
        draw(r, a, na, 1.0, 0.1);
        draw(r, b, nb, 1.0 + 0.1 * hsdr_rng_uniform(r), 0.1);
        hsdr_verdict v1 = hsdr_compare_samples(a, na, b, nb, 0.02, 0.95, &out1[0], &out1[1], &out1[2]);
        hsdr_verdict v2 = hsdr_compare_samples(a, na, b, nb, 0.02, 0.95, &out2[0], &out2[1], &out2[2]);
        CHECK(v1 == v2 && memcmp(out1, out2, sizeof out1) == 0, "two calls differ (na %zu nb %zu)", na, nb);
        /* the order of the samples does not matter (they are sorted before resampling) */
        shuffle(r, a, na);
        shuffle(r, b, nb);
        v2 = hsdr_compare_samples(a, na, b, nb, 0.02, 0.95, &out2[0], &out2[1], &out2[2]);
        CHECK(v1 == v2 && memcmp(out1, out2, sizeof out1) == 0, "shuffled samples differ (na %zu nb %zu)", na, nb);
        /* a wider confidence gives a wider interval over the same resamples */
        double lo99, hi99;
        hsdr_compare_samples(a, na, b, nb, 0.02, 0.99, NULL, &lo99, &hi99);
        CHECK(lo99 <= out1[1] && hi99 >= out1[2], "99%% [%g, %g] inside 95%% [%g, %g]", lo99, hi99, out1[1], out1[2]);
    }
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_compare"));
    CHECK(strcmp(hsdr_verdict_name(HSDR_SAME), "SAME") == 0 && strcmp(hsdr_verdict_name(HSDR_FASTER), "FASTER") == 0 &&
              strcmp(hsdr_verdict_name(HSDR_SLOWER), "SLOWER") == 0 &&
              strcmp(hsdr_verdict_name(HSDR_AMBIGUOUS), "AMBIGUOUS") == 0,
          "verdict names");
    clear_cases(&rng);
    ambiguous_cases(&rng);
    coverage(&rng);
    tiny_and_invalid(&rng);
    determinism(&rng);
    return test_finish("test_compare");
}
