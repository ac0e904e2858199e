/* The run's cases (block of `hsdr run`): what the command asked for (run_options), the state of a run (its matrix,
 * its pinned pools, its context), and hsdr_run_cases, which runs the cases of the matrix configuration by
 * configuration (the cases sharing inputs, threads and mode): seeded inputs, validation against the reference first
 * (a failing case is recorded and never timed), then every case and its backend's production variant timed together
 * in rounds, hot or cold, with per-stage timing, a few configurations in flight so that each one's `visits` visits
 * are spread over the run. Depends on matrix.h, threads.h and cJSON; nothing of the command or of the other run_*
 * blocks. */
#ifndef HSDR_RUN_CASE_H
#define HSDR_RUN_CASE_H
#include <cjson/cJSON.h>
#include <stddef.h>

#include "activations.h"
#include "gguf_model.h"
#include "matrix.h"
#include "threads.h"

enum stage_timing { STAGES_BOTH, STAGES_ALONE, STAGES_ABLATION, STAGES_NONE };

typedef struct {
    const char *matrix_path, *filter, *out_dir;
    int shard_i, shard_n;
    const char **sets;
    int nsets;
    enum stage_timing stages;
    int dry_run, quiet, resume;
    const char *gguf;        /* --gguf FILE, or NULL */
    const char *activations; /* --activations DIR, or NULL */
    int token;               /* --token T: the row of each activation set the gguf cases use */
} run_options;

/* Thread pools: one per thread count, created on first use, pinned. */
typedef struct {
    hsdr_pool *pool[65];
} pools;

typedef struct {
    const hsdr_matrix *m;
    const run_options *opt;
    /* --gguf: the weights of the cases whose shape is "gguf:NAME" (NULL: none); gguf_hash[i] the data_hash of
     * model->gemv[i]'s stored bytes, "" until first needed */
    const hsdr_gguf_model *model;
    char (*gguf_hash)[17];
    /* --activations: the inputs of the gguf cases (token opt->token of the set feeding each tensor); NULL: drawn */
    const hsdr_activations *acts;
    pools pools;
    cJSON *context;
    double t_start; /* hsdr_now_ns() when the cases started */
} run_state;

/* Run the cases of rs->m whose rows[i] is NULL (the others were kept by --resume), filling rows[i]; done: the rows
 * kept. Between passes stop() is polled: non-zero ends the run at that boundary (the configurations in flight leave
 * no rows). row_done(rs, row, ctx) is called for each finished row, at once (the journal). Returns the rows done. */
size_t hsdr_run_cases(run_state *rs, cJSON **rows, size_t done, int (*stop)(void),
                      void (*row_done)(const run_state *rs, cJSON *row, void *ctx), void *ctx);
/* What is known only as the run goes on, added to a context: the ceilings measured and the pools' pinning. */
void hsdr_run_add_facts(cJSON *context, const pools *p);
/* Destroy the pools made. */
void hsdr_run_pools_free(pools *p);

#endif
