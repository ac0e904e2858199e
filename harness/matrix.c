/* The experiment matrix: YAML (libyaml event API, into a small tree that keeps every node's line:column) -> a
 * validated spec -> command-line overrides -> expanded, skipped, deduplicated, ordered cases. The format and the
 * expansion rules are documented once, in matrix.h. */
#include "matrix.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "shapes.h"
#include "util.h"

#define PATH_MAX_LEN 256

static void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) {
        fprintf(stderr, "hsdr: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

/* Room for one more element in arr (n used, *cap allocated); returns the (possibly moved) array. */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return arr;
    *cap = *cap ? *cap * 2 : 8;
    return xrealloc(arr, *cap * size);
}
/* Append one zeroed element to a dynamic array (pointer arr, count n, capacity cap); yields its address. */
#define PUSH(arr, n, cap)                                                                                          \
    ((arr) = grow((arr), (n), &(cap), sizeof *(arr)), memset(&(arr)[(n)], 0, sizeof *(arr)), &(arr)[(n)++])

/* ---- a YAML tree with positions ----------------------------------------------------------------------------------- */

typedef enum { YN_SCALAR, YN_SEQ, YN_MAP } yn_type;

typedef struct ynode ynode;
struct ynode {
    yn_type type;
    int line, col; /* 1-based */
    char *text;    /* scalars */
    bool plain;    /* unquoted scalar (an empty plain scalar, ~ or null is "nothing") */
    ynode **kids;  /* sequence items; mapping: key, value, key, value, ... */
    size_t n, cap;
    bool open;     /* container still being parsed (a recursive alias would point into it) */
    ynode *next_alloc;
};

typedef struct {
    char *name;
    ynode *node;
} yanchor;

typedef struct {
    ynode *all, *root;
    yanchor *anchors;
    size_t nanchors, capanchors;
} ydoc;

static void ydoc_free(ydoc *d)
{
    for (ynode *n = d->all, *next; n; n = next) {
        next = n->next_alloc;
        free(n->text);
        free(n->kids);
        free(n);
    }
    for (size_t i = 0; i < d->nanchors; i++)
        free(d->anchors[i].name);
    free(d->anchors);
    memset(d, 0, sizeof *d);
}

static ynode *ynode_new(ydoc *d, yn_type type, yaml_mark_t mark)
{
    ynode *n = xrealloc(NULL, sizeof *n);
    memset(n, 0, sizeof *n);
    n->type = type;
    n->line = (int)mark.line + 1;
    n->col = (int)mark.column + 1;
    n->next_alloc = d->all;
    d->all = n;
    return n;
}

static const char *type_name(const ynode *n)
{
    return n->type == YN_MAP ? "a mapping" : n->type == YN_SEQ ? "a list" : "a scalar";
}

static bool is_null(const ynode *n)
{
    return n->type == YN_SCALAR && n->plain &&
           (n->text[0] == '\0' || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}

/* The key path of the node being parsed (for syntax errors): "axes.K[2]". */
static void stack_path(ynode *const *stack, int depth, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < depth && len < outlen; i++) {
        const ynode *c = stack[i];
        bool innermost = i == depth - 1;
        if (c->type == YN_MAP) {
            const ynode *key = NULL;
            if (!innermost && c->n >= 2)
                key = c->kids[c->n - 2];
            else if (innermost && c->n % 2 == 1)
                key = c->kids[c->n - 1];
            if (!key)
                break;
            len += (size_t)snprintf(out + len, outlen - len, "%s%s", len ? "." : "", key->text ? key->text : "?");
        } else {
            size_t index = innermost ? c->n : c->n - 1;
            len += (size_t)snprintf(out + len, outlen - len, "[%zu]", index);
        }
    }
}

static int yaml_fail(char *err, size_t errlen, const char *file, int line, int col, const char *path, const char *fmt,
                     ...) __attribute__((format(printf, 7, 8)));
static int yaml_fail(char *err, size_t errlen, const char *file, int line, int col, const char *path, const char *fmt,
                     ...)
{
    int len = path && path[0] ? snprintf(err, errlen, "%s:%d:%d: %s: ", file, line, col, path)
                              : snprintf(err, errlen, "%s:%d:%d: ", file, line, col);
    if (len >= 0 && (size_t)len < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + len, errlen - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int attach(ydoc *d, ynode **stack, int depth, ynode *node, const char *file, char *err, size_t errlen)
{
    if (depth == 0) {
        d->root = node;
        return 0;
    }
    ynode *parent = stack[depth - 1];
    if (parent->type == YN_MAP && parent->n % 2 == 0) {
        char path[PATH_MAX_LEN];
        stack_path(stack, depth, path, sizeof path);
        if (node->type != YN_SCALAR)
            return yaml_fail(err, errlen, file, node->line, node->col, path, "a mapping key must be a scalar, got %s",
                             type_name(node));
        size_t len = strlen(path);
        snprintf(path + len, sizeof path - len, "%s%s", len ? "." : "", node->text);
        for (size_t i = 0; i < parent->n; i += 2)
            if (strcmp(parent->kids[i]->text, node->text) == 0)
                return yaml_fail(err, errlen, file, node->line, node->col, path,
                                 "duplicate key '%s' (first at line %d)", node->text, parent->kids[i]->line);
    }
    *PUSH(parent->kids, parent->n, parent->cap) = node;
    return 0;
}

static void add_anchor(ydoc *d, const yaml_char_t *anchor, ynode *node)
{
    if (!anchor)
        return;
    yanchor *a = PUSH(d->anchors, d->nanchors, d->capanchors);
    a->name = xstrdup((const char *)anchor);
    a->node = node;
}

#define YAML_MAX_DEPTH 32

/* Parse one YAML document into d. 0, or -1 with "file:line:col: path: message". */
static int ydoc_parse(ydoc *d, const char *file, const char *text, size_t len, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return hsdr_errorf(err, errlen, "%s: cannot initialize the YAML parser", file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    ynode *stack[YAML_MAX_DEPTH];
    int depth = 0, documents = 0, rc = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            char path[PATH_MAX_LEN];
            stack_path(stack, depth, path, sizeof path);
            char context[160] = "";
            if (parser.context)
                snprintf(context, sizeof context, " (%s at %d:%d)", parser.context,
                         (int)parser.context_mark.line + 1, (int)parser.context_mark.column + 1);
            rc = yaml_fail(err, errlen, file, (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
                           path, "malformed YAML: %s%s", parser.problem ? parser.problem : "parse error", context);
            break;
        }
        ynode *node = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                rc = yaml_fail(err, errlen, file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1, NULL,
                               "only one YAML document is allowed");
            break;
        case YAML_SCALAR_EVENT:
            node = ynode_new(d, YN_SCALAR, ev.start_mark);
            node->text = xstrdup((const char *)ev.data.scalar.value);
            node->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            add_anchor(d, ev.data.scalar.anchor, node);
            rc = attach(d, stack, depth, node, file, err, errlen);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            node = ynode_new(d, ev.type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP, ev.start_mark);
            node->open = true;
            add_anchor(d, ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                              : ev.data.mapping_start.anchor,
                       node);
            rc = attach(d, stack, depth, node, file, err, errlen);
            if (rc == 0 && depth == YAML_MAX_DEPTH)
                rc = yaml_fail(err, errlen, file, node->line, node->col, NULL, "nested deeper than %d levels",
                               YAML_MAX_DEPTH);
            if (rc == 0)
                stack[depth++] = node;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            stack[--depth]->open = false;
            break;
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            for (size_t i = d->nanchors; i-- > 0;)
                if (strcmp(d->anchors[i].name, name) == 0) {
                    node = d->anchors[i].node;
                    break;
                }
            char path[PATH_MAX_LEN];
            stack_path(stack, depth, path, sizeof path);
            if (!node || node->open)
                rc = yaml_fail(err, errlen, file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1, path,
                               node ? "recursive alias '*%s'" : "unknown alias '*%s'", name);
            else
                rc = attach(d, stack, depth, node, file, err, errlen);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc)
        ydoc_free(d);
    return rc;
}

static const ynode *map_get(const ynode *map, const char *key)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (strcmp(map->kids[i]->text, key) == 0)
            return map->kids[i + 1];
    return NULL;
}

/* ---- where a value came from: a YAML node or a command-line override ------------------------------------------- */

typedef struct {
    const char *file; /* YAML source, or NULL */
    const char *arg;  /* the override argument, when file is NULL */
    int line, col;
    char path[PATH_MAX_LEN];
} site;

static int site_fail(char *err, size_t errlen, const site *s, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int site_fail(char *err, size_t errlen, const site *s, const char *fmt, ...)
{
    int len;
    if (s->file)
        len = s->path[0] ? snprintf(err, errlen, "%s:%d:%d: %s: ", s->file, s->line, s->col, s->path)
                         : snprintf(err, errlen, "%s:%d:%d: ", s->file, s->line, s->col);
    else
        len = s->path[0] ? snprintf(err, errlen, "override '%s': %s: ", s->arg, s->path)
                         : snprintf(err, errlen, "override '%s': ", s->arg);
    if (len >= 0 && (size_t)len < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + len, errlen - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The site of a child: parent.key or parent[i] (key NULL). */
static site child_site(const site *parent, const ynode *n, const char *key, size_t index)
{
    site s = *parent;
    if (n) {
        s.line = n->line;
        s.col = n->col;
    }
    size_t len = strlen(s.path);
    int wrote = key ? snprintf(s.path + len, sizeof s.path - len, "%s%s", len ? "." : "", key)
                    : snprintf(s.path + len, sizeof s.path - len, "[%zu]", index);
    if (wrote < 0 || (size_t)wrote >= sizeof s.path - len)
        memcpy(s.path + sizeof s.path - 4, "...", 4); /* a path this long is itself the problem */
    return s;
}

/* ---- the spec -------------------------------------------------------------------------------------------------- */

typedef struct {
    int *v;
    size_t n, cap;
} ilist;

typedef struct {
    int F, b;
} flns_pair;

typedef struct {
    const hsdr_model *model;
    const hsdr_gemv_shape *tensor;
} shape_ref;

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE } cmp_op;

typedef enum {
    CK_VARIANT, CK_FAMILY, CK_BACKEND, CK_SHAPE,       /* strings (globs) */
    CK_DISTRIBUTION, CK_MODE,                          /* names, stored as enum values */
    CK_K, CK_N, CK_R, CK_COLS, CK_THREADS, CK_F, CK_B, /* integers with comparisons */
    CK_COUNT
} cond_key;
static const char *const cond_key_names[CK_COUNT] = {"variant", "family", "backend", "shape", "distribution",
                                                     "mode", "K", "N", "R", "cols", "threads", "F", "b"};

typedef struct {
    cmp_op op;
    long long v;
    char *s;
} cond_value;

typedef struct {
    cond_key key;
    cond_value *vals;
    size_t n, cap;
} cond;

typedef struct {
    cond *conds;
    size_t n, cap;
    char reason[160];
} skip_rule;

typedef struct {
    const hsdr_variant *variant;
    int K, N, R, cols, threads;
    hsdr_dist dist;
    hsdr_mode mode;
    int F, b;
    bool has_F, has_b;
    char shape[64];
} extra_case;

typedef struct {
    char **v;
    size_t n, cap;
} slist;

struct hsdr_matrix_spec {
    char source[512];
    const hsdr_variant *reg;
    size_t nreg;
    int logical_cpus;

    uint64_t seed;
    int warmup, min_reps, max_reps;
    double noise_target, time_limit_s, ceiling_interval_s;
    int visits;

    slist variants; /* selectors; empty: all variants */
    ilist K, N, R, cols, threads;
    ilist dists, modes;
    flns_pair *flns;
    size_t nflns, capflns;
    shape_ref *shapes;
    size_t nshapes, capshapes;
    skip_rule *skips;
    size_t nskips, capskips;
    extra_case *extras;
    size_t nextras, capextras;
};

static void slist_free(slist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void ilist_set(ilist *l, const int *v, size_t n)
{
    l->n = 0;
    for (size_t i = 0; i < n; i++)
        *PUSH(l->v, l->n, l->cap) = v[i];
}

static void skips_free(skip_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < rules[i].n; j++) {
            for (size_t k = 0; k < rules[i].conds[j].n; k++)
                free(rules[i].conds[j].vals[k].s);
            free(rules[i].conds[j].vals);
        }
        free(rules[i].conds);
    }
    free(rules);
}

void hsdr_matrix_spec_free(hsdr_matrix_spec *spec)
{
    if (!spec)
        return;
    slist_free(&spec->variants);
    free(spec->K.v);
    free(spec->N.v);
    free(spec->R.v);
    free(spec->cols.v);
    free(spec->threads.v);
    free(spec->dists.v);
    free(spec->modes.v);
    free(spec->flns);
    free(spec->shapes);
    skips_free(spec->skips, spec->nskips);
    free(spec->extras);
    free(spec);
}

static hsdr_matrix_spec *spec_new(const char *source, const hsdr_matrix_env *env)
{
    hsdr_matrix_spec *s = xrealloc(NULL, sizeof *s);
    memset(s, 0, sizeof *s);
    snprintf(s->source, sizeof s->source, "%s", source);
    s->reg = env && env->registry ? env->registry : hsdr_registry;
    s->nreg = env && env->registry ? env->registry_count : hsdr_registry_count;
    s->logical_cpus = env && env->logical_cpus > 0 ? env->logical_cpus : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (s->logical_cpus < 1)
        s->logical_cpus = 1;
    s->seed = 1;
    s->warmup = 2;
    s->min_reps = 5;
    s->max_reps = 200;
    s->noise_target = 0.03;
    s->time_limit_s = 1.0;
    s->ceiling_interval_s = 60.0;
    s->visits = 1;
    static const int one[] = {1}, n256[] = {256};
    ilist_set(&s->N, n256, 1);
    ilist_set(&s->R, one, 1);
    ilist_set(&s->cols, one, 1);
    ilist_set(&s->threads, one, 1);
    const int gaussian = HSDR_DIST_GAUSSIAN, hot = HSDR_MODE_HOT;
    ilist_set(&s->dists, &gaussian, 1);
    ilist_set(&s->modes, &hot, 1);
    flns_pair *p = PUSH(s->flns, s->nflns, s->capflns);
    p->F = 8;
    p->b = 12;
    return s;
}

/* ---- scalar values (one validator per kind, shared by the file and the overrides) -------------------------------- */

static int parse_ll(const site *s, const char *text, long long lo, long long hi, long long *out, char *err,
                    size_t errlen)
{
    if (!text[0])
        return site_fail(err, errlen, s, "expected an integer, got nothing");
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || isspace((unsigned char)text[0]))
        return site_fail(err, errlen, s, "'%s' is not an integer", text);
    if (errno == ERANGE || v < lo || v > hi)
        return site_fail(err, errlen, s, "%s is out of range (%lld..%lld)", text, lo, hi);
    *out = v;
    return 0;
}

static int parse_int(const site *s, const char *text, int lo, int hi, int *out, char *err, size_t errlen)
{
    long long v = 0; /* set on success; initialized for GCC -O2 -fsanitize=thread, which cannot tell */
    if (parse_ll(s, text, lo, hi, &v, err, errlen))
        return -1;
    *out = (int)v;
    return 0;
}

typedef enum { AX_K, AX_N, AX_R, AX_COLS, AX_THREADS } int_axis; /* in the order of AXIS_K.. below */

static int parse_axis_int(const site *s, int_axis kind, const char *text, int *out, char *err, size_t errlen)
{
    static const int hi[] = {[AX_K] = 1 << 24, [AX_N] = 1 << 24, [AX_R] = 1 << 24, [AX_COLS] = HSDR_CASE_MAX_COLS,
                             [AX_THREADS] = 4096};
    if (parse_int(s, text, 1, hi[kind], out, err, errlen))
        return -1;
    if (kind == AX_K && *out % 128 != 0)
        return site_fail(err, errlen, s, "K = %d is not a multiple of 128", *out);
    return 0;
}

static int parse_double(const site *s, const char *text, double lo_excl, double hi_incl, double *out, char *err,
                        size_t errlen)
{
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (!text[0] || end == text || *end || isspace((unsigned char)text[0]))
        return site_fail(err, errlen, s, "'%s' is not a number", text);
    if (errno == ERANGE || !(v > lo_excl && v <= hi_incl))
        return site_fail(err, errlen, s, "%s is out of range (> %g and <= %g)", text, lo_excl, hi_incl);
    *out = v;
    return 0;
}

static int parse_seed(const site *s, const char *text, uint64_t *out, char *err, size_t errlen)
{
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || end == text || *end || !isdigit((unsigned char)text[0]))
        return site_fail(err, errlen, s, "'%s' is not a non-negative integer", text);
    if (errno == ERANGE)
        return site_fail(err, errlen, s, "%s does not fit in 64 bits", text);
    *out = v;
    return 0;
}

static int parse_dist(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    hsdr_dist d;
    if (hsdr_dist_from_name(text, &d) != 0) {
        char names[128] = "";
        for (int i = 0; i < HSDR_DIST_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     hsdr_dist_name((hsdr_dist)i));
        return site_fail(err, errlen, s, "unknown distribution '%s' (expected one of: %s)", text, names);
    }
    *out = (int)d;
    return 0;
}

static int parse_mode(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    hsdr_mode m;
    if (hsdr_mode_from_name(text, &m) != 0)
        return site_fail(err, errlen, s, "unknown mode '%s' (expected hot or cold)", text);
    *out = (int)m;
    return 0;
}

static int parse_F(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    return parse_int(s, text, 0, 8, out, err, errlen);
}

static int parse_b(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    return parse_int(s, text, 4, 16, out, err, errlen);
}

static bool selector_matches(const char *sel, const hsdr_variant *v)
{
    if (strncmp(sel, "family:", 7) == 0)
        return hsdr_glob_match(sel + 7, v->family);
    if (strncmp(sel, "backend:", 8) == 0)
        return hsdr_glob_match(sel + 8, v->backend);
    return hsdr_glob_match(sel, v->name);
}

static int check_selector(const hsdr_matrix_spec *spec, const site *s, const char *sel, char *err, size_t errlen)
{
    if (!sel[0])
        return site_fail(err, errlen, s, "empty variant selector");
    const char *colon = strchr(sel, ':');
    if (colon) {
        if (strncmp(sel, "family:", 7) != 0 && strncmp(sel, "backend:", 8) != 0)
            return site_fail(err, errlen, s, "unknown selector '%.*s:' in '%s' (expected family:NAME or backend:NAME)",
                             (int)(colon - sel), sel, sel);
        if (!colon[1])
            return site_fail(err, errlen, s, "'%s' names no %.*s", sel, (int)(colon - sel), sel);
        return 0; /* may match nothing (a backend whose variants are not built here yet) */
    }
    for (size_t i = 0; i < spec->nreg; i++)
        if (selector_matches(sel, &spec->reg[i]))
            return 0;
    return site_fail(err, errlen, s, "'%s' matches no variant of the registry (see `hsdr list`)", sel);
}

static const hsdr_variant *find_variant(const hsdr_matrix_spec *spec, const char *name)
{
    for (size_t i = 0; i < spec->nreg; i++)
        if (strcmp(spec->reg[i].name, name) == 0)
            return &spec->reg[i];
    return NULL;
}

static void model_names(char *out, size_t outlen)
{
    size_t count;
    const hsdr_model *m = hsdr_models(&count);
    out[0] = '\0';
    for (size_t i = 0; i < count; i++)
        snprintf(out + strlen(out), outlen - strlen(out), "%s%s", i ? ", " : "", m[i].name);
}

static int find_model(const site *s, const char *name, const hsdr_model **out, char *err, size_t errlen)
{
    *out = hsdr_model_find(name);
    if (!*out) {
        char names[160];
        model_names(names, sizeof names);
        return site_fail(err, errlen, s, "unknown model '%s' (expected one of: %s)", name, names);
    }
    return 0;
}

static int find_tensor(const site *s, const hsdr_model *m, const char *name, const hsdr_gemv_shape **out, char *err,
                       size_t errlen)
{
    *out = hsdr_model_tensor(m, name);
    if (!*out) {
        const hsdr_gemv_shape *all[32];
        size_t n = hsdr_model_tensors(m, all, 32);
        char names[400] = "";
        for (size_t i = 0; i < n && i < 32; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", all[i]->tensor);
        return site_fail(err, errlen, s, "model %s has no tensor '%s' (it has: %s)", m->name, name, names);
    }
    return 0;
}

/* "model/tensor" (one) or, when allow_model, "model" (all its tensors but the head). */
static int parse_shape_ref(const site *s, const char *text, bool allow_model, shape_ref **refs, size_t *n,
                           size_t *cap, char *err, size_t errlen)
{
    char name[128];
    snprintf(name, sizeof name, "%s", text);
    char *slash = strchr(name, '/');
    if (slash)
        *slash = '\0';
    else if (!allow_model)
        return site_fail(err, errlen, s, "'%s' is not MODEL/TENSOR (e.g. bonsai2-27b/ffn_gate)", text);
    const hsdr_model *m;
    if (find_model(s, name, &m, err, errlen))
        return -1;
    if (slash) {
        shape_ref *r = PUSH(*refs, *n, *cap);
        r->model = m;
        return find_tensor(s, m, slash + 1, &r->tensor, err, errlen);
    }
    const hsdr_gemv_shape *all[32];
    size_t count = hsdr_model_tensors(m, all, 32);
    for (size_t i = 0; i < count && i < 32; i++)
        if (all[i] != &m->head) {
            shape_ref *r = PUSH(*refs, *n, *cap);
            r->model = m;
            r->tensor = all[i];
        }
    return 0;
}

static void shape_name(const shape_ref *r, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", r->model->name, r->tensor->tensor);
}

/* ---- axes: a list of items (YAML list entries or comma-separated override values) -------------------------------- */

typedef struct {
    const char *text;  /* scalar items */
    const ynode *node; /* YAML items (flns mappings) */
    site s;
} item;

typedef struct {
    item *v;
    size_t n, cap;
} items;

typedef enum { AXIS_VARIANTS, AXIS_K, AXIS_N, AXIS_R, AXIS_COLS, AXIS_THREADS, AXIS_DISTRIBUTION, AXIS_MODE,
               AXIS_FLNS, AXIS_COUNT } axis_id;
static const char *const axis_names[AXIS_COUNT] = {"variants", "K", "N", "R", "cols", "threads", "distribution",
                                                   "mode", "flns"};

static int axis_from_name(const char *name)
{
    for (int i = 0; i < AXIS_COUNT; i++)
        if (strcmp(axis_names[i], name) == 0)
            return i;
    return -1;
}

/* One axis from its items, validated, into spec (replacing what was there). */
static int set_axis(hsdr_matrix_spec *spec, axis_id axis, const items *it, const site *axis_site, char *err,
                    size_t errlen)
{
    if (it->n == 0)
        return site_fail(err, errlen, axis_site, "empty list (an axis needs at least one value)");
    if (axis == AXIS_VARIANTS) {
        slist sel = {0};
        for (size_t i = 0; i < it->n; i++) {
            if (check_selector(spec, &it->v[i].s, it->v[i].text, err, errlen)) {
                slist_free(&sel);
                return -1;
            }
            *PUSH(sel.v, sel.n, sel.cap) = xstrdup(it->v[i].text);
        }
        slist_free(&spec->variants);
        spec->variants = sel;
        return 0;
    }
    if (axis == AXIS_FLNS) {
        flns_pair *pairs = xrealloc(NULL, it->n * sizeof *pairs);
        for (size_t i = 0; i < it->n; i++) {
            const item *e = &it->v[i];
            int rc;
            if (e->node) { /* {F: 8, b: 12} */
                const ynode *map = e->node;
                rc = 0;
                if (map->type != YN_MAP)
                    rc = site_fail(err, errlen, &e->s, "expected a mapping {F: .., b: ..}, got %s", type_name(map));
                for (size_t k = 0; rc == 0 && k < map->n; k += 2)
                    if (strcmp(map->kids[k]->text, "F") != 0 && strcmp(map->kids[k]->text, "b") != 0) {
                        site ks = child_site(&e->s, map->kids[k], map->kids[k]->text, 0);
                        rc = site_fail(err, errlen, &ks, "unknown key '%s' (expected F, b)", map->kids[k]->text);
                    }
                const char *keys[2] = {"F", "b"};
                for (int k = 0; rc == 0 && k < 2; k++) {
                    const ynode *v = map_get(map, keys[k]);
                    site vs = child_site(&e->s, v, keys[k], 0);
                    if (!v)
                        rc = site_fail(err, errlen, &vs, "missing (F and b are both required)");
                    else if (v->type != YN_SCALAR)
                        rc = site_fail(err, errlen, &vs, "expected an integer, got %s", type_name(v));
                    else
                        rc = k == 0 ? parse_F(&vs, v->text, &pairs[i].F, err, errlen)
                                    : parse_b(&vs, v->text, &pairs[i].b, err, errlen);
                }
            } else { /* "8:12" */
                char buf[64];
                snprintf(buf, sizeof buf, "%s", e->text);
                char *colon = strchr(buf, ':');
                if (!colon) {
                    rc = site_fail(err, errlen, &e->s, "'%s' is not F:b (e.g. 8:12)", e->text);
                } else {
                    *colon = '\0';
                    site fs = e->s, bs = e->s;
                    snprintf(fs.path + strlen(fs.path), sizeof fs.path - strlen(fs.path), ".F");
                    snprintf(bs.path + strlen(bs.path), sizeof bs.path - strlen(bs.path), ".b");
                    rc = parse_F(&fs, buf, &pairs[i].F, err, errlen);
                    if (rc == 0)
                        rc = parse_b(&bs, colon + 1, &pairs[i].b, err, errlen);
                }
            }
            if (rc) {
                free(pairs);
                return -1;
            }
        }
        free(spec->flns);
        spec->flns = pairs;
        spec->nflns = spec->capflns = it->n;
        return 0;
    }
    int *vals = xrealloc(NULL, it->n * sizeof *vals);
    for (size_t i = 0; i < it->n; i++) {
        const item *e = &it->v[i];
        int rc;
        if (axis == AXIS_DISTRIBUTION)
            rc = parse_dist(&e->s, e->text, &vals[i], err, errlen);
        else if (axis == AXIS_MODE)
            rc = parse_mode(&e->s, e->text, &vals[i], err, errlen);
        else
            rc = parse_axis_int(&e->s, (int_axis)(axis - AXIS_K), e->text, &vals[i], err, errlen);
        if (rc) {
            free(vals);
            return -1;
        }
    }
    ilist *dst = axis == AXIS_K ? &spec->K : axis == AXIS_N ? &spec->N : axis == AXIS_R ? &spec->R
               : axis == AXIS_COLS ? &spec->cols : axis == AXIS_THREADS ? &spec->threads
               : axis == AXIS_DISTRIBUTION ? &spec->dists : &spec->modes;
    ilist_set(dst, vals, it->n);
    free(vals);
    return 0;
}

/* ---- the YAML walk ----------------------------------------------------------------------------------------------- */

typedef struct {
    const char *file;
    hsdr_matrix_spec *spec;
    char *err;
    size_t errlen;
} walk;

static int expect_map(walk *w, const ynode *n, const site *s)
{
    if (n->type != YN_MAP)
        return site_fail(w->err, w->errlen, s, "expected a mapping, got %s", type_name(n));
    return 0;
}

/* Every key of map is one of allowed (NULL-terminated). */
static int check_keys(walk *w, const ynode *map, const site *s, const char *const *allowed)
{
    for (size_t i = 0; i < map->n; i += 2) {
        const char *key = map->kids[i]->text;
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (!ok) {
            char list[256] = "";
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ", *a);
            site ks = child_site(s, map->kids[i], key, 0);
            return site_fail(w->err, w->errlen, &ks, "unknown key '%s' (expected one of: %s)", key, list);
        }
    }
    return 0;
}

/* A scalar's text, or an error naming what came instead. */
static int scalar(walk *w, const ynode *n, const site *s, const char *what, const char **text)
{
    if (n->type != YN_SCALAR)
        return site_fail(w->err, w->errlen, s, "expected %s, got %s", what, type_name(n));
    *text = n->text;
    return 0;
}

/* A list node (or a single scalar, a one-item list) into items; scalar_items: every entry must be a scalar. */
static int list_items(walk *w, const ynode *n, const site *s, bool scalar_items, items *out)
{
    out->n = 0;
    if (n->type == YN_MAP)
        return site_fail(w->err, w->errlen, s, "expected a list, got a mapping");
    if (is_null(n))
        return site_fail(w->err, w->errlen, s, "expected a list, got nothing");
    size_t count = n->type == YN_SEQ ? n->n : 1;
    for (size_t i = 0; i < count; i++) {
        const ynode *e = n->type == YN_SEQ ? n->kids[i] : n;
        item *it = PUSH(out->v, out->n, out->cap);
        it->s = n->type == YN_SEQ ? child_site(s, e, NULL, i) : *s;
        if (e->type == YN_SCALAR)
            it->text = e->text;
        else if (scalar_items)
            return site_fail(w->err, w->errlen, &it->s, "expected a scalar, got %s", type_name(e));
        else
            it->node = e;
    }
    return 0;
}

static int walk_settings(walk *w, const ynode *n, const site *s)
{
    static const char *const keys[] = {"seed", "warmup", "repetitions", "noise_target", "time_limit_s",
                                       "ceiling_interval_s", "visits", NULL};
    if (expect_map(w, n, s) || check_keys(w, n, s, keys))
        return -1;
    hsdr_matrix_spec *spec = w->spec;
    for (size_t i = 0; i < n->n; i += 2) {
        const char *key = n->kids[i]->text;
        const ynode *v = n->kids[i + 1];
        site vs = child_site(s, v, key, 0);
        const char *text = "";
        int rc;
        if (strcmp(key, "repetitions") == 0) {
            static const char *const rkeys[] = {"min", "max", NULL};
            if (expect_map(w, v, &vs) || check_keys(w, v, &vs, rkeys))
                return -1;
            for (size_t k = 0; k < v->n; k += 2) {
                site rs = child_site(&vs, v->kids[k + 1], v->kids[k]->text, 0);
                int *dst = strcmp(v->kids[k]->text, "min") == 0 ? &spec->min_reps : &spec->max_reps;
                if (scalar(w, v->kids[k + 1], &rs, "an integer", &text) ||
                    parse_int(&rs, text, 1, 1000000000, dst, w->err, w->errlen))
                    return -1;
            }
            if (spec->min_reps > spec->max_reps)
                return site_fail(w->err, w->errlen, &vs, "min %d > max %d", spec->min_reps, spec->max_reps);
            continue;
        }
        if (scalar(w, v, &vs, "a number", &text))
            return -1;
        if (strcmp(key, "seed") == 0)
            rc = parse_seed(&vs, text, &spec->seed, w->err, w->errlen);
        else if (strcmp(key, "warmup") == 0)
            rc = parse_int(&vs, text, 0, 1000000, &spec->warmup, w->err, w->errlen);
        else if (strcmp(key, "visits") == 0)
            rc = parse_int(&vs, text, 1, HSDR_MATRIX_MAX_VISITS, &spec->visits, w->err, w->errlen);
        else if (strcmp(key, "noise_target") == 0)
            rc = parse_double(&vs, text, 0.0, 1.0, &spec->noise_target, w->err, w->errlen);
        else if (strcmp(key, "ceiling_interval_s") == 0)
            rc = parse_double(&vs, text, 0.0, 86400.0, &spec->ceiling_interval_s, w->err, w->errlen);
        else
            rc = parse_double(&vs, text, 0.0, 86400.0, &spec->time_limit_s, w->err, w->errlen);
        if (rc)
            return -1;
    }
    return 0;
}

static int walk_axes(walk *w, const ynode *n, const site *s)
{
    static const char *const keys[] = {"variants", "K", "N", "R", "cols", "threads", "distribution", "mode", "flns",
                                       NULL};
    if (expect_map(w, n, s) || check_keys(w, n, s, keys))
        return -1;
    items it = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n->n; i += 2) {
        const char *key = n->kids[i]->text;
        int axis = axis_from_name(key);
        site vs = child_site(s, n->kids[i + 1], key, 0);
        rc = list_items(w, n->kids[i + 1], &vs, axis != AXIS_FLNS, &it);
        if (rc == 0)
            rc = set_axis(w->spec, (axis_id)axis, &it, &vs, w->err, w->errlen);
    }
    free(it.v);
    return rc;
}

static int walk_shapes(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return site_fail(w->err, w->errlen, s, "expected a list of {model: .., tensors: [..]}, got %s", type_name(n));
    static const char *const keys[] = {"model", "tensors", NULL};
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = child_site(s, e, NULL, i);
        if (expect_map(w, e, &es) || check_keys(w, e, &es, keys))
            return -1;
        const ynode *mn = map_get(e, "model"), *tn = map_get(e, "tensors");
        site ms = child_site(&es, mn, "model", 0);
        const char *text = "";
        const hsdr_model *m;
        if (!mn)
            return site_fail(w->err, w->errlen, &ms, "missing (the model's name)");
        if (scalar(w, mn, &ms, "a model name", &text) || find_model(&ms, text, &m, w->err, w->errlen))
            return -1;
        if (!tn) {
            if (parse_shape_ref(&ms, m->name, true, &spec->shapes, &spec->nshapes, &spec->capshapes, w->err,
                                w->errlen))
                return -1;
            continue;
        }
        site ts = child_site(&es, tn, "tensors", 0);
        items it = {0};
        int rc = list_items(w, tn, &ts, true, &it);
        if (rc == 0 && it.n == 0)
            rc = site_fail(w->err, w->errlen, &ts, "empty list (leave tensors out for all of them)");
        for (size_t k = 0; rc == 0 && k < it.n; k++) {
            shape_ref *r = PUSH(spec->shapes, spec->nshapes, spec->capshapes);
            r->model = m;
            rc = find_tensor(&it.v[k].s, m, it.v[k].text, &r->tensor, w->err, w->errlen);
        }
        free(it.v);
        if (rc)
            return -1;
    }
    return 0;
}

