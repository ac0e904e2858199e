/* The experiment matrix's spec, inside (matrix.h has the public interface and documents the format): its data, read
 * by the expansion (matrix_expand.c); and where a value came from (a site: a YAML node or a command-line override)
 * with the validators of values and axes (matrix_spec.c), shared by the file's reader (matrix_load.c) and the
 * overrides. Internal to those files: the mx_ functions are not the harness's interface. Depends on matrix.h,
 * shapes.h; of the YAML tree (yaml_tree.h) only the name of its node type. */
#ifndef HSDR_MATRIX_SPEC_H
#define HSDR_MATRIX_SPEC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "matrix.h"
#include "shapes.h"

struct ynode; /* yaml_tree.h */

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
} cond_key; /* their names in the file: cond_key_names of matrix_load.c */

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
    char shape[HSDR_CASE_SHAPE_LEN];
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

    /* shapes: gguf -- the tensors of the model file given with --gguf (hsdr_matrix_set_gguf) */
    bool gguf;                  /* the shapes name gguf */
    char gguf_where[640];       /* where they do, for messages: "matrix.yaml:31:5: shapes[1]", "override '...'" */
    char *gguf_globs;           /* gguf_tensors: comma-separated globs of GGUF tensor names; NULL: all */
    bool gguf_set;              /* hsdr_matrix_set_gguf was called */
    hsdr_matrix_tensor *gguf_tensors; /* its tensors (names owned) */
    size_t ngguf;
};

/* A spec with the defaults of matrix.h, to be expanded against env (NULL: the registry, the CPUs here). */
hsdr_matrix_spec *mx_spec_new(const char *source, const hsdr_matrix_env *env);
/* A variant selector (name, glob, family:NAME, backend:NAME) matches v. */
bool mx_selector_matches(const char *sel, const hsdr_variant *v);
/* "model/tensor", a case's shape. */
void mx_shape_name(const shape_ref *r, char *out, size_t outlen);

/* ---- where a value came from: a YAML node or a command-line override ------------------------------------------- */

#define MX_PATH_LEN 256

typedef struct {
    const char *file; /* YAML source, or NULL */
    const char *arg;  /* the override argument, when file is NULL */
    int line, col;
    char path[MX_PATH_LEN];
} site;

/* "file:line:col: path: message" or "override 'ARG': path: message" into err; returns -1. */
int mx_site_fail(char *err, size_t errlen, const site *s, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Record that the shapes name gguf, at site s. */
void mx_set_gguf_shapes(hsdr_matrix_spec *spec, const site *s);
/* gguf_tensors from text (comma-separated globs, none empty): 0, or -1 with a message naming s. */
int mx_set_gguf_globs(hsdr_matrix_spec *spec, const site *s, const char *text, char *err, size_t errlen);
/* The site of a child: parent.key or parent[i] (key NULL), at node n (NULL: the parent's position). */
site mx_child_site(const site *parent, const struct ynode *n, const char *key, size_t index);

/* ---- scalar values (one validator per kind, shared by the file and the overrides): 0, or -1 with a message ------- */

typedef enum { AX_K, AX_N, AX_R, AX_COLS, AX_THREADS } int_axis; /* in the order of AXIS_K.. below */

int mx_parse_int(const site *s, const char *text, int lo, int hi, int *out, char *err, size_t errlen);
int mx_parse_axis_int(const site *s, int_axis kind, const char *text, int *out, char *err, size_t errlen);
int mx_parse_double(const site *s, const char *text, double lo_excl, double hi_incl, double *out, char *err,
                    size_t errlen);
int mx_parse_seed(const site *s, const char *text, uint64_t *out, char *err, size_t errlen);
int mx_parse_dist(const site *s, const char *text, int *out, char *err, size_t errlen);
int mx_parse_mode(const site *s, const char *text, int *out, char *err, size_t errlen);
int mx_parse_F(const site *s, const char *text, int *out, char *err, size_t errlen);
int mx_parse_b(const site *s, const char *text, int *out, char *err, size_t errlen);
int mx_find_model(const site *s, const char *name, const hsdr_model **out, char *err, size_t errlen);
int mx_find_tensor(const site *s, const hsdr_model *m, const char *name, const hsdr_gemv_shape **out, char *err,
                   size_t errlen);
/* "model/tensor" (one) or, when allow_model, "model" (all its tensors but the head), appended to refs. */
int mx_parse_shape_ref(const site *s, const char *text, bool allow_model, shape_ref **refs, size_t *n, size_t *cap,
                       char *err, size_t errlen);

/* ---- axes: a list of items (YAML list entries or comma-separated override values) -------------------------------- */

typedef struct {
    const char *text;         /* scalar items */
    const struct ynode *node; /* YAML items (flns mappings) */
    site s;
} item;

typedef struct {
    item *v;
    size_t n, cap;
} items;

typedef enum { AXIS_VARIANTS, AXIS_K, AXIS_N, AXIS_R, AXIS_COLS, AXIS_THREADS, AXIS_DISTRIBUTION, AXIS_MODE,
               AXIS_FLNS, AXIS_COUNT } axis_id;

/* The axis of that name, or -1. */
int mx_axis_from_name(const char *name);
/* One axis from its items, validated, into spec (replacing what was there). */
int mx_set_axis(hsdr_matrix_spec *spec, axis_id axis, const items *it, const site *axis_site, char *err,
                size_t errlen);

#endif
