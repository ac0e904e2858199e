/* Expanding a spec (matrix_spec.h) into cases: the cartesian product of the axes with collapsing, the built-in and
 * the user's skip rules, duplicate removal, the order of the run; and the filters, shards and freeing of the
 * result (matrix.h documents the rules). Depends on matrix_spec.h, util.h, xalloc.h; not on the YAML. */
#include "matrix_spec.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "xalloc.h"

/* ---- expansion --------------------------------------------------------------------------------------------------- */

typedef struct {
    hsdr_case c;
    size_t config; /* input configuration (shape, K, N, distribution), in order of first appearance */
    size_t gen;    /* generation order: the tie-breaker that keeps "the first" first */
    bool dead;     /* a skip record replaced by an explicit extra case of the same key */
    char reason[160];
} gen_case;

typedef struct {
    gen_case *v;
    size_t n, cap;
} gen_list;

typedef struct {
    char shape[HSDR_CASE_SHAPE_LEN];
    int K, N;
    hsdr_dist dist;
} input_config;

/* Keys seen so far: open addressing; value = index into cases (>= 0) or ~index into skipped (< 0). */
typedef struct {
    char **keys;
    long long *vals;
    size_t cap, n;
} key_table;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static long long *table_slot(key_table *t, const char *key, bool *found)
{
    if ((t->n + 1) * 2 > t->cap) {
        key_table bigger = {.cap = t->cap ? t->cap * 2 : 1024};
        bigger.keys = xrealloc(NULL, bigger.cap * sizeof(char *));
        bigger.vals = xrealloc(NULL, bigger.cap * sizeof(long long));
        memset(bigger.keys, 0, bigger.cap * sizeof(char *));
        for (size_t i = 0; i < t->cap; i++)
            if (t->keys[i]) {
                size_t j = fnv1a(t->keys[i]) & (bigger.cap - 1);
                while (bigger.keys[j])
                    j = (j + 1) & (bigger.cap - 1);
                bigger.keys[j] = t->keys[i];
                bigger.vals[j] = t->vals[i];
            }
        bigger.n = t->n;
        free(t->keys);
        free(t->vals);
        *t = bigger;
    }
    size_t j = fnv1a(key) & (t->cap - 1);
    while (t->keys[j] && strcmp(t->keys[j], key) != 0)
        j = (j + 1) & (t->cap - 1);
    *found = t->keys[j] != NULL;
    if (!*found) {
        t->keys[j] = xstrdup(key);
        t->n++;
    }
    return &t->vals[j];
}

static void table_free(key_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->vals);
}

typedef struct {
    const hsdr_matrix_spec *spec;
    int logical_cpus;
    input_config *configs;
    size_t nconfigs, capconfigs;
    gen_list cases, skipped;
    key_table keys;
    size_t gen;
} expander;

static size_t config_index(expander *x, const hsdr_case *c)
{
    for (size_t i = x->nconfigs; i-- > 0;) {
        const input_config *k = &x->configs[i];
        if (k->K == c->K && k->N == c->N && k->dist == c->dist && strcmp(k->shape, c->shape) == 0)
            return i;
    }
    input_config *k = PUSH(x->configs, x->nconfigs, x->capconfigs);
    memcpy(k->shape, c->shape, sizeof k->shape);
    k->K = c->K;
    k->N = c->N;
    k->dist = c->dist;
    return x->nconfigs - 1;
}

static bool cmp_holds(cmp_op op, long long a, long long b)
{
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
    }
}

