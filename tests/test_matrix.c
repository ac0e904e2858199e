/* The experiment matrix and the model shape table: the committed matrix.yaml loads and expands; a small hand-counted
 * matrix over a table of fake variants (so nothing depends on which registry variants have a timing interface yet)
 * expands to exactly the cases worked out below, with collapsing, skip reasons, duplicate removal and order; the cols
 * axis over a second fake table with multi-column variants; filters, sharding and overrides on fresh random
 * matrices; every malformed file names file:line:column and the key path; the shapes of shared/spec/shapes.md and
 * the 5.60 GB per token of bonsai2-27b. */
#include <string.h>

#include "matrix.h"
#include "rng.h"
#include "shapes.h"
#include "testing.h"

#ifndef HSDR_SOURCE_DIR
#define HSDR_SOURCE_DIR "."
#endif
#define DATA HSDR_SOURCE_DIR "/tests/data/matrix/"

/* ---- a table of fake variants: what the expansion reads of a variant is rows, uses_R, uses_flns, unavailable ---- */

static void fake_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)e, (void)r0, (void)r1, (void)scratch;
}

static const char *no_gpu(void)
{
    return "no GPU in this test";
}

static const hsdr_variant fakes[] = {
    {.name = "fake.codec", .backend = "fake", .family = "codec"},
    {.name = "fake.direct", .backend = "fake", .family = "direct", .rows = fake_rows},
    {.name = "fake.stateset", .backend = "fake", .family = "stateset", .rows = fake_rows, .uses_R = true},
    {.name = "fake.flns", .backend = "fake", .family = "flns", .rows = fake_rows, .uses_flns = true},
    {.name = "fake.q8", .backend = "fake", .family = "production", .rows = fake_rows},
    {.name = "fake.gpu", .backend = "fakegpu", .family = "direct", .rows = fake_rows, .unavailable = no_gpu},
};
enum { FAKE_CODEC, FAKE_DIRECT, FAKE_STATESET, FAKE_FLNS, FAKE_Q8, FAKE_GPU, FAKE_COUNT };
static const hsdr_matrix_env fake_env = {.registry = fakes, .registry_count = FAKE_COUNT, .logical_cpus = 2};

static hsdr_matrix_spec *load(const char *path, const hsdr_matrix_env *env)
{
    hsdr_matrix_spec *spec = NULL;
    char err[512];
    if (hsdr_matrix_load_env(path, env, &spec, err, sizeof err) != 0) {
        CHECK(0, "loading %s: %s", path, err);
        return NULL;
    }
    return spec;
}

static int expand(const hsdr_matrix_spec *spec, hsdr_matrix *m)
{
    char err[512];
    int rc = hsdr_matrix_expand(spec, m, err, sizeof err);
    CHECK(rc == 0, "expand: %s", err);
    return rc;
}

static const hsdr_case *find_case(const hsdr_matrix *m, const char *key)
{
    for (size_t i = 0; i < m->ncases; i++) {
        char k[256];
        hsdr_case_key(&m->cases[i], k, sizeof k);
        if (strcmp(k, key) == 0)
            return &m->cases[i];
    }
    return NULL;
}

static const char *skip_reason(const hsdr_matrix *m, const char *key)
{
    for (size_t i = 0; i < m->nskipped; i++)
        if (strcmp(m->skipped[i].key, key) == 0)
            return m->skipped[i].reason;
    return NULL;
}

static size_t count_variant(const hsdr_matrix *m, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < m->ncases; i++)
        n += strcmp(m->cases[i].variant->name, name) == 0;
    return n;
}

static int same_inputs(const hsdr_case *a, const hsdr_case *b)
{
    return a->K == b->K && a->N == b->N && a->dist == b->dist && strcmp(a->shape, b->shape) == 0;
}

/* Invariants of every expansion: unique keys (cases and skip records together), no case that a built-in skip should
 * have caught, seeds from the key, input configurations contiguous and ordered by threads, mode, R, cols, variant, F,
 * b inside one. */
static void check_invariants(const hsdr_matrix *m, const char *what)
{
    size_t total = m->ncases + m->nskipped;
    char(*keys)[256] = malloc((total ? total : 1) * sizeof *keys);
    for (size_t i = 0; i < m->ncases; i++)
        hsdr_case_key(&m->cases[i], keys[i], sizeof keys[i]);
    for (size_t i = 0; i < m->nskipped; i++) {
        memcpy(keys[m->ncases + i], m->skipped[i].key, sizeof keys[0]);
        CHECK(m->skipped[i].reason[0], "%s: skip record '%s' without a reason", what, m->skipped[i].key);
    }
    size_t dups = 0;
    for (size_t i = 0; i < total; i++)
        for (size_t j = i + 1; j < total; j++)
            dups += strcmp(keys[i], keys[j]) == 0;
    CHECK(dups == 0, "%s: %zu duplicate keys", what, dups);
    free(keys);

    for (size_t i = 0; i < m->ncases; i++) {
        const hsdr_case *c = &m->cases[i];
        CHECK(c->K % 128 == 0 && c->R <= c->N && c->threads <= m->logical_cpus && hsdr_variant_timed(c->variant) &&
                  !(c->dist == HSDR_DIST_BONSAI && c->K % 1024) && (c->variant->uses_R || c->R == 1) &&
                  c->cols >= 1 && c->cols <= (c->variant->max_cols > 1 ? c->variant->max_cols : 1),
              "%s: case %zu should have been skipped or collapsed", what, i);
        CHECK(c->seed == hsdr_case_seed(c, m->seed), "%s: case %zu seed", what, i);
        if (i == 0)
            continue;
        const hsdr_case *p = &m->cases[i - 1];
        if (!same_inputs(p, c)) {
            for (size_t j = 0; j + 1 < i; j++)
                CHECK(!same_inputs(&m->cases[j], c), "%s: input configuration of case %zu split (also at %zu)", what,
                      i, j);
            continue;
        }
        int order = p->threads != c->threads ? (p->threads < c->threads ? -1 : 1)
                  : p->mode != c->mode       ? (p->mode < c->mode ? -1 : 1)
                  : p->R != c->R             ? (p->R < c->R ? -1 : 1)
                  : p->cols != c->cols       ? (p->cols < c->cols ? -1 : 1)
                  : p->variant != c->variant ? (p->variant < c->variant ? -1 : 1)
                  : p->flns_F != c->flns_F   ? (p->flns_F < c->flns_F ? -1 : 1)
                                             : (p->flns_b < c->flns_b ? -1 : 1);
        CHECK(order < 0, "%s: cases %zu, %zu out of order", what, i - 1, i);
    }
}

/* small.yaml, by hand (logical CPUs = 2):
 *   grid configurations: K {128, 1024} x N {64} x distribution {gaussian, bonsai} = 4
 *   points per configuration and (threads, mode), after collapsing: codec 1, direct 1 (R collapsed), stateset 3
 *   (R 1, 8, 128), flns 2 (two F/b pairs), q8 1, gpu 1 = 9; x threads 3 x modes 2 = 54 per configuration, 216 in all.
 *   (128, bonsai): all 54 skipped (bonsai needs K % 1024 == 0).
 *   each of the 3 others: threads 4: 18 skipped (> 2 CPUs); threads 1, 2 (36 points): stateset R = 128 > N = 64: 4,
 *   user rule production cold: 2, codec (no rows): 4, gpu (unavailable): 4 skipped -> 22 cases
 *   (per threads: hot direct + stateset x2 + flns x2 + q8 = 6, cold 5).
 *   grid: 66 cases, 150 skip records.
 *   extra: stateset 5120x1024 R=64 cold: new case (67); direct with R = 8 collapses to R = 1, a duplicate of a grid
 *   case: dropped; q8 K=128 cold: replaces the user-rule skip record of the same key (68 cases, 149 records); gpu
 *   K=2048: skipped as unavailable (user rules do not apply to extra, built-in skips do): 150 records.
 *   -> 68 cases, 150 skip records; per variant: direct 3 x 4 = 12, stateset 3 x 4 x 2 + 1 = 25, flns 24, q8 6 + 1. */
