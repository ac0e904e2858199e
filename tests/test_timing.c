/* The measurement engine (harness/timing.c) against a fake device backend whose clock is known exactly: the
 * stopping rule (noise, time limit, repetition cap), warm-up and the marks around every launch, cold rotation over
 * weight copies (own and shared), the calibration of launches per sample, a failing subject, and paired ratios and
 * their intervals when the machine changes state between rounds (drift that paired rounds must cancel and unpaired
 * medians do not). Samples are drawn under a fresh printed seed. Also the cold token of `hsdr profile`
 * (hsdr_profile_rotation_plan): copies, bytes cycled and the label over random token, cache and memory sizes. */
#include <math.h>
#include <string.h>

#include "compare.h"
#include "kernel.h"
#include "profile_plan.h"
#include "rng.h"
#include "stats.h"
#include "testing.h"
#include "timing.h"

/* ---- the fake device ---- */

/* The machine's state: a factor on every launch's time, changed by the test between rounds or by the launch count. */
static double state_factor = 1.0;
static long launches_total;
static int state_period; /* > 0: the factor alternates 1.0 / 1.25 every state_period launches */

struct hsdr_device_run {
    double base_ns;       /* one launch's time at factor 1 */
    const double *jitter; /* NULL, or a pattern of factors applied launch by launch */
    int njitter;
    int open, enqueued;   /* a sample in progress, launches in it */
    double pending_ns;
    int marks, launches;
    int visits[8];        /* launches per weight copy */
    int fail_at;          /* > 0: the enqueue of this launch (1-based) fails */
};

static int fake_mark(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    if (end != r->open) {
        snprintf(err, errlen, "mark %d out of order", end);
        return -1;
    }
    r->open = !end;
    if (!end)
        r->pending_ns = 0.0, r->enqueued = 0;
    r->marks++;
    return 0;
}

static int fake_enqueue(hsdr_device_run *r, int copy, int stage, unsigned skip, unsigned twice, char *err,
                        size_t errlen)
{
    (void)stage, (void)skip, (void)twice;
    if (!r->open) {
        snprintf(err, errlen, "enqueue outside the marks");
        return -1;
    }
    if (++r->launches == r->fail_at) {
        snprintf(err, errlen, "launch %d failed", r->launches);
        return -1;
    }
    if (copy < 0 || copy >= 8) {
        snprintf(err, errlen, "copy %d", copy);
        return -1;
    }
    r->visits[copy]++;
    double f = state_factor;
    if (state_period > 0)
        f *= (launches_total / state_period) % 2 ? 1.25 : 1.0;
    if (r->jitter)
        f *= r->jitter[(r->launches - 1) % r->njitter];
    launches_total++;
    r->pending_ns += r->base_ns * f;
    r->enqueued++;
    return 0;
}

static int fake_elapsed(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    if (r->open || r->enqueued == 0) {
        snprintf(err, errlen, "elapsed before the end mark");
        return -1;
    }
    *ns = r->pending_ns;
    return 0;
}

static const hsdr_device_ops fake_ops = {.enqueue = fake_enqueue, .mark = fake_mark, .elapsed = fake_elapsed};

static hsdr_subject subject_of(hsdr_device_run *r, hsdr_rotation *rot, const char *name)
{
    return (hsdr_subject){.name = name, .dev = &fake_ops, .run = r, .stage = -1, .rot = rot, .count = 1};
}

/* ---- the stopping rule, warm-up and marks ---- */