static int cond_key_from_name(const char *name)
{
    for (int i = 0; i < CK_COUNT; i++)
        if (strcmp(cond_key_names[i], name) == 0)
            return i;
    return -1;
}

/* One value of a skip condition: a glob/name, a distribution or mode name, or [op]integer. */
static int parse_cond_value(const site *s, cond_key key, const char *text, cond_value *out, char *err, size_t errlen)
{
    out->op = OP_EQ;
    if (key <= CK_SHAPE) {
        out->s = xstrdup(text);
        return 0;
    }
    int v;
    if (key == CK_DISTRIBUTION || key == CK_MODE) {
        if ((key == CK_DISTRIBUTION ? parse_dist : parse_mode)(s, text, &v, err, errlen))
            return -1;
        out->v = v;
        return 0;
    }
    static const struct {
        const char *text;
        cmp_op op;
    } ops[] = {{">=", OP_GE}, {"<=", OP_LE}, {"!=", OP_NE}, {"==", OP_EQ}, {">", OP_GT}, {"<", OP_LT}};
    const char *p = text;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strncmp(p, ops[i].text, strlen(ops[i].text)) == 0) {
            out->op = ops[i].op;
            p += strlen(ops[i].text);
            break;
        }
    while (*p == ' ')
        p++;
    errno = 0;
    char *end;
    long long n = strtoll(p, &end, 10);
    if (!*p || end == p || *end || errno == ERANGE)
        return site_fail(err, errlen, s, "'%s' is not an integer or a comparison (e.g. \">4096\", \"<=1024\")",
                         text);
    out->v = n;
    return 0;
}

