/* The variant interface. Every implementation of a matvec path -- the scalar reference, baselines and HSDR
 * experiments on every backend -- is one hsdr_variant in the ONE table of kernels/registry.c. The CLI (`hsdr list`,
 * `hsdr check`, the matrix of `hsdr run`), gbench, the tests and, through the results, the plots derive their lists
 * from that table.
 *
 * A variant computes a batch-1 matvec over PTQ1_0 weights and fills the outputs it declares (HSDR_OUT_*); the
 * checker compares every declared output for which a test vector has an expectation: integers exactly, floats
 * within the tolerance of the variant's precision (spec/vectors.md). */
#ifndef HSDR_KERNEL_H
#define HSDR_KERNEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "matvec.h" /* hsdr_q8_1_order: the reference's fp32 summation orders */
#ifdef __cplusplus
}
#endif

/* Canonical stage names (timers, likwid regions, results and plots all use hsdr_stage_name()). */
typedef enum {
    HSDR_STAGE_DECODE,
    HSDR_STAGE_ENCODE,
    HSDR_STAGE_ROUTE,
    HSDR_STAGE_REDUCE,
    HSDR_STAGE_SCALE,
    HSDR_STAGE_MATERIALIZE,
    HSDR_STAGE_MERGE,
    HSDR_STAGE_CONVERT, /* one-off weight conversion, timed separately */
    HSDR_STAGE_COUNT
} hsdr_stage;
#define HSDR_STAGE_BIT(s) (1u << (s))
/* The name of each stage, beside the enum so that every backend has it without the registry; a stage added above
 * without a name here is a -Wswitch warning (an error with HSDR_WERROR). "?" for a value outside the enum. */
static inline const char *hsdr_stage_name(hsdr_stage s)
{
    switch (s) {
    case HSDR_STAGE_DECODE:
        return "decode";
    case HSDR_STAGE_ENCODE:
        return "encode";
    case HSDR_STAGE_ROUTE:
        return "route";
    case HSDR_STAGE_REDUCE:
        return "reduce";
    case HSDR_STAGE_SCALE:
        return "scale";
    case HSDR_STAGE_MATERIALIZE:
        return "materialize";
    case HSDR_STAGE_MERGE:
        return "merge";
    case HSDR_STAGE_CONVERT:
        return "convert";
    case HSDR_STAGE_COUNT:
        break;
    }
    return "?";
}

/* What a variant produces (checked against the vectors' expectations of the same name). */
enum {
    HSDR_OUT_CODEC = 1u << 0,  /* lns8_encode, ptq1_0_pack, ptq1_0_quantize cases */
    HSDR_OUT_Y_EXACT = 1u << 1, /* y vs expect.y_exact */
    HSDR_OUT_Y_Q8_0 = 1u << 2, /* y_f32 bit-identical to expect.y_q8_0 */
    HSDR_OUT_Y_LNS8 = 1u << 3, /* y vs expect.y_lns8 / group_sum */
    HSDR_OUT_A = 1u << 4,      /* A[8] per group, exact */
    HSDR_OUT_C = 1u << 5,      /* state counts per group, exact */
    HSDR_OUT_Q1516 = 1u << 6,  /* Q15.16 per group and per row, within the spec bound */
    HSDR_OUT_FLNS = 1u << 7,   /* fLNS root (lambda, sign) per group, exact */
    HSDR_OUT_Y_Q8_1 = 1u << 8, /* y_f32 bit-identical to the reference sequence the variant names (hsdr_matvec_q8_1
                                  in v->q8_1_order(K, N)), computed by the checker from the case's weights and x */
};

/* Inputs and outputs of one matvec. Output pointers are NULL when not wanted; a variant writes only those it
 * declares. */
typedef struct {
    int K, N;                /* K a multiple of 128 */
    const uint8_t *weights;  /* N * K/128 PTQ1_0 blocks, row-major */
    const float *x;          /* K fp32 activations; NULL when only pre-encoded codes exist (group vectors) */
    const uint8_t *codes;    /* K LNS8 codes with pre-scale prescale_e (encoded by the caller) */
    int prescale_e;
    int flns_F, flns_b;      /* fLNS parameters (spec/lns8.md section 5) */

    double *y_f64;           /* N: variants of precision 64 */
    float *y_f32;            /* N: variants of precision 32 */
    int32_t *A;              /* N x K/128 x 8 */
    int16_t *C;              /* N x K/128 x 128 (index = code k) */
    int64_t *q_group;        /* N x K/128 */
    int64_t *q_row;          /* N */
    int32_t *flns_lambda;    /* N x K/128 */
    int8_t *flns_sign;       /* N x K/128 */
} hsdr_matvec_io;

