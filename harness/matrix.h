/* The experiment matrix: a YAML file (matrix.yaml) plus command-line overrides, expanded into benchmark cases.
 *
 * Format (every key optional unless said; unknown keys are errors; errors name file:line:column and the key path,
 * e.g. "matrix.yaml:7:6: axes.K[2]: 'abc' is not an integer"):
 *
 *   settings:                    seed: 1, warmup: 2, repetitions: {min: 5, max: 200}, noise_target: 0.03,
 *                                time_limit_s: 1.0, ceiling_interval_s: 60, visits: 1 (the defaults). The cases of
 *                                one configuration run in rounds: they stop together, when every one meets the noise
 *                                target (after min), after time_limit_s per case, or after max rounds. visits (1..16)
 *                                splits those budgets over that many visits to each configuration, spread over the
 *                                run (staggered: each pass visits the configurations in flight, opening one and
 *                                closing the oldest), so that a configuration's rounds sample the machine's states
 *                                across minutes instead of one state. A read ceiling is measured once per (backend,
 *                                bytes, mode, threads) and reused until it is older than ceiling_interval_s.
 *   axes:                        each a list (a single scalar counts as a one-item list); crossed with each other
 *     variants:                  selectors: a name (ref.direct), a glob (ref.*), family:NAME, backend:NAME; default
 *                                all variants. A name or glob that matches no variant is an error; family:/backend:
 *                                selectors may match nothing (backend:cpu before the CPU kernels exist).
 *     K:                         input widths, multiples of 128; no default (required unless shapes/extra give cases)
 *     N: [256]  R: [1]  threads: [1]    integers >= 1
 *     cols: [1]                  activation columns through one read of the weights, integers 1..8; apply to
 *                                variants with max_cols > 1 only
 *     distribution: [gaussian]   names of rng.h (gaussian, laplace, student-t3, bonsai)
 *     mode: [hot]                hot | cold
 *     flns: [{F: 8, b: 12}]      fLNS parameters, F in 0..8, b in 4..16
 *   shapes:                      model GEMVs (harness/shapes.h), crossed with every axis but K and N:
 *     - {model: bonsai2-27b, tensors: [ffn_gate, ffn_down]}    tensors default: all distinct ones but the head
 *                                ("output"); the case's shape = "bonsai2-27b/ffn_gate"
 *     - gguf                     the ternary (PTQ1_0 / PQ2_0) tensors of the model file given with --gguf FILE (an
 *                                error naming this line without it), in forward order; shape "gguf:TENSOR_NAME",
 *                                K = ne0, N = ne1, the weights the file's (`shapes: gguf` alone also works)
 *   gguf_tensors: "blk.0.*,output.weight"   which tensors `gguf` takes: globs (fnmatch) of whole GGUF tensor names,
 *                                a comma-separated string or a list; default all
 *   skip:                        user rules; a case is skipped when every key of `when` matches:
 *     - {when: {family: production, R: ">1"}, reason: "R does not apply"}
 *                                keys: variant (glob), family, backend, shape (glob; "" = not a model shape), K, N,
 *                                R, cols, threads, distribution, mode, F, b (F/b match only variants that use fLNS;
 *                                R and cols are 1 in the cases of variants that do not use them);
 *                                values: a scalar, a list (any of), or for numeric keys a comparison string
 *                                ">4096", ">=", "<", "<=", "==", "!="
 *   extra:                       explicit cases, added as they are (user skip rules do not apply; built-in ones do)
 *     - {variant: ref.stateset, K: 5120, N: 1024, R: 64, threads: 1, distribution: gaussian, mode: cold}
 *                                variant (an exact name) and K, N required, or shape: "model/tensor" instead of K, N;
 *                                R, cols, threads default 1, distribution gaussian, mode hot, F/b the first flns pair;
 *                                R, cols, F, b of a variant that does not use them collapse as in the grid (to 1, 1,
 *                                the first pair); cols above a multi-column variant's max_cols is an error
 *
 * Expansion: (K x N grid, then shapes) x distribution x threads x mode x R x cols x variant x flns.
 *   Collapsing (no record): a variant with uses_R == false gets one case at R = 1; with max_cols <= 1 one case at
 *   cols = 1 (its key omits cols, as does every key at cols = 1); with uses_flns == false one case with the first
 *   flns pair (its key omits F/b).
 *   Skips, each recorded with a reason, in this order: built-in input checks (distribution bonsai needs K % 1024 == 0;
 *   R > N; cols > the variant's max_cols; threads > logical CPUs), then user rules (first match), then variant
 *   checks (no `rows`: not benchmarkable; hsdr_variant_unavailable).
 *   Duplicate keys are removed, keeping the first (grid, then shapes, then extra).
 *   Order: grouped by input configuration (shape, K, N, distribution) in order of first appearance, so consecutive
 *   cases share inputs; within a group by threads, mode (hot, cold), R, cols, variant in registry order, F, b.
 *   Each case's seed = hsdr_case_seed(case, settings.seed).
 *
 * Implemented in layers, each using only those before it: yaml_tree.c (a YAML tree with positions), matrix_spec.c
 * (the spec, its validators and the overrides; internal header matrix_spec.h), matrix_load.c (the file's tree walked
 * into a spec), matrix_expand.c (expansion, skips, duplicates, order; filters and shards). */