static int walk_skip(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return site_fail(w->err, w->errlen, s, "expected a list of {when: {..}, reason: ..}, got %s", type_name(n));
    static const char *const keys[] = {"when", "reason", NULL};
    char *err = w->err;
    size_t errlen = w->errlen;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = child_site(s, e, NULL, i);
        if (expect_map(w, e, &es) || check_keys(w, e, &es, keys))
            return -1;
        const ynode *when = map_get(e, "when"), *reason = map_get(e, "reason");
        site ws = child_site(&es, when, "when", 0), rs = child_site(&es, reason, "reason", 0);
        const char *text = "";
        if (!when)
            return site_fail(err, errlen, &ws, "missing (the conditions of the rule)");
        if (!reason)
            return site_fail(err, errlen, &rs, "missing (every skip rule says why)");
        if (scalar(w, reason, &rs, "a string", &text))
            return -1;
        if (!text[0])
            return site_fail(err, errlen, &rs, "empty reason");
        if (expect_map(w, when, &ws))
            return -1;
        if (when->n == 0)
            return site_fail(err, errlen, &ws, "empty mapping (a rule needs at least one condition)");
        skip_rule *rule = PUSH(spec->skips, spec->nskips, spec->capskips);
        snprintf(rule->reason, sizeof rule->reason, "%s", text);
        for (size_t k = 0; k < when->n; k += 2) {
            const char *key = when->kids[k]->text;
            int ck = cond_key_from_name(key);
            site cs = child_site(&ws, when->kids[k], key, 0);
            if (ck < 0) {
                char list[160] = "";
                for (int j = 0; j < CK_COUNT; j++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                             cond_key_names[j]);
                return site_fail(err, errlen, &cs, "unknown key '%s' (expected one of: %s)", key, list);
            }
            cs = child_site(&ws, when->kids[k + 1], key, 0);
            items it = {0};
            int rc = list_items(w, when->kids[k + 1], &cs, true, &it);
            if (rc == 0 && it.n == 0)
                rc = site_fail(err, errlen, &cs, "empty list (a condition needs at least one value)");
            cond *c = PUSH(rule->conds, rule->n, rule->cap);
            c->key = (cond_key)ck;
            for (size_t j = 0; rc == 0 && j < it.n; j++)
                rc = parse_cond_value(&it.v[j].s, c->key, it.v[j].text,
                                      PUSH(c->vals, c->n, c->cap), err, errlen);
            free(it.v);
            if (rc)
                return -1;
        }
    }
    return 0;
}

