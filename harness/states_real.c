/* `hsdr states --activations PATH` (states.h): the occupied LNS8 states per 128- and 64-lane tile and the LNS8 /
 * Q8_0 quantization errors of REAL captured activations (activations.h), one row per set (every token a vector),
 * one row over all sets, and beside them the modelled "bonsai" distribution at each distinct width of the sets
 * (--vectors vectors each, --seed), so that real and modelled occupancy compare at the same K. The bonsai model
 * folds in 1024-wide chunks: a width that is not a multiple of 1024 is modelled by drawing the next multiple of 1024
 * and keeping the first K values (the fold mixes a chunk's lanes evenly, so any K of them are alike). */
#include <stdlib.h>
#include <string.h>

#include "activations.h"
#include "inspect.h"
#include "rng.h"
#include "states.h"
#include "util.h"

static void print_row(cJSON *row, FILE *out)
{
    char *txt = cJSON_PrintUnformatted(row);
    fprintf(out, "%s\n", txt ? txt : "{}");
    cJSON_free(txt);
    cJSON_Delete(row);
}

/* The modelled bonsai distribution at width K: 0, or -1 with a message on stderr. */
static int modelled(const states_options *opt, int K, int width, FILE *out)
{
    const int W = (K + 1023) / 1024 * 1024;
    float *x = malloc(sizeof(float) * (size_t)W);
    if (!x) {
        fprintf(stderr, "hsdr states: out of memory\n");
        return -1;
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, opt->seed + (uint64_t)HSDR_DIST_BONSAI);
    states_acc acc;
    hsdr_states_acc_init(&acc);
    char err[256];
    int rc = 0;
    for (int v = 0; v < opt->vectors && rc == 0; v++) {
        hsdr_dist_fill(HSDR_DIST_BONSAI, &rng, x, (size_t)W, NULL);
        if (hsdr_states_acc_add(&acc, x, K, err, sizeof err) != 0) {
            fprintf(stderr, "hsdr states: modelled bonsai K = %d: %s\n", K, err);
            rc = -1;
        }
    }
    if (rc == 0 && opt->json) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "source", "modelled");
        cJSON_AddStringToObject(row, "distribution", "bonsai");
        cJSON_AddNumberToObject(row, "K", K);
        cJSON_AddNumberToObject(row, "drawn_K", W);
        cJSON_AddNumberToObject(row, "vectors", opt->vectors);
        cJSON_AddNumberToObject(row, "seed", (double)opt->seed);
        hsdr_states_acc_json(&acc, row);
        print_row(row, out);
    } else if (rc == 0) {
        char label[32];
        snprintf(label, sizeof label, "bonsai K=%d", K);
        hsdr_states_acc_line(&acc, label, width, out);
    }
    hsdr_states_acc_free(&acc);
    free(x);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int hsdr_states_real_run(const states_options *opt, FILE *out)
{
    hsdr_activations acts;
    char err[1024];
    if (hsdr_activations_open(&acts, opt->activations, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr states: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    for (size_t i = 0; i < acts.n; i++)
        if (acts.sets[i].K % 128 != 0) {
            fprintf(stderr, "hsdr states: %s: K = %d is not a multiple of 128 (a tile is 128 lanes)\n",
                    acts.sets[i].path, acts.sets[i].K);
            hsdr_activations_close(&acts);
            return HSDR_EXIT_USAGE;
        }
    int rc = HSDR_EXIT_OK, width = 16; /* the label column: the longest set name */
    for (size_t i = 0; i < acts.n; i++)
        width = (int)strlen(acts.sets[i].name) > width ? (int)strlen(acts.sets[i].name) : width;
    states_acc all;
    hsdr_states_acc_init(&all);
    long tokens = 0;
    if (!opt->json) {
        fprintf(out, "Occupied LNS8 states on REAL activations from %s: %zu set(s); every token is one vector\n",
                acts.path, acts.n);
        hsdr_states_table_head("set", width, out);
    }
    for (size_t i = 0; i < acts.n && rc == HSDR_EXIT_OK; i++) {
        const hsdr_act_set *s = &acts.sets[i];
        states_acc acc;
        hsdr_states_acc_init(&acc);
        for (int t = 0; t < s->T && rc == HSDR_EXIT_OK; t++)
            if (hsdr_states_acc_add(&acc, s->x + (size_t)t * s->K, s->K, err, sizeof err) != 0) {
                fprintf(stderr, "hsdr states: %s: token %d: %s\n", s->path, t, err);
                rc = HSDR_EXIT_USAGE;
            }
        if (rc == HSDR_EXIT_OK && hsdr_states_acc_merge(&all, &acc) != 0) {
            fprintf(stderr, "hsdr states: out of memory\n");
            rc = HSDR_EXIT_USAGE;
        }
        tokens += s->T;
        if (rc == HSDR_EXIT_OK && opt->json) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "source", "real");
            cJSON_AddStringToObject(row, "set", s->name);
            cJSON_AddStringToObject(row, "path", s->path);
            cJSON_AddNumberToObject(row, "T", s->T);
            cJSON_AddNumberToObject(row, "K", s->K);
            char hash[17];
            uint64_t h = hsdr_inspect_hash((const uint8_t *)s->x, sizeof(float) * (uint64_t)s->T * s->K);
            snprintf(hash, sizeof hash, "%016llx", (unsigned long long)h);
            cJSON_AddStringToObject(row, "data_hash", hash);
            hsdr_states_acc_json(&acc, row);
            print_row(row, out);
        } else if (rc == HSDR_EXIT_OK) {
            hsdr_states_acc_line(&acc, s->name, width, out);
        }
        hsdr_states_acc_free(&acc);
    }
    if (rc == HSDR_EXIT_OK) {
        if (opt->json) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "source", "real");
            cJSON_AddStringToObject(row, "set", "all");
            cJSON_AddStringToObject(row, "path", acts.path);
            cJSON_AddNumberToObject(row, "sets", (double)acts.n);
            cJSON_AddNumberToObject(row, "vectors", (double)tokens);
            hsdr_states_acc_json(&all, row);
            print_row(row, out);
        } else {
            hsdr_states_acc_line(&all, "all", width, out);
            fprintf(out, "\nModelled \"bonsai\" distribution at the same widths: %d vectors each, seed %llu\n",
                    opt->vectors, (unsigned long long)opt->seed);
            hsdr_states_table_head("model", width, out);
        }
        /* distinct widths, ascending */
        int *widths = malloc(sizeof(int) * acts.n);
        size_t nw = 0;
        for (size_t i = 0; widths && i < acts.n; i++)
            widths[nw++] = acts.sets[i].K;
        if (widths) {
            qsort(widths, nw, sizeof(int), cmp_int);
            for (size_t i = 0; i < nw && rc == HSDR_EXIT_OK; i++)
                if (i == 0 || widths[i] != widths[i - 1])
                    rc = modelled(opt, widths[i], width, out) == 0 ? HSDR_EXIT_OK : HSDR_EXIT_USAGE;
        } else {
            fprintf(stderr, "hsdr states: out of memory\n");
            rc = HSDR_EXIT_USAGE;
        }
        free(widths);
    }
    hsdr_states_acc_free(&all);
    hsdr_activations_close(&acts);
    return rc;
}
