/* The experiment matrix's spec (matrix_spec.h): its defaults and freeing, where a value came from (sites, and their
 * messages), one validator per kind of value, variant selectors and model shapes, the axes, and the command-line
 * overrides (hsdr_matrix_override) -- what the matrix file (matrix_load.c) and `--set` share. Depends on matrix.h,
 * shapes.h, util.h, xalloc.h, and the YAML tree (yaml_tree.h) for the one axis given as mappings (flns). */
#include "matrix_spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "xalloc.h"
#include "yaml_tree.h"

/* ---- where a value came from: a YAML node or a command-line override ------------------------------------------- */

int mx_site_fail(char *err, size_t errlen, const site *s, const char *fmt, ...)
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
site mx_child_site(const site *parent, const ynode *n, const char *key, size_t index)
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
    free(spec->gguf_globs);
    for (size_t i = 0; i < spec->ngguf; i++)
        free((char *)spec->gguf_tensors[i].name);
    free(spec->gguf_tensors);
    free(spec);
}

hsdr_matrix_spec *mx_spec_new(const char *source, const hsdr_matrix_env *env)
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
        return mx_site_fail(err, errlen, s, "expected an integer, got nothing");
    errno = 0;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || isspace((unsigned char)text[0]))
        return mx_site_fail(err, errlen, s, "'%s' is not an integer", text);
    if (errno == ERANGE || v < lo || v > hi)
        return mx_site_fail(err, errlen, s, "%s is out of range (%lld..%lld)", text, lo, hi);
    *out = v;
    return 0;
}

int mx_parse_int(const site *s, const char *text, int lo, int hi, int *out, char *err, size_t errlen)
{
    long long v = 0; /* set on success; initialized for GCC -O2 -fsanitize=thread, which cannot tell */
    if (parse_ll(s, text, lo, hi, &v, err, errlen))
        return -1;
    *out = (int)v;
    return 0;
}

int mx_parse_axis_int(const site *s, int_axis kind, const char *text, int *out, char *err, size_t errlen)
{
    static const int hi[] = {[AX_K] = 1 << 24, [AX_N] = 1 << 24, [AX_R] = 1 << 24, [AX_COLS] = HSDR_CASE_MAX_COLS,
                             [AX_THREADS] = 4096};
    if (mx_parse_int(s, text, 1, hi[kind], out, err, errlen))
        return -1;
    if (kind == AX_K && *out % 128 != 0)
        return mx_site_fail(err, errlen, s, "K = %d is not a multiple of 128", *out);
    return 0;
}

int mx_parse_double(const site *s, const char *text, double lo_excl, double hi_incl, double *out, char *err,
                    size_t errlen)
{
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (!text[0] || end == text || *end || isspace((unsigned char)text[0]))
        return mx_site_fail(err, errlen, s, "'%s' is not a number", text);
    if (errno == ERANGE || !(v > lo_excl && v <= hi_incl))
        return mx_site_fail(err, errlen, s, "%s is out of range (> %g and <= %g)", text, lo_excl, hi_incl);
    *out = v;
    return 0;
}

int mx_parse_seed(const site *s, const char *text, uint64_t *out, char *err, size_t errlen)
{
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || end == text || *end || !isdigit((unsigned char)text[0]))
        return mx_site_fail(err, errlen, s, "'%s' is not a non-negative integer", text);
    if (errno == ERANGE)
        return mx_site_fail(err, errlen, s, "%s does not fit in 64 bits", text);
    *out = v;
    return 0;
}

int mx_parse_dist(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    hsdr_dist d;
    if (hsdr_dist_from_name(text, &d) != 0) {
        char names[128] = "";
        for (int i = 0; i < HSDR_DIST_COUNT; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     hsdr_dist_name((hsdr_dist)i));
        return mx_site_fail(err, errlen, s, "unknown distribution '%s' (expected one of: %s)", text, names);
    }
    *out = (int)d;
    return 0;
}

int mx_parse_mode(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    hsdr_mode m;
    if (hsdr_mode_from_name(text, &m) != 0)
        return mx_site_fail(err, errlen, s, "unknown mode '%s' (expected hot or cold)", text);
    *out = (int)m;
    return 0;
}