static void check_small(void)
{
    hsdr_matrix_spec *spec = load(DATA "small.yaml", &fake_env);
    if (!spec)
        return;
    hsdr_matrix m;
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 68, "small.yaml: %zu cases, expected 68", m.ncases);
        CHECK(m.nskipped == 150, "small.yaml: %zu skip records, expected 150", m.nskipped);
        CHECK(count_variant(&m, "fake.direct") == 12, "direct: %zu", count_variant(&m, "fake.direct"));
        CHECK(count_variant(&m, "fake.stateset") == 25, "stateset: %zu", count_variant(&m, "fake.stateset"));
        CHECK(count_variant(&m, "fake.flns") == 24, "flns: %zu", count_variant(&m, "fake.flns"));
        CHECK(count_variant(&m, "fake.q8") == 7, "q8: %zu", count_variant(&m, "fake.q8"));
        CHECK(count_variant(&m, "fake.codec") == 0 && count_variant(&m, "fake.gpu") == 0, "codec/gpu ran");
        CHECK(m.seed == 7 && m.warmup == 1 && m.min_reps == 3 && m.max_reps == 9 && m.noise_target == 0.05 &&
                  m.time_limit_s == 0.5,
              "settings not read");
        CHECK(strstr(m.source, "small.yaml") != NULL, "source '%s'", m.source);
        check_invariants(&m, "small.yaml");

        /* collapsing: uses_R false -> R = 1 only; uses_flns false -> no F/b in the key, the first pair in the case */
        for (size_t i = 0; i < m.ncases; i++) {
            const hsdr_case *c = &m.cases[i];
            char key[256];
            hsdr_case_key(c, key, sizeof key);
            if (!c->variant->uses_R)
                CHECK(c->R == 1, "'%s': R not collapsed", key);
            if (!c->variant->uses_flns)
                CHECK(!strstr(key, " F=") && c->flns_F == 8 && c->flns_b == 12, "'%s': fLNS not collapsed", key);
        }
        CHECK(find_case(&m, "variant=fake.flns K=1024 N=64 R=1 threads=2 dist=bonsai mode=cold F=4 b=8"),
              "second fLNS pair missing");
        CHECK(find_case(&m, "variant=fake.stateset K=1024 N=64 R=8 threads=1 dist=gaussian mode=hot"),
              "stateset R=8 missing");
        CHECK(!find_case(&m, "variant=fake.direct K=128 N=64 R=8 threads=1 dist=gaussian mode=hot"),
              "direct R=8 not collapsed");
        const hsdr_case *x = find_case(&m, "variant=fake.stateset K=5120 N=1024 R=64 threads=1 dist=gaussian mode=cold");
        CHECK(x != NULL, "extra case missing");
        CHECK(find_case(&m, "variant=fake.q8 K=128 N=64 R=1 threads=1 dist=gaussian mode=cold"),
              "explicit extra case did not replace the user-rule skip");
        CHECK(!find_case(&m, "variant=fake.q8 K=128 N=64 R=1 threads=2 dist=gaussian mode=cold"),
              "user rule did not skip");

        /* skip reasons: built-in (input checks, then user rules, then variant checks) */
        const struct {
            const char *key, *reason;
        } reasons[] = {
            {"variant=fake.direct K=128 N=64 R=1 threads=1 dist=bonsai mode=hot", "bonsai needs K a multiple of 1024"},
            {"variant=fake.stateset K=1024 N=64 R=128 threads=1 dist=gaussian mode=hot", "R = 128 > N = 64"},
            {"variant=fake.direct K=1024 N=64 R=1 threads=4 dist=gaussian mode=hot", "threads = 4 > 2 logical CPUs"},
            {"variant=fake.q8 K=1024 N=64 R=1 threads=2 dist=bonsai mode=cold", "production cold: not needed here"},
            {"variant=fake.codec K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
             "not benchmarkable: fake.codec has no timing interface (rows)"},
            {"variant=fake.gpu K=1024 N=64 R=1 threads=1 dist=gaussian mode=hot", "unavailable here: no GPU"},
            {"variant=fake.gpu K=2048 N=64 R=1 threads=1 dist=gaussian mode=hot", "unavailable here: no GPU"},
        };
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
            const char *r = skip_reason(&m, reasons[i].key);
            CHECK(r && strstr(r, reasons[i].reason), "'%s': reason '%s', expected '%s'", reasons[i].key,
                  r ? r : "(not skipped)", reasons[i].reason);
        }
        CHECK(!skip_reason(&m, "variant=fake.q8 K=128 N=64 R=1 threads=1 dist=gaussian mode=cold"),
              "replaced skip record kept");

        /* order: the first configuration (K=128, gaussian), threads 1, hot, R 1: variants in table order, F, b */
        const char *first[] = {
            "variant=fake.direct K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.stateset K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.flns K=128 N=64 R=1 threads=1 dist=gaussian mode=hot F=4 b=8",
            "variant=fake.flns K=128 N=64 R=1 threads=1 dist=gaussian mode=hot F=8 b=12",
            "variant=fake.q8 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.stateset K=128 N=64 R=8 threads=1 dist=gaussian mode=hot",
            "variant=fake.direct K=128 N=64 R=1 threads=1 dist=gaussian mode=cold",
        };
        for (size_t i = 0; i < sizeof first / sizeof first[0] && i < m.ncases; i++) {
            char key[256];
            hsdr_case_key(&m.cases[i], key, sizeof key);
            CHECK(strcmp(key, first[i]) == 0, "case %zu is '%s', expected '%s'", i, key, first[i]);
        }
        /* the explicit q8 cold case sits in its configuration's group, not at the end */
        const hsdr_case *q8 = find_case(&m, "variant=fake.q8 K=128 N=64 R=1 threads=1 dist=gaussian mode=cold");
        CHECK(q8 && q8 < m.cases + 11, "extra case not grouped with its inputs");
        /* cases sharing inputs share the seed; different inputs, different seeds */
        CHECK(m.cases[0].seed == m.cases[1].seed && x && x->seed != m.cases[0].seed, "seeds");

        /* filters: substring without glob characters, fnmatch with */
        hsdr_matrix f = m;
        f.cases = malloc(m.ncases * sizeof *f.cases);
        f.skipped = malloc(m.nskipped * sizeof *f.skipped);
        memcpy(f.cases, m.cases, m.ncases * sizeof *f.cases);
        memcpy(f.skipped, m.skipped, m.nskipped * sizeof *f.skipped);
        hsdr_matrix_filter(&f, "variant=fake.flns");
        CHECK(f.ncases == 24 && count_variant(&f, "fake.flns") == 24, "substring filter: %zu", f.ncases);
        CHECK(f.nskipped == 4 * 3 * 2 * 2 - 24, "substring filter: %zu skip records", f.nskipped);
        hsdr_matrix_filter(&f, "*K=1024*mode=cold*");
        /* flns at K=1024 (gaussian, bonsai) x threads 1, 2 x cold x 2 pairs */
        CHECK(f.ncases == 8, "glob filter after substring filter: %zu", f.ncases);
        hsdr_matrix_free(&f);
        hsdr_matrix_free(&m);
    }
    hsdr_matrix_spec_free(spec);
}

