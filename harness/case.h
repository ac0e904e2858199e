/* One benchmark case: a point of the experiment matrix. Its canonical key string is the filter key, the display
 * name and the results key (one format, produced by hsdr_case_key only). */
#ifndef HSDR_CASE_H
#define HSDR_CASE_H
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "rng.h"

/* The most activation columns a case takes (the widest multi-column kernel, cuda.cols). */
#define HSDR_CASE_MAX_COLS 8
/* Room for a shape: "model/tensor" or "gguf:" + a GGUF tensor name (at most 64 bytes). */
#define HSDR_CASE_SHAPE_LEN 80

typedef enum { HSDR_MODE_HOT, HSDR_MODE_COLD, HSDR_MODE_COUNT } hsdr_mode;
const char *hsdr_mode_name(hsdr_mode m);           /* "hot" | "cold" */
int hsdr_mode_from_name(const char *name, hsdr_mode *m); /* 0 or -1 */

typedef struct {
    const hsdr_variant *variant;
    int K, N;      /* K a multiple of 128 */
    int R;         /* rows sharing one built activation tile (state-set variants); 1 elsewhere */
    int cols;      /* activation columns through one read of the weights, 1..HSDR_CASE_MAX_COLS; 1 unless
                      variant->max_cols > 1 (0, in a case built outside the matrix, reads as 1) */
    int threads;
    hsdr_dist dist;
    hsdr_mode mode;
    int flns_F, flns_b; /* meaningful when variant->uses_flns */
    char shape[HSDR_CASE_SHAPE_LEN]; /* "bonsai2-27b/ffn_gate" (a model shape), "gguf:blk.0.ffn_gate.weight" (a tensor
                                        of the --gguf file), else "" */
    uint64_t seed;  /* inputs are drawn from this seed (derived from the matrix seed and the key) */
} hsdr_case;

/* "variant=ref.direct K=5120 N=256 R=1 threads=1 dist=gaussian mode=hot" (+ " cols=4" when the variant takes several
 * columns and cols > 1, so that one-column keys, and those of results files from before the cols axis, stay as they
 * were; + " F=8 b=12" for variants that use fLNS parameters; + " shape=..." when set). */
void hsdr_case_key(const hsdr_case *c, char *buf, size_t n);
/* FNV-1a of the data axes mixed with the matrix seed, 53 bits (exact in JSON): the case's input seed, independent
 * of case order, variant, cols and sharding (the extra columns are drawn from the same seed). */
uint64_t hsdr_case_seed(const hsdr_case *c, uint64_t matrix_seed);

#endif
