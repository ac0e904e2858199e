/* The ternary GEMVs of a GGUF model file (gguf_model.h): the kept tensors, their layer and short names, forward
 * order, and the lossless PQ2_0 -> PTQ1_0 conversion. */
#include "gguf_model.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ptq1_0.h"
#include "util.h"

int hsdr_pq2_0_blocks_to_ptq1_0(const uint8_t *in, size_t nblocks, uint8_t *out, size_t *bad_block, int *bad_weight)
{
    int8_t t[HSDR_QK];
    for (size_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = in + b * HSDR_PQ2_0_BYTES;
        const int j = hsdr_pq2_0_to_ternary(blk, t);
        if (j >= 0) {
            *bad_block = b;
            *bad_weight = j;
            return -1;
        }
        hsdr_ptq1_0_pack(t, (uint16_t)(blk[0] | blk[1] << 8), out + b * HSDR_PTQ1_0_BYTES);
    }
    return 0;
}

/* layer N of "blk.N.REST" (REST returned in *rest), or -1 (*rest = name). */
static int layer_of(const char *name, const char **rest)
{
    *rest = name;
    if (strncmp(name, "blk.", 4) != 0 || name[4] < '0' || name[4] > '9')
        return -1;
    long n = 0;
    const char *p = name + 4;
    for (; *p >= '0' && *p <= '9' && n < INT_MAX / 10; p++)
        n = n * 10 + (*p - '0');
    if (*p != '.' || p[1] == '\0')
        return -1;
    *rest = p + 1;
    return (int)n;
}

/* The kept tensors' order: by layer, layer -1 last, then file order (index). */
typedef struct {
    hsdr_gguf_gemv g;
    size_t index;
} ordered;

