/* The free parameters of the streamed CUDA kernels (kernels/cuda/tma.cuh), and their parser: plain C, built with or
 * without CUDA, so that a build without a device tests what HSDR_TMA accepts and how it refuses the rest. */
#ifndef HSDR_CUDA_TMA_KNOBS_H
#define HSDR_CUDA_TMA_KNOBS_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { HSDR_TMA_MAX_STAGES = 8, HSDR_TMA_MAX_ROWS_PER_THREAD = 8, HSDR_TMA_MAX_THREADS = 512, HSDR_TMA_MAX_CTAS = 32 };

/* passes in flight per CTA (1..8), rows per thread in a pass (1..8: the activations held in registers serve them
 * all), threads per CTA aimed at (32..512), at most that many CTAs per SM (0: as many as fit; fewer leave room for
 * the next GEMV's kernels in a token), and when the first passes are requested: 1 before the kernel waits for its
 * activations (the encode kernel's, or the grid's own encode when fused), 0 after */
typedef struct hsdr_tma_knobs {
    int stages, rows_per_thread, threads, ctas_per_sm, early;
} hsdr_tma_knobs;

/* The defaults (the best token of the sweep: docs/perf-notes.md, issue 18 steps 2 and 3). */
hsdr_tma_knobs hsdr_tma_knobs_default(void);
/* "STAGES,ROWS,THREADS[,CTAS_PER_SM[,EARLY]]" (decimal integers in range, nothing else) into *kn; NULL or "": the
 * defaults. 0, or -1 with err naming the text, the field, its offset and the range wanted (*kn then holds the
 * defaults). */
int hsdr_tma_knobs_parse(const char *text, hsdr_tma_knobs *kn, char *err, size_t errlen);
/* hsdr_tma_knobs_parse of the environment's HSDR_TMA, read once per process (launches ask for the knobs on every
 * call); err may be NULL. */
int hsdr_tma_knobs_of(hsdr_tma_knobs *kn, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