/* One timed matvec. The harness owns every buffer, the threads and the clock; a variant only computes.
 * Flow of one timed repetition: prologue(e) once (activation-side work: encode, and route where it does not depend
 * on rows; split over every thread when the variant has prologue_part), then rows(e, r0, r1, scratch) on every thread
 * over disjoint, even row ranges; state-set variants build their tiles once per R rows of their own range. */
typedef struct {
    int K, N, R;             /* R: rows that share one built activation tile (state-set variants) */
    int flns_F, flns_b;
    int cols;                /* activation columns through one read of the weights (1 unless v->max_cols > 1) */
    const void *weights;     /* prepare()'s converted weights, or the raw PTQ1_0 bytes when prepare is NULL */
    const float *x;          /* cols x K fp32 activations, column c at x + c K */
    void *act;               /* act_bytes(K) bytes: the variant's encoded activations, written by the prologue */
    float *y;                /* cols x N outputs, column c at y + c N */
    unsigned skip;           /* ablation: stages (HSDR_STAGE_BIT) left out of this run */
    unsigned twice;          /* ablation: stages run twice in this run */
} hsdr_exec;

typedef struct hsdr_variant hsdr_variant;

/* Device backends (kernels that run on an accelerator). A backend supplies only what it alone can do: set up a
 * case, enqueue one launch of it, and read its own clock. Everything else -- warm-up, repetitions and the stopping
 * rule, cold rotation over the weight copies, rounds of several variants, the read ceiling -- is harness/timing.c's,
 * the same for every backend. One timed sample is
 *
 *     mark(run, 0);  enqueue(run, copy, ...);  mark(run, 1);  elapsed(run, &ns);
 *
 * and nothing else sits between the two marks: launch shapes, occupancy queries, attribute settings and uploads
 * belong to create() and set_input(). The harness keeps no host copies of the weights. */
typedef struct hsdr_device_run hsdr_device_run; /* the backend's own state: device buffers, events, pipelines */
typedef struct {
    /* Upload (and convert) the weights in ncopies copies (cold runs rotate over them) for e's K, N, R, cols and fLNS
     * parameters, and work out every launch shape; *convert_ns: device time of the conversion (0 without one);
     * *footprint: bytes of one copy. */
    int (*create)(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                  hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen);
    /* Upload the activations: cols x K floats, column c at x + c K (not timed; a host-side encode happens here). */
    int (*set_input)(hsdr_device_run *run, const float *x, char *err, size_t errlen);
    /* Enqueue one launch on weight copy `copy`, without waiting: the full matvec with the ablation masks skip / twice
     * (stage < 0), or stage `stage` alone on the buffers a full run left. */
    int (*enqueue)(hsdr_device_run *run, int copy, int stage, unsigned skip, unsigned twice, char *err,
                   size_t errlen);
    /* The device's clock: mark(run, 0) before the first launch of a sample, mark(run, 1) after the last; elapsed()
     * waits for the second mark and gives the device time between the two in ns (and reports a fault inside the
     * launches). */
    int (*mark)(hsdr_device_run *run, int end, char *err, size_t errlen);
    int (*elapsed)(hsdr_device_run *run, double *ns, char *err, size_t errlen);
    /* y of the last full run: cols x N floats. */
    int (*output)(hsdr_device_run *run, float *y, char *err, size_t errlen);
    void (*destroy)(hsdr_device_run *run);
    size_t (*l2_bytes)(void);
    const char *(*describe)(void); /* device name and properties, for the results' context */
    /* The device's plain streaming read (the ceiling of the roofline): a run over ncopies buffers of `bytes` whose
     * enqueue(run, copy, -1, 0, 0) reads copy `copy` once; timed like any other run. */
    int (*read_create)(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen);
    /* A whole token: the full launches of runs[0..n) (each on its copy 0 with its last set_input), recorded once into
     * one replayable sequence; a run whose enqueue(run, 0, -1, 0, 0) replays it. runs outlive it. */
    int (*token_create)(hsdr_device_run *const *runs, int n, hsdr_device_run **token, char *err, size_t errlen);
    const void *impl;              /* the backend's own table for this variant (its kernels), opaque here */
} hsdr_device_ops;

