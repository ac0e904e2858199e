/* `hsdr columns` (columns.h): the 1..8-column CUDA kernel on real shapes, validated, then timed against the floor. */
#include "columns.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "kernel.h"
#include "inputs.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "q8.h"
#include "rng.h"
#include "shapes.h"
#include "stats.h"
#include "util.h"

enum { MAX_COLS = 8, MAX_REPS = 10000 };
static const char VARIANT[] = "cuda.production_cols";

typedef struct {
    const char *model, *tensors, *json_path;
    int cols[MAX_COLS], ncols; /* the column counts, in the order given */
    int hot, cold;
    int reps;
    uint64_t seed;
} columns_options;

static int parse_cols(const char *v, columns_options *o)
{
    char buf[64];
    if (strlen(v) >= sizeof buf)
        goto bad;
    strcpy(buf, v);
    o->ncols = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        const long n = strtol(t, &end, 10);
        if (o->ncols == MAX_COLS || end == t || *end || n < 1 || n > MAX_COLS)
            goto bad;
        for (int i = 0; i < o->ncols; i++)
            if (o->cols[i] == (int)n)
                goto bad;
        o->cols[o->ncols++] = (int)n;
    }
    if (o->ncols > 0)
        return 0;
bad:
    fprintf(stderr, "hsdr columns: --cols '%s': expected distinct column counts in 1..%d, comma-separated\n", v,
            MAX_COLS);
    return -1;
}

static int parse(int argc, char **argv, columns_options *o)
{
    *o = (columns_options){.model = "bonsai2-27b", .cols = {1, 2, 3, 4, 5, 6, 7, 8}, .ncols = MAX_COLS, .cold = 1,
                           .reps = 30, .seed = 1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!v || strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "hsdr columns: unknown or incomplete option '%s'\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--model") == 0) {
            o->model = v;
        } else if (strcmp(a, "--tensors") == 0) {
            o->tensors = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json_path = v;
        } else if (strcmp(a, "--cols") == 0) {
            if (parse_cols(v, o) != 0)
                return -1;
        } else if (strcmp(a, "--mode") == 0) {
            o->hot = strcmp(v, "hot") == 0 || strcmp(v, "both") == 0;
            o->cold = strcmp(v, "cold") == 0 || strcmp(v, "both") == 0;
            if (!o->hot && !o->cold) {
                fprintf(stderr, "hsdr columns: --mode '%s': expected hot, cold or both\n", v);
                return -1;
            }
        } else if (strcmp(a, "--reps") == 0) {
            if (hsdr_parse_long("--reps", v, 1, MAX_REPS, &n) != 0)
                return -1;
            o->reps = (int)n;
        } else if (strcmp(a, "--seed") == 0) {
            if (hsdr_parse_long("--seed", v, 0, 0x7fffffffL, &n) != 0)
                return -1;
            o->seed = (uint64_t)n;
        } else {
            fprintf(stderr, "hsdr columns: unknown option '%s'\n", a);
            return -1;
        }
    }
    return 0;
}

/* Every column of the kernel's result against the reference of that column alone (want: column c at want + c * N),
 * bit for bit. Returns the number of mismatching elements (the first one is described in msg). */
static long validate(int N, int nc, const float *Y, const float *want, char *msg, size_t msglen)
{
    long bad = 0;
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < N; r++) {
            const size_t i = (size_t)c * N + r;
            uint32_t g, w;
            memcpy(&g, &Y[i], 4);
            memcpy(&w, &want[i], 4);
            if (g != w && bad++ == 0)
                snprintf(msg, msglen, "column %d row %d: got %a (0x%08x), expected %a (0x%08x)", c, r, (double)Y[i], g,
                         (double)want[i], w);
        }
    return bad;
}

/* The JSON text of every row so far, one line each (written to --json atomically at the end). */
typedef struct {
    char *text;
    size_t len, cap;
} lines;

static int lines_add(lines *l, cJSON *row)
{
    char *s = cJSON_PrintUnformatted(row);
    cJSON_Delete(row);
    if (!s)
        return -1;
    const size_t n = strlen(s);
    if (l->len + n + 2 > l->cap) {
        size_t cap = (l->cap ? l->cap * 2 : 4096) + n + 2;
        char *t = realloc(l->text, cap);
        if (!t) {
            free(s);
            return -1;
        }
        l->text = t, l->cap = cap;
    }
    memcpy(l->text + l->len, s, n);
    l->len += n;
    l->text[l->len++] = '\n';
    l->text[l->len] = 0;
    free(s);
    return 0;
}

static int write_atomically(const char *path, const lines *l)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    const int ok = (l->len == 0 || fwrite(l->text, 1, l->len, f) == l->len);
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* One shape: validate every column count, then time each in each mode (a count the device cannot take is reported
 * as unsupported). Returns 0, 1 (a validation failure) or -1 (an error, in err). */