static int walk_extra(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return site_fail(w->err, w->errlen, s, "expected a list of cases, got %s", type_name(n));
    static const char *const keys[] = {"variant", "K", "N", "R", "cols", "threads", "distribution", "mode", "F", "b",
                                       "shape", NULL};
    char *err = w->err;
    size_t errlen = w->errlen;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = child_site(s, e, NULL, i);
        if (expect_map(w, e, &es) || check_keys(w, e, &es, keys))
            return -1;
        extra_case *x = PUSH(spec->extras, spec->nextras, spec->capextras);
        x->R = x->cols = x->threads = 1;
        x->dist = HSDR_DIST_GAUSSIAN;
        x->mode = HSDR_MODE_HOT;
        bool has_K = false, has_N = false;
        site cols_site = es; /* checked against the variant's max_cols once the variant is known */
        for (size_t k = 0; k < e->n; k += 2) {
            const char *key = e->kids[k]->text;
            const ynode *v = e->kids[k + 1];
            site vs = child_site(&es, v, key, 0);
            const char *text = "";
            int tmp, rc = 0;
            if (scalar(w, v, &vs, "a scalar", &text))
                return -1;
            if (strcmp(key, "variant") == 0) {
                x->variant = find_variant(spec, text);
                if (!x->variant)
                    rc = site_fail(err, errlen, &vs, "unknown variant '%s' (an extra case names one variant exactly; "
                                                     "see `hsdr list`)", text);
            } else if (strcmp(key, "K") == 0) {
                rc = parse_axis_int(&vs, AX_K, text, &x->K, err, errlen);
                has_K = true;
            } else if (strcmp(key, "N") == 0) {
                rc = parse_axis_int(&vs, AX_N, text, &x->N, err, errlen);
                has_N = true;
            } else if (strcmp(key, "R") == 0) {
                rc = parse_axis_int(&vs, AX_R, text, &x->R, err, errlen);
            } else if (strcmp(key, "cols") == 0) {
                rc = parse_axis_int(&vs, AX_COLS, text, &x->cols, err, errlen);
                cols_site = vs;
            } else if (strcmp(key, "threads") == 0) {
                rc = parse_axis_int(&vs, AX_THREADS, text, &x->threads, err, errlen);
            } else if (strcmp(key, "distribution") == 0) {
                rc = parse_dist(&vs, text, &tmp, err, errlen);
                x->dist = (hsdr_dist)tmp;
            } else if (strcmp(key, "mode") == 0) {
                rc = parse_mode(&vs, text, &tmp, err, errlen);
                x->mode = (hsdr_mode)tmp;
            } else if (strcmp(key, "F") == 0) {
                rc = parse_F(&vs, text, &x->F, err, errlen);
                x->has_F = true;
            } else if (strcmp(key, "b") == 0) {
                rc = parse_b(&vs, text, &x->b, err, errlen);
                x->has_b = true;
            } else { /* shape */
                shape_ref *ref = NULL;
                size_t nref = 0, capref = 0;
                rc = parse_shape_ref(&vs, text, false, &ref, &nref, &capref, err, errlen);
                if (rc == 0) {
                    shape_name(ref, x->shape, sizeof x->shape);
                    x->K = ref->tensor->K;
                    x->N = ref->tensor->N;
                }
                free(ref);
            }
            if (rc)
                return -1;
        }
        if (!x->variant)
            return site_fail(err, errlen, &es, "missing key 'variant'");
        if (x->shape[0] && (has_K || has_N))
            return site_fail(err, errlen, &es, "give either shape or K and N, not both (the shape fixes K and N)");
        if (!x->shape[0] && !(has_K && has_N))
            return site_fail(err, errlen, &es, "missing key '%s' (give K and N, or a shape)", has_K ? "N" : "K");
        /* one-column variants drop cols as non-uses_R ones drop R; a multi-column variant is asked for a count it
         * cannot take only by mistake (the grid records such points as skipped instead) */
        if (x->variant->max_cols > 1 && x->cols > x->variant->max_cols)
            return site_fail(err, errlen, &cols_site, "cols = %d > max_cols = %d of %s", x->cols, x->variant->max_cols,
                             x->variant->name);
    }
    return 0;
}