struct hsdr_variant {
    const char *name;    /* unique, "<backend>.<idea>" */
    const char *backend; /* reference | cpu | cuda | vulkan | metal */
    const char *family;  /* exact | production | baseline | direct | stateset | tile64 | flns | q1516 | codec */
    const char *summary; /* one line: the idea it adds */
    unsigned outputs;    /* HSDR_OUT_* */
    unsigned stages;     /* HSDR_STAGE_BIT(...) of the stages it has */
    int precision;       /* 64 or 32: which y it writes and which float tolerance applies */
    bool needs_x;        /* consumes fp32 activations (Q8 paths, exact) rather than LNS8 codes */
    /* NULL when runnable here, else the reason it is not (no GPU, no AVX2, ...). */
    const char *(*unavailable)(void);
    /* Checking interface: the whole matvec with every declared output. Returns 0, or non-zero with a message. */
    int (*matvec)(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);
    /* HSDR_OUT_Y_Q8_1 (required there; test_q8_1_warp checks it): the order of the reference sequence
     * (hsdr_matvec_q8_1, reference/matvec.h) whose fp32 y the variant reproduces bit for bit on a K x N matrix. */
    hsdr_q8_1_order (*q8_1_order)(int K, int N);
    /* LNS8 encoder (HSDR_OUT_CODEC variants): codes of x with pre-scale e; returns 0, or an LNS8 status with the
     * index in *bad. */
    int (*encode_lns8)(const float *x, size_t n, int e, uint8_t *codes, size_t *bad);
    int (*auto_prescale)(const float *x, size_t n, int *e, size_t *bad);

    /* ---- timing interface (NULL rows: the variant is not benchmarked) ---- */
    bool uses_R;         /* time depends on R (else the matrix runs it at R = 1 only) */
    bool uses_flns;      /* time depends on (F, b) */
    int max_cols;        /* activation columns one launch takes (the matrix's cols axis): 0 or 1 = one column */
    unsigned ablatable;  /* stages that honour hsdr_exec.skip / .twice */
    /* Critical-path depth (dependent operations per output) of each stage for one 128-lane group; the merge over
     * K/128 groups adds ceil(log2(K/128)) when merge_is_tree, else K/128 - 1. */
    int depth[HSDR_STAGE_COUNT];
    bool merge_is_tree;
    /* One-off weight conversion (the `convert` stage, timed once; *bytes = footprint). NULL: rows read PTQ1_0.
     * The prepared weights must be one flat, position-independent buffer of *bytes bytes: the harness makes the
     * rotating copies of cold runs with memcpy (and frees only the original, with release). */
    int (*prepare)(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err, size_t errlen);
    void (*release)(void *prepared);
    size_t (*act_bytes)(int K);
    size_t (*scratch_bytes)(int K, int R); /* per thread, zeroed before first use */
    void (*prologue)(const hsdr_exec *e);
    /* NULL, or the prologue split into parts: every thread of a timed matvec calls it with (tid, nthreads), each part
     * does its share of the activation-side work (groups g0..g1 of encode and route), and one barrier follows. The
     * parts of 0..parts-1 together write exactly the bytes prologue(e) writes (prologue is prologue_part(e, 0, 1)). */
    void (*prologue_part)(const hsdr_exec *e, int part, int parts);
    void (*rows)(const hsdr_exec *e, int r0, int r1, void *scratch);
    /* One stage alone over rows r0..r1, on the buffers a full run left. The harness calls it on every thread with
     * that thread's range; activation-side stages (encode, and route when it is per matvec) work only in the call
     * with r0 == 0. */
    void (*stage)(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
    /* ---- device timing interface (instead of the one above) ---- */
    const hsdr_device_ops *device;
};

/* Whether v has a timing interface (host rows, or a device): benchmarked by run, profile, quality and gbench. */
static inline bool hsdr_variant_timed(const hsdr_variant *v)
{
    return v->rows != NULL || v->device != NULL;
}

extern const hsdr_variant hsdr_registry[];
extern const size_t hsdr_registry_count;
/* Rows this build leaves out of the table and why ("cpu.*: ..." off x86-64), NULL when none: `hsdr list` says it. */
extern const char *const hsdr_registry_not_built;

/* A checking interface for variants whose only output is fp32 y: the variant's own timed path (prepare, prologue,
 * rows over all rows), so the code checked against the vectors is the code that is timed (kernels/via_rows.c). */
int hsdr_matvec_via_rows(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

/* The variant of that name, or NULL. */
const hsdr_variant *hsdr_variant_find(const char *name);
/* The production variant of a backend: the first variant of family production of that backend in the registry (the
 * row every other variant of the backend is compared with), or NULL. */
const hsdr_variant *hsdr_backend_production(const char *backend);
/* NULL when v can run here, else why not. */
const char *hsdr_variant_unavailable(const hsdr_variant *v);

#endif