#ifndef HSDR_MATRIX_H
#define HSDR_MATRIX_H
#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "kernel.h"

typedef struct hsdr_matrix_spec hsdr_matrix_spec; /* opaque: the parsed YAML plus overrides */

/* Load and validate a matrix file against the registry. 0, or -1 with the message in err (nothing allocated). */
int hsdr_matrix_load(const char *path, hsdr_matrix_spec **spec, char *err, size_t errlen);

/* What a matrix is expanded against; hsdr_matrix_load uses the registry and sysconf(_SC_NPROCESSORS_ONLN). Tests
 * pass their own table of variants (with rows, uses_R, max_cols, uses_flns as they need) and CPU count. */
typedef struct {
    const hsdr_variant *registry; /* NULL: hsdr_registry */
    size_t registry_count;
    int logical_cpus;             /* 0: sysconf */
} hsdr_matrix_env;
int hsdr_matrix_load_env(const char *path, const hsdr_matrix_env *env, hsdr_matrix_spec **spec, char *err,
                         size_t errlen);
/* The same from a YAML text in memory; name stands for the file in messages. */
int hsdr_matrix_load_text(const char *name, const char *text, size_t len, const hsdr_matrix_env *env,
                          hsdr_matrix_spec **spec, char *err, size_t errlen);

/* Command-line override of one axis or setting: "K=128,512,5120", "threads=1", "cols=1,2,4,8",
 * "variants=ref.direct,family:stateset", "distribution=gaussian,bonsai", "mode=cold", "flns=8:12,4:8", "seed=7",
 * "warmup=0", "repetitions.min=3", "repetitions.max=50", "noise_target=0.05", "time_limit_s=0.5",
 * "ceiling_interval_s=30", "visits=3", "shapes=none" |
 * "shapes=bonsai2-27b" | "shapes=bonsai2-27b/ffn_gate,bonsai-8b/ffn_down" | "shapes=gguf",
 * "gguf_tensors=blk.0.*,output.weight", "skip=none", "extra=none". Same
 * validation as the file; errors name the argument ("override 'K=100': K[0]: 100 is not a multiple of 128"). The
 * spec is unchanged on error. */
int hsdr_matrix_override(hsdr_matrix_spec *spec, const char *assignment, char *err, size_t errlen);

/* A tensor of a model file (gguf_model.h) as the matrix sees it: shape "gguf:NAME", K inputs, N rows. */
typedef struct {
    const char *name;
    int K, N;
} hsdr_matrix_tensor;
/* The spec's gguf_tensors (comma-separated globs), or NULL for all the file's ternary tensors. */
const char *hsdr_matrix_gguf_globs(const hsdr_matrix_spec *spec);
/* The tensors of the --gguf file (names copied), the cases of `shapes: gguf`. A spec whose shapes do not name gguf
 * gets them as its only cases (its K x N grid, model shapes and extra cases left out): returns 1 then, else 0. */
int hsdr_matrix_set_gguf(hsdr_matrix_spec *spec, const hsdr_matrix_tensor *t, size_t n);

typedef struct {
    char key[256];
    char reason[160];
} hsdr_skipped_case;

typedef struct {
    char source[512]; /* matrix path */
    uint64_t seed;
    int warmup;
    int min_reps, max_reps;
    double noise_target;
    double time_limit_s;
    double ceiling_interval_s;
    int visits;
    hsdr_case *cases;
    size_t ncases;
    hsdr_skipped_case *skipped;
    size_t nskipped;
    int logical_cpus;            /* the CPU count the threads skip used */
    int shard_index, shard_count; /* 0, 1 unless hsdr_matrix_shard was applied */
} hsdr_matrix;

/* Expand the spec into cases (see the comment at the top). 0, or -1 with a message (out is then empty), also when
 * the spec has more than HSDR_MATRIX_MAX_POINTS points: refused before any is generated, since a matrix of a few
 * kilobytes can describe billions (a million cases take days to run, so the limit stops only mistakes). */
#define HSDR_MATRIX_MAX_POINTS 1000000
#define HSDR_MATRIX_MAX_VISITS 16
int hsdr_matrix_expand(const hsdr_matrix_spec *spec, hsdr_matrix *out, char *err, size_t errlen);
/* Points the expansion generates: cases plus skip records, before duplicates are removed (a double: the product of
 * the axes need not fit any integer type). */
double hsdr_matrix_points(const hsdr_matrix_spec *spec);
/* Keep the cases (and skipped records) whose key matches the glob (fnmatch); a pattern without glob characters
 * (*?[) matches as a substring. */
void hsdr_matrix_filter(hsdr_matrix *m, const char *pattern);
/* Keep shard i of n (0 <= i < n): case j of the current order (the expansion order, after any filters, which commute
 * with each other) goes to shard j % n; skipped records are split the same way. Deterministic and balanced; the
 * union of shards 0..n-1 is the whole set, each case once. -1 with a message when i, n are out of range. */
int hsdr_matrix_shard(hsdr_matrix *m, int i, int n, char *err, size_t errlen);
void hsdr_matrix_free(hsdr_matrix *m);
void hsdr_matrix_spec_free(hsdr_matrix_spec *spec);

#endif