static int walk_root(walk *w, const ynode *root)
{
    site rs = {.file = w->file, .line = root ? root->line : 1, .col = root ? root->col : 1};
    if (!root || is_null(root))
        return 0;
    static const char *const keys[] = {"settings", "axes", "shapes", "skip", "extra", NULL};
    if (root->type != YN_MAP)
        return site_fail(w->err, w->errlen, &rs, "expected a mapping (settings, axes, shapes, skip, extra) at the top "
                                                 "level, got %s", type_name(root));
    if (check_keys(w, root, &rs, keys))
        return -1;
    for (size_t i = 0; i < root->n; i += 2) {
        const char *key = root->kids[i]->text;
        const ynode *v = root->kids[i + 1];
        site vs = child_site(&rs, v, key, 0);
        int rc;
        if (strcmp(key, "settings") == 0)
            rc = is_null(v) ? 0 : walk_settings(w, v, &vs);
        else if (strcmp(key, "axes") == 0)
            rc = is_null(v) ? 0 : walk_axes(w, v, &vs);
        else if (strcmp(key, "shapes") == 0)
            rc = walk_shapes(w, v, &vs);
        else if (strcmp(key, "skip") == 0)
            rc = walk_skip(w, v, &vs);
        else
            rc = walk_extra(w, v, &vs);
        if (rc)
            return -1;
    }
    return 0;
}

