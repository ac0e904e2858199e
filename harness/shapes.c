/* The model shape table (shared/spec/shapes.md). Activation names: attn_norm (RMSNorm'd hidden state entering the
 * mixer: attention or Gated DeltaNet), attn_ctx (attention context, gated), ssm_ctx (Gated DeltaNet output, normed
 * and gated), ffn_norm (RMSNorm'd hidden state entering the FFN), ffn_act (SwiGLU product), output_norm (final norm). */
#include "shapes.h"

#include <string.h>

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Ternary-Bonsai-2-27B: Qwen3.5-27B geometry, hidden 5120, FFN 17408, 64 layers, full attention every 4th (3..63). */
static const hsdr_gemv_shape b27_gdn[] = {
    {"attn_qkv", 5120, 10240, "attn_norm"},  {"attn_gate", 5120, 6144, "attn_norm"},
    {"ssm_out", 6144, 5120, "ssm_ctx"},      {"ffn_gate", 5120, 17408, "ffn_norm"},
    {"ffn_up", 5120, 17408, "ffn_norm"},     {"ffn_down", 17408, 5120, "ffn_act"},
};
static const hsdr_gemv_shape b27_attn[] = {
    {"attn_q", 5120, 12288, "attn_norm"},    {"attn_k", 5120, 1024, "attn_norm"},
    {"attn_v", 5120, 1024, "attn_norm"},     {"attn_output", 6144, 5120, "attn_ctx"},
    {"ffn_gate", 5120, 17408, "ffn_norm"},   {"ffn_up", 5120, 17408, "ffn_norm"},
    {"ffn_down", 17408, 5120, "ffn_act"},
};

/* Ternary Bonsai 8B: Qwen3-8B geometry, hidden 4096, FFN 12288, 36 attention layers, vocabulary 151936. */
static const hsdr_gemv_shape b8_attn[] = {
    {"attn_q", 4096, 4096, "attn_norm"},     {"attn_k", 4096, 1024, "attn_norm"},
    {"attn_v", 4096, 1024, "attn_norm"},     {"attn_output", 4096, 4096, "attn_ctx"},
    {"ffn_gate", 4096, 12288, "ffn_norm"},   {"ffn_up", 4096, 12288, "ffn_norm"},
    {"ffn_down", 12288, 4096, "ffn_act"},
};

/* Ternary Bonsai 4B: Qwen3-4B geometry, hidden 2560, FFN 9728, 36 attention layers, vocabulary 151936. */
static const hsdr_gemv_shape b4_attn[] = {
    {"attn_q", 2560, 4096, "attn_norm"},     {"attn_k", 2560, 1024, "attn_norm"},
    {"attn_v", 2560, 1024, "attn_norm"},     {"attn_output", 4096, 2560, "attn_ctx"},
    {"ffn_gate", 2560, 9728, "ffn_norm"},    {"ffn_up", 2560, 9728, "ffn_norm"},
    {"ffn_down", 9728, 2560, "ffn_act"},
};

static const hsdr_model models[] = {
    {.name = "bonsai2-27b",
     .description = "Ternary-Bonsai-2-27B (Qwen3.5-27B geometry, PTQ1_0): 48 Gated-DeltaNet + 16 full-attention layers",
     .n_layers = 64, .attn_first = 3, .attn_every = 4,
     .attn = b27_attn, .n_attn = N_OF(b27_attn), .other = b27_gdn, .n_other = N_OF(b27_gdn),
     .head = {"output", 5120, 248320, "output_norm"}},
    {.name = "bonsai-8b", .description = "Ternary Bonsai 8B (Qwen3-8B geometry): 36 attention layers",
     .n_layers = 36, .attn_first = 0, .attn_every = 1, .attn = b8_attn, .n_attn = N_OF(b8_attn),
     .head = {"output", 4096, 151936, "output_norm"}},
    {.name = "bonsai-4b", .description = "Ternary Bonsai 4B (Qwen3-4B geometry): 36 attention layers",
     .n_layers = 36, .attn_first = 0, .attn_every = 1, .attn = b4_attn, .n_attn = N_OF(b4_attn),
     .head = {"output", 2560, 151936, "output_norm"}},
};

const hsdr_model *hsdr_models(size_t *count)
{
    *count = sizeof models / sizeof models[0];
    return models;
}

const hsdr_model *hsdr_model_find(const char *name)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

int hsdr_model_layer_is_attn(const hsdr_model *m, int layer)
{
    return layer >= m->attn_first && (layer - m->attn_first) % m->attn_every == 0;
}

int hsdr_model_attn_layers(const hsdr_model *m)
{
    int n = 0;
    for (int i = 0; i < m->n_layers; i++)
        n += hsdr_model_layer_is_attn(m, i);
    return n;
}

static const hsdr_gemv_shape *find_in(const hsdr_gemv_shape *list, int n, const char *tensor)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].tensor, tensor) == 0)
            return &list[i];
    return NULL;
}

const hsdr_gemv_shape *hsdr_model_tensor(const hsdr_model *m, const char *tensor)
{
    const hsdr_gemv_shape *s = find_in(m->attn, m->n_attn, tensor);
    if (!s)
        s = find_in(m->other, m->n_other, tensor);
    if (!s && strcmp(m->head.tensor, tensor) == 0)
        s = &m->head;
    return s;
}

int hsdr_model_tensor_per_token(const hsdr_model *m, const char *tensor)
{
    int attn_layers = hsdr_model_attn_layers(m);
    int n = 0;
    if (find_in(m->attn, m->n_attn, tensor))
        n += attn_layers;
    if (find_in(m->other, m->n_other, tensor))
        n += m->n_layers - attn_layers;
    if (strcmp(m->head.tensor, tensor) == 0)
        n += 1;
    return n;
}

size_t hsdr_model_tensors(const hsdr_model *m, const hsdr_gemv_shape **out, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < m->n_other; i++) {
        if (n < cap)
            out[n] = &m->other[i];
        n++;
    }
    for (int i = 0; i < m->n_attn; i++) {
        if (find_in(m->other, m->n_other, m->attn[i].tensor))
            continue;
        if (n < cap)
            out[n] = &m->attn[i];
        n++;
    }
    if (n < cap)
        out[n] = &m->head;
    n++;
    return n;
}

uint64_t hsdr_gemv_weight_bytes(const hsdr_gemv_shape *s)
{
    return (uint64_t)s->N * (uint64_t)(s->K / 128) * 28u;
}

uint64_t hsdr_model_token_bytes(const hsdr_model *m)
{
    uint64_t attn = 0, other = 0;
    for (int i = 0; i < m->n_attn; i++)
        attn += hsdr_gemv_weight_bytes(&m->attn[i]);
    for (int i = 0; i < m->n_other; i++)
        other += hsdr_gemv_weight_bytes(&m->other[i]);
    uint64_t total = hsdr_gemv_weight_bytes(&m->head);
    for (int i = 0; i < m->n_layers; i++)
        total += hsdr_model_layer_is_attn(m, i) ? attn : other;
    return total;
}