int mx_parse_F(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    return mx_parse_int(s, text, 0, 8, out, err, errlen);
}

int mx_parse_b(const site *s, const char *text, int *out, char *err, size_t errlen)
{
    return mx_parse_int(s, text, 4, 16, out, err, errlen);
}

bool mx_selector_matches(const char *sel, const hsdr_variant *v)
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
        return mx_site_fail(err, errlen, s, "empty variant selector");
    const char *colon = strchr(sel, ':');
    if (colon) {
        if (strncmp(sel, "family:", 7) != 0 && strncmp(sel, "backend:", 8) != 0)
            return mx_site_fail(err, errlen, s,
                                "unknown selector '%.*s:' in '%s' (expected family:NAME or backend:NAME)",
                                (int)(colon - sel), sel, sel);
        if (!colon[1])
            return mx_site_fail(err, errlen, s, "'%s' names no %.*s", sel, (int)(colon - sel), sel);
        return 0; /* may match nothing (a backend whose variants are not built here yet) */
    }
    for (size_t i = 0; i < spec->nreg; i++)
        if (mx_selector_matches(sel, &spec->reg[i]))
            return 0;
    return mx_site_fail(err, errlen, s, "'%s' matches no variant of the registry (see `hsdr list`)", sel);
}

static void model_names(char *out, size_t outlen)
{
    size_t count;
    const hsdr_model *m = hsdr_models(&count);
    out[0] = '\0';
    for (size_t i = 0; i < count; i++)
        snprintf(out + strlen(out), outlen - strlen(out), "%s%s", i ? ", " : "", m[i].name);
}

int mx_find_model(const site *s, const char *name, const hsdr_model **out, char *err, size_t errlen)
{
    *out = hsdr_model_find(name);
    if (!*out) {
        char names[160];
        model_names(names, sizeof names);
        return mx_site_fail(err, errlen, s, "unknown model '%s' (expected one of: %s)", name, names);
    }
    return 0;
}