/* shapes.yaml: bonsai2-27b ffn_gate, ffn_down + bonsai-8b's 7 distinct tensors but the head, x 2 distributions. */
static void check_shapes_matrix(void)
{
    hsdr_matrix_spec *spec = load(DATA "shapes.yaml", &fake_env);
    if (!spec)
        return;
    hsdr_matrix m;
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 18 && m.nskipped == 0, "shapes.yaml: %zu cases, %zu skipped, expected 18, 0", m.ncases,
              m.nskipped);
        check_invariants(&m, "shapes.yaml");
        const hsdr_case *c =
            find_case(&m, "variant=fake.direct K=5120 N=17408 R=1 threads=1 dist=bonsai mode=hot shape=bonsai2-27b/ffn_gate");
        CHECK(c && strcmp(c->shape, "bonsai2-27b/ffn_gate") == 0, "bonsai2-27b/ffn_gate case");
        CHECK(find_case(&m, "variant=fake.direct K=17408 N=5120 R=1 threads=1 dist=gaussian mode=hot "
                            "shape=bonsai2-27b/ffn_down"),
              "bonsai2-27b/ffn_down case");
        CHECK(find_case(&m, "variant=fake.direct K=4096 N=1024 R=1 threads=1 dist=gaussian mode=hot "
                            "shape=bonsai-8b/attn_v"),
              "bonsai-8b/attn_v case");
        for (size_t i = 0; i < m.ncases; i++)
            CHECK(strcmp(m.cases[i].shape, "bonsai-8b/output") != 0, "the head is not a default tensor");
        hsdr_matrix_free(&m);
    }
    char err[512];
    CHECK(hsdr_matrix_override(spec, "shapes=bonsai2-27b/output,bonsai-4b/ffn_down", err, sizeof err) == 0, "%s",
          err);
    CHECK(hsdr_matrix_override(spec, "distribution=gaussian", err, sizeof err) == 0, "%s", err);
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 2, "shapes override: %zu cases", m.ncases);
        CHECK(find_case(&m, "variant=fake.direct K=5120 N=248320 R=1 threads=1 dist=gaussian mode=hot "
                            "shape=bonsai2-27b/output"),
              "head shape case");
        hsdr_matrix_free(&m);
    }
    CHECK(hsdr_matrix_override(spec, "shapes=none", err, sizeof err) == 0, "%s", err);
    CHECK(hsdr_matrix_expand(spec, &m, err, sizeof err) != 0 && strstr(err, "axes.K: missing"),
          "no K, no shapes: '%s'", err);
    hsdr_matrix_spec_free(spec);
}

/* ---- the cols axis: a second table (the first has no multi-column variant, and its counts are hand-worked) ---- */

/* A one-column variant (max_cols 0), a state-set one that says 1 explicitly, one of 8 columns (like
 * cuda.cols) and one of 4 that also uses R: the only way to reach the max_cols skip below the axis's bound
 * of 8, and R x cols crossed. */
static const hsdr_variant col_fakes[] = {
    {.name = "fake.one", .backend = "fake", .family = "direct", .rows = fake_rows},
    {.name = "fake.stateset1", .backend = "fake", .family = "stateset", .rows = fake_rows, .uses_R = true,
     .max_cols = 1},
    {.name = "fake.cols", .backend = "fake", .family = "production", .rows = fake_rows, .max_cols = 8},
    {.name = "fake.cols4", .backend = "fake", .family = "production", .rows = fake_rows, .uses_R = true,
     .max_cols = 4},
};
enum { COL_ONE, COL_STATESET1, COL_WIDE, COL_FOUR, COL_COUNT };
static const hsdr_matrix_env col_env = {.registry = col_fakes, .registry_count = COL_COUNT, .logical_cpus = 2};

static hsdr_matrix_spec *load_text(const char *text)
{
    hsdr_matrix_spec *spec = NULL;
    char err[512];
    if (hsdr_matrix_load_text("cols.yaml", text, strlen(text), &col_env, &spec, err, sizeof err) != 0) {
        CHECK(0, "loading '%s': %s", text, err);
        return NULL;
    }
    return spec;
}

/* The keys of m's cases, in order, against want[0..n). */
static void check_keys_in_order(const hsdr_matrix *m, const char *const *want, size_t n, const char *what)
{
    CHECK(m->ncases == n, "%s: %zu cases, expected %zu", what, m->ncases, n);
    for (size_t i = 0; i < n && i < m->ncases; i++) {
        char key[256];
        hsdr_case_key(&m->cases[i], key, sizeof key);
        CHECK(strcmp(key, want[i]) == 0, "%s: case %zu is '%s', expected '%s'", what, i, key, want[i]);
    }
}

