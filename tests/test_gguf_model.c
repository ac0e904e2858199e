/* The ternary GEMVs of a GGUF file (harness/gguf_model.c): a GGUF written here with random PTQ1_0 and PQ2_0 tensors
 * (the PQ2_0 ones made from random PTQ1_0 blocks) under a printed seed, read back: every kept tensor's K, N, layer,
 * names and order, and every block of the converted PQ2_0 tensors equal, byte for byte, to the PTQ1_0 block it came
 * from (the reference packing of the same trits and d); the globs; hostile tensors (a PQ2_0 code 3, K not a multiple
 * of 128 is refused by the reader, 3 dims, no match) refused with the tensor named. With a GGUF path as argument
 * (tests/data/gguf/model.gguf in ctest) also: every kept tensor of that file decoded from its stored layout and from
 * the loader's PTQ1_0, compared weight by weight and scale by scale. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_model.h"
#include "ptq1_0.h"
#include "random_ptq1_0.h"
#include "rng.h"
#include "testing.h"

typedef struct {
    const char *name;
    uint32_t type, n_dims;
    uint64_t dims[3];
    uint8_t *data; /* in the type's layout */
    size_t bytes;
    uint8_t *ptq;  /* the PTQ1_0 blocks it holds */
} tensor_spec;

static void put(FILE *f, const void *p, size_t n) { fwrite(p, 1, n, f); }
static void put_u32(FILE *f, uint32_t v) { put(f, &v, 4); }
static void put_u64(FILE *f, uint64_t v) { put(f, &v, 8); }

/* A GGUF v3 (little-endian host assumed, as the reader) with no metadata and these tensors, alignment 32. */
static void write_gguf(const char *path, const tensor_spec *t, size_t n)
{
    FILE *f = fopen(path, "wb");
    put(f, "GGUF", 4);
    put_u32(f, 3);
    put_u64(f, n);
    put_u64(f, 0);
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        put_u64(f, strlen(t[i].name));
        put(f, t[i].name, strlen(t[i].name));
        put_u32(f, t[i].n_dims);
        for (uint32_t d = 0; d < t[i].n_dims; d++)
            put_u64(f, t[i].dims[d]);
        put_u32(f, t[i].type);
        put_u64(f, off);
        off += (t[i].bytes + 31) / 32 * 32;
    }
    static const uint8_t zeros[32];
    long pos = ftell(f);
    put(f, zeros, (size_t)((32 - pos % 32) % 32));
    for (size_t i = 0; i < n; i++) {
        put(f, t[i].data, t[i].bytes);
        put(f, zeros, (32 - t[i].bytes % 32) % 32);
    }
    fclose(f);
}

static void make_tensor(hsdr_rng *r, tensor_spec *t, const char *name, uint32_t type, int K, int N)
{
    const size_t blocks = (size_t)N * (size_t)(K / HSDR_QK);
    *t = (tensor_spec){.name = name, .type = type, .n_dims = 2, .dims = {(uint64_t)K, (uint64_t)N, 1}};
    t->ptq = malloc(blocks * HSDR_PTQ1_0_BYTES);
    random_ptq1_0_blocks(r, t->ptq, blocks);
    /* some all-zero blocks and zero scales, as real checkpoints have */
    for (size_t b = 0; b < blocks; b += 7) {
        int8_t z[HSDR_QK] = {0};
        hsdr_ptq1_0_pack(z, b % 14 ? 0x3c00 : 0, t->ptq + b * HSDR_PTQ1_0_BYTES);
    }
    if (type == GGML_T_PTQ1_0) {
        t->bytes = blocks * HSDR_PTQ1_0_BYTES;
        t->data = malloc(t->bytes);
        memcpy(t->data, t->ptq, t->bytes);
    } else {
        t->bytes = blocks * HSDR_PQ2_0_BYTES;
        t->data = malloc(t->bytes);
        for (size_t b = 0; b < blocks; b++)
            hsdr_ptq1_0_to_pq2_0(t->ptq + b * HSDR_PTQ1_0_BYTES, t->data + b * HSDR_PQ2_0_BYTES);
    }
}

static void free_tensors(tensor_spec *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].data);
        free(t[i].ptq);
    }
}