int mx_find_tensor(const site *s, const hsdr_model *m, const char *name, const hsdr_gemv_shape **out, char *err,
                   size_t errlen)
{
    *out = hsdr_model_tensor(m, name);
    if (!*out) {
        const hsdr_gemv_shape *all[32];
        size_t n = hsdr_model_tensors(m, all, 32);
        char names[400] = "";
        for (size_t i = 0; i < n && i < 32; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", all[i]->tensor);
        return mx_site_fail(err, errlen, s, "model %s has no tensor '%s' (it has: %s)", m->name, name, names);
    }
    return 0;
}

/* "model/tensor" (one) or, when allow_model, "model" (all its tensors but the head). */
int mx_parse_shape_ref(const site *s, const char *text, bool allow_model, shape_ref **refs, size_t *n, size_t *cap,
                       char *err, size_t errlen)
{
    char name[128];
    snprintf(name, sizeof name, "%s", text);
    char *slash = strchr(name, '/');
    if (slash)
        *slash = '\0';
    else if (!allow_model)
        return mx_site_fail(err, errlen, s, "'%s' is not MODEL/TENSOR (e.g. bonsai2-27b/ffn_gate)", text);
    const hsdr_model *m;
    if (mx_find_model(s, name, &m, err, errlen))
        return -1;
    if (slash) {
        shape_ref *r = PUSH(*refs, *n, *cap);
        r->model = m;
        return mx_find_tensor(s, m, slash + 1, &r->tensor, err, errlen);
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

void mx_set_gguf_shapes(hsdr_matrix_spec *spec, const site *s)
{
    spec->gguf = true;
    if (s->file)
        snprintf(spec->gguf_where, sizeof spec->gguf_where, "%s:%d:%d: %s", s->file, s->line, s->col, s->path);
    else
        snprintf(spec->gguf_where, sizeof spec->gguf_where, "override '%s'", s->arg);
}

int mx_set_gguf_globs(hsdr_matrix_spec *spec, const site *s, const char *text, char *err, size_t errlen)
{
    const char *p = text;
    for (size_t i = 0;; i++) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return mx_site_fail(err, errlen, s, "glob %zu of '%s' is empty (give globs of GGUF tensor names, e.g. "
                                                "\"blk.0.*,output.weight\")", i + 1, text);
        if (!comma)
            break;
        p = comma + 1;
    }
    free(spec->gguf_globs);
    spec->gguf_globs = xstrdup(text);
    return 0;
}

const char *hsdr_matrix_gguf_globs(const hsdr_matrix_spec *spec)
{
    return spec->gguf_globs;
}

int hsdr_matrix_set_gguf(hsdr_matrix_spec *spec, const hsdr_matrix_tensor *t, size_t n)
{
    int alone = !spec->gguf;
    if (alone) {
        spec->gguf = true;
        snprintf(spec->gguf_where, sizeof spec->gguf_where, "--gguf");
        spec->K.n = 0;
        spec->nshapes = 0;
        spec->nextras = 0;
    }
    for (size_t i = 0; i < spec->ngguf; i++)
        free((char *)spec->gguf_tensors[i].name);
    spec->gguf_tensors = xrealloc(spec->gguf_tensors, sizeof *t * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        spec->gguf_tensors[i] = (hsdr_matrix_tensor){xstrdup(t[i].name), t[i].K, t[i].N};
    spec->ngguf = n;
    spec->gguf_set = true;
    return alone;
}

void mx_shape_name(const shape_ref *r, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", r->model->name, r->tensor->tensor);
}

/* ---- axes -------------------------------------------------------------------------------------------------------- */

static const char *const axis_names[AXIS_COUNT] = {"variants", "K", "N", "R", "cols", "threads", "distribution",
                                                   "mode", "flns"};

int mx_axis_from_name(const char *name)
{
    for (int i = 0; i < AXIS_COUNT; i++)
        if (strcmp(axis_names[i], name) == 0)
            return i;
    return -1;
}

/* One axis from its items, validated, into spec (replacing what was there). */
int mx_set_axis(hsdr_matrix_spec *spec, axis_id axis, const items *it, const site *axis_site, char *err,
                size_t errlen)
{
    if (it->n == 0)
        return mx_site_fail(err, errlen, axis_site, "empty list (an axis needs at least one value)");
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
                    rc = mx_site_fail(err, errlen, &e->s, "expected a mapping {F: .., b: ..}, got %s",
                                      ynode_type_name(map));
                for (size_t k = 0; rc == 0 && k < map->n; k += 2)
                    if (strcmp(map->kids[k]->text, "F") != 0 && strcmp(map->kids[k]->text, "b") != 0) {
                        site ks = mx_child_site(&e->s, map->kids[k], map->kids[k]->text, 0);
                        rc = mx_site_fail(err, errlen, &ks, "unknown key '%s' (expected F, b)", map->kids[k]->text);
                    }
                const char *keys[2] = {"F", "b"};
                for (int k = 0; rc == 0 && k < 2; k++) {
                    const ynode *v = ynode_get(map, keys[k]);
                    site vs = mx_child_site(&e->s, v, keys[k], 0);
                    if (!v)
                        rc = mx_site_fail(err, errlen, &vs, "missing (F and b are both required)");
                    else if (v->type != YN_SCALAR)
                        rc = mx_site_fail(err, errlen, &vs, "expected an integer, got %s", ynode_type_name(v));
                    else
                        rc = k == 0 ? mx_parse_F(&vs, v->text, &pairs[i].F, err, errlen)
                                    : mx_parse_b(&vs, v->text, &pairs[i].b, err, errlen);
                }
            } else { /* "8:12" */
                char buf[64];
                snprintf(buf, sizeof buf, "%s", e->text);
                char *colon = strchr(buf, ':');
                if (!colon) {
                    rc = mx_site_fail(err, errlen, &e->s, "'%s' is not F:b (e.g. 8:12)", e->text);
                } else {
                    *colon = '\0';
                    site fs = e->s, bs = e->s;
                    snprintf(fs.path + strlen(fs.path), sizeof fs.path - strlen(fs.path), ".F");
                    snprintf(bs.path + strlen(bs.path), sizeof bs.path - strlen(bs.path), ".b");
                    rc = mx_parse_F(&fs, buf, &pairs[i].F, err, errlen);
                    if (rc == 0)
                        rc = mx_parse_b(&bs, colon + 1, &pairs[i].b, err, errlen);
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
            rc = mx_parse_dist(&e->s, e->text, &vals[i], err, errlen);
        else if (axis == AXIS_MODE)
            rc = mx_parse_mode(&e->s, e->text, &vals[i], err, errlen);
        else
            rc = mx_parse_axis_int(&e->s, (int_axis)(axis - AXIS_K), e->text, &vals[i], err, errlen);
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

/* ---- overrides --------------------------------------------------------------------------------------------------- */

int hsdr_matrix_override(hsdr_matrix_spec *spec, const char *assignment, char *err, size_t errlen)
{
    site s = {.arg = assignment};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return mx_site_fail(err, errlen, &s, "expected NAME=VALUE (e.g. K=128,512 or threads=1)");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
    snprintf(s.path, sizeof s.path, "%s", name);
    const char *value = eq + 1;
    if (!value[0])
        return mx_site_fail(err, errlen, &s, "empty value");

    int axis = mx_axis_from_name(name);
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
        int rc = mx_set_axis(spec, (axis_id)axis, &it, &s, err, errlen);
        free(it.v);
        free(copy);
        return rc;
    }
    if (strcmp(name, "seed") == 0)
        return mx_parse_seed(&s, value, &spec->seed, err, errlen);
    if (strcmp(name, "warmup") == 0)
        return mx_parse_int(&s, value, 0, 1000000, &spec->warmup, err, errlen);
    if (strcmp(name, "noise_target") == 0)
        return mx_parse_double(&s, value, 0.0, 1.0, &spec->noise_target, err, errlen);
    if (strcmp(name, "time_limit_s") == 0)
        return mx_parse_double(&s, value, 0.0, 86400.0, &spec->time_limit_s, err, errlen);
    if (strcmp(name, "ceiling_interval_s") == 0)
        return mx_parse_double(&s, value, 0.0, 86400.0, &spec->ceiling_interval_s, err, errlen);
    if (strcmp(name, "visits") == 0)
        return mx_parse_int(&s, value, 1, HSDR_MATRIX_MAX_VISITS, &spec->visits, err, errlen);
    if (strcmp(name, "repetitions.min") == 0 || strcmp(name, "repetitions.max") == 0) {
        bool is_min = strcmp(name, "repetitions.min") == 0;
        int v;
        if (mx_parse_int(&s, value, 1, 1000000000, &v, err, errlen))
            return -1;
        int lo = is_min ? v : spec->min_reps, hi = is_min ? spec->max_reps : v;
        if (lo > hi)
            return mx_site_fail(err, errlen, &s, "repetitions min %d > max %d", lo, hi);
        *(is_min ? &spec->min_reps : &spec->max_reps) = v;
        return 0;
    }
    if (strcmp(name, "gguf_tensors") == 0)
        return mx_set_gguf_globs(spec, &s, value, err, errlen);
    if (strcmp(name, "shapes") == 0) {
        shape_ref *refs = NULL;
        size_t n = 0, cap = 0;
        bool gguf = false;
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
                if (strcmp(p, "gguf") == 0)
                    gguf = true;
                else
                    rc = mx_parse_shape_ref(&is, p, true, &refs, &n, &cap, err, errlen);
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
        spec->gguf = false;
        if (gguf)
            mx_set_gguf_shapes(spec, &s);
        return 0;
    }
    if (strcmp(name, "skip") == 0 || strcmp(name, "extra") == 0) {
        if (strcmp(value, "none") != 0)
            return mx_site_fail(err, errlen, &s, "only '%s=none' can be given on the command line (edit the matrix "
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
    return mx_site_fail(err, errlen, &s,
                        "unknown setting '%s' (expected an axis: variants, K, N, R, cols, threads, distribution, mode, "
                        "flns; a setting: seed, warmup, repetitions.min, repetitions.max, noise_target, time_limit_s, "
                        "ceiling_interval_s, visits; "
                        "or shapes, gguf_tensors, skip=none, extra=none)",
                        name);
}