int hsdr_matrix_load_text(const char *name, const char *text, size_t len, const hsdr_matrix_env *env,
                          hsdr_matrix_spec **spec, char *err, size_t errlen)
{
    *spec = NULL;
    ydoc doc;
    if (ydoc_parse(&doc, name, text, len, err, errlen))
        return -1;
    hsdr_matrix_spec *s = spec_new(name, env);
    walk w = {.file = name, .spec = s, .err = err, .errlen = errlen};
    int rc = walk_root(&w, doc.root);
    ydoc_free(&doc);
    if (rc) {
        hsdr_matrix_spec_free(s);
        return -1;
    }
    *spec = s;
    return 0;
}

int hsdr_matrix_load_env(const char *path, const hsdr_matrix_env *env, hsdr_matrix_spec **spec, char *err,
                         size_t errlen)
{
    *spec = NULL;
    size_t len;
    char *text = hsdr_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = hsdr_matrix_load_text(path, text, len, env, spec, err, errlen);
    free(text);
    return rc;
}

int hsdr_matrix_load(const char *path, hsdr_matrix_spec **spec, char *err, size_t errlen)
{
    return hsdr_matrix_load_env(path, NULL, spec, err, errlen);
}

/* ---- overrides --------------------------------------------------------------------------------------------------- */