static bool cond_holds(const cond *cd, const hsdr_case *c)
{
    const hsdr_variant *v = c->variant;
    if ((cd->key == CK_F || cd->key == CK_B) && !v->uses_flns)
        return false; /* F, b are not a property of a variant that does not use them */
    for (size_t i = 0; i < cd->n; i++) {
        const cond_value *val = &cd->vals[i];
        bool hit;
        switch (cd->key) {
        case CK_VARIANT: hit = hsdr_glob_match(val->s, v->name); break;
        case CK_FAMILY: hit = hsdr_glob_match(val->s, v->family); break;
        case CK_BACKEND: hit = hsdr_glob_match(val->s, v->backend); break;
        case CK_SHAPE: hit = val->s[0] ? hsdr_glob_match(val->s, c->shape) : c->shape[0] == '\0'; break;
        case CK_DISTRIBUTION: hit = val->v == (long long)c->dist; break;
        case CK_MODE: hit = val->v == (long long)c->mode; break;
        case CK_K: hit = cmp_holds(val->op, c->K, val->v); break;
        case CK_N: hit = cmp_holds(val->op, c->N, val->v); break;
        case CK_R: hit = cmp_holds(val->op, c->R, val->v); break;
        case CK_COLS: hit = cmp_holds(val->op, c->cols, val->v); break;
        case CK_THREADS: hit = cmp_holds(val->op, c->threads, val->v); break;
        case CK_F: hit = cmp_holds(val->op, c->flns_F, val->v); break;
        default: hit = cmp_holds(val->op, c->flns_b, val->v); break;
        }
        if (hit)
            return true;
    }
    return false;
}

/* Why c is skipped (written to reason), or false. */
static bool skip_reason(const expander *x, const hsdr_case *c, bool user_rules, char *reason, size_t len)
{
    if (c->dist == HSDR_DIST_BONSAI && c->K % 1024 != 0) {
        snprintf(reason, len, "distribution bonsai needs K a multiple of 1024 (WHT-1024 fold), K = %d", c->K);
        return true;
    }
    if (c->R > c->N) {
        snprintf(reason, len, "R = %d > N = %d rows", c->R, c->N);
        return true;
    }
    if (c->variant->max_cols > 1 && c->cols > c->variant->max_cols) {
        snprintf(reason, len, "cols = %d > max_cols = %d of %s", c->cols, c->variant->max_cols, c->variant->name);
        return true;
    }
    if (c->threads > x->logical_cpus) {
        snprintf(reason, len, "threads = %d > %d logical CPUs here", c->threads, x->logical_cpus);
        return true;
    }
    for (size_t i = 0; user_rules && i < x->spec->nskips; i++) {
        const skip_rule *rule = &x->spec->skips[i];
        bool all = true;
        for (size_t k = 0; k < rule->n && all; k++)
            all = cond_holds(&rule->conds[k], c);
        if (all) {
            snprintf(reason, len, "%s", rule->reason);
            return true;
        }
    }
    if (!hsdr_variant_timed(c->variant)) {
        snprintf(reason, len, "not benchmarkable: %s has no timing interface (rows)", c->variant->name);
        return true;
    }
    const char *why = hsdr_variant_unavailable(c->variant);
    if (why) {
        snprintf(reason, len, "unavailable here: %s", why);
        return true;
    }
    return false;
}

static void add_case(expander *x, const hsdr_case *c, bool user_rules)
{
    char key[256], reason[160];
    hsdr_case_key(c, key, sizeof key);
    bool skip = skip_reason(x, c, user_rules, reason, sizeof reason);
    bool found;
    long long *slot = table_slot(&x->keys, key, &found);
    if (found) {
        /* the first of a key stays; only an explicit case replaces a skip record of the same key */
        if (skip || *slot >= 0)
            return;
        x->skipped.v[~*slot].dead = true;
    }
    gen_list *list = skip ? &x->skipped : &x->cases;
    gen_case *g = PUSH(list->v, list->n, list->cap);
    g->c = *c;
    g->c.seed = hsdr_case_seed(c, x->spec->seed);
    g->config = config_index(x, c);
    g->gen = x->gen++;
    if (skip)
        memcpy(g->reason, reason, sizeof reason);
    *slot = skip ? ~(long long)(list->n - 1) : (long long)(list->n - 1);
}