static void test_stopping(void)
{
    char err[256];
    /* constant times: quiet at once, so the rounds stop at min_reps */
    hsdr_device_run a = {.base_ns = 1000};
    hsdr_subject s = subject_of(&a, NULL, "a"), *one = &s;
    hsdr_stats st;
    hsdr_timing_policy pol = {.warmup = 3, .min_reps = 7, .max_reps = 50, .noise_target = 0.01,
                              .time_limit_s = 1e6};
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(st.reps == 7 && strcmp(st.stop, "noise") == 0, "constant: %d reps, stop %s", st.reps, st.stop);
    CHECK(st.median == 1000 && st.min == 1000 && st.rel_spread == 0 && st.launches_per_sample == 1,
          "constant: median %g", st.median);
    CHECK(a.launches == 10 && a.marks == 20, "warm-up + reps: %d launches, %d marks", a.launches, a.marks);
    hsdr_stats_free(&st);

    /* alternating 1x / 2x: never quiet; the cap stops it, or the time limit (0 s: right after min_reps) */
    static const double alt[] = {1.0, 2.0};
    hsdr_device_run b = {.base_ns = 1000, .jitter = alt, .njitter = 2};
    s = subject_of(&b, NULL, "b");
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(st.reps == 50 && strcmp(st.stop, "max_reps") == 0, "alternating: %d reps, stop %s", st.reps, st.stop);
    CHECK(st.min == 1000 && st.median == 1500 && fabs(st.rel_spread - 1000.0 / 1500.0) < 1e-12,
          "alternating: min %g median %g spread %g", st.min, st.median, st.rel_spread);
    /* samples in order: the warm-up took three launches (1x 2x 1x), so the first sample is 2x */
    CHECK(st.samples[0] == 2000 && st.samples[1] == 1000, "sample order %g %g", st.samples[0], st.samples[1]);
    hsdr_stats_free(&st);
    pol.time_limit_s = 0.0;
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(st.reps == 7 && strcmp(st.stop, "time_limit") == 0, "time limit: %d reps, stop %s", st.reps, st.stop);
    hsdr_stats_free(&st);

    /* several subjects stop together: the noisy one keeps the quiet one going, round for round */
    hsdr_device_run q = {.base_ns = 500}, n = {.base_ns = 800, .jitter = alt, .njitter = 2};
    hsdr_subject sq = subject_of(&q, NULL, "quiet"), sn = subject_of(&n, NULL, "noisy"), *both[2] = {&sq, &sn};
    hsdr_stats two[2];
    pol = (hsdr_timing_policy){.warmup = 1, .min_reps = 5, .max_reps = 23, .noise_target = 0.05, .time_limit_s = 1e6};
    CHECK(hsdr_measure(both, 2, &pol, two, err, sizeof err) == 0, "measure: %s", err);
    CHECK(two[0].reps == 23 && two[1].reps == 23 && strcmp(two[0].stop, "max_reps") == 0,
          "rounds: %d and %d reps", two[0].reps, two[1].reps);
    CHECK(q.launches == 24 && n.launches == 24, "launches %d %d", q.launches, n.launches);
    hsdr_stats_free(&two[0]);
    hsdr_stats_free(&two[1]);

    /* hot (rewarm): an untimed launch of the same subject before each sample, outside the samples */
    hsdr_device_run w = {.base_ns = 300, .jitter = alt, .njitter = 2};
    s = subject_of(&w, NULL, "w");
    pol = (hsdr_timing_policy){.warmup = 2, .min_reps = 6, .max_reps = 6, .noise_target = 0.0, .time_limit_s = 1e6,
                               .rewarm = 1};
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(w.launches == 2 + 2 * 6 && st.reps == 6, "rewarm: %d launches for 6 samples", w.launches);
    /* launches alternate 1x / 2x: the warm-up takes two, then each rewarm takes a 1x one and the sample a 2x one */
    CHECK(st.min == 600 && st.median == 600, "rewarm: the samples are the launches after the untimed ones (%g)",
          st.median);
    hsdr_stats_free(&st);
}

/* ---- cold rotation ---- */