static void test_written(hsdr_rng *r, const char *path)
{
    tensor_spec t[6];
    make_tensor(r, &t[0], "output.weight", GGML_T_PTQ1_0, 256, 24);
    make_tensor(r, &t[1], "blk.1.ffn_down.weight", GGML_T_PQ2_0, 384, 128);
    make_tensor(r, &t[2], "blk.0.attn_q.weight", GGML_T_PTQ1_0, 128, 64);
    make_tensor(r, &t[3], "blk.0.ffn_down.weight", GGML_T_PQ2_0, 256, 17);
    make_tensor(r, &t[4], "blk.10.ffn_gate.weight", GGML_T_PTQ1_0, 128, 3);
    t[5] = (tensor_spec){.name = "token_embd.weight", .type = 0, .n_dims = 1, .dims = {64}, .bytes = 256};
    t[5].data = calloc(1, 256);
    write_gguf(path, t, 6);
    hsdr_gguf_model m;
    char err[512];
    int rc = hsdr_gguf_model_open(&m, path, NULL, err, sizeof err);
    CHECK(rc == 0, "open: %s", err);
    if (rc != 0)
        return;
    /* forward order: layer 0 (file order), 1, 10, then outside the layers */
    static const int order[5] = {2, 3, 1, 4, 0};
    static const int layers[5] = {0, 0, 1, 10, -1};
    static const char *shorts[5] = {"attn_q", "ffn_down", "ffn_down", "ffn_gate", "output"};
    CHECK(m.n == 5, "kept %zu tensors, expected 5", m.n);
    CHECK(m.n_layers == 11, "n_layers %d, expected 11", m.n_layers);
    for (size_t i = 0; i < m.n && i < 5; i++) {
        const hsdr_gguf_gemv *g = &m.gemv[i];
        const tensor_spec *s = &t[order[i]];
        CHECK(strcmp(g->name, s->name) == 0, "gemv %zu: %s, expected %s", i, g->name, s->name);
        CHECK(strcmp(g->short_name, shorts[i]) == 0, "gemv %zu: short %s, expected %s", i, g->short_name, shorts[i]);
        CHECK(g->layer == layers[i], "gemv %zu: layer %d, expected %d", i, g->layer, layers[i]);
        CHECK(g->K == (int)s->dims[0] && g->N == (int)s->dims[1], "gemv %zu: %dx%d", i, g->K, g->N);
        CHECK(g->type == s->type, "gemv %zu: type %u", i, g->type);
        const size_t blocks = (size_t)g->N * (size_t)(g->K / HSDR_QK);
        for (size_t b = 0; b < blocks; b++)
            CHECK(memcmp(g->W + b * HSDR_PTQ1_0_BYTES, s->ptq + b * HSDR_PTQ1_0_BYTES, HSDR_PTQ1_0_BYTES) == 0,
                  "%s block %zu differs from the PTQ1_0 block it was made from", g->name, b);
        CHECK(hsdr_gguf_model_find(&m, s->name) == g, "find %s", s->name);
    }
    CHECK(hsdr_gguf_model_find(&m, "token_embd.weight") == NULL, "find: a float tensor is not kept");
    hsdr_gguf_model_close(&m);

    /* globs */
    rc = hsdr_gguf_model_open(&m, path, "blk.0.*,output.weight", err, sizeof err);
    CHECK(rc == 0 && m.n == 3 && m.n_layers == 1, "globs: rc %d, %zu kept, n_layers %d: %s", rc, m.n, m.n_layers,
          rc ? err : "");
    if (rc == 0)
        hsdr_gguf_model_close(&m);
    rc = hsdr_gguf_model_open(&m, path, "blk.9.*", err, sizeof err);
    CHECK(rc == -1 && strstr(err, "none of its 5 PTQ1_0/PQ2_0 tensors matches 'blk.9.*'"), "no match: %s", err);
    CHECK(m.n == 0 && m.gemv == NULL && m.path == NULL, "no match: model left empty");

    /* a code 3 in block 5 (row 2, block 1 of the row: K = 256) of blk.0.ffn_down, weight 77 */
    uint8_t *blk = t[3].data + 5 * HSDR_PQ2_0_BYTES;
    blk[2 + 77 / 4] |= (uint8_t)(3u << (2 * (77 % 4)));
    write_gguf(path, t, 6);
    rc = hsdr_gguf_model_open(&m, path, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "tensor blk.0.ffn_down.weight: PQ2_0 block 5 (row 2, block 1 of the row), weight "
                                  "77: code 3 (+2) is not ternary"), "code 3: %s", err);
    CHECK(strncmp(err, path, strlen(path)) == 0, "code 3: the message names the file: %s", err);
    /* the same file is fine when the glob leaves that tensor out */
    rc = hsdr_gguf_model_open(&m, path, "blk.1.*", err, sizeof err);
    CHECK(rc == 0 && m.n == 1, "code 3 left out by the glob: %s", rc ? err : "");
    if (rc == 0)
        hsdr_gguf_model_close(&m);

    /* a 3-D ternary tensor */
    t[3].n_dims = 3;
    t[3].dims[1] = 1;
    t[3].dims[2] = 17;
    for (size_t b = 0; b < 17 * 2; b++)
        hsdr_ptq1_0_to_pq2_0(t[3].ptq + b * HSDR_PTQ1_0_BYTES, t[3].data + b * HSDR_PQ2_0_BYTES);
    write_gguf(path, t, 6);
    rc = hsdr_gguf_model_open(&m, path, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "blk.0.ffn_down.weight (offset ") && strstr(err, "PQ2_0 with 3 dims"), "3-D: %s",
          err);
    /* no ternary tensor at all */
    write_gguf(path, &t[5], 1);
    rc = hsdr_gguf_model_open(&m, path, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "no PTQ1_0 or PQ2_0 tensor among its 1 tensors"), "none: %s", err);
    free_tensors(t, 6);
}

