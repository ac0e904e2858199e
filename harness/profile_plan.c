/* The GEMVs `hsdr profile` measures, from a model of shapes.h or a GGUF file (profile_plan.h says which and how).
 * Depends on shapes.h, gguf_model.h, inspect.h (the file's data hash), inputs.h (random weights), timing.h (the
 * memory cap). */
#include "profile_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "inspect.h"
#include "ptq1_0.h"
#include "shapes.h"
#include "timing.h"
#include "util.h"

static uint64_t ptq1_0_bytes(int K, int N)
{
    return (uint64_t)N * (uint64_t)(K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
}

static int push(hsdr_profile_plan *p, size_t *cap, const hsdr_profile_gemv *g, char *err, size_t errlen)
{
    if (p->n == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 16;
        hsdr_profile_gemv *grown = realloc(p->g, grown_cap * sizeof *grown);
        if (!grown)
            return hsdr_errorf(err, errlen, "out of memory");
        p->g = grown, *cap = grown_cap;
    }
    p->g[p->n++] = *g;
    p->measured_bytes += g->bytes;
    return 0;
}

static hsdr_dist dist_for(hsdr_dist dist, int K)
{
    return dist == HSDR_DIST_BONSAI && K % 1024 != 0 ? HSDR_DIST_GAUSSIAN : dist;
}

/* The measured weights must fit the memory a timing setup may use (the converted copies live there). */
static int within_cap(const hsdr_profile_plan *p, char *err, size_t errlen)
{
    if (p->measured_bytes <= hsdr_timing_memory_cap())
        return 0;
    return hsdr_errorf(err, errlen,
                       "%d layers%s of %s need %llu bytes of weights, above the %zu-byte cap: use fewer --layers "
                       "or --no-head",
                       p->layers_measured, p->head ? " + head" : "", p->model,
                       (unsigned long long)p->measured_bytes, hsdr_timing_memory_cap());
}

int hsdr_profile_plan_model(hsdr_profile_plan *p, const char *model, int layers, int head, hsdr_dist dist,
                            uint64_t seed, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    const hsdr_model *m = hsdr_model_find(model);
    if (!m)
        return hsdr_errorf(err, errlen, "unknown model '%s'", model);
    if (layers <= 0)
        layers = HSDR_PROFILE_DEFAULT_LAYERS;
    if (layers > m->n_layers)
        layers = m->n_layers;
    p->layers_measured = layers, p->layers_model = m->n_layers, p->head = head;
    p->n_kinds = m->n_other ? 2 : 1;
    p->model = strdup(model);
    p->kinds = calloc(2, sizeof *p->kinds);
    if (!p->model || !p->kinds || !(p->kinds[0].name = strdup("attention")) ||
        (m->n_other && !(p->kinds[1].name = strdup("other")))) {
        hsdr_profile_plan_free(p);
        return hsdr_errorf(err, errlen, "out of memory");
    }
    p->kinds[0].layers_model = hsdr_model_attn_layers(m);
    if (m->n_other)
        p->kinds[1].layers_model = m->n_layers - p->kinds[0].layers_model;
    size_t cap = 0;
    for (int l = 0; l <= layers; l++) {
        const hsdr_gemv_shape *list = &m->head;
        int n = 1, kind = -1;
        if (l == layers && !head)
            break;
        if (l < layers) {
            kind = hsdr_model_layer_is_attn(m, l) ? 0 : 1;
            list = kind == 0 ? m->attn : m->other, n = kind == 0 ? m->n_attn : m->n_other;
            p->kinds[kind].layers_measured++;
        }
        for (int i = 0; i < n; i++) {
            const hsdr_profile_gemv g = {.tensor = list[i].tensor, .name = list[i].tensor, .layer = l < layers ? l : -1,
                                         .kind = kind, .K = list[i].K, .N = list[i].N,
                                         .bytes = ptq1_0_bytes(list[i].K, list[i].N),
                                         .dist = dist_for(dist, list[i].K)};
            if (push(p, &cap, &g, err, errlen) != 0) {
                hsdr_profile_plan_free(p);
                return -1;
            }
        }
    }
    p->token_bytes = hsdr_model_token_bytes(m) - (head ? 0 : hsdr_gemv_weight_bytes(&m->head));
    size_t block = 64; /* every GEMV's weights 64-byte aligned, as the timing setup's own copies are */
    for (size_t i = 0; i < p->n; i++)
        block += (p->g[i].bytes + 63) / 64 * 64;
    if (within_cap(p, err, errlen) != 0 || !(p->random_W = aligned_alloc(64, block))) {
        if (p->measured_bytes <= hsdr_timing_memory_cap())
            hsdr_errorf(err, errlen, "out of memory for %llu bytes of weights", (unsigned long long)p->measured_bytes);
        hsdr_profile_plan_free(p);
        return -1;
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    uint8_t *w = p->random_W;
    for (size_t i = 0; i < p->n; i++) {
        hsdr_random_ptq1_0(&rng, w, p->g[i].bytes / HSDR_PTQ1_0_BYTES);
        p->g[i].W = w;
        w += (p->g[i].bytes + 63) / 64 * 64;
    }
    return 0;
}

/* The kind of the layer whose tensors are g[0..n): found by its short names, or added. -1 when out of memory. */
static int kind_of(hsdr_profile_plan *p, const hsdr_gguf_gemv *g, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(g[i].short_name) + 1;
    char *name = malloc(len);
    if (!name)
        return -1;
    name[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(name, ",");
        strcat(name, g[i].short_name);
    }
    for (int k = 0; k < p->n_kinds; k++)
        if (strcmp(p->kinds[k].name, name) == 0) {
            free(name);
            return k;
        }
    hsdr_profile_kind *grown = realloc(p->kinds, (size_t)(p->n_kinds + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        return -1;
    }
    p->kinds = grown;
    p->kinds[p->n_kinds] = (hsdr_profile_kind){.name = name};
    return p->n_kinds++;
}

int hsdr_profile_plan_gguf(hsdr_profile_plan *p, const char *path, const char *globs, int layers, int head,
                           hsdr_dist dist, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (hsdr_gguf_model_open(&p->file, path, globs, err, errlen) != 0)
        return -1;
    p->gguf = 1, p->head = head, p->n_kept = p->file.n;
    const char *slash = strrchr(path, '/');
    p->file_base = slash ? slash + 1 : path;
    size_t base_len = strlen(p->file_base);
    if (base_len > 5 && strcmp(p->file_base + base_len - 5, ".gguf") == 0)
        base_len -= 5;
    if (!(p->model = strndup(p->file_base, base_len))) {
        hsdr_profile_plan_free(p);
        return hsdr_errorf(err, errlen, "out of memory");
    }
    p->file_hash = hsdr_inspect_hash(p->file.file.base, p->file.file.size);
    const hsdr_gguf_gemv *t = p->file.gemv;
    const size_t nt = p->file.n;
    /* the head: the tensors outside the layers, token_embd only when there is no other (tied embeddings) */
    int other_head = 0;
    for (size_t i = 0; i < nt; i++)
        other_head |= t[i].layer < 0 && strcmp(t[i].short_name, "token_embd") != 0;
    /* the layers (kept tensors come by layer, the head last): kinds, the default count, the whole token's bytes */
    uint64_t layer_bytes = 0, head_bytes = 0;
    int *layer_kind = calloc(nt ? nt : 1, sizeof(int)); /* per distinct layer, in order */
    if (!layer_kind) {
        hsdr_profile_plan_free(p);
        return hsdr_errorf(err, errlen, "out of memory");
    }
    for (size_t i = 0; i < nt;) {
        size_t j = i;
        while (j < nt && t[j].layer == t[i].layer)
            j++;
        if (t[i].layer >= 0) {
            const int k = kind_of(p, &t[i], j - i);
            if (k < 0) {
                free(layer_kind);
                hsdr_profile_plan_free(p);
                return hsdr_errorf(err, errlen, "out of memory");
            }
            layer_kind[p->layers_model++] = k;
            p->kinds[k].layers_model++;
        }
        for (size_t q = i; q < j; q++) {
            const uint64_t b = ptq1_0_bytes(t[q].K, t[q].N);
            if (t[q].layer >= 0)
                layer_bytes += b;
            else if (other_head ? strcmp(t[q].short_name, "token_embd") != 0 : 1)
                head_bytes += b;
        }
        i = j;
    }
    if (layers <= 0)
        layers = layer_bytes + head_bytes <= HSDR_PROFILE_GGUF_ALL_BYTES ? p->layers_model
                                                                         : HSDR_PROFILE_DEFAULT_LAYERS;
    p->layers_measured = layers < p->layers_model ? layers : p->layers_model;
    p->token_bytes = layer_bytes + (head ? head_bytes : 0);
    size_t cap = 0;
    int li = -1, prev = -1;
    for (size_t i = 0; i < nt; i++) {
        if (t[i].layer >= 0 && t[i].layer != prev)
            li++, prev = t[i].layer;
        const int is_head = t[i].layer < 0;
        if (is_head && (!head || (other_head && strcmp(t[i].short_name, "token_embd") == 0)))
            continue;
        if (!is_head && li >= p->layers_measured)
            continue;
        const hsdr_profile_gemv g = {.tensor = t[i].short_name, .name = t[i].name, .layer = t[i].layer,
                                     .kind = is_head ? -1 : layer_kind[li], .K = t[i].K, .N = t[i].N, .W = t[i].W,
                                     .bytes = ptq1_0_bytes(t[i].K, t[i].N), .type = t[i].type,
                                     .dist = dist_for(dist, t[i].K)};
        p->tied_head |= is_head && strcmp(t[i].short_name, "token_embd") == 0;
        if (!is_head && (i == 0 || t[i - 1].layer != t[i].layer))
            p->kinds[g.kind].layers_measured++;
        if (push(p, &cap, &g, err, errlen) != 0) {
            free(layer_kind);
            hsdr_profile_plan_free(p);
            return -1;
        }
    }
    free(layer_kind);
    if (p->n == 0) {
        hsdr_errorf(err, errlen, "%s: no GEMV to measure: the %zu kept tensor(s) are outside the layers and "
                    "--no-head leaves out the head", path, nt);
        hsdr_profile_plan_free(p);
        return -1;
    }
    if (within_cap(p, err, errlen) != 0) {
        hsdr_profile_plan_free(p);
        return -1;
    }
    return 0;
}

void hsdr_profile_plan_free(hsdr_profile_plan *p)
{
    if (p->gguf)
        hsdr_gguf_model_close(&p->file);
    for (int k = 0; p->kinds && k < p->n_kinds; k++)
        free(p->kinds[k].name);
    free(p->kinds);
    free(p->g);
    free(p->model);
    free(p->random_W);
    memset(p, 0, sizeof *p);
}

/* bytes as "1.26 GB", "610.0 MB", "36.7 kB" or "900 bytes" */
static const char *fmt_bytes(uint64_t b, char *buf, size_t n)
{
    if (b >= 1000000000u)
        snprintf(buf, n, "%.2f GB", b / 1e9);
    else if (b >= 1000000u)
        snprintf(buf, n, "%.1f MB", b / 1e6);
    else if (b >= 1000u)
        snprintf(buf, n, "%.1f kB", b / 1e3);
    else
        snprintf(buf, n, "%llu bytes", (unsigned long long)b);
    return buf;
}

void hsdr_profile_rotation_plan(uint64_t token_bytes, uint64_t llc_bytes, uint64_t cap_bytes, int hot,
                                hsdr_profile_rotation *r)
{
    memset(r, 0, sizeof *r);
    const uint64_t tb = token_bytes ? token_bytes : 1, four_llc = 4 * llc_bytes;
    r->token_bytes = token_bytes, r->llc_bytes = llc_bytes, r->cap_bytes = cap_bytes;
    r->copies_needed = (size_t)(four_llc / tb + 1); /* the fewest n with n x tb > 4 x llc */
    const uint64_t fit = cap_bytes / tb;
    r->copies = hot ? 1 : r->copies_needed <= fit ? r->copies_needed : fit > 1 ? (size_t)fit : 1;
    r->bytes_cycled = (uint64_t)r->copies * token_bytes;
    r->cold = r->bytes_cycled > four_llc;
    char tok[32], llc[32], cyc[32], cap[32];
    fmt_bytes(token_bytes, tok, sizeof tok), fmt_bytes(llc_bytes, llc, sizeof llc);
    fmt_bytes(r->bytes_cycled, cyc, sizeof cyc), fmt_bytes(cap_bytes, cap, sizeof cap);
    if (r->cold && r->copies == 1)
        snprintf(r->why, sizeof r->why, "cold: the %s token alone is over 4x the %s last-level cache", tok, llc);
    else if (r->cold)
        snprintf(r->why, sizeof r->why, "cold: %zu token copies, %s cycled, over 4x the %s last-level cache",
                 r->copies, cyc, llc);
    else if (hot)
        snprintf(r->why, sizeof r->why, "not cold (--hot): the %s token read in place, not over 4x the %s "
                 "last-level cache: partly cache-resident", tok, llc);
    else
        snprintf(r->why, sizeof r->why, "not cold: %zu copies of the %s token are needed to exceed 4x the %s "
                 "last-level cache, the %s memory cap holds %zu: partly cache-resident", r->copies_needed, tok, llc,
                 cap, r->copies);
}
