/* Reading a matrix file (hsdr_matrix_load*): the walk over its YAML tree (yaml_tree.h) into a spec, every key checked
 * and every value validated (matrix_spec.c's validators), errors naming file:line:column and the key path. Depends on
 * yaml_tree.h, matrix_spec.h, util.h, xalloc.h. */
#include "matrix_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "xalloc.h"
#include "yaml_tree.h"

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
        return mx_site_fail(w->err, w->errlen, s, "expected a mapping, got %s", ynode_type_name(n));
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
            site ks = mx_child_site(s, map->kids[i], key, 0);
            return mx_site_fail(w->err, w->errlen, &ks, "unknown key '%s' (expected one of: %s)", key, list);
        }
    }
    return 0;
}

/* A scalar's text, or an error naming what came instead. */
static int scalar(walk *w, const ynode *n, const site *s, const char *what, const char **text)
{
    if (n->type != YN_SCALAR)
        return mx_site_fail(w->err, w->errlen, s, "expected %s, got %s", what, ynode_type_name(n));
    *text = n->text;
    return 0;
}

/* A list node (or a single scalar, a one-item list) into items; scalar_items: every entry must be a scalar. */
static int list_items(walk *w, const ynode *n, const site *s, bool scalar_items, items *out)
{
    out->n = 0;
    if (n->type == YN_MAP)
        return mx_site_fail(w->err, w->errlen, s, "expected a list, got a mapping");
    if (ynode_is_null(n))
        return mx_site_fail(w->err, w->errlen, s, "expected a list, got nothing");
    size_t count = n->type == YN_SEQ ? n->n : 1;
    for (size_t i = 0; i < count; i++) {
        const ynode *e = n->type == YN_SEQ ? n->kids[i] : n;
        item *it = PUSH(out->v, out->n, out->cap);
        it->s = n->type == YN_SEQ ? mx_child_site(s, e, NULL, i) : *s;
        if (e->type == YN_SCALAR)
            it->text = e->text;
        else if (scalar_items)
            return mx_site_fail(w->err, w->errlen, &it->s, "expected a scalar, got %s", ynode_type_name(e));
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
        site vs = mx_child_site(s, v, key, 0);
        const char *text = "";
        int rc;
        if (strcmp(key, "repetitions") == 0) {
            static const char *const rkeys[] = {"min", "max", NULL};
            if (expect_map(w, v, &vs) || check_keys(w, v, &vs, rkeys))
                return -1;
            for (size_t k = 0; k < v->n; k += 2) {
                site rs = mx_child_site(&vs, v->kids[k + 1], v->kids[k]->text, 0);
                int *dst = strcmp(v->kids[k]->text, "min") == 0 ? &spec->min_reps : &spec->max_reps;
                if (scalar(w, v->kids[k + 1], &rs, "an integer", &text) ||
                    mx_parse_int(&rs, text, 1, 1000000000, dst, w->err, w->errlen))
                    return -1;
            }
            if (spec->min_reps > spec->max_reps)
                return mx_site_fail(w->err, w->errlen, &vs, "min %d > max %d", spec->min_reps, spec->max_reps);
            continue;
        }
        if (scalar(w, v, &vs, "a number", &text))
            return -1;
        if (strcmp(key, "seed") == 0)
            rc = mx_parse_seed(&vs, text, &spec->seed, w->err, w->errlen);
        else if (strcmp(key, "warmup") == 0)
            rc = mx_parse_int(&vs, text, 0, 1000000, &spec->warmup, w->err, w->errlen);
        else if (strcmp(key, "visits") == 0)
            rc = mx_parse_int(&vs, text, 1, HSDR_MATRIX_MAX_VISITS, &spec->visits, w->err, w->errlen);
        else if (strcmp(key, "noise_target") == 0)
            rc = mx_parse_double(&vs, text, 0.0, 1.0, &spec->noise_target, w->err, w->errlen);
        else if (strcmp(key, "ceiling_interval_s") == 0)
            rc = mx_parse_double(&vs, text, 0.0, 86400.0, &spec->ceiling_interval_s, w->err, w->errlen);
        else
            rc = mx_parse_double(&vs, text, 0.0, 86400.0, &spec->time_limit_s, w->err, w->errlen);
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
        int axis = mx_axis_from_name(key);
        site vs = mx_child_site(s, n->kids[i + 1], key, 0);
        rc = list_items(w, n->kids[i + 1], &vs, axis != AXIS_FLNS, &it);
        if (rc == 0)
            rc = mx_set_axis(w->spec, (axis_id)axis, &it, &vs, w->err, w->errlen);
    }
    free(it.v);
    return rc;
}