/* Every kept tensor of a GGUF file: stored layout and loader's PTQ1_0 decoded, compared weight by weight. */
static void test_file(const char *path)
{
    hsdr_gguf_model m;
    char err[512];
    int rc = hsdr_gguf_model_open(&m, path, NULL, err, sizeof err);
    CHECK(rc == 0, "open %s: %s", path, err);
    if (rc != 0)
        return;
    size_t pq = 0, weights = 0;
    for (size_t i = 0; i < m.n; i++) {
        const hsdr_gguf_gemv *g = &m.gemv[i];
        const gguf_tensor *t = NULL;
        for (uint64_t k = 0; k < m.file.n_tensors; k++)
            if (gguf_str_eq(m.file.tensors[k].name, g->name))
                t = &m.file.tensors[k];
        CHECK(t != NULL, "%s: not in the file", g->name);
        if (!t)
            continue;
        pq += g->type == GGML_T_PQ2_0;
        const size_t blocks = (size_t)g->N * (size_t)(g->K / HSDR_QK);
        for (size_t b = 0; b < blocks; b++) {
            int8_t got[HSDR_QK], want[HSDR_QK];
            uint16_t d_want;
            const uint8_t *w = g->W + b * HSDR_PTQ1_0_BYTES;
            hsdr_ptq1_0_unpack(w, got, HSDR_DECODE_INT);
            if (g->type == GGML_T_PTQ1_0) {
                hsdr_ptq1_0_unpack(t->data + b * HSDR_PTQ1_0_BYTES, want, HSDR_DECODE_INT);
                d_want = hsdr_ptq1_0_d_bits(t->data + b * HSDR_PTQ1_0_BYTES);
            } else {
                uint8_t codes[HSDR_QK];
                hsdr_pq2_0_unpack(t->data + b * HSDR_PQ2_0_BYTES, codes, &d_want);
                for (int j = 0; j < HSDR_QK; j++)
                    want[j] = (int8_t)(codes[j] - 1);
            }
            CHECK(hsdr_ptq1_0_d_bits(w) == d_want, "%s block %zu: d 0x%04x, stored 0x%04x", g->name, b,
                  hsdr_ptq1_0_d_bits(w), d_want);
            for (int j = 0; j < HSDR_QK; j++)
                CHECK(got[j] == want[j], "%s block %zu weight %d: %d, stored %d", g->name, b, j, got[j], want[j]);
            weights += HSDR_QK;
        }
    }
    CHECK(pq > 0, "%s: no PQ2_0 tensor to convert", path);
    printf("%s: %zu tensors (%zu PQ2_0), %zu weights equal to the stored ones\n", path, m.n, pq, weights);
    hsdr_gguf_model_close(&m);
}

int main(int argc, char **argv)
{
    hsdr_rng r;
    hsdr_rng_seed(&r, test_seed("gguf_model"));
    char path[] = "/tmp/hsdr-test-gguf-model-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        close(fd);
        test_written(&r, path);
        unlink(path);
    }
    for (int i = 1; i < argc; i++)
        test_file(argv[i]);
    return test_finish("gguf_model");
}
