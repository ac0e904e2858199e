/* The ternary GEMVs of a GGUF model file: its PTQ1_0 tensors as stored and its PQ2_0 tensors converted to PTQ1_0
 * losslessly (the same trits packed as the reference packs them, with the same fp16 d), in forward order, for the
 * commands that run on real weights (`run --gguf`, `check --gguf`, `profile --gguf`). gguf.h reads the file.
 *
 * Kept: 2-D tensors of type PTQ1_0 (143) or PQ2_0 (142) whose name matches one of the comma-separated globs
 * (fnmatch; NULL or "" keeps all). Refused (exit 2 in the commands, "PATH: tensor NAME: what" in err): no ternary
 * tensor matches; a kept tensor with more than 2 dims (ne2 or ne3 above 1), ne0 not a multiple of 128, ne0 or ne1
 * above INT_MAX; a PQ2_0 block holding code 3 (+2: not ternary; spec/ptq1_0.md section 2): tensor, block and weight
 * named. Order: by layer (N of "blk.N."), then file order; tensors outside the layers (output.weight) last. */
#ifndef HSDR_GGUF_MODEL_H
#define HSDR_GGUF_MODEL_H
#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

typedef struct {
    char *name;        /* GGUF tensor name, e.g. "blk.0.ffn_gate.weight" */
    char *short_name;  /* the name without "blk.N." and ".weight": "ffn_gate", "output" */
    int layer;         /* N of "blk.N.", -1 for tensors outside the layers (output.weight) */
    int K, N;          /* ne0 = input width (multiple of 128), ne1 = output rows; 2-D tensors only */
    uint32_t type;     /* GGML_T_PTQ1_0 or GGML_T_PQ2_0, as stored */
    const uint8_t *W;  /* N x K/128 PTQ1_0 blocks (28 bytes): the mapped file's bytes, or the converted copy */
} hsdr_gguf_gemv;

typedef struct {
    gguf_file file;
    char *path;
    int n_layers;             /* 1 + the largest blk.N among the kept tensors (0 if none) */
    hsdr_gguf_gemv *gemv;     /* kept tensors in forward order: by layer, then file order; layer -1 last */
    size_t n;
} hsdr_gguf_model;

/* Open path and keep its PTQ1_0/PQ2_0 tensors whose GGUF name matches one of the comma-separated fnmatch globs
 * (NULL or "" = all). 0, or -1 with "PATH: ..." in err (no ternary tensor matched, a bad tensor, a PQ2_0 code 3,
 * K not a multiple of 128, more than 2 dims ...). */
int hsdr_gguf_model_open(hsdr_gguf_model *m, const char *path, const char *globs, char *err, size_t errlen);
void hsdr_gguf_model_close(hsdr_gguf_model *m);

/* The kept tensor of that GGUF name, or NULL. */
const hsdr_gguf_gemv *hsdr_gguf_model_find(const hsdr_gguf_model *m, const char *name);
/* PQ2_0 -> PTQ1_0 of nblocks blocks (in: 34 bytes each, out: 28 each). -1 at the first block holding a code 3, with
 * *bad_block and *bad_weight (0..127) set; 0 when all are ternary. */
int hsdr_pq2_0_blocks_to_ptq1_0(const uint8_t *in, size_t nblocks, uint8_t *out, size_t *bad_block, int *bad_weight);

#endif
