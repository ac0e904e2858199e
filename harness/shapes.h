/* Real batch-1 decode GEMV shapes of the ternary Bonsai models (shared/spec/shapes.md): the one table the experiment
 * matrix (`shapes:` section) and `hsdr profile` read. K = input width, N = output rows; tensor names follow GGUF
 * (the output head is "output"). */
#ifndef HSDR_SHAPES_H
#define HSDR_SHAPES_H
#include <stddef.h>
#include <stdint.h>

/* One GEMV. input: the activation vector it reads; GEMVs of one layer with the same input can share one encoded
 * activation (that is where activation state sets get reused across many rows). */
typedef struct {
    const char *tensor;
    int K, N;
    const char *input;
} hsdr_gemv_shape;

typedef struct {
    const char *name; /* "bonsai2-27b", "bonsai-8b", "bonsai-4b" */
    const char *description;
    int n_layers;
    /* Layer i is full attention iff i >= attn_first && (i - attn_first) % attn_every == 0; the others are the
     * "other" kind (Gated DeltaNet for bonsai2-27b). attn_first = 0, attn_every = 1: all attention. */
    int attn_first, attn_every;
    const hsdr_gemv_shape *attn;  /* GEMVs of one attention layer */
    int n_attn;
    const hsdr_gemv_shape *other; /* GEMVs of one non-attention layer (NULL, 0 for all-attention models) */
    int n_other;
    hsdr_gemv_shape head;         /* output head, once per token */
} hsdr_model;

/* The model of that name, or NULL. */
const hsdr_model *hsdr_model_find(const char *name);
/* All models; *count = how many. */
const hsdr_model *hsdr_models(size_t *count);

/* 1 when layer i of m is a full-attention layer. */
int hsdr_model_layer_is_attn(const hsdr_model *m, int layer);
/* Number of attention layers of m (the rest are "other"). */
int hsdr_model_attn_layers(const hsdr_model *m);
/* The GEMV named tensor (searched in attn, other, then the head), or NULL. A name found in both layer kinds (the FFN
 * tensors) has the same shape in both. */
const hsdr_gemv_shape *hsdr_model_tensor(const hsdr_model *m, const char *tensor);
/* How many times per decoded token that tensor's GEMV runs (0 when unknown). */
int hsdr_model_tensor_per_token(const hsdr_model *m, const char *tensor);
/* Distinct tensors of m in forward order (other-layer tensors first, then attention-only ones, the head last): writes
 * the first min(count, cap) to out and returns count (cap 0, out NULL: just count). */
size_t hsdr_model_tensors(const hsdr_model *m, const hsdr_gemv_shape **out, size_t cap);

/* PTQ1_0 bytes of one GEMV's weights: N * K/128 * 28 (one 28-byte block per 128 weights). */
uint64_t hsdr_gemv_weight_bytes(const hsdr_gemv_shape *s);
/* PTQ1_0 weight bytes read per decoded token: every GEMV of every layer plus the head. */
uint64_t hsdr_model_token_bytes(const hsdr_model *m);

#endif