static int run_shape(const columns_options *o, const hsdr_variant *v, const char *model, const hsdr_gemv_shape *s,
                     uint64_t seed, lines *out, char *err, size_t errlen)
{
    const int K = s->K, N = s->N;
    const size_t wbytes = (size_t)N * (K / 128) * HSDR_PTQ1_0_BYTES;
    uint8_t *W = malloc(wbytes);
    float *X = malloc(sizeof(float) * (size_t)K * MAX_COLS), *Y = malloc(sizeof(float) * (size_t)N * MAX_COLS);
    float *want = malloc(sizeof(float) * (size_t)N * MAX_COLS);
    hsdr_block_q8_1 *q = malloc(sizeof(hsdr_block_q8_1) * (size_t)(K / 32));
    double *samples = malloc(sizeof(double) * (size_t)o->reps);
    int rc = -1, failed = 0;
    if (!W || !X || !Y || !want || !q || !samples) {
        hsdr_errorf(err, errlen, "out of host memory for %s (K = %d, N = %d)", s->tensor, K, N);
        goto out;
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, seed);
    hsdr_random_ptq1_0(&rng, W, (size_t)N * (K / 128));
    for (int c = 0; c < MAX_COLS; c++) /* an independent decode stream per column */
        if (hsdr_dist_fill(K % 1024 == 0 ? HSDR_DIST_BONSAI : HSDR_DIST_GAUSSIAN, &rng, X + (size_t)c * K, (size_t)K,
                           NULL) != 0) {
            hsdr_errorf(err, errlen, "cannot draw activations for K = %d", K);
            goto out;
        }
    /* correctness gates timing: every column count is validated before anything is timed, against the reference
     * of each column with the kernel's lanes per row */
    int most = 0;
    for (int i = 0; i < o->ncols; i++)
        most = o->cols[i] > most ? o->cols[i] : most;
    for (int c = 0; c < most; c++)
        hsdr_matvec_q8_1_lanes(W, X + (size_t)c * K, K, N, hsdr_cuda_cols_lanes(K, N), q, want + (size_t)c * N);
    long bad[MAX_COLS];
    char msg[MAX_COLS][256], unsupported[MAX_COLS][256];
    for (int i = 0; i < o->ncols; i++) {
        msg[i][0] = unsupported[i][0] = 0;
        bad[i] = 0;
        /* a column count this device cannot stage (a smaller GPU's shared memory) is reported, not an error */
        if (hsdr_cuda_production_cols_supported(K, N, o->cols[i], unsupported[i], sizeof unsupported[i]) != 0)
            continue;
        memset(Y, 0xff, sizeof(float) * (size_t)N * MAX_COLS); /* poisoned here and by the kernel's driver */
        if (hsdr_cuda_production_cols(W, X, K, N, o->cols[i], Y, err, errlen) != 0)
            goto out;
        bad[i] = validate(N, o->cols[i], Y, want, msg[i], sizeof msg[i]);
    }
    int reported = 0; /* a failed column count is reported once, in the first mode */
    for (int mode = 0; mode < 2; mode++) {
        const int cold = mode == 1;
        if (!(cold ? o->cold : o->hot))
            continue;
        /* the ceiling: the device's streaming read of the same bytes, in the same mode, measured now */
        double bps = 0.0;
        if (v->device->read_bandwidth(wbytes, cold, &bps, err, errlen) != 0)
            goto out;
        double t1 = 0.0; /* the 1-column time of this mode, when measured */
        for (int i = 0; i < o->ncols; i++) {
            const int nc = o->cols[i];
            if ((bad[i] || unsupported[i][0]) && reported)
                continue;
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "schema", "hsdr-columns/1");
            cJSON_AddStringToObject(row, "variant", VARIANT);
            cJSON_AddStringToObject(row, "device", v->device->describe());
            cJSON_AddStringToObject(row, "model", model);
            cJSON_AddStringToObject(row, "tensor", s->tensor);
            cJSON_AddNumberToObject(row, "K", K);
            cJSON_AddNumberToObject(row, "N", N);
            cJSON_AddNumberToObject(row, "cols", nc);
            cJSON_AddNumberToObject(row, "lanes", hsdr_cuda_cols_lanes(K, N));
            cJSON_AddStringToObject(row, "mode", cold ? "cold" : "hot");
            cJSON_AddNumberToObject(row, "seed", (double)seed);
            cJSON_AddNumberToObject(row, "weight_bytes", (double)wbytes);
            cJSON_AddNumberToObject(row, "read_bytes_per_s", bps);
            cJSON_AddNumberToObject(row, "floor_ns", (double)wbytes / bps * 1e9);
            if (unsupported[i][0]) {
                printf("%-12s %6d %6d %4d  %-4s  unsupported here, not run: %s\n", s->tensor, K, N, nc,
                       cold ? "cold" : "hot", unsupported[i]);
                cJSON_AddStringToObject(row, "status", "unsupported");
                cJSON_AddStringToObject(row, "reason", unsupported[i]);
            } else if (bad[i]) {
                failed = 1;
                printf("%-12s %6d %6d %4d  %-4s  FAILED validation (%ld elements), not timed: %s\n", s->tensor, K, N,
                       nc, cold ? "cold" : "hot", bad[i], msg[i]);
                cJSON_AddStringToObject(row, "status", "failed validation");
                cJSON_AddStringToObject(row, "first_mismatch", msg[i]);
            } else {
                if (hsdr_cuda_production_cols_time(W, X, K, N, nc, cold, o->reps, samples, err, errlen) != 0) {
                    cJSON_Delete(row);
                    goto out;
                }
                qsort(samples, (size_t)o->reps, sizeof *samples, hsdr_cmp_double);
                const double med = hsdr_quantile(samples, (size_t)o->reps, 0.5);
                const double floor_ns = (double)wbytes / bps * 1e9;
                if (nc == 1)
                    t1 = med;
                printf("%-12s %6d %6d %4d  %-4s %9.2f %9.2f %9.2f %7.1f%%", s->tensor, K, N, nc, cold ? "cold" : "hot",
                       med / 1e3, med / 1e3 / nc, floor_ns / 1e3, 100.0 * floor_ns / med);
                if (t1 > 0.0)
                    printf(" %8.2fx", t1 * nc / med);
                printf("\n");
                cJSON_AddStringToObject(row, "status", "ok");
                cJSON_AddNumberToObject(row, "reps", o->reps);
                cJSON_AddNumberToObject(row, "median_ns", med);
                cJSON_AddNumberToObject(row, "p10_ns", hsdr_quantile(samples, (size_t)o->reps, 0.1));
                cJSON_AddNumberToObject(row, "p90_ns", hsdr_quantile(samples, (size_t)o->reps, 0.9));
                cJSON_AddNumberToObject(row, "per_column_ns", med / nc);
                cJSON_AddNumberToObject(row, "pct_of_floor", 100.0 * floor_ns / med);
            }
            fflush(stdout);
            if (lines_add(out, row) != 0) {
                hsdr_errorf(err, errlen, "out of host memory for the JSON rows");
                goto out;
            }
        }
        reported = 1;
    }
    rc = failed;