static int walk_shapes(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (ynode_is_null(n))
        return 0;
    if (n->type == YN_SCALAR && strcmp(n->text, "gguf") == 0) {
        mx_set_gguf_shapes(spec, s);
        return 0;
    }
    if (n->type != YN_SEQ)
        return mx_site_fail(w->err, w->errlen, s, "expected a list of {model: .., tensors: [..]} or gguf, got %s",
                            ynode_type_name(n));
    static const char *const keys[] = {"model", "tensors", NULL};
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = mx_child_site(s, e, NULL, i);
        if (e->type == YN_SCALAR && strcmp(e->text, "gguf") == 0) {
            mx_set_gguf_shapes(spec, &es);
            continue;
        }
        if (expect_map(w, e, &es) || check_keys(w, e, &es, keys))
            return -1;
        const ynode *mn = ynode_get(e, "model"), *tn = ynode_get(e, "tensors");
        site ms = mx_child_site(&es, mn, "model", 0);
        const char *text = "";
        const hsdr_model *m;
        if (!mn)
            return mx_site_fail(w->err, w->errlen, &ms, "missing (the model's name)");
        if (scalar(w, mn, &ms, "a model name", &text) || mx_find_model(&ms, text, &m, w->err, w->errlen))
            return -1;
        if (!tn) {
            if (mx_parse_shape_ref(&ms, m->name, true, &spec->shapes, &spec->nshapes, &spec->capshapes, w->err,
                                   w->errlen))
                return -1;
            continue;
        }
        site ts = mx_child_site(&es, tn, "tensors", 0);
        items it = {0};
        int rc = list_items(w, tn, &ts, true, &it);
        if (rc == 0 && it.n == 0)
            rc = mx_site_fail(w->err, w->errlen, &ts, "empty list (leave tensors out for all of them)");
        for (size_t k = 0; rc == 0 && k < it.n; k++) {
            shape_ref *r = PUSH(spec->shapes, spec->nshapes, spec->capshapes);
            r->model = m;
            rc = mx_find_tensor(&it.v[k].s, m, it.v[k].text, &r->tensor, w->err, w->errlen);
        }
        free(it.v);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- skip rules and extra cases ---------------------------------------------------------------------------------- */

/* The keys of a skip rule's conditions, in the order of cond_key (matrix_spec.h). */
static const char *const cond_key_names[CK_COUNT] = {"variant", "family", "backend", "shape", "distribution",
                                                     "mode", "K", "N", "R", "cols", "threads", "F", "b"};

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
        if ((key == CK_DISTRIBUTION ? mx_parse_dist : mx_parse_mode)(s, text, &v, err, errlen))
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
        return mx_site_fail(err, errlen, s, "'%s' is not an integer or a comparison (e.g. \">4096\", \"<=1024\")",
                            text);
    out->v = n;
    return 0;
}

