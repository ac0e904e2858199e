/* Real activations: the GEMV inputs of a model captured for a prompt (docs/real-model.md says how).
 *
 * The activation file format: a directory holding one NumPy .npy file per ternary weight tensor, named after the
 * GGUF tensor it feeds ("blk.0.ffn_gate.weight.npy"), each a 2-D C-order array of shape (T, K) -- T tokens, K the
 * tensor's ne0 -- of dtype '<f4' (also '<f2' and '<f8', converted to float), .npy format versions 1.0-3.0 (npy.h).
 * A single .npy file (not a directory) is also accepted: one set named after the file's base name. In a directory,
 * files whose names do not end in ".npy" are left alone; one that does and is malformed refuses the whole path.
 * In Python: np.save(f"{dir}/{tensor}.npy", x.astype(np.float32)) for x of shape (T, K). */
#ifndef HSDR_ACTIVATIONS_H
#define HSDR_ACTIVATIONS_H
#include <stddef.h>

typedef struct {
    char *name;   /* the tensor it feeds: the file name without ".npy" */
    char *path;
    int T, K;     /* tokens, width */
    float *x;     /* T x K, row-major */
} hsdr_act_set;

typedef struct {
    char *path;
    hsdr_act_set *sets;  /* sorted by name */
    size_t n;
} hsdr_activations;

/* 0, or -1 with "FILE: offset N: FIELD: what" (bad magic, version, header dict, dtype, fortran_order, shape,
 * truncated data; NaN/Inf values: "FILE: offset N: element (t, k): ...") in err; a directory without a .npy file,
 * or a path that is neither a directory nor a regular file: "PATH: what". */
int hsdr_activations_open(hsdr_activations *a, const char *path, char *err, size_t errlen);
/* The set feeding tensor (a GGUF tensor name, with or without ".weight"), or NULL. */
const hsdr_act_set *hsdr_activations_find(const hsdr_activations *a, const char *tensor);
void hsdr_activations_close(hsdr_activations *a);

#endif