/* Every (threads, mode, R, cols, variant, flns) point of one input configuration. */
static void expand_config(expander *x, const bool *selected, int K, int N, hsdr_dist dist, const char *shape)
{
    const hsdr_matrix_spec *s = x->spec;
    hsdr_case c;
    memset(&c, 0, sizeof c);
    c.K = K;
    c.N = N;
    c.dist = dist;
    snprintf(c.shape, sizeof c.shape, "%s", shape);
    for (size_t t = 0; t < s->threads.n; t++)
        for (size_t m = 0; m < s->modes.n; m++)
            for (size_t r = 0; r < s->R.n; r++)
                for (size_t k = 0; k < s->cols.n; k++)
                    for (size_t v = 0; v < s->nreg; v++) {
                        const hsdr_variant *var = &s->reg[v];
                        bool multi_col = var->max_cols > 1;
                        if (!selected[v] || (!var->uses_R && r > 0) || (!multi_col && k > 0))
                            continue;
                        for (size_t f = 0; f < s->nflns; f++) {
                            if (!var->uses_flns && f > 0)
                                break;
                            c.variant = var;
                            c.threads = s->threads.v[t];
                            c.mode = (hsdr_mode)s->modes.v[m];
                            c.R = var->uses_R ? s->R.v[r] : 1;
                            c.cols = multi_col ? s->cols.v[k] : 1;
                            c.flns_F = s->flns[f].F;
                            c.flns_b = s->flns[f].b;
                            add_case(x, &c, true);
                        }
                    }
}

static int gen_cmp(const void *pa, const void *pb)
{
    const gen_case *a = pa, *b = pb;
#define CMP(x, y)                                                                                                  \
    if ((x) != (y))                                                                                                \
        return (x) < (y) ? -1 : 1;
    CMP(a->config, b->config)
    CMP(a->c.threads, b->c.threads)
    CMP(a->c.mode, b->c.mode)
    CMP(a->c.R, b->c.R)
    CMP(a->c.cols, b->c.cols)
    CMP(a->c.variant, b->c.variant) /* registry order: both point into the spec's table of variants */
    CMP(a->c.flns_F, b->c.flns_F)
    CMP(a->c.flns_b, b->c.flns_b)
    CMP(a->gen, b->gen)
#undef CMP
    return 0;
}

/* Which variants of the table the variants axis selects (all of them when the axis is not given). */
static bool *select_variants(const hsdr_matrix_spec *spec)
{
    bool *selected = xrealloc(NULL, spec->nreg * sizeof *selected);
    for (size_t v = 0; v < spec->nreg; v++) {
        selected[v] = spec->variants.n == 0;
        for (size_t i = 0; i < spec->variants.n && !selected[v]; i++)
            selected[v] = mx_selector_matches(spec->variants.v[i], &spec->reg[v]);
    }
    return selected;
}

/* (variant, R, cols, flns) points of one (configuration, threads, mode): what the inner loops of expand_config
 * visit. */
static double variant_points(const hsdr_matrix_spec *s, const bool *selected)
{
    double points = 0;
    for (size_t v = 0; v < s->nreg; v++)
        if (selected[v])
            points += (double)(s->reg[v].uses_R ? s->R.n : 1) * (double)(s->reg[v].max_cols > 1 ? s->cols.n : 1) *
                      (double)(s->reg[v].uses_flns ? s->nflns : 1);
    return points;
}

static double points_of(const hsdr_matrix_spec *s, const bool *selected)
{
    double configs = ((double)s->K.n * (double)s->N.n + (double)s->nshapes + (double)s->ngguf) * (double)s->dists.n;
    return configs * (double)s->threads.n * (double)s->modes.n * variant_points(s, selected) + (double)s->nextras;
}

double hsdr_matrix_points(const hsdr_matrix_spec *spec)
{
    bool *selected = select_variants(spec);
    double points = points_of(spec, selected);
    free(selected);
    return points;
}