static void check_cols(void)
{
    char err[512];
    hsdr_matrix m;

    /* the default cols [1]: every variant one case at cols = 1, and no key changes */
    hsdr_matrix_spec *spec = load_text("axes:\n  K: [128]\n  N: [64]\n");
    if (!spec)
        return;
    CHECK(hsdr_matrix_points(spec) == 4.0, "default cols: %.0f points, expected 4", hsdr_matrix_points(spec));
    if (expand(spec, &m) == 0) {
        const char *want[] = {
            "variant=fake.one K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.stateset1 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
        };
        check_keys_in_order(&m, want, 4, "default cols");
        CHECK(m.nskipped == 0, "default cols: %zu skip records", m.nskipped);
        for (size_t i = 0; i < m.ncases; i++)
            CHECK(m.cases[i].cols == 1, "default cols: case %zu at cols = %d", i, m.cases[i].cols);
        check_invariants(&m, "default cols");
        hsdr_matrix_free(&m);
    }

    /* --set cols=1,2,4,8 with R 1, 8 (N 64):
     *   one: 1 (R and cols collapsed); stateset1: R 1, 8 = 2 (cols collapsed); cols: cols 1, 2, 4, 8 = 4 (R
     *   collapsed); cols4: R 2 x cols 4 = 8 points, cols = 8 skipped at both R -> 6 cases, 2 records.
     *   -> 15 points, 13 cases, 2 skip records, ordered by R, then cols, then variant. */
    CHECK(hsdr_matrix_override(spec, "cols=1,2,4,8", err, sizeof err) == 0, "%s", err);
    CHECK(hsdr_matrix_override(spec, "R=1,8", err, sizeof err) == 0, "%s", err);
    CHECK(hsdr_matrix_points(spec) == 15.0, "cols axis: %.0f points, expected 15", hsdr_matrix_points(spec));
    if (expand(spec, &m) == 0) {
        const char *want[] = {
            "variant=fake.one K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.stateset1 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=2",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=2",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=8",
            "variant=fake.stateset1 K=128 N=64 R=8 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=8 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=8 threads=1 dist=gaussian mode=hot cols=2",
            "variant=fake.cols4 K=128 N=64 R=8 threads=1 dist=gaussian mode=hot cols=4",
        };
        check_keys_in_order(&m, want, sizeof want / sizeof want[0], "cols axis");
        CHECK(m.nskipped == 2, "cols axis: %zu skip records, expected 2", m.nskipped);
        const char *skipped[] = {"variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=8",
                                 "variant=fake.cols4 K=128 N=64 R=8 threads=1 dist=gaussian mode=hot cols=8"};
        for (size_t i = 0; i < 2; i++) {
            const char *r = skip_reason(&m, skipped[i]);
            CHECK(r && strcmp(r, "cols = 8 > max_cols = 4 of fake.cols4") == 0, "'%s': reason '%s'", skipped[i],
                  r ? r : "(not skipped)");
        }
        /* cols is not a data axis: one seed for every case of the configuration */
        for (size_t i = 0; i < m.ncases; i++)
            CHECK(m.cases[i].seed == m.cases[0].seed, "case %zu: the seed depends on cols or R", i);
        check_invariants(&m, "cols axis");
        hsdr_matrix_free(&m);
    }
    /* points cross with threads and mode like every other axis: 15 x 2 x 2 */
    CHECK(hsdr_matrix_override(spec, "threads=1,2", err, sizeof err) == 0, "%s", err);
    CHECK(hsdr_matrix_override(spec, "mode=hot,cold", err, sizeof err) == 0, "%s", err);
    CHECK(hsdr_matrix_points(spec) == 60.0, "cols x threads x mode: %.0f points, expected 60",
          hsdr_matrix_points(spec));
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 52 && m.nskipped == 8, "cols x threads x mode: %zu cases, %zu skip records", m.ncases,
              m.nskipped);
        check_invariants(&m, "cols x threads x mode");
        hsdr_matrix_free(&m);
    }
    /* rejected cols overrides name the argument and the item, and change nothing */
    const struct {
        const char *arg, *msg;
    } bad[] = {
        {"cols=0", "override 'cols=0': cols[0]: 0 is out of range (1..8)"},
        {"cols=2,9", "override 'cols=2,9': cols[1]: 9 is out of range (1..8)"},
        {"cols=x", "override 'cols=x': cols[0]: 'x' is not an integer"},
        {"cols=", "override 'cols=': cols: empty value"},
        {"col=2", "override 'col=2': col: unknown setting 'col' (expected an axis: variants, K, N, R, cols, threads, "
                  "distribution, mode, flns;"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(hsdr_matrix_override(spec, bad[i].arg, err, sizeof err) != 0 && strstr(err, bad[i].msg),
              "'%s': got '%s', expected '%s'", bad[i].arg, err, bad[i].msg);
    }
    CHECK(hsdr_matrix_points(spec) == 60.0, "a rejected cols override changed the spec: %.0f points",
          hsdr_matrix_points(spec));
    hsdr_matrix_spec_free(spec);

    /* the key: " cols=N" only for a multi-column variant at cols > 1, after mode and before F/b and the shape */
    const hsdr_variant wide_flns = {.name = "fake.wideflns", .uses_flns = true, .max_cols = 8};
    const struct {
        const hsdr_variant *v;
        int cols;
        const char *shape, *key;
    } keys[] = {
        {&col_fakes[COL_WIDE], 4, "", "variant=fake.cols K=256 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4"},
        {&col_fakes[COL_WIDE], 1, "", "variant=fake.cols K=256 N=64 R=1 threads=1 dist=gaussian mode=hot"},
        {&col_fakes[COL_WIDE], 0, "", "variant=fake.cols K=256 N=64 R=1 threads=1 dist=gaussian mode=hot"},
        {&col_fakes[COL_ONE], 4, "", "variant=fake.one K=256 N=64 R=1 threads=1 dist=gaussian mode=hot"},
        {&col_fakes[COL_STATESET1], 4, "", "variant=fake.stateset1 K=256 N=64 R=1 threads=1 dist=gaussian mode=hot"},
        {&wide_flns, 2, "bonsai2-27b/ffn_gate", "variant=fake.wideflns K=256 N=64 R=1 threads=1 dist=gaussian "
                                                "mode=hot cols=2 F=8 b=12 shape=bonsai2-27b/ffn_gate"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        hsdr_case c = {.variant = keys[i].v, .K = 256, .N = 64, .R = 1, .cols = keys[i].cols, .threads = 1,
                       .dist = HSDR_DIST_GAUSSIAN, .mode = HSDR_MODE_HOT, .flns_F = 8, .flns_b = 12};
        snprintf(c.shape, sizeof c.shape, "%s", keys[i].shape);
        char key[256];
        hsdr_case_key(&c, key, sizeof key);
        CHECK(strcmp(key, keys[i].key) == 0, "key '%s', expected '%s'", key, keys[i].key);
        hsdr_case one = c;
        one.cols = 1;
        CHECK(hsdr_case_seed(&c, 5) == hsdr_case_seed(&one, 5), "'%s': the seed depends on cols", key);
    }

    /* a user rule on cols: numeric with comparisons, and one-column variants are at cols = 1; the built-in max_cols
     * check comes before the rules (fake.cols4 at 8 keeps its own reason, fake.cols at 8 gets the first rule's) */
    spec = load_text("axes:\n  K: [128]\n  N: [64]\n  cols: [1, 4, 8]\n"
                     "skip:\n"
                     "  - {when: {variant: fake.cols, cols: \">=4\"}, reason: \"4+ columns later\"}\n"
                     "  - {when: {cols: [8, \"<2\"], family: direct}, reason: \"one column: elsewhere\"}\n"
                     "  - {when: {cols: 8}, reason: \"eight columns\"}\n");
    if (spec && expand(spec, &m) == 0) {
        const char *want[] = {
            "variant=fake.stateset1 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
            "variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4",
        };
        check_keys_in_order(&m, want, sizeof want / sizeof want[0], "cols skip rules");
        const struct {
            const char *key, *reason;
        } reasons[] = {
            {"variant=fake.one K=128 N=64 R=1 threads=1 dist=gaussian mode=hot", "one column: elsewhere"},
            {"variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4", "4+ columns later"},
            {"variant=fake.cols K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=8", "4+ columns later"},
            {"variant=fake.cols4 K=128 N=64 R=1 threads=1 dist=gaussian mode=hot cols=8",
             "cols = 8 > max_cols = 4 of fake.cols4"},
        };
        CHECK(m.nskipped == 4, "cols skip rules: %zu skip records, expected 4", m.nskipped);
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
            const char *r = skip_reason(&m, reasons[i].key);
            CHECK(r && strcmp(r, reasons[i].reason) == 0, "'%s': reason '%s', expected '%s'", reasons[i].key,
                  r ? r : "(not skipped)", reasons[i].reason);
        }
        check_invariants(&m, "cols skip rules");
        hsdr_matrix_free(&m);
    }
    hsdr_matrix_spec_free(spec);

    /* extra cases: cols defaults to 1; a one-column variant drops it (as a variant without R drops R): its case at
     * K = 128 is the grid's and is not added twice; user rules do not apply */
    spec = load_text("axes:\n  K: [128]\n  N: [64]\n  variants: [fake.one]\n"
                     "skip:\n  - {when: {cols: \">1\"}, reason: \"no columns\"}\n"
                     "extra:\n"
                     "  - {variant: fake.cols, K: 256, N: 64, cols: 4}\n"
                     "  - {variant: fake.one, K: 128, N: 64, cols: 8}\n"
                     "  - {variant: fake.one, K: 256, N: 64, cols: 2}\n"
                     "  - {variant: fake.cols4, K: 256, N: 64}\n"
                     "  - {variant: fake.cols4, K: 256, N: 64, R: 8, cols: 4, mode: cold}\n");
    if (spec) {
        CHECK(hsdr_matrix_points(spec) == 6.0, "extra: %.0f points, expected 6", hsdr_matrix_points(spec));
        if (expand(spec, &m) == 0) {
            const char *want[] = {
                "variant=fake.one K=128 N=64 R=1 threads=1 dist=gaussian mode=hot",
                "variant=fake.one K=256 N=64 R=1 threads=1 dist=gaussian mode=hot",
                "variant=fake.cols4 K=256 N=64 R=1 threads=1 dist=gaussian mode=hot",
                "variant=fake.cols K=256 N=64 R=1 threads=1 dist=gaussian mode=hot cols=4",
                "variant=fake.cols4 K=256 N=64 R=8 threads=1 dist=gaussian mode=cold cols=4",
            };
            check_keys_in_order(&m, want, sizeof want / sizeof want[0], "extra cols");
            CHECK(m.nskipped == 0, "extra cols: %zu skip records", m.nskipped);
            CHECK(m.ncases == 5 && m.cases[0].cols == 1 && m.cases[1].cols == 1 && m.cases[2].cols == 1 &&
                      m.cases[3].cols == 4 && m.cases[4].cols == 4 && m.cases[4].R == 8,
                  "extra cols: cols, R not as given");
            check_invariants(&m, "extra cols");
            hsdr_matrix_free(&m);
        }
    }
    hsdr_matrix_spec_free(spec);

    /* malformed cols: file:line:column, the key path and the message; nothing loads */
    const struct {
        const char *text, *msg;
    } malformed[] = {
        {"axes:\n  K: [128]\n  cols: [1, 0]\n", "cols.yaml:3:13: axes.cols[1]: 0 is out of range (1..8)"},
        {"axes:\n  K: [128]\n  cols: [x]\n", "cols.yaml:3:10: axes.cols[0]: 'x' is not an integer"},
        {"axes:\n  K: [128]\n  cols: 9\n", "cols.yaml:3:9: axes.cols: 9 is out of range (1..8)"},
        {"axes:\n  K: [128]\n  cols: []\n", "cols.yaml:3:9: axes.cols: empty list (an axis needs at least one value)"},
        {"axes:\n  K: [128]\nskip:\n  - {when: {cols: \">>2\"}, reason: r}\n",
         "cols.yaml:4:19: skip[0].when.cols: '>>2' is not an integer or a comparison"},
        {"axes:\n  K: [128]\nskip:\n  - {when: {column: 2}, reason: r}\n",
         "cols.yaml:4:13: skip[0].when.column: unknown key 'column' (expected one of: variant, family, backend, "
         "shape, distribution, mode, K, N, R, cols, threads, F, b)"},
        {"axes:\n  K: [128]\nextra:\n  - {variant: fake.cols, K: 128, N: 64, cols: 0}\n",
         "cols.yaml:4:47: extra[0].cols: 0 is out of range (1..8)"},
        {"axes:\n  K: [128]\nextra:\n  - {variant: fake.cols4, K: 128, N: 64, cols: 8}\n",
         "cols.yaml:4:48: extra[0].cols: cols = 8 > max_cols = 4 of fake.cols4"},
        {"axes:\n  K: [128]\nextra:\n  - {cols: 8, variant: fake.cols4, K: 128, N: 64}\n",
         "cols.yaml:4:12: extra[0].cols: cols = 8 > max_cols = 4 of fake.cols4"},
        {"axes:\n  K: [128]\nextra:\n  - {variant: fake.one, K: 128, N: 64, col: 2}\n",
         "cols.yaml:4:40: extra[0].col: unknown key 'col' (expected one of: variant, K, N, R, cols, threads, "
         "distribution, mode, F, b, shape)"},
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        err[0] = '\0';
        spec = (hsdr_matrix_spec *)&err; /* must be reset to NULL */
        int rc = hsdr_matrix_load_text("cols.yaml", malformed[i].text, strlen(malformed[i].text), &col_env, &spec,
                                       err, sizeof err);
        CHECK(rc != 0 && spec == NULL && strstr(err, malformed[i].msg) == err, "'%s': got '%s', expected '%s'",
              malformed[i].text, err, malformed[i].msg);
        if (rc == 0)
            hsdr_matrix_spec_free(spec);
    }
}

