/* The real-model inputs of `hsdr run` (--gguf FILE, --activations DIR, --token T): the model file's ternary tensors
 * handed to the matrix as its gguf cases, and the activation sets every kept tensor needs, checked before any case
 * runs (a missing set, a width other than the tensor's ne0 or too few tokens is an error naming the tensor). */
#ifndef HSDR_RUN_REAL_H
#define HSDR_RUN_REAL_H
#include <cjson/cJSON.h>

#include "activations.h"
#include "gguf_model.h"
#include "matrix_spec.h"
#include "run_case.h"

typedef struct {
    hsdr_gguf_model model;
    hsdr_activations acts;
    int has_model, has_acts;
    char (*hash)[17]; /* per kept tensor, its data_hash once a row needs it (run_case.c) */
} hsdr_run_real;

/* Open what o names (nothing when o->gguf is NULL) and give the file's tensors to spec. 0, or -1 with the message on
 * stderr (r is then closed). */
int hsdr_run_real_open(hsdr_run_real *r, const run_options *o, hsdr_matrix_spec *spec);
/* Point rs at r's model, sets and hashes (NULL where not given). */
void hsdr_run_real_attach(hsdr_run_real *r, run_state *rs);
/* The run context's "gguf" object (path, tensors, layers), when a model is open. */
void hsdr_run_real_context(const hsdr_run_real *r, cJSON *context);
void hsdr_run_real_close(hsdr_run_real *r);
#endif