static void test_rotation(void)
{
    char err[256];
    hsdr_timing_policy pol = {.warmup = 2, .min_reps = 10, .max_reps = 10, .noise_target = 0.0, .time_limit_s = 1e6};
    /* own rotation over 3 copies: 12 launches visit each copy 4 times, in turn */
    hsdr_rotation rot = {.n = 3};
    hsdr_device_run a = {.base_ns = 100};
    hsdr_subject s = subject_of(&a, &rot, "a"), *one = &s;
    hsdr_stats st;
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(a.visits[0] == 4 && a.visits[1] == 4 && a.visits[2] == 4 && a.visits[3] == 0,
          "own rotation: %d %d %d %d", a.visits[0], a.visits[1], a.visits[2], a.visits[3]);
    CHECK(rot.launches == 12 && rot.next == 0, "rotation accounting: %zu launches, next %zu", rot.launches, rot.next);
    hsdr_stats_free(&st);

    /* two subjects sharing 4 copies: each launch takes the next copy of the shared rotation (A0 B1 A2 B3 A0 ...),
     * so neither reads the copy the other just read */
    hsdr_rotation shared = {.n = 4};
    hsdr_device_run x = {.base_ns = 100}, y = {.base_ns = 200};
    hsdr_subject sx = subject_of(&x, &shared, "x"), sy = subject_of(&y, &shared, "y"), *both[2] = {&sx, &sy};
    hsdr_stats two[2];
    CHECK(hsdr_measure(both, 2, &pol, two, err, sizeof err) == 0, "measure: %s", err);
    CHECK(x.visits[0] == 6 && x.visits[2] == 6 && x.visits[1] == 0 && x.visits[3] == 0, "x visits %d %d %d %d",
          x.visits[0], x.visits[1], x.visits[2], x.visits[3]);
    CHECK(y.visits[1] == 6 && y.visits[3] == 6 && y.visits[0] == 0 && y.visits[2] == 0, "y visits %d %d %d %d",
          y.visits[0], y.visits[1], y.visits[2], y.visits[3]);
    CHECK(shared.launches == 24, "shared rotation: %zu launches", shared.launches);
    hsdr_stats_free(&two[0]);
    hsdr_stats_free(&two[1]);

    /* calibration: 10 ns launches, samples of at least 1000 ns -> 101 launches per sample, each on the next copy,
     * and the sample is the time per launch */
    hsdr_rotation r5 = {.n = 5};
    hsdr_device_run c = {.base_ns = 10};
    s = subject_of(&c, &r5, "c");
    pol = (hsdr_timing_policy){.warmup = 1, .min_reps = 3, .max_reps = 3, .noise_target = 0.0, .time_limit_s = 1e6,
                               .min_sample_ns = 1000};
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "measure: %s", err);
    CHECK(st.launches_per_sample == 101 && st.median == 10, "calibrated: %d launches per sample, %g ns",
          st.launches_per_sample, st.median);
    CHECK(c.launches == 1 + 3 * 101 && r5.launches == (size_t)c.launches, "calibrated launches %d", c.launches);
    int lo = c.visits[0], hi = c.visits[0];
    for (int k = 1; k < 5; k++)
        lo = c.visits[k] < lo ? c.visits[k] : lo, hi = c.visits[k] > hi ? c.visits[k] : hi;
    CHECK(hi - lo <= 1, "calibrated launches spread over the copies: %d..%d", lo, hi);
    hsdr_stats_free(&st);
}

/* ---- a failing subject ---- */

static void test_failure(void)
{
    char err[256];
    hsdr_device_run a = {.base_ns = 100}, b = {.base_ns = 100, .fail_at = 6};
    hsdr_subject sa = subject_of(&a, NULL, "good"), sb = subject_of(&b, NULL, "bad"), *both[2] = {&sa, &sb};
    hsdr_stats two[2];
    hsdr_timing_policy pol = {.warmup = 1, .min_reps = 10, .max_reps = 10, .noise_target = 0.0, .time_limit_s = 1e6};
    CHECK(hsdr_measure(both, 2, &pol, two, err, sizeof err) == -1, "a failing launch was not reported");
    CHECK(strstr(err, "bad: launch 6 failed") != NULL, "message '%s'", err);
    CHECK(sa.err[0] == '\0' && strstr(sb.err, "launch 6 failed") != NULL, "the failing subject: '%s' / '%s'", sa.err,
          sb.err);
    CHECK(two[0].samples == NULL && two[1].samples == NULL, "samples left allocated after a failure");
}

/* ---- paired ratios under drift ---- */

/* Rounds of a (base 1000 ns) and b (base ratio * 1000 ns) while the machine's state changes every `period`
 * launches; each launch also gets a little independent noise. */