/* A random matrix over the fake table through overrides, with an independent count of what it must expand to. */
static void check_random(hsdr_rng *rng)
{
    static const int Ks[] = {128, 256, 384, 1024, 2048, 3072, 5120};
    static const int Ns[] = {1, 8, 64, 100, 256};
    static const int Rs[] = {1, 2, 8, 64, 128};
    static const char *const dists[] = {"gaussian", "laplace", "student-t3", "bonsai"};
    for (int round = 0; round < 40; round++) {
        hsdr_matrix_spec *spec = NULL;
        char err[512];
        const char *text = "axes: {K: [128]}\n";
        if (hsdr_matrix_load_text("random.yaml", text, strlen(text), &fake_env, &spec, err, sizeof err) != 0) {
            CHECK(0, "%s", err);
            return;
        }
        /* random distinct subsets of every axis (at least one value each) */
        int K[8], N[8], R[8], C[4], T[4], nK = 0, nN = 0, nR = 0, nC = 0, nT = 0, nd = 0, nm = 0, nf = 0;
        char arg[256];
#define SUBSET(arr, n, out, nout, name, fmt)                                                                       \
    do {                                                                                                           \
        size_t len = (size_t)snprintf(arg, sizeof arg, "%s=", name);                                               \
        for (size_t i_ = 0; i_ < (n); i_++)                                                                        \
            if (hsdr_rng_below(rng, 2) || (i_ == (n)-1 && nout == 0)) {                                            \
                out[nout++] = arr[i_];                                                                             \
                len += (size_t)snprintf(arg + len, sizeof arg - len, fmt, nout > 1 ? "," : "", arr[i_]);           \
            }                                                                                                      \
        CHECK(hsdr_matrix_override(spec, arg, err, sizeof err) == 0, "'%s': %s", arg, err);                        \
    } while (0)
        SUBSET(Ks, 7, K, nK, "K", "%s%d");
        SUBSET(Ns, 5, N, nN, "N", "%s%d");
        SUBSET(Rs, 5, R, nR, "R", "%s%d");
        static const int Cs[] = {1, 2, 4, 8};
        SUBSET(Cs, 4, C, nC, "cols", "%s%d"); /* every fake takes one column: collapsed, the count is unchanged */
        static const int Ts[] = {1, 2, 3};
        SUBSET(Ts, 3, T, nT, "threads", "%s%d");
        const char *D[4];
        SUBSET(dists, 4, D, nd, "distribution", "%s%s");
        static const char *const modes[] = {"hot", "cold"};
        const char *M[2];
        SUBSET(modes, 2, M, nm, "mode", "%s%s");
        static const char *const pairs[] = {"8:12", "4:8", "0:16"};
        const char *F[3];
        SUBSET(pairs, 3, F, nf, "flns", "%s%s");
#undef SUBSET
        (void)C, (void)M, (void)F;
        int T_ok = 0;
        for (int i = 0; i < nT; i++)
            T_ok += T[i] <= 2;
        size_t expect = 0;
        for (int k = 0; k < nK; k++)
            for (int n = 0; n < nN; n++)
                for (int d = 0; d < nd; d++) {
                    if (strcmp(D[d], "bonsai") == 0 && K[k] % 1024)
                        continue;
                    int R_ok = 0;
                    for (int r = 0; r < nR; r++)
                        R_ok += R[r] <= N[n];
                    /* direct 1, stateset R_ok, flns nf, q8 1 per (threads, mode); codec, gpu always skipped */
                    expect += (size_t)(T_ok * nm) * (size_t)(2 + R_ok + nf);
                }
        hsdr_matrix m;
        if (expand(spec, &m) != 0) {
            hsdr_matrix_spec_free(spec);
            return;
        }
        CHECK(m.ncases == expect, "round %d: %zu cases, expected %zu", round, m.ncases, expect);
        check_invariants(&m, "random matrix");

        /* a random filter, then shards: every n, the union of the shards is the filtered set, each case once,
         * and shard sizes differ by at most one */
        if (hsdr_rng_below(rng, 2))
            hsdr_matrix_filter(&m, hsdr_rng_below(rng, 2) ? "mode=hot" : "*threads=1*");
        for (int n = 1; n <= 5; n++) {
            size_t *seen = calloc(m.ncases ? m.ncases : 1, sizeof *seen), total = 0, lo = (size_t)-1, hi = 0;
            for (int i = 0; i < n; i++) {
                hsdr_matrix s = m;
                s.cases = malloc((m.ncases ? m.ncases : 1) * sizeof *s.cases);
                s.skipped = malloc((m.nskipped ? m.nskipped : 1) * sizeof *s.skipped);
                memcpy(s.cases, m.cases, m.ncases * sizeof *s.cases);
                memcpy(s.skipped, m.skipped, m.nskipped * sizeof *s.skipped);
                CHECK(hsdr_matrix_shard(&s, i, n, err, sizeof err) == 0, "shard %d/%d: %s", i, n, err);
                CHECK(s.shard_index == i && s.shard_count == n, "shard recorded as %d/%d", s.shard_index,
                      s.shard_count);
                total += s.ncases;
                lo = s.ncases < lo ? s.ncases : lo;
                hi = s.ncases > hi ? s.ncases : hi;
                for (size_t j = 0; j < s.ncases; j++) {
                    char a[256], b[256];
                    hsdr_case_key(&s.cases[j], a, sizeof a);
                    size_t where = j * (size_t)n + (size_t)i; /* case j of shard i is case j*n + i */
                    if (where < m.ncases) {
                        hsdr_case_key(&m.cases[where], b, sizeof b);
                        CHECK(strcmp(a, b) == 0, "shard %d/%d case %zu is not case %zu of the whole", i, n, j, where);
                        seen[where]++;
                    } else {
                        CHECK(0, "shard %d/%d has too many cases", i, n);
                    }
                }
                hsdr_matrix_free(&s);
            }
            size_t once = 0;
            for (size_t j = 0; j < m.ncases; j++)
                once += seen[j] == 1;
            CHECK(total == m.ncases && once == m.ncases, "n = %d: union %zu of %zu, %zu once", n, total, m.ncases,
                  once);
            CHECK(hi - lo <= 1 || m.ncases == 0, "n = %d: shard sizes %zu..%zu", n, lo, hi);
            free(seen);
        }
        hsdr_matrix_free(&m);
        hsdr_matrix_spec_free(spec);
    }
}

