/* The real-model inputs of `hsdr run` (run_real.h): --gguf's tensors into the matrix, --activations checked. */
#include "run_real.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

/* Every kept tensor has a set of its width with a row for o->token. 0, or -1 (said). */
static int check_sets(const run_options *o, const hsdr_gguf_model *model, const hsdr_activations *acts)
{
    for (size_t i = 0; i < model->n; i++) {
        const hsdr_gguf_gemv *g = &model->gemv[i];
        const hsdr_act_set *s = hsdr_activations_find(acts, g->name);
        if (!s) {
            fprintf(stderr, "hsdr run: --activations %s: no set feeds tensor %s (expected %s.npy; narrow the "
                    "tensors with gguf_tensors)\n", acts->path, g->name, g->name);
            return -1;
        }
        if (s->K != g->K) {
            fprintf(stderr, "hsdr run: --activations %s: tensor %s: %s has width K = %d, the tensor's ne0 is %d\n",
                    acts->path, g->name, s->path, s->K, g->K);
            return -1;
        }
        if (o->token >= s->T) {
            fprintf(stderr, "hsdr run: --activations %s: tensor %s: --token %d, but %s holds %d tokens\n", acts->path,
                    g->name, o->token, s->path, s->T);
            return -1;
        }
    }
    return 0;
}

/* The file's tensors as the matrix's gguf cases. 0, or -1 (said). */
static int give_tensors(hsdr_run_real *r, hsdr_matrix_spec *spec)
{
    hsdr_matrix_tensor *t = malloc(sizeof *t * (r->model.n ? r->model.n : 1));
    if (!t) {
        fprintf(stderr, "hsdr run: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < r->model.n; i++)
        t[i] = (hsdr_matrix_tensor){r->model.gemv[i].name, r->model.gemv[i].K, r->model.gemv[i].N};
    if (hsdr_matrix_set_gguf(spec, t, r->model.n))
        printf("hsdr run --gguf: the matrix's shapes do not name gguf: its K x N grid, model shapes and extra cases "
               "are left out, the cases are the file's %zu tensors\n", r->model.n);
    free(t);
    return 0;
}

int hsdr_run_real_open(hsdr_run_real *r, const run_options *o, hsdr_matrix_spec *spec)
{
    memset(r, 0, sizeof *r);
    if (!o->gguf)
        return 0;
    char err[1024];
    if (hsdr_gguf_model_open(&r->model, o->gguf, hsdr_matrix_gguf_globs(spec), err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: --gguf: %s\n", err);
        return -1;
    }
    r->has_model = 1;
    r->hash = calloc(r->model.n ? r->model.n : 1, sizeof *r->hash);
    if (!r->hash) {
        fprintf(stderr, "hsdr run: out of memory\n");
        hsdr_run_real_close(r);
        return -1;
    }
    if (give_tensors(r, spec) != 0) {
        hsdr_run_real_close(r);
        return -1;
    }
    if (!o->activations)
        return 0;
    if (hsdr_activations_open(&r->acts, o->activations, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr run: --activations: %s\n", err);
        hsdr_run_real_close(r);
        return -1;
    }
    r->has_acts = 1;
    if (check_sets(o, &r->model, &r->acts) != 0) {
        hsdr_run_real_close(r);
        return -1;
    }
    return 0;
}

void hsdr_run_real_attach(hsdr_run_real *r, run_state *rs)
{
    rs->model = r->has_model ? &r->model : NULL;
    rs->acts = r->has_acts ? &r->acts : NULL;
    rs->gguf_hash = r->hash;
}

void hsdr_run_real_context(const hsdr_run_real *r, cJSON *context)
{
    if (!r->has_model)
        return;
    cJSON *g = cJSON_AddObjectToObject(context, "gguf");
    cJSON_AddStringToObject(g, "path", r->model.path);
    cJSON_AddNumberToObject(g, "tensors", (double)r->model.n);
    cJSON_AddNumberToObject(g, "layers", r->model.n_layers);
}

void hsdr_run_real_close(hsdr_run_real *r)
{
    if (r->has_acts)
        hsdr_activations_close(&r->acts);
    if (r->has_model)
        hsdr_gguf_model_close(&r->model);
    free(r->hash);
    memset(r, 0, sizeof *r);
}
