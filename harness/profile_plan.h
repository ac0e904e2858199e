/* What `hsdr profile` measures: the GEMVs of one decode token in forward order (layer by layer, the head last) with
 * their weights, and the layer kinds the whole model is extrapolated from. Two sources:
 * - a model of shapes.h (--model): its GEMV shapes, seeded random PTQ1_0 weights; kinds "attention" and "other";
 * - a GGUF file (--gguf, gguf_model.h): its kept PTQ1_0 / PQ2_0 tensors, PTQ1_0 read in place from the mapping, PQ2_0
 *   converted losslessly. A layer's kind is the list of its tensors' short names ("ffn_gate,ffn_up,ffn_down"), so
 *   that layers of different structure (attention, Gated DeltaNet) are extrapolated apart. Tensors outside the
 *   layers are the head, except token_embd (a row lookup per token, not a GEMV), which is the head only when the
 *   file has no other one (tied embeddings, as llama.cpp uses it).
 * The first `layers` layers are measured (shapes.h: the model's own layer pattern; GGUF: the first layers holding a
 * kept tensor); every layer's bytes count in the whole model's floor. */
#ifndef HSDR_PROFILE_PLAN_H
#define HSDR_PROFILE_PLAN_H
#include <stddef.h>
#include <stdint.h>

#include "gguf_model.h"
#include "rng.h"

typedef struct {
    const char *tensor; /* short name: "attn_q", "ffn_down", "output" (the per-tensor breakdown's key) */
    const char *name;   /* the GGUF tensor's name; the short name for a shapes.h model */
    int layer;          /* -1: head */
    int kind;           /* index into the plan's kinds; -1: head */
    int K, N;
    const uint8_t *W;   /* N x K/128 PTQ1_0 blocks */
    size_t bytes;       /* N * K/128 * 28 */
    uint32_t type;      /* GGML_T_PTQ1_0 / GGML_T_PQ2_0 as stored; 0 for random weights */
    hsdr_dist dist;     /* the requested distribution, or gaussian where bonsai's WHT-1024 fold cannot apply */
} hsdr_profile_gemv;

typedef struct {
    char *name;         /* "attention" / "other", or the layer's tensors' short names, comma-separated */
    int layers_model, layers_measured;
} hsdr_profile_kind;

typedef struct {
    char *model;              /* the shapes.h name, or the GGUF file's base name without ".gguf" */
    hsdr_profile_gemv *g;     /* the measured GEMVs in forward order, the head last */
    size_t n;
    hsdr_profile_kind *kinds;
    int n_kinds;
    int layers_measured, layers_model;
    int head;                 /* the head is measured (and counted in the whole model) */
    uint64_t measured_bytes;  /* PTQ1_0 weight bytes of the measured GEMVs */
    uint64_t token_bytes;     /* PTQ1_0 weight bytes of the whole model's token (the head only when measured) */
    /* GGUF only (gguf = 1) */
    int gguf;
    hsdr_gguf_model file;
    const char *file_base;    /* the path's base name */
    uint64_t file_hash;       /* inspect.h's data_hash over the whole file */
    size_t n_kept;            /* ternary tensors kept by the globs (file.n) */
    int tied_head;            /* token_embd measured as the head */
    uint8_t *random_W;        /* shapes.h: the random weights of every GEMV, one block */
} hsdr_profile_plan;

/* The plan of a shapes.h model: layers (clipped to the model's), head, weights from seed. 0, or -1 with a message. */
int hsdr_profile_plan_model(hsdr_profile_plan *p, const char *model, int layers, int head, hsdr_dist dist,
                            uint64_t seed, char *err, size_t errlen);
/* The plan of a GGUF file: its ternary tensors matching globs (NULL: all); layers <= 0: every layer when the kept
 * tensors total at most HSDR_PROFILE_GGUF_ALL_BYTES, else 4. 0, or -1 with "PATH: ..." in err. */
enum { HSDR_PROFILE_DEFAULT_LAYERS = 4 };
#define HSDR_PROFILE_GGUF_ALL_BYTES ((uint64_t)256 << 20)
int hsdr_profile_plan_gguf(hsdr_profile_plan *p, const char *path, const char *globs, int layers, int head,
                           hsdr_dist dist, char *err, size_t errlen);
void hsdr_profile_plan_free(hsdr_profile_plan *p);

/* How the measured token is made cold on any cache size: every GEMV's weights in `copies` copies, token t reading
 * copy t mod copies of each, so that between two visits of one copy every other copy of the token is read: the
 * bytes cycled, copies x the token's PTQ1_0 bytes, exceed 4x the last-level cache. The fewest copies that do;
 * 1 (the weights read in place) when the token alone exceeds it, or when hot is asked for. Each set of copies (the
 * raw PTQ1_0 ones, or one variant's converted form) must fit the memory cap; when the copies needed do not, as
 * many as fit are rotated and the run is labelled not cold, with why. */
typedef struct {
    size_t copies;         /* >= 1 */
    uint64_t token_bytes;  /* the measured token's PTQ1_0 bytes */
    uint64_t bytes_cycled; /* copies x token_bytes */
    uint64_t llc_bytes, cap_bytes;
    size_t copies_needed;  /* the fewest copies cycling more than 4x the LLC */
    int cold;              /* bytes_cycled > 4 x llc_bytes */
    char why[320];         /* how it is cold, or why it is not */
} hsdr_profile_rotation;
void hsdr_profile_rotation_plan(uint64_t token_bytes, uint64_t llc_bytes, uint64_t cap_bytes, int hot,
                                hsdr_profile_rotation *r);

#endif