static int walk_skip(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (ynode_is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return mx_site_fail(w->err, w->errlen, s, "expected a list of {when: {..}, reason: ..}, got %s",
                            ynode_type_name(n));
    static const char *const keys[] = {"when", "reason", NULL};
    char *err = w->err;
    size_t errlen = w->errlen;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = mx_child_site(s, e, NULL, i);
        if (expect_map(w, e, &es) || check_keys(w, e, &es, keys))
            return -1;
        const ynode *when = ynode_get(e, "when"), *reason = ynode_get(e, "reason");
        site ws = mx_child_site(&es, when, "when", 0), rs = mx_child_site(&es, reason, "reason", 0);
        const char *text = "";
        if (!when)
            return mx_site_fail(err, errlen, &ws, "missing (the conditions of the rule)");
        if (!reason)
            return mx_site_fail(err, errlen, &rs, "missing (every skip rule says why)");
        if (scalar(w, reason, &rs, "a string", &text))
            return -1;
        if (!text[0])
            return mx_site_fail(err, errlen, &rs, "empty reason");
        if (expect_map(w, when, &ws))
            return -1;
        if (when->n == 0)
            return mx_site_fail(err, errlen, &ws, "empty mapping (a rule needs at least one condition)");
        skip_rule *rule = PUSH(spec->skips, spec->nskips, spec->capskips);
        snprintf(rule->reason, sizeof rule->reason, "%s", text);
        for (size_t k = 0; k < when->n; k += 2) {
            const char *key = when->kids[k]->text;
            int ck = cond_key_from_name(key);
            site cs = mx_child_site(&ws, when->kids[k], key, 0);
            if (ck < 0) {
                char list[160] = "";
                for (int j = 0; j < CK_COUNT; j++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                             cond_key_names[j]);
                return mx_site_fail(err, errlen, &cs, "unknown key '%s' (expected one of: %s)", key, list);
            }
            cs = mx_child_site(&ws, when->kids[k + 1], key, 0);
            items it = {0};
            int rc = list_items(w, when->kids[k + 1], &cs, true, &it);
            if (rc == 0 && it.n == 0)
                rc = mx_site_fail(err, errlen, &cs, "empty list (a condition needs at least one value)");
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

static const hsdr_variant *find_variant(const hsdr_matrix_spec *spec, const char *name)
{
    for (size_t i = 0; i < spec->nreg; i++)
        if (strcmp(spec->reg[i].name, name) == 0)
            return &spec->reg[i];
    return NULL;
}

static int walk_extra(walk *w, const ynode *n, const site *s)
{
    hsdr_matrix_spec *spec = w->spec;
    if (ynode_is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return mx_site_fail(w->err, w->errlen, s, "expected a list of cases, got %s", ynode_type_name(n));
    static const char *const keys[] = {"variant", "K", "N", "R", "cols", "threads", "distribution", "mode", "F", "b",
                                       "shape", NULL};
    char *err = w->err;
    size_t errlen = w->errlen;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        site es = mx_child_site(s, e, NULL, i);
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
            site vs = mx_child_site(&es, v, key, 0);
            const char *text = "";
            int tmp, rc = 0;
            if (scalar(w, v, &vs, "a scalar", &text))
                return -1;
            if (strcmp(key, "variant") == 0) {
                x->variant = find_variant(spec, text);
                if (!x->variant)
                    rc = mx_site_fail(err, errlen, &vs,
                                      "unknown variant '%s' (an extra case names one variant exactly; see `hsdr list`)",
                                      text);
            } else if (strcmp(key, "K") == 0) {
                rc = mx_parse_axis_int(&vs, AX_K, text, &x->K, err, errlen);
                has_K = true;
            } else if (strcmp(key, "N") == 0) {
                rc = mx_parse_axis_int(&vs, AX_N, text, &x->N, err, errlen);
                has_N = true;
            } else if (strcmp(key, "R") == 0) {
                rc = mx_parse_axis_int(&vs, AX_R, text, &x->R, err, errlen);
            } else if (strcmp(key, "cols") == 0) {
                rc = mx_parse_axis_int(&vs, AX_COLS, text, &x->cols, err, errlen);
                cols_site = vs;
            } else if (strcmp(key, "threads") == 0) {
                rc = mx_parse_axis_int(&vs, AX_THREADS, text, &x->threads, err, errlen);
            } else if (strcmp(key, "distribution") == 0) {
                rc = mx_parse_dist(&vs, text, &tmp, err, errlen);
                x->dist = (hsdr_dist)tmp;
            } else if (strcmp(key, "mode") == 0) {
                rc = mx_parse_mode(&vs, text, &tmp, err, errlen);
                x->mode = (hsdr_mode)tmp;
            } else if (strcmp(key, "F") == 0) {
                rc = mx_parse_F(&vs, text, &x->F, err, errlen);
                x->has_F = true;
            } else if (strcmp(key, "b") == 0) {
                rc = mx_parse_b(&vs, text, &x->b, err, errlen);
                x->has_b = true;
            } else { /* shape */
                shape_ref *ref = NULL;
                size_t nref = 0, capref = 0;
                rc = mx_parse_shape_ref(&vs, text, false, &ref, &nref, &capref, err, errlen);
                if (rc == 0) {
                    mx_shape_name(ref, x->shape, sizeof x->shape);
                    x->K = ref->tensor->K;
                    x->N = ref->tensor->N;
                }
                free(ref);
            }
            if (rc)
                return -1;
        }
        if (!x->variant)
            return mx_site_fail(err, errlen, &es, "missing key 'variant'");
        if (x->shape[0] && (has_K || has_N))
            return mx_site_fail(err, errlen, &es, "give either shape or K and N, not both (the shape fixes K and N)");
        if (!x->shape[0] && !(has_K && has_N))
            return mx_site_fail(err, errlen, &es, "missing key '%s' (give K and N, or a shape)", has_K ? "N" : "K");
        /* one-column variants drop cols as non-uses_R ones drop R; a multi-column variant is asked for a count it
         * cannot take only by mistake (the grid records such points as skipped instead) */
        if (x->variant->max_cols > 1 && x->cols > x->variant->max_cols)
            return mx_site_fail(err, errlen, &cols_site, "cols = %d > max_cols = %d of %s", x->cols,
                                x->variant->max_cols, x->variant->name);
    }
    return 0;
}

/* gguf_tensors: a string of comma-separated globs, or a list of globs. */
static int walk_gguf_tensors(walk *w, const ynode *n, const site *s)
{
    items it = {0};
    int rc = list_items(w, n, s, true, &it);
    char globs[4096] = "";
    for (size_t i = 0; rc == 0 && i < it.n; i++) {
        size_t len = strlen(globs);
        if (len + strlen(it.v[i].text) + 2 > sizeof globs)
            rc = mx_site_fail(w->err, w->errlen, &it.v[i].s, "the globs are longer than %zu bytes in all",
                              sizeof globs - 1);
        else
            snprintf(globs + len, sizeof globs - len, "%s%s", i ? "," : "", it.v[i].text);
    }
    if (rc == 0 && it.n == 0)
        rc = mx_site_fail(w->err, w->errlen, s, "empty (leave gguf_tensors out for all the file's ternary tensors)");
    if (rc == 0)
        rc = mx_set_gguf_globs(w->spec, s, globs, w->err, w->errlen);
    free(it.v);
    return rc;
}

static int walk_root(walk *w, const ynode *root)
{
    site rs = {.file = w->file, .line = root ? root->line : 1, .col = root ? root->col : 1};
    if (!root || ynode_is_null(root))
        return 0;
    static const char *const keys[] = {"settings", "axes", "shapes", "gguf_tensors", "skip", "extra", NULL};
    if (root->type != YN_MAP)
        return mx_site_fail(w->err, w->errlen, &rs, "expected a mapping (settings, axes, shapes, gguf_tensors, skip, "
                                                    "extra) at the top level, got %s", ynode_type_name(root));
    if (check_keys(w, root, &rs, keys))
        return -1;
    for (size_t i = 0; i < root->n; i += 2) {
        const char *key = root->kids[i]->text;
        const ynode *v = root->kids[i + 1];
        site vs = mx_child_site(&rs, v, key, 0);
        int rc;
        if (strcmp(key, "settings") == 0)
            rc = ynode_is_null(v) ? 0 : walk_settings(w, v, &vs);
        else if (strcmp(key, "axes") == 0)
            rc = ynode_is_null(v) ? 0 : walk_axes(w, v, &vs);
        else if (strcmp(key, "shapes") == 0)
            rc = walk_shapes(w, v, &vs);
        else if (strcmp(key, "gguf_tensors") == 0)
            rc = walk_gguf_tensors(w, v, &vs);
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
    hsdr_matrix_spec *s = mx_spec_new(name, env);
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