static void measure_pair(hsdr_rng *rng, double ratio, int period, double level, hsdr_stats two[2])
{
    enum { N = 60 };
    static double noise_a[N], noise_b[N];
    for (int i = 0; i < N; i++) {
        noise_a[i] = 1.0 + 0.002 * (hsdr_rng_uniform(rng) - 0.5);
        noise_b[i] = 1.0 + 0.002 * (hsdr_rng_uniform(rng) - 0.5);
    }
    char err[256];
    hsdr_device_run a = {.base_ns = 1000, .jitter = noise_a, .njitter = N};
    hsdr_device_run b = {.base_ns = 1000 * ratio, .jitter = noise_b, .njitter = N};
    hsdr_subject sa = subject_of(&a, NULL, "a"), sb = subject_of(&b, NULL, "b"), *both[2] = {&sa, &sb};
    hsdr_timing_policy pol = {.warmup = 0, .min_reps = N, .max_reps = N, .noise_target = 0.0, .time_limit_s = 1e6};
    state_factor = level;
    state_period = period;
    launches_total = 0;
    CHECK(hsdr_measure(both, 2, &pol, two, err, sizeof err) == 0, "measure: %s", err);
    state_factor = 1.0;
    state_period = 0;
}

static void test_paired(hsdr_rng *rng)
{
    hsdr_stats r1[2], r2[2];
    /* run 1: the machine alternates states every 10 launches (5 rounds); run 2: a state 30% slower throughout.
     * b is 1.5x a in both. */
    measure_pair(rng, 1.5, 10, 1.0, r1);
    measure_pair(rng, 1.5, 0, 1.3, r2);
    double ratio, lo, hi;
    CHECK(hsdr_paired_ratio(r1[1].samples, r1[0].samples, (size_t)r1[0].reps, NULL, 0, 0.95, &ratio, &lo, &hi) == 0,
          "paired ratio");
    printf("run 1 (state changes every 5 rounds): paired b/a %.4f [%.4f, %.4f]; raw spread of a %.3f\n", ratio, lo, hi,
           r1[0].rel_spread);
    CHECK(fabs(ratio - 1.5) < 0.005 && lo <= ratio && ratio <= hi && hi - lo < 0.01,
          "paired ratio %.4f [%.4f, %.4f] under alternating states", ratio, lo, hi);
    CHECK(r1[0].rel_spread > 0.1, "the injected states did not show in the raw samples (spread %.3f)",
          r1[0].rel_spread);

    /* across the two runs: raw times say SLOWER (the state), the paired figures say SAME */
    double rr, rl, rh;
    hsdr_verdict raw = hsdr_compare_samples(r1[1].samples, (size_t)r1[1].reps, r2[1].samples, (size_t)r2[1].reps, 0.02,
                                            0.95, &rr, &rl, &rh);
    CHECK(raw == HSDR_SLOWER, "raw b, run 2 against run 1: %s (%.3f [%.3f, %.3f])", hsdr_verdict_name(raw), rr, rl,
          rh);
    double q1[64], q2[64];
    for (int i = 0; i < r1[0].reps; i++) {
        q1[i] = r1[1].samples[i] / r1[0].samples[i];
        q2[i] = r2[1].samples[i] / r2[0].samples[i];
    }
    const hsdr_figure f1 = {.num = q1, .n = (size_t)r1[0].reps, .den_scale = 1.0},
                      f2 = {.num = q2, .n = (size_t)r2[0].reps, .den_scale = 1.0};
    hsdr_verdict paired = hsdr_compare_figures(&f1, &f2, 0.02, 0.95, &rr, &rl, &rh);
    printf("b across the runs: raw %s, paired %s (%.4f [%.4f, %.4f])\n", hsdr_verdict_name(raw),
           hsdr_verdict_name(paired), rr, rl, rh);
    CHECK(paired == HSDR_SAME, "paired b across the runs: %s (%.4f [%.4f, %.4f])", hsdr_verdict_name(paired), rr, rl,
          rh);
    /* a real change reads as one: b 10% slower in run 2 */
    hsdr_stats r3[2];
    measure_pair(rng, 1.65, 0, 1.3, r3);
    for (int i = 0; i < r3[0].reps; i++)
        q2[i] = r3[1].samples[i] / r3[0].samples[i];
    paired = hsdr_compare_figures(&f1, &f2, 0.02, 0.95, &rr, &rl, &rh);
    CHECK(paired == HSDR_SLOWER && fabs(rr - 1.1) < 0.005, "b 10%% slower: %s (%.4f)", hsdr_verdict_name(paired), rr);
    /* a reference sampled right before its subject in every round (R A R B ...): the ratio of each adjacent pair */
    {
        char err[256];
        hsdr_device_run ra = {.base_ns = 1000}, rb = {.base_ns = 1500}, rc = {.base_ns = 500};
        hsdr_subject sa = subject_of(&ra, NULL, "prod"), sb = subject_of(&rb, NULL, "b"), sc = subject_of(&rc, NULL, "c");
        sb.ref = sc.ref = &sa;
        sa.ref = &sa; /* its own reference: no extra samples */
        hsdr_subject *three[3] = {&sa, &sb, &sc};
        hsdr_stats st3[3];
        hsdr_timing_policy pol = {.warmup = 1, .min_reps = 8, .max_reps = 8, .noise_target = 0.0,
                                  .time_limit_s = 1e6, .rewarm = 1};
        state_period = 20; /* the state flips every 20 launches (2 rounds of 10): some rounds straddle a flip */
        launches_total = 0;
        CHECK(hsdr_measure(three, 3, &pol, st3, err, sizeof err) == 0, "measure: %s", err);
        state_period = 0;
        CHECK(st3[0].ref_samples == NULL && st3[1].ref_samples && st3[2].ref_samples, "ref_samples where a ref is");
        /* per round: prod 2 (rewarm + own), then 2 + 2 before b and c: 6 a round, 1 warm-up launch each */
        CHECK(ra.launches == 1 + 8 * 6 && rb.launches == 1 + 8 * 2 && rc.launches == 1 + 8 * 2,
              "launches prod %d b %d c %d", ra.launches, rb.launches, rc.launches);
        int exact = 0;
        for (int r = 0; r < 8; r++)
            exact += (st3[1].samples[r] / st3[1].ref_samples[r] == 1.5) + (st3[2].samples[r] / st3[2].ref_samples[r] == 0.5);
        /* 83 launches hold 4 flips; a pair (ref, rewarm, own: 3 launches) straddles at most one each */
        CHECK(exact >= 12, "adjacent pairs in one state: %d of 16", exact);
        for (int k = 0; k < 3; k++)
            hsdr_stats_free(&st3[k]);
    }
    /* visits as blocks: two visits in two states (ratio 1.5 in 14 rounds, 1.65 in 6), a little noise within each.
     * Rounds resampled one by one give a narrow interval at 1.5; whole visits resampled give one that spans both
     * states -- what the data can tell about a third run in an unknown state. */
    {
        double a[20], b[20];
        for (int i = 0; i < 20; i++) {
            a[i] = 1000.0 * (1.0 + 0.001 * (hsdr_rng_uniform(rng) - 0.5));
            b[i] = a[i] * (i < 14 ? 1.5 : 1.65) * (1.0 + 0.001 * (hsdr_rng_uniform(rng) - 0.5));
        }
        const int visits[2] = {14, 6};
        double rl2, rh2;
        CHECK(hsdr_paired_ratio(b, a, 20, NULL, 0, 0.95, &ratio, &lo, &hi) == 0, "rounds");
        CHECK(hsdr_paired_ratio(b, a, 20, visits, 2, 0.95, &rr, &rl2, &rh2) == 0, "visits");
        printf("two visits in two states: rounds resampled [%.4f, %.4f], visits resampled [%.4f, %.4f]\n", lo, hi, rl2,
               rh2);
        CHECK(rr == ratio && rl2 < 1.505 && rh2 > 1.645, "visits: %.4f [%.4f, %.4f]", rr, rl2, rh2);
        CHECK(hi < 1.6, "rounds: [%.4f, %.4f], expected it below the second state", lo, hi);
        const int bad[2] = {10, 9}; /* not summing to n: rounds resampled one by one */
        CHECK(hsdr_paired_ratio(b, a, 20, bad, 2, 0.95, &rr, &rl2, &rh2) == 0 && rl2 == lo && rh2 == hi,
              "inconsistent blocks ignored");
    }
    /* bad input */
    double zero[3] = {1, 0, 1};
    CHECK(hsdr_paired_ratio(zero, zero, 3, NULL, 0, 0.95, &ratio, &lo, &hi) == -1 && isnan(ratio), "a zero sample accepted");
    for (int k = 0; k < 2; k++) {
        hsdr_stats_free(&r1[k]);
        hsdr_stats_free(&r2[k]);
        hsdr_stats_free(&r3[k]);
    }
}