int hsdr_matrix_expand(const hsdr_matrix_spec *spec, hsdr_matrix *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (spec->gguf && !spec->gguf_set)
        return hsdr_errorf(err, errlen, "%s: gguf: the tensors of a model file: give it with --gguf FILE",
                           spec->gguf_where);
    if (spec->K.n == 0 && spec->nshapes == 0 && spec->nextras == 0 && spec->ngguf == 0)
        return hsdr_errorf(err, errlen, "%s: axes.K: missing: the matrix gives no K values, shapes or extra cases",
                           spec->source);
    bool *selected = select_variants(spec);
    /* a few kilobytes of axes can cross to billions of points: refuse before allocating any of them */
    double points = points_of(spec, selected);
    if (points > HSDR_MATRIX_MAX_POINTS) {
        hsdr_errorf(err, errlen, "%s: axes: the matrix expands to %.0f cases and skip records, above the limit of %d "
                    "(K %zu x N %zu values and %zu shapes, x distribution %zu x threads %zu x mode %zu x %.0f "
                    "variant/R/cols/flns points, + %zu extra): narrow an axis or split the matrix", spec->source,
                    points, HSDR_MATRIX_MAX_POINTS, spec->K.n, spec->N.n, spec->nshapes, spec->dists.n, spec->threads.n,
                    spec->modes.n, variant_points(spec, selected), spec->nextras);
        free(selected);
        return -1;
    }
    expander x = {.spec = spec, .logical_cpus = spec->logical_cpus};
    for (size_t k = 0; k < spec->K.n; k++)
        for (size_t n = 0; n < spec->N.n; n++)
            for (size_t d = 0; d < spec->dists.n; d++)
                expand_config(&x, selected, spec->K.v[k], spec->N.v[n], (hsdr_dist)spec->dists.v[d], "");
    for (size_t i = 0; i < spec->nshapes; i++) {
        char name[64];
        mx_shape_name(&spec->shapes[i], name, sizeof name);
        for (size_t d = 0; d < spec->dists.n; d++)
            expand_config(&x, selected, spec->shapes[i].tensor->K, spec->shapes[i].tensor->N,
                          (hsdr_dist)spec->dists.v[d], name);
    }
    for (size_t i = 0; i < spec->ngguf; i++) {
        char name[HSDR_CASE_SHAPE_LEN];
        snprintf(name, sizeof name, "gguf:%s", spec->gguf_tensors[i].name);
        for (size_t d = 0; d < spec->dists.n; d++)
            expand_config(&x, selected, spec->gguf_tensors[i].K, spec->gguf_tensors[i].N, (hsdr_dist)spec->dists.v[d],
                          name);
    }
    for (size_t i = 0; i < spec->nextras; i++) {
        const extra_case *e = &spec->extras[i];
        hsdr_case c;
        memset(&c, 0, sizeof c);
        c.variant = e->variant;
        c.K = e->K;
        c.N = e->N;
        c.R = e->variant->uses_R ? e->R : 1;
        c.cols = e->variant->max_cols > 1 ? e->cols : 1;
        c.threads = e->threads;
        c.dist = e->dist;
        c.mode = e->mode;
        c.flns_F = e->has_F && e->variant->uses_flns ? e->F : spec->flns[0].F;
        c.flns_b = e->has_b && e->variant->uses_flns ? e->b : spec->flns[0].b;
        memcpy(c.shape, e->shape, sizeof c.shape);
        add_case(&x, &c, false);
    }
    free(selected);
    table_free(&x.keys);
    free(x.configs);

    if (x.cases.n)
        qsort(x.cases.v, x.cases.n, sizeof *x.cases.v, gen_cmp);
    if (x.skipped.n)
        qsort(x.skipped.v, x.skipped.n, sizeof *x.skipped.v, gen_cmp);

    snprintf(out->source, sizeof out->source, "%s", spec->source);
    out->seed = spec->seed;
    out->warmup = spec->warmup;
    out->min_reps = spec->min_reps;
    out->max_reps = spec->max_reps;
    out->noise_target = spec->noise_target;
    out->time_limit_s = spec->time_limit_s;
    out->ceiling_interval_s = spec->ceiling_interval_s;
    out->visits = spec->visits;
    out->logical_cpus = spec->logical_cpus;
    out->shard_index = 0;
    out->shard_count = 1;
    out->cases = xrealloc(NULL, x.cases.n * sizeof *out->cases);
    for (size_t i = 0; i < x.cases.n; i++)
        out->cases[out->ncases++] = x.cases.v[i].c;
    out->skipped = xrealloc(NULL, x.skipped.n * sizeof *out->skipped);
    for (size_t i = 0; i < x.skipped.n; i++) {
        if (x.skipped.v[i].dead)
            continue;
        hsdr_skipped_case *s = &out->skipped[out->nskipped++];
        hsdr_case_key(&x.skipped.v[i].c, s->key, sizeof s->key);
        memcpy(s->reason, x.skipped.v[i].reason, sizeof s->reason);
    }
    free(x.cases.v);
    free(x.skipped.v);
    return 0;
}