static void check_overrides(void)
{
    hsdr_matrix_spec *spec = load(DATA "small.yaml", &fake_env);
    if (!spec)
        return;
    char err[512];
    hsdr_matrix m;
    /* each accepted override changes what it names */
    const char *ok[] = {"K=1024", "threads=1", "variants=fake.direct,family:stateset,backend:nothing-yet", "mode=cold",
                        "noise_target=0.05", "flns=8:12,4:8", "seed=99", "warmup=0", "repetitions.max=50",
                        "repetitions.min=4", "time_limit_s=2", "extra=none", "skip=none"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(hsdr_matrix_override(spec, ok[i], err, sizeof err) == 0, "'%s': %s", ok[i], err);
    if (expand(spec, &m) == 0) {
        /* K 1024 x {gaussian, bonsai} x threads 1 x cold x (direct 1 + stateset R 1, 8) */
        CHECK(m.ncases == 6, "after overrides: %zu cases", m.ncases);
        CHECK(m.seed == 99 && m.warmup == 0 && m.min_reps == 4 && m.max_reps == 50 && m.time_limit_s == 2.0 &&
                  m.noise_target == 0.05,
              "settings overrides");
        for (size_t i = 0; i < m.ncases; i++)
            CHECK(m.cases[i].seed == hsdr_case_seed(&m.cases[i], 99), "seed override");
        hsdr_matrix_free(&m);
    }
    /* rejected overrides name the argument, the item and what was wrong, and change nothing */
    const struct {
        const char *arg, *msg;
    } bad[] = {
        {"K=128,abc", "override 'K=128,abc': K[1]: 'abc' is not an integer"},
        {"K=100", "override 'K=100': K[0]: K = 100 is not a multiple of 128"},
        {"N=0", "override 'N=0': N[0]: 0 is out of range"},
        {"threads=", "override 'threads=': threads: empty value"},
        {"variants=fake.direct,nosuch", "override 'variants=fake.direct,nosuch': variants[1]: 'nosuch' matches no "
                                        "variant"},
        {"mode=warm", "override 'mode=warm': mode[0]: unknown mode 'warm'"},
        {"distribution=cauchy", "distribution[0]: unknown distribution 'cauchy'"},
        {"noise_target=0", "override 'noise_target=0': noise_target: 0 is out of range"},
        {"flns=8:12,9:12", "override 'flns=8:12,9:12': flns[1].F: 9 is out of range (0..8)"},
        {"flns=8:3", "flns[0].b: 3 is out of range (4..16)"},
        {"flns=8", "flns[0]: '8' is not F:b"},
        {"repetitions.min=60", "repetitions min 60 > max 50"},
        {"shapes=bonsai2-27b/ffn_middle", "shapes[0]: model bonsai2-27b has no tensor 'ffn_middle'"},
        {"shapes=bonsai-3b", "shapes[0]: unknown model 'bonsai-3b'"},
        {"skip=all", "only 'skip=none'"},
        {"thread=1", "override 'thread=1': thread: unknown setting 'thread'"},
        {"threads", "override 'threads': expected NAME=VALUE"},
        {"seed=-1", "seed: '-1' is not a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(hsdr_matrix_override(spec, bad[i].arg, err, sizeof err) != 0 && strstr(err, bad[i].msg),
              "'%s': got '%s', expected '%s'", bad[i].arg, err, bad[i].msg);
    }
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 6 && m.min_reps == 4, "a rejected override changed the spec: %zu cases", m.ncases);
        hsdr_matrix_free(&m);
    }
    /* a family:/backend: selector may match nothing; the matrix is then empty, not an error */
    CHECK(hsdr_matrix_override(spec, "variants=backend:cpu", err, sizeof err) == 0, "%s", err);
    if (expand(spec, &m) == 0) {
        CHECK(m.ncases == 0 && m.nskipped == 0, "backend:cpu: %zu cases", m.ncases);
        hsdr_matrix_free(&m);
    }
    CHECK(hsdr_matrix_shard(&m, 2, 2, err, sizeof err) != 0 && strstr(err, "shard 2/2"), "bad shard: '%s'", err);
    hsdr_matrix_spec_free(spec);
}