int hsdr_matrix_override(hsdr_matrix_spec *spec, const char *assignment, char *err, size_t errlen)
{
    site s = {.arg = assignment};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return site_fail(err, errlen, &s, "expected NAME=VALUE (e.g. K=128,512 or threads=1)");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
    snprintf(s.path, sizeof s.path, "%s", name);
    const char *value = eq + 1;
    if (!value[0])
        return site_fail(err, errlen, &s, "empty value");

    int axis = axis_from_name(name);
    if (axis >= 0) {
        /* comma-separated items, each with its path "K[i]" */
        char *copy = xstrdup(value);
        items it = {0};
        size_t index = 0;
        for (char *p = copy, *comma;; p = comma + 1, index++) {
            comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            item *e = PUSH(it.v, it.n, it.cap);
            e->text = p;
            e->s = s;
            snprintf(e->s.path, sizeof e->s.path, "%s[%zu]", name, index);
            if (!comma)
                break;
        }
        int rc = set_axis(spec, (axis_id)axis, &it, &s, err, errlen);
        free(it.v);
        free(copy);
        return rc;
    }
    if (strcmp(name, "seed") == 0)
        return parse_seed(&s, value, &spec->seed, err, errlen);
    if (strcmp(name, "warmup") == 0)
        return parse_int(&s, value, 0, 1000000, &spec->warmup, err, errlen);
    if (strcmp(name, "noise_target") == 0)
        return parse_double(&s, value, 0.0, 1.0, &spec->noise_target, err, errlen);
    if (strcmp(name, "time_limit_s") == 0)
        return parse_double(&s, value, 0.0, 86400.0, &spec->time_limit_s, err, errlen);
    if (strcmp(name, "ceiling_interval_s") == 0)
        return parse_double(&s, value, 0.0, 86400.0, &spec->ceiling_interval_s, err, errlen);
    if (strcmp(name, "visits") == 0)
        return parse_int(&s, value, 1, HSDR_MATRIX_MAX_VISITS, &spec->visits, err, errlen);
    if (strcmp(name, "repetitions.min") == 0 || strcmp(name, "repetitions.max") == 0) {
        bool is_min = strcmp(name, "repetitions.min") == 0;
        int v;
        if (parse_int(&s, value, 1, 1000000000, &v, err, errlen))
            return -1;
        int lo = is_min ? v : spec->min_reps, hi = is_min ? spec->max_reps : v;
        if (lo > hi)
            return site_fail(err, errlen, &s, "repetitions min %d > max %d", lo, hi);
        *(is_min ? &spec->min_reps : &spec->max_reps) = v;
        return 0;
    }
    if (strcmp(name, "shapes") == 0) {
        shape_ref *refs = NULL;
        size_t n = 0, cap = 0;
        if (strcmp(value, "none") != 0) {
            char *copy = xstrdup(value);
            size_t index = 0;
            int rc = 0;
            for (char *p = copy, *comma; rc == 0; p = comma + 1, index++) {
                comma = strchr(p, ',');
                if (comma)
                    *comma = '\0';
                site is = s;
                snprintf(is.path, sizeof is.path, "shapes[%zu]", index);
                rc = parse_shape_ref(&is, p, true, &refs, &n, &cap, err, errlen);
                if (!comma)
                    break;
            }
            free(copy);
            if (rc) {
                free(refs);
                return -1;
            }
        }
        free(spec->shapes);
        spec->shapes = refs;
        spec->nshapes = n;
        spec->capshapes = cap;
        return 0;
    }
    if (strcmp(name, "skip") == 0 || strcmp(name, "extra") == 0) {
        if (strcmp(value, "none") != 0)
            return site_fail(err, errlen, &s, "only '%s=none' can be given on the command line (edit the matrix "
                                              "file for rules and cases)", name);
        if (name[0] == 's') {
            skips_free(spec->skips, spec->nskips);
            spec->skips = NULL;
            spec->nskips = spec->capskips = 0;
        } else {
            free(spec->extras);
            spec->extras = NULL;
            spec->nextras = spec->capextras = 0;
        }
        return 0;
    }
    return site_fail(err, errlen, &s,
                     "unknown setting '%s' (expected an axis: variants, K, N, R, cols, threads, distribution, mode, "
                     "flns; a setting: seed, warmup, repetitions.min, repetitions.max, noise_target, time_limit_s, "
                     "ceiling_interval_s, visits; "
                     "or shapes, skip=none, extra=none)",
                     name);
}

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
    char shape[64];
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
            selected[v] = selector_matches(spec->variants.v[i], &spec->reg[v]);
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
    double configs = ((double)s->K.n * (double)s->N.n + (double)s->nshapes) * (double)s->dists.n;
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
    if (spec->K.n == 0 && spec->nshapes == 0 && spec->nextras == 0)
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
        shape_name(&spec->shapes[i], name, sizeof name);
        for (size_t d = 0; d < spec->dists.n; d++)
            expand_config(&x, selected, spec->shapes[i].tensor->K, spec->shapes[i].tensor->N,
                          (hsdr_dist)spec->dists.v[d], name);
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

static bool key_matches(const char *pattern, bool glob, const char *key)
{
    return glob ? fnmatch(pattern, key, 0) == 0 : strstr(key, pattern) != NULL;
}

void hsdr_matrix_filter(hsdr_matrix *m, const char *pattern)
{
    bool glob = strpbrk(pattern, "*?[") != NULL;
    size_t kept = 0;
    for (size_t i = 0; i < m->ncases; i++) {
        char key[256];
        hsdr_case_key(&m->cases[i], key, sizeof key);
        if (key_matches(pattern, glob, key))
            m->cases[kept++] = m->cases[i];
    }
    m->ncases = kept;
    kept = 0;
    for (size_t i = 0; i < m->nskipped; i++)
        if (key_matches(pattern, glob, m->skipped[i].key))
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