/* ---- filter, shard, free ----------------------------------------------------------------------------------------- */

/* One alternative of a filter (n bytes of a comma-separated list): a glob matching the whole key when it has one of
 * "*?[", else a substring of the key. */
static bool alt_matches(const char *alt, size_t n, const char *key)
{
    char pattern[1024]; /* a key is shorter than 256 characters; a longer alternative matches none */
    if (n == 0 || n >= sizeof pattern)
        return false;
    memcpy(pattern, alt, n);
    pattern[n] = '\0';
    return strpbrk(pattern, "*?[") ? fnmatch(pattern, key, 0) == 0 : strstr(key, pattern) != NULL;
}

/* A case key never holds a comma, so a filter's commas separate alternatives: the key is kept when one matches. */
static bool key_matches(const char *filter, const char *key)
{
    for (const char *p = filter;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (alt_matches(p, n, key))
            return true;
        if (!end)
            return false;
        p = end + 1;
    }
}

void hsdr_matrix_filter(hsdr_matrix *m, const char *pattern)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->ncases; i++) {
        char key[256];
        hsdr_case_key(&m->cases[i], key, sizeof key);
        if (key_matches(pattern, key))
            m->cases[kept++] = m->cases[i];
    }
    m->ncases = kept;
    kept = 0;
    for (size_t i = 0; i < m->nskipped; i++)
        if (key_matches(pattern, m->skipped[i].key))
            m->skipped[kept++] = m->skipped[i];
    m->nskipped = kept;
}

int hsdr_matrix_shard(hsdr_matrix *m, int i, int n, char *err, size_t errlen)
{
    if (n < 1 || i < 0 || i >= n)
        return hsdr_errorf(err, errlen, "shard %d/%d: expected 0 <= i < n", i, n);
    size_t kept = 0;
    for (size_t j = 0; j < m->ncases; j++)
        if (j % (size_t)n == (size_t)i)
            m->cases[kept++] = m->cases[j];
    m->ncases = kept;
    kept = 0;
    for (size_t j = 0; j < m->nskipped; j++)
        if (j % (size_t)n == (size_t)i)
            m->skipped[kept++] = m->skipped[j];
    m->nskipped = kept;
    /* shard i2 of shard i1/n1 is shard i1 + n1*i2 of n1*n2 (positions J with J % n1 == i1, then (J / n1) % n2 == i2) */
    m->shard_index += m->shard_count * i;
    m->shard_count *= n;
    return 0;
}

void hsdr_matrix_free(hsdr_matrix *m)
{
    free(m->cases);
    free(m->skipped);
    memset(m, 0, sizeof *m);
}