/* Malformed files: the message names file:line:column, the key path and what was wrong; nothing loads. */
static void check_malformed(void)
{
    const struct {
        const char *file, *msg;
    } bad[] = {
        {"bad-unknown-key.yaml", "bad-unknown-key.yaml:3:3: axes.thread: unknown key 'thread' (expected one of: "
                                 "variants, K, N, R, cols, threads, distribution, mode, flns)"},
        {"bad-integer.yaml", "bad-integer.yaml:6:17: axes.K[2]: 'abc' is not an integer"},
        {"bad-k-multiple.yaml", "bad-k-multiple.yaml:2:12: axes.K[1]: K = 100 is not a multiple of 128"},
        {"bad-unknown-variant.yaml",
         "bad-unknown-variant.yaml:2:27: axes.variants[1]: 'fake.nosuch*' matches no variant"},
        {"bad-unknown-distribution.yaml", "bad-unknown-distribution.yaml:3:28: axes.distribution[1]: unknown "
                                          "distribution 'cauchy' (expected one of: gaussian, laplace, student-t3, "
                                          "bonsai)"},
        {"bad-syntax.yaml", "bad-syntax.yaml:3:4: axes.K[2]: malformed YAML: did not find expected ',' or ']' "
                            "(while parsing a flow sequence at 2:6)"},
        {"bad-wrong-type.yaml", "bad-wrong-type.yaml:3:6: axes.R: expected a list, got a mapping"},
        {"bad-duplicate-key.yaml", "bad-duplicate-key.yaml:4:3: axes.K: duplicate key 'K' (first at line 2)"},
        {"bad-flns-range.yaml", "bad-flns-range.yaml:3:29: axes.flns[1].F: 9 is out of range (0..8)"},
        {"bad-cols-range.yaml", "bad-cols-range.yaml:3:16: axes.cols[2]: 9 is out of range (1..8)"},
        {"bad-skip-no-reason.yaml", "bad-skip-no-reason.yaml:4:5: skip[0].reason: missing"},
        {"bad-skip-comparison.yaml", "bad-skip-comparison.yaml:4:16: skip[0].when.K: '>=big' is not an integer or a "
                                     "comparison"},
        {"bad-extra-unknown-variant.yaml", "bad-extra-unknown-variant.yaml:4:15: extra[0].variant: unknown variant "
                                           "'fake.*'"},
        {"bad-shape-tensor.yaml", "bad-shape-tensor.yaml:2:46: shapes[0].tensors[1]: model bonsai2-27b has no tensor "
                                  "'ffn_middle'"},
        {"bad-selector-prefix.yaml", "bad-selector-prefix.yaml:3:14: axes.variants[0]: unknown selector 'fam:'"},
        {"bad-mode.yaml", "bad-mode.yaml:3:9: axes.mode: unknown mode 'hot-ish'"},
        {"no-such-file.yaml", "no-such-file.yaml: cannot open"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512], err[512] = "";
        snprintf(path, sizeof path, DATA "%s", bad[i].file);
        hsdr_matrix_spec *spec = (hsdr_matrix_spec *)&err; /* must be reset to NULL */
        int rc = hsdr_matrix_load_env(path, &fake_env, &spec, err, sizeof err);
        CHECK(rc != 0 && spec == NULL && strstr(err, bad[i].msg), "%s: got '%s', expected '%s'", bad[i].file, err,
              bad[i].msg);
        if (rc == 0)
            hsdr_matrix_spec_free(spec);
    }
    /* loads, but there is nothing to expand */
    hsdr_matrix_spec *spec = load(DATA "bad-no-k.yaml", &fake_env);
    if (spec) {
        hsdr_matrix m;
        char err[512];
        CHECK(hsdr_matrix_expand(spec, &m, err, sizeof err) != 0 && strstr(err, "bad-no-k.yaml: axes.K: missing"),
              "no K: '%s'", err);
        hsdr_matrix_spec_free(spec);
    }
    /* loads, but expands to more points than the limit: refused before any is generated (found while fuzzing: a
     * kilobyte of axes ran the expansion out of memory, and xrealloc aborted) */
    spec = load(DATA "bad-too-many-cases.yaml", &fake_env);
    if (spec) {
        hsdr_matrix m;
        char err[512];
        double points = hsdr_matrix_points(spec);
        CHECK(points == 50.0 * 50 * 2 * 20 * 2 * FAKE_COUNT, "%.0f points", points); /* every fake has R = F/b = 1 */
        CHECK(hsdr_matrix_expand(spec, &m, err, sizeof err) != 0 && m.ncases == 0 &&
                  strstr(err, "bad-too-many-cases.yaml: axes: the matrix expands to 1200000 cases and skip records, "
                              "above the limit of 1000000"),
              "too many: '%s'", err);
        /* one thread count instead of twenty brings it under: expands, each point a case or a skip record */
        CHECK(hsdr_matrix_override(spec, "threads=1", err, sizeof err) == 0, "%s", err);
        if (expand(spec, &m) == 0) {
            CHECK(m.ncases + m.nskipped == 50 * 50 * 2 * 1 * 2 * FAKE_COUNT, "%zu + %zu", m.ncases, m.nskipped);
            hsdr_matrix_free(&m);
        }
        hsdr_matrix_spec_free(spec);
    }
}

/* The committed matrix.yaml against the registry: on this machine, and on a 2-CPU machine (the budget: a few minutes
 * on a 2-core laptop, ~0.3 s per case -> at most ~600 cases). */
static void check_default_matrix(void)
{
    for (int pass = 0; pass < 2; pass++) {
        hsdr_matrix_env env = {.logical_cpus = pass ? 2 : 0};
        hsdr_matrix_spec *spec = load(HSDR_SOURCE_DIR "/matrix.yaml", &env);
        hsdr_matrix m;
        if (!spec || expand(spec, &m) != 0) {
            hsdr_matrix_spec_free(spec);
            return;
        }
        size_t no_rows = 0, by_rule = 0;
        for (size_t i = 0; i < m.nskipped; i++) {
            no_rows += strstr(m.skipped[i].reason, "not benchmarkable") != NULL;
            by_rule += strstr(m.skipped[i].reason, "model shapes") != NULL ||
                       strstr(m.skipped[i].reason, "model size") != NULL;
        }
        printf("matrix.yaml (%s): %zu cases, %zu skip records (%zu without rows, %zu by the model-shape rules)\n",
               pass ? "2 logical CPUs" : "this machine", m.ncases, m.nskipped, no_rows, by_rule);
        CHECK(m.ncases + m.nskipped > 0, "matrix.yaml expands to nothing");
        check_invariants(&m, "matrix.yaml");
        if (pass == 0) {
            hsdr_matrix_free(&m);
            hsdr_matrix_spec_free(spec);
            continue;
        }
        CHECK(m.ncases <= 600, "default matrix: %zu cases (budget ~600 on a 2-core machine)", m.ncases);
        /* the sweep the default matrix promises, over the cases and skip records together */
        int K_min = 1 << 30, K_max = 0, R_max = 0, threads_max = 0, modes = 0, dists = 0;
        for (size_t i = 0; i < m.ncases; i++) {
            const hsdr_case *c = &m.cases[i];
            K_min = c->K < K_min ? c->K : K_min;
            K_max = c->K > K_max ? c->K : K_max;
            R_max = c->R > R_max ? c->R : R_max;
            threads_max = c->threads > threads_max ? c->threads : threads_max;
            modes |= 1 << c->mode;
            dists |= 1 << c->dist;
        }
        if (m.ncases)
            CHECK(K_min == 128 && K_max == 17408 && threads_max == 2 && modes == 3 &&
                      dists == (1 << HSDR_DIST_GAUSSIAN | 1 << HSDR_DIST_BONSAI),
                  "default matrix sweep: K %d..%d, threads ..%d, modes %d, dists %d", K_min, K_max, threads_max,
                  modes, dists);
        const hsdr_variant *stateset = hsdr_variant_find("ref.stateset");
        if (stateset && stateset->rows && stateset->uses_R)
            CHECK(R_max == 64, "R sweep ends at %d", R_max);
        const char *model_skip = skip_reason(&m, "variant=ref.direct K=5120 N=17408 R=1 threads=1 dist=bonsai "
                                                 "mode=cold shape=bonsai2-27b/ffn_gate");
        CHECK(model_skip && strstr(model_skip, "scalar reference at model size"), "model shapes for the reference");
        hsdr_matrix_free(&m);
        hsdr_matrix_spec_free(spec);
    }
}

