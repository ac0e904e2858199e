/* `hsdr check --gguf FILE` (check_gguf.h): the variants validated on a model file's real weights. */
#include "check_gguf.h"

#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "gguf_model.h"
#include "inputs.h"
#include "kernel.h"
#include "ptq1_0.h"
#include "util.h"
#include "validate.h"

uint64_t hsdr_check_gguf_tensor_seed(uint64_t seed, size_t i)
{
    /* splitmix64 of (seed, i): neighbouring tensors get unrelated activations */
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (z ^ (z >> 31)) & ((1ULL << 53) - 1);
}

static int selected(const hsdr_variant *v, const check_options *o)
{
    if (o->backend && strcmp(o->backend, v->backend) != 0)
        return 0;
    return (!o->variant || hsdr_glob_match(o->variant, v->name)) && hsdr_variant_timed(v);
}

int hsdr_check_gguf(const check_options *o, const check_gguf_options *g, FILE *out)
{
    hsdr_gguf_model m;
    char err[1024];
    if (hsdr_gguf_model_open(&m, g->path, g->globs, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr check: --gguf: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    int runnable = 0;
    for (size_t j = 0; j < hsdr_registry_count; j++) {
        const hsdr_variant *v = &hsdr_registry[j];
        if (!selected(v, o))
            continue;
        const char *why = hsdr_variant_unavailable(v);
        if (why)
            fprintf(out, "skip: variant %s unavailable here: %s\n", v->name, why);
        else
            runnable++;
    }
    if (runnable == 0) {
        fprintf(stderr, "hsdr check: none of the selected variants can run here (see the skip lines)\n");
        hsdr_gguf_model_close(&m);
        return HSDR_EXIT_FAIL;
    }
    fprintf(out, "hsdr check --gguf %s: %zu tensors, %d variants, activations %s, seed %llu (replay with --seed "
            "%llu)\n", g->path, m.n, runnable, hsdr_dist_name(g->dist), (unsigned long long)g->seed,
            (unsigned long long)g->seed);
    long passed = 0, failed = 0;
    int rc = HSDR_EXIT_OK;
    for (size_t i = 0; i < m.n && rc == HSDR_EXIT_OK; i++) {
        const hsdr_gguf_gemv *t = &m.gemv[i];
        const int N = g->rows > 0 && g->rows < t->N ? g->rows : t->N;
        const uint64_t seed = hsdr_check_gguf_tensor_seed(g->seed, i);
        hsdr_inputs in;
        if (hsdr_inputs_build_from(&in, t->K, N, t->W, NULL, g->dist, seed, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr check: --gguf %s: tensor %s (%dx%d): %s\n", g->path, t->name, t->K, N, err);
            rc = HSDR_EXIT_USAGE;
            break;
        }
        long tp = 0, tf = 0;
        for (size_t j = 0; j < hsdr_registry_count; j++) {
            const hsdr_variant *v = &hsdr_registry[j];
            if (!selected(v, o) || hsdr_variant_unavailable(v))
                continue;
            hsdr_case c = {.variant = v, .K = t->K, .N = N, .R = 1, .cols = 1, .threads = 1, .dist = g->dist,
                           .mode = HSDR_MODE_HOT, .flns_F = 8, .flns_b = 12, .seed = seed};
            snprintf(c.shape, sizeof c.shape, "gguf:%s", t->name);
            hsdr_validation val;
            hsdr_validate(&c, &in, &val);
            if (!val.passed) {
                tf++;
                fprintf(out, "FAIL %s tensor %s (%dx%d) variant %s: %s\n", g->path, t->name, t->K, N, v->name,
                        val.detail);
            } else {
                tp++;
                if (o->verbose)
                    fprintf(out, "ok   %s tensor %s variant %s: %s\n", g->path, t->name, v->name, val.detail);
            }
        }
        hsdr_inputs_free(&in);
        fprintf(out, "%s: tensor %s (%s, %dx%d%s): %ld checks passed, %ld failed\n", g->path, t->name,
                t->type == GGML_T_PQ2_0 ? "PQ2_0 -> PTQ1_0" : "PTQ1_0", t->K, N, N < t->N ? ", first rows" : "", tp,
                tf);
        passed += tp;
        failed += tf;
    }
    hsdr_gguf_model_close(&m);
    if (rc != HSDR_EXIT_OK)
        return rc;
    fprintf(out, "%ld passed, %ld failed\n", passed, failed);
    return failed ? HSDR_EXIT_FAIL : HSDR_EXIT_OK;
}
