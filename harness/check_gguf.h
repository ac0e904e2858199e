/* `hsdr check --gguf FILE`: every selected variant validated against the reference on the real weights of a model
 * file (gguf_model.h), one fresh random activation per tensor under a printed seed; the same validation as
 * `hsdr run` does before it times a case (validate.h), the same pass/fail reporting as `hsdr check` on vector files
 * (check.h). */
#ifndef HSDR_CHECK_GGUF_H
#define HSDR_CHECK_GGUF_H
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "rng.h"

typedef struct {
    const char *path;  /* the GGUF file */
    const char *globs; /* --tensors: comma-separated globs of GGUF tensor names; NULL: every ternary tensor */
    uint64_t seed;     /* tensor i's activation is drawn from hsdr_check_gguf_tensor_seed(seed, i) */
    hsdr_dist dist;
    int rows;          /* check the first rows rows of each tensor (0: all) */
} check_gguf_options;

/* The activation seed of the i-th kept tensor (forward order). */
uint64_t hsdr_check_gguf_tensor_seed(uint64_t seed, size_t i);
/* Check every (tensor, selected variant that times rows or runs on a device and is available here): one line per
 * failing pair ("FAIL FILE tensor NAME (KxN) variant V: detail"; passing ones too with verbose), a line per tensor,
 * then "N passed, M failed" on out. Exit 0, 1 when a pair failed or none of the selected variants can run here, 2
 * for a file or tensor the loader refuses (message on stderr). */
int hsdr_check_gguf(const check_options *o, const check_gguf_options *g, FILE *out);

#endif