/* ---- a host subject: the clock around the launch, the pool woken first ---- */

static int counted;
static int count_launch(hsdr_subject *s, size_t copy, int count)
{
    (void)s;
    counted += count;
    return copy < 2 ? 0 : -1;
}

static void test_host(void)
{
    char err[256];
    hsdr_rotation rot = {.n = 2};
    hsdr_subject s = {.name = "host", .launch = count_launch, .rot = &rot, .count = 1}, *one = &s;
    hsdr_stats st;
    hsdr_timing_policy pol = {.warmup = 2, .min_reps = 4, .max_reps = 4, .noise_target = 0.0, .time_limit_s = 1e6};
    CHECK(hsdr_measure(&one, 1, &pol, &st, err, sizeof err) == 0, "host measure: %s", err);
    CHECK(counted == 6 && st.reps == 4 && st.min >= 0, "host: %d launches, %d reps", counted, st.reps);
    hsdr_stats_free(&st);
}

/* The rotation plan of a profile token on random sizes, every field checked against its definition. */
static void test_profile_rotation(hsdr_rng *rng)
{
    for (int it = 0; it < 20000; it++) {
        const uint64_t tb = 1 + hsdr_rng_u64(rng) % ((uint64_t)1 << (1 + hsdr_rng_below(rng, 34)));
        const uint64_t llc = 1 + hsdr_rng_u64(rng) % ((uint64_t)1 << (1 + hsdr_rng_below(rng, 34)));
        const uint64_t cap = tb + hsdr_rng_u64(rng) % ((uint64_t)1 << (1 + hsdr_rng_below(rng, 36)));
        const int hot = hsdr_rng_below(rng, 4) == 0;
        hsdr_profile_rotation r;
        hsdr_profile_rotation_plan(tb, llc, cap, hot, &r);
        const char *what = hot ? "hot" : "cold";
        CHECK(r.token_bytes == tb && r.llc_bytes == llc && r.cap_bytes == cap, "%s: sizes not kept", what);
        CHECK(r.copies_needed * tb > 4 * llc && (r.copies_needed - 1) * tb <= 4 * llc,
              "token %llu llc %llu: %zu copies needed is not the fewest over 4x", (unsigned long long)tb,
              (unsigned long long)llc, r.copies_needed);
        CHECK(r.bytes_cycled == r.copies * tb && r.cold == (r.bytes_cycled > 4 * llc), "%s: cycled %llu cold %d",
              what, (unsigned long long)r.bytes_cycled, r.cold);
        size_t want = hot ? 1 : r.copies_needed * tb <= cap ? r.copies_needed : cap / tb;
        CHECK(r.copies == want, "%s token %llu llc %llu cap %llu: %zu copies, want %zu", what, (unsigned long long)tb,
              (unsigned long long)llc, (unsigned long long)cap, r.copies, want);
        const char *label = r.cold ? (r.copies == 1 ? "cold: the " : "cold: ")
                                   : hot ? "not cold (--hot)" : "not cold: ";
        CHECK(strncmp(r.why, label, strlen(label)) == 0, "%s: label '%s', want '%s...'", what, r.why, label);
    }
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("timing"));
    test_stopping();
    test_rotation();
    test_failure();
    test_paired(&rng);
    test_host();
    test_profile_rotation(&rng);
    return test_finish("timing");
}