out:
    free(W);
    free(X);
    free(Y);
    free(want);
    free(q);
    free(samples);
    return rc;
}

int hsdr_cmd_columns(int argc, char **argv)
{
    columns_options o;
    if (parse(argc, argv, &o) != 0)
        return HSDR_EXIT_USAGE;
    const hsdr_model *m = hsdr_model_find(o.model);
    if (!m) {
        fprintf(stderr, "hsdr columns: --model '%s': unknown model\n", o.model);
        return HSDR_EXIT_USAGE;
    }
    const hsdr_gemv_shape *shapes[64];
    const size_t nshapes = hsdr_model_tensors(m, shapes, 64);
    int selected = 0;
    for (size_t i = 0; i < nshapes && i < 64; i++)
        selected += !o.tensors || hsdr_glob_list_match(o.tensors, shapes[i]->tensor);
    if (!selected) {
        fprintf(stderr, "hsdr columns: --tensors '%s' selects no tensor of %s\n", o.tensors, m->name);
        return HSDR_EXIT_USAGE;
    }
    const hsdr_variant *v = hsdr_variant_find(VARIANT);
    const char *why = v ? hsdr_variant_unavailable(v) : "not in the registry";
    if (why) {
        fprintf(stderr, "hsdr columns: %s cannot run here: %s\n", VARIANT, why);
        return HSDR_EXIT_FAIL;
    }
    printf("hsdr columns: %s on %s, %d tensor(s); validated bit for bit per column, then timed per launch (encode + "
           "mat-vec, median of %d); floor = weight bytes at the streaming read measured now, same mode; gain = cols x "
           "t(1 col) / t(cols)\n",
           VARIANT, v->device->describe(), selected, o.reps);
    printf("%-12s %6s %6s %4s  %-4s %9s %9s %9s %8s %9s\n", "tensor", "K", "N", "cols", "mode", "us", "us/col",
           "floor us", "% floor", "gain");
    lines out = {0};
    char err[512] = "";
    int failed = 0, rc = HSDR_EXIT_OK;
    for (size_t i = 0; i < nshapes && i < 64; i++) {
        if (o.tensors && !hsdr_glob_list_match(o.tensors, shapes[i]->tensor))
            continue;
        const int r = run_shape(&o, v, m->name, shapes[i], o.seed * 1000003u + i, &out, err, sizeof err);
        if (r < 0) {
            fprintf(stderr, "hsdr columns: %s: %s\n", shapes[i]->tensor, err);
            rc = HSDR_EXIT_FAIL;
            break;
        }
        failed |= r;
    }
    if (rc == HSDR_EXIT_OK && failed) {
        fprintf(stderr, "hsdr columns: some column counts failed validation and were not timed\n");
        rc = HSDR_EXIT_FAIL;
    }
    if (rc == HSDR_EXIT_OK && o.json_path && write_atomically(o.json_path, &out) != 0) {
        fprintf(stderr, "hsdr columns: cannot write %s\n", o.json_path);
        rc = HSDR_EXIT_FAIL;
    }
    free(out.text);
    return rc;
}