static int cmp_forward(const void *a, const void *b)
{
    const ordered *x = a, *y = b;
    const unsigned lx = (unsigned)x->g.layer, ly = (unsigned)y->g.layer; /* -1 becomes the largest */
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static void gemv_free(hsdr_gguf_gemv *g)
{
    free(g->name);
    free(g->short_name);
    if (g->W && g->type != GGML_T_PTQ1_0)
        free((void *)g->W);
}

/* Fill g from tensor t (kept): 0, or -1 with the message. */
static int gemv_from(hsdr_gguf_gemv *g, const gguf_tensor *t, const char *path, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->name = gguf_str_dup(t->name);
    if (!g->name)
        return hsdr_errorf(err, errlen, "%s: out of memory", path);
    const char *type = gguf_ggml_type_name(t->type);
    const char *at = "tensor";
    if (t->n_dims < 2 || t->dims[2] != 1 || t->dims[3] != 1)
        return hsdr_errorf(err, errlen, "%s: %s %s (offset %llu): %s with %u dims: a GEMV needs a 2-D matrix "
                           "(ne0 = K inputs, ne1 = N rows)", path, at, g->name, (unsigned long long)t->info_offset,
                           type, t->n_dims);
    if (t->dims[0] % HSDR_QK != 0)
        return hsdr_errorf(err, errlen, "%s: %s %s (offset %llu): ne0 = %llu is not a multiple of %d", path, at,
                           g->name, (unsigned long long)t->info_offset, (unsigned long long)t->dims[0], HSDR_QK);
    if (t->dims[0] > INT_MAX || t->dims[1] > INT_MAX)
        return hsdr_errorf(err, errlen, "%s: %s %s (offset %llu): %llu x %llu is too large for a GEMV here", path,
                           at, g->name, (unsigned long long)t->info_offset, (unsigned long long)t->dims[0],
                           (unsigned long long)t->dims[1]);
    g->K = (int)t->dims[0];
    g->N = (int)t->dims[1];
    g->type = t->type;
    const char *rest;
    g->layer = layer_of(g->name, &rest);
    size_t len = strlen(rest);
    if (len > 7 && strcmp(rest + len - 7, ".weight") == 0)
        len -= 7;
    g->short_name = malloc(len + 1);
    if (!g->short_name)
        return hsdr_errorf(err, errlen, "%s: out of memory", path);
    memcpy(g->short_name, rest, len);
    g->short_name[len] = '\0';
    if (t->type == GGML_T_PTQ1_0) {
        g->W = t->data;
        return 0;
    }
    const size_t nblocks = (size_t)g->N * (size_t)(g->K / HSDR_QK);
    uint8_t *W = malloc(nblocks * HSDR_PTQ1_0_BYTES);
    if (!W)
        return hsdr_errorf(err, errlen, "%s: tensor %s: out of memory converting PQ2_0 (%zu bytes)", path, g->name,
                           nblocks * HSDR_PTQ1_0_BYTES);
    g->W = W;
    size_t bad_block;
    int bad_weight;
    if (hsdr_pq2_0_blocks_to_ptq1_0(t->data, nblocks, W, &bad_block, &bad_weight) != 0) {
        const size_t G = (size_t)g->K / HSDR_QK;
        return hsdr_errorf(err, errlen, "%s: offset %llu: tensor %s: PQ2_0 block %zu (row %zu, block %zu of the "
                           "row), weight %d: code 3 (+2) is not ternary", path,
                           (unsigned long long)(t->file_offset + bad_block * HSDR_PQ2_0_BYTES), g->name, bad_block,
                           bad_block / G, bad_block % G, bad_weight);
    }
    return 0;
}

int hsdr_gguf_model_open(hsdr_gguf_model *m, const char *path, const char *globs, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (gguf_open(&m->file, path, err, errlen) != 0)
        return -1;
    const int all = !globs || !globs[0];
    ordered *kept = NULL;
    size_t n = 0, ternary = 0;
    int rc = 0;
    for (uint64_t i = 0; i < m->file.n_tensors && rc == 0; i++) {
        const gguf_tensor *t = &m->file.tensors[i];
        if (t->type != GGML_T_PTQ1_0 && t->type != GGML_T_PQ2_0)
            continue;
        ternary++;
        char name[GGUF_MAX_NAME + 1];
        memcpy(name, t->name.ptr, t->name.len);
        name[t->name.len] = '\0';
        if (!all && !hsdr_glob_list_match(globs, name))
            continue;
        ordered *k = realloc(kept, sizeof *kept * (n + 1));
        if (!k) {
            rc = hsdr_errorf(err, errlen, "%s: out of memory", path);
            break;
        }
        kept = k;
        kept[n].index = (size_t)i;
        rc = gemv_from(&kept[n].g, t, path, err, errlen);
        n++;
    }
    if (rc == 0 && n == 0) {
        if (ternary == 0)
            rc = hsdr_errorf(err, errlen, "%s: no PTQ1_0 or PQ2_0 tensor among its %llu tensors", path,
                             (unsigned long long)m->file.n_tensors);
        else
            rc = hsdr_errorf(err, errlen, "%s: none of its %zu PTQ1_0/PQ2_0 tensors matches '%s' (globs of whole "
                             "GGUF names, e.g. 'blk.0.*,output.weight'; `hsdr inspect` lists them)", path, ternary,
                             globs);
    }
    if (rc == 0) {
        m->path = malloc(strlen(path) + 1);
        m->gemv = malloc(sizeof *m->gemv * n);
        if (!m->path || !m->gemv)
            rc = hsdr_errorf(err, errlen, "%s: out of memory", path);
    }
    if (rc != 0) {
        for (size_t i = 0; i < n; i++)
            gemv_free(&kept[i].g);
        free(kept);
        free(m->gemv);
        m->gemv = NULL;
        m->n = 0;
        hsdr_gguf_model_close(m);
        return -1;
    }
    strcpy(m->path, path);
    qsort(kept, n, sizeof *kept, cmp_forward);
    for (size_t i = 0; i < n; i++) {
        m->gemv[i] = kept[i].g;
        if (kept[i].g.layer + 1 > m->n_layers)
            m->n_layers = kept[i].g.layer + 1;
    }
    m->n = n;
    free(kept);
    return 0;
}

void hsdr_gguf_model_close(hsdr_gguf_model *m)
{
    for (size_t i = 0; i < m->n; i++)
        gemv_free(&m->gemv[i]);
    free(m->gemv);
    free(m->path);
    gguf_close(&m->file);
    memset(m, 0, sizeof *m);
}

const hsdr_gguf_gemv *hsdr_gguf_model_find(const hsdr_gguf_model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->gemv[i].name, name) == 0)
            return &m->gemv[i];
    return NULL;
}