/* shared/spec/shapes.md: every tensor's K, N, count per token and MB figure; 5.60 GB per token for bonsai2-27b. */
static void check_shapes(void)
{
    const hsdr_model *m = hsdr_model_find("bonsai2-27b");
    CHECK(m != NULL, "bonsai2-27b missing");
    if (!m)
        return;
    const struct {
        const char *tensor;
        int K, N, per_token;
        double mb, tolerance; /* the table's figure, rounded to its digits */
    } table[] = {
        {"ffn_gate", 5120, 17408, 64, 19.50, 0.005},   {"ffn_up", 5120, 17408, 64, 19.50, 0.005},
        {"ffn_down", 17408, 5120, 64, 19.50, 0.005},   {"attn_qkv", 5120, 10240, 48, 11.47, 0.005},
        {"attn_gate", 5120, 6144, 48, 6.88, 0.005},    {"ssm_out", 6144, 5120, 48, 6.88, 0.005},
        {"attn_q", 5120, 12288, 16, 13.76, 0.005},     {"attn_k", 5120, 1024, 16, 1.15, 0.005},
        {"attn_v", 5120, 1024, 16, 1.15, 0.005},       {"attn_output", 6144, 5120, 16, 6.88, 0.005},
        {"output", 5120, 248320, 1, 278.1, 0.05},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const hsdr_gemv_shape *s = hsdr_model_tensor(m, table[i].tensor);
        CHECK(s != NULL, "bonsai2-27b/%s missing", table[i].tensor);
        if (!s)
            continue;
        double mb = (double)hsdr_gemv_weight_bytes(s) / 1e6;
        CHECK(s->K == table[i].K && s->N == table[i].N, "%s: %dx%d", s->tensor, s->K, s->N);
        CHECK(mb > table[i].mb - table[i].tolerance && mb < table[i].mb + table[i].tolerance, "%s: %.3f MB, table %.2f",
              s->tensor, mb, table[i].mb);
        CHECK(hsdr_model_tensor_per_token(m, s->tensor) == table[i].per_token, "%s: %d per token", s->tensor,
              hsdr_model_tensor_per_token(m, s->tensor));
    }
    /* the attention layers are 3, 7, ..., 63 */
    for (int i = 0; i < m->n_layers; i++)
        CHECK(hsdr_model_layer_is_attn(m, i) == (i % 4 == 3), "layer %d", i);
    CHECK(hsdr_model_attn_layers(m) == 16, "attention layers: %d", hsdr_model_attn_layers(m));
    /* 5.60 GB: 64 x 3 x 19496960 (FFN) + 48 x 25231360 (GDN) + 16 x 22937600 (attention) + 278118400 (head) */
    uint64_t bytes = hsdr_model_token_bytes(m);
    CHECK(bytes == 5599641600ull, "bonsai2-27b: %llu bytes per token", (unsigned long long)bytes);
    CHECK(bytes > 5.595e9 && bytes < 5.605e9, "bonsai2-27b: %.3f GB per token, shapes.md says 5.60",
          (double)bytes / 1e9);
    /* the same sum from per-token counts */
    const hsdr_gemv_shape *all[32];
    size_t n = hsdr_model_tensors(m, all, 32);
    uint64_t by_count = 0;
    for (size_t i = 0; i < n; i++)
        by_count += hsdr_gemv_weight_bytes(all[i]) * (uint64_t)hsdr_model_tensor_per_token(m, all[i]->tensor);
    CHECK(n == 11 && by_count == bytes, "distinct tensors %zu, sum by count %llu", n, (unsigned long long)by_count);
    CHECK(hsdr_model_tensors(m, NULL, 0) == 11, "count-only call");

    /* every model: K multiples of 128, tensors shared by both layer kinds have one shape, inputs named */
    size_t count;
    const hsdr_model *models = hsdr_models(&count);
    CHECK(count == 3 && hsdr_model_find("bonsai-8b") && hsdr_model_find("bonsai-4b") && !hsdr_model_find("gpt-2"),
          "models");
    for (size_t i = 0; i < count; i++) {
        const hsdr_model *md = &models[i];
        const hsdr_gemv_shape *ts[32];
        size_t nt = hsdr_model_tensors(md, ts, 32);
        for (size_t j = 0; j < nt && j < 32; j++) {
            CHECK(ts[j]->K % 128 == 0 && ts[j]->N > 0 && ts[j]->input && ts[j]->input[0], "%s/%s", md->name,
                  ts[j]->tensor);
            CHECK(hsdr_model_tensor(md, ts[j]->tensor) == ts[j] || hsdr_model_tensor(md, ts[j]->tensor)->K == ts[j]->K,
                  "%s/%s lookup", md->name, ts[j]->tensor);
            for (size_t k = j + 1; k < nt && k < 32; k++)
                CHECK(strcmp(ts[j]->tensor, ts[k]->tensor) != 0, "%s: %s twice", md->name, ts[j]->tensor);
        }
        for (int a = 0; a < md->n_attn; a++)
            for (int o = 0; o < md->n_other; o++)
                if (strcmp(md->attn[a].tensor, md->other[o].tensor) == 0)
                    CHECK(md->attn[a].K == md->other[o].K && md->attn[a].N == md->other[o].N, "%s/%s: two shapes",
                          md->name, md->attn[a].tensor);
    }
    const hsdr_model *b8 = hsdr_model_find("bonsai-8b"), *b4 = hsdr_model_find("bonsai-4b");
    if (b8 && b4) {
        CHECK(hsdr_model_attn_layers(b8) == 36 && b8->n_other == 0 && b8->head.K == 4096 && b8->head.N == 151936,
              "bonsai-8b");
        CHECK(hsdr_model_attn_layers(b4) == 36 && b4->head.K == 2560 && b4->head.N == 151936, "bonsai-4b");
        const hsdr_gemv_shape *q = hsdr_model_tensor(b4, "attn_q"), *o = hsdr_model_tensor(b4, "attn_output"),
                              *d = hsdr_model_tensor(b8, "ffn_down");
        CHECK(q && q->K == 2560 && q->N == 4096 && o && o->K == 4096 && o->N == 2560, "bonsai-4b q/o");
        CHECK(d && d->K == 12288 && d->N == 4096, "bonsai-8b ffn_down");
        /* one decoded token of the 8B: 36 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 12288) + 4096 x 151936
         * weights at 28/128 bytes each */
        uint64_t w8 = 36ull * (2ull * 4096 * 4096 + 2ull * 4096 * 1024 + 3ull * 4096 * 12288) + 4096ull * 151936;
        CHECK(hsdr_model_token_bytes(b8) == w8 / 128 * 28, "bonsai-8b bytes per token");
    }
    /* q/k/v read one activation: one encoded vector shared across their rows */
    CHECK(strcmp(hsdr_model_tensor(m, "attn_q")->input, hsdr_model_tensor(m, "attn_k")->input) == 0 &&
              strcmp(hsdr_model_tensor(m, "ffn_gate")->input, hsdr_model_tensor(m, "ffn_up")->input) == 0 &&
              strcmp(hsdr_model_tensor(m, "ffn_up")->input, hsdr_model_tensor(m, "ffn_down")->input) != 0,
          "shared inputs");
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_matrix"));
    check_shapes();
    check_small();
    check_shapes_matrix();
    check_cols();
    check_overrides();
    check_malformed();
    check_random(&rng);
    check_default_matrix();
    return test_finish("test_matrix");
}
