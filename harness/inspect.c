/* `hsdr inspect` (inspect.h): the metadata summary and the ternary tensors' statistics of one GGUF file. */
#include "inspect.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "ptq1_0.h"
#include "util.h"

/* Zero digits (digit 1 = value 0) among the first 5 / 4 digits of each byte, from the reference decoder. */
static uint8_t zeros5[256], zeros4[256];
/* PQ2_0: codes 1 (value 0) and codes 3 among a byte's four 2-bit codes. */
static uint8_t pq_zeros[256], pq_code3[256];
/* Every non-NaN fp16 pattern in increasing value (-0 before +0), and how many there are. */
static uint16_t fp16_order[65536];
static int fp16_order_n;

static int cmp_fp16(const void *a, const void *b)
{
    const uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    const float fx = hsdr_fp16_to_fp32(x), fy = hsdr_fp16_to_fp32(y);
    if (fx != fy)
        return fx < fy ? -1 : 1;
    return (x < y) - (x > y); /* -0 (0x8000) first */
}

static void init_tables(void)
{
    if (fp16_order_n)
        return;
    for (int b = 0; b < 256; b++) {
        uint8_t d[5];
        hsdr_ptq1_0_decode_byte_int((uint8_t)b, d);
        unsigned z4 = 0, pz = 0, p3 = 0;
        for (int n = 0; n < 4; n++)
            z4 += d[n] == 1u;
        zeros4[b] = (uint8_t)z4;
        zeros5[b] = (uint8_t)(z4 + (d[4] == 1u));
        for (int k = 0; k < 4; k++) {
            pz += ((b >> (2 * k)) & 3) == 1;
            p3 += ((b >> (2 * k)) & 3) == 3;
        }
        pq_zeros[b] = (uint8_t)pz;
        pq_code3[b] = (uint8_t)p3;
    }
    int n = 0;
    for (uint32_t h = 0; h < 65536; h++)
        if (!isnan(hsdr_fp16_to_fp32((uint16_t)h)))
            fp16_order[n++] = (uint16_t)h;
    qsort(fp16_order, (size_t)n, sizeof fp16_order[0], cmp_fp16);
    fp16_order_n = n;
}

/* min, percentiles and max from the count of each fp16 pattern (ranks as in inspect.h). */
static void scale_summary(const uint64_t *count, inspect_ternary_stats *s)
{
    const uint64_t n = s->scales_counted;
    if (n == 0)
        return;
    const uint64_t rank[5] = {1, (5 * n + 99) / 100, (50 * n + 99) / 100, (95 * n + 99) / 100, n};
    float *out[5] = {&s->min, &s->p5, &s->median, &s->p95, &s->max};
    uint64_t seen = 0;
    int k = 0;
    for (int i = 0; i < fp16_order_n && k < 5; i++) {
        seen += count[fp16_order[i]];
        while (k < 5 && seen >= (rank[k] ? rank[k] : 1))
            *out[k++] = hsdr_fp16_to_fp32(fp16_order[i]);
    }
}

int hsdr_inspect_ternary(const gguf_tensor *t, inspect_ternary_stats *s)
{
    if (t->type != GGML_T_PTQ1_0 && t->type != GGML_T_PQ2_0)
        return -1;
    init_tables();
    memset(s, 0, sizeof *s);
    uint64_t *count = calloc(65536, sizeof *count);
    if (!count)
        return -1;
    const int ptq = t->type == GGML_T_PTQ1_0;
    const uint64_t block_bytes = ptq ? HSDR_PTQ1_0_BYTES : HSDR_PQ2_0_BYTES;
    s->blocks = t->bytes / block_bytes;
    s->weights = s->blocks * HSDR_QK;
    for (uint64_t b = 0; b < s->blocks; b++) {
        const uint8_t *blk = t->data + b * block_bytes;
        unsigned zeros = 0;
        uint16_t d;
        if (ptq) {
            for (int i = 0; i < 24; i++)
                zeros += zeros5[blk[i]];
            zeros += zeros4[blk[24]] + zeros4[blk[25]];
            d = (uint16_t)(blk[26] | blk[27] << 8);
        } else {
            d = (uint16_t)(blk[0] | blk[1] << 8);
            for (int i = 2; i < 34; i++) {
                zeros += pq_zeros[blk[i]];
                s->code3 += pq_code3[blk[i]];
            }
        }
        s->zero_weights += zeros;
        s->all_zero_blocks += zeros == HSDR_QK;
        if ((d & 0x7c00) == 0x7c00 && (d & 0x3ff)) {
            s->nan++;
            continue;
        }
        count[d]++;
        s->scales_counted++;
        s->subnormal += (d & 0x7c00) == 0 && (d & 0x3ff) != 0;
        s->zero += (d & 0x7fff) == 0;
    }
    scale_summary(count, s);
    free(count);
    return 0;
}

uint64_t hsdr_inspect_hash(const uint8_t *data, uint64_t bytes)
{
    const uint64_t prime = 0x100000001b3ULL;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint64_t i = 0; i < bytes; i += 8) {
        uint64_t w = 0;
        const uint64_t n = bytes - i < 8 ? bytes - i : 8;
        for (uint64_t k = 0; k < n; k++)
            w |= (uint64_t)data[i + k] << (8 * k);
        h = (h ^ w) * prime;
    }
    return (h ^ bytes) * prime;
}

/* A JSON number that reads back as exactly v (cJSON prints 15 digits, which may not): the shortest of %.15g,
 * %.16g, %.17g that strtod maps back to v; null for a value JSON cannot hold (inf, NaN) or when !valid. */
static cJSON *number_or_null(int valid, double v)
{
    if (!valid || !isfinite(v))
        return cJSON_CreateNull();
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return cJSON_CreateRaw(buf);
}

/* A metadata value as JSON: numbers, strings and bools as themselves, arrays as {"array": TYPE, "count": n}. */
static cJSON *kv_json(const gguf_kv *kv)
{
    uint64_t u;
    int64_t i;
    double f;
    gguf_str s;
    if (kv->type == GGUF_T_BOOL)
        return cJSON_CreateBool(kv->value[0]);
    if (kv->type == GGUF_T_ARRAY) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "array", gguf_value_type_name(kv->elem_type));
        cJSON_AddNumberToObject(o, "count", (double)kv->count);
        return o;
    }
    if (gguf_kv_str(kv, &s) == 0) {
        char *text = gguf_str_dup(s);
        cJSON *j = cJSON_CreateString(text ? text : "");
        free(text);
        return j;
    }
    if (gguf_kv_f64(kv, &f) == 0)
        return number_or_null(1, f);
    if (gguf_kv_i64(kv, &i) == 0)
        return cJSON_CreateNumber((double)i);
    if (gguf_kv_u64(kv, &u) == 0)
        return cJSON_CreateNumber((double)u);
    return cJSON_CreateNull();
}

/* A metadata value as text (strings cut at 72 characters, arrays as TYPE[count]). */
static void kv_text(const gguf_kv *kv, FILE *out)
{
    uint64_t u;
    int64_t i;
    double f;
    gguf_str s;
    if (kv->type == GGUF_T_BOOL) {
        fputs(kv->value[0] ? "true" : "false", out);
    } else if (kv->type == GGUF_T_ARRAY) {
        fprintf(out, "%s[%" PRIu64 "]", gguf_value_type_name(kv->elem_type), kv->count);
        gguf_str first;
        if (gguf_kv_array_str(kv, 0, &first) == 0) {
            char *text = gguf_str_dup(first);
            fprintf(out, " (first: \"%.40s%s\")", text ? text : "?", first.len > 40 ? "..." : "");
            free(text);
        }
    } else if (gguf_kv_str(kv, &s) == 0) {
        char *text = gguf_str_dup(s);
        for (char *p = text; p && *p; p++) /* one line per pair */
            if (*p == '\n' || *p == '\r' || *p == '\t')
                *p = ' ';
        fprintf(out, "\"%.72s%s\"", text ? text : "?", s.len > 72 ? "..." : "");
        free(text);
    } else if (gguf_kv_f64(kv, &f) == 0) {
        fprintf(out, "%.9g", f);
    } else if (gguf_kv_i64(kv, &i) == 0) {
        fprintf(out, "%" PRId64, i);
    } else if (gguf_kv_u64(kv, &u) == 0) {
        fprintf(out, "%" PRIu64, u);
    }
}

static void shape_text(const gguf_tensor *t, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < t->n_dims && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, "%s%" PRIu64, d ? "x" : "", t->dims[d]);
}


static cJSON *tensor_json(const gguf_tensor *t)
{
    cJSON *o = cJSON_CreateObject();
    char *name = gguf_str_dup(t->name);
    char hash[20];
    cJSON_AddStringToObject(o, "name", name ? name : "?");
    free(name);
    cJSON_AddStringToObject(o, "type", gguf_ggml_type_name(t->type));
    cJSON_AddNumberToObject(o, "type_id", t->type);
    cJSON *shape = cJSON_AddArrayToObject(o, "shape");
    for (uint32_t d = 0; d < t->n_dims; d++)
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
    cJSON_AddNumberToObject(o, "bytes", (double)t->bytes);
    cJSON_AddNumberToObject(o, "file_offset", (double)t->file_offset);
    snprintf(hash, sizeof hash, "%016" PRIx64, hsdr_inspect_hash(t->data, t->bytes));
    cJSON_AddStringToObject(o, "data_hash", hash);
    inspect_ternary_stats s;
    if (hsdr_inspect_ternary(t, &s) != 0)
        return o;
    cJSON_AddNumberToObject(o, "blocks", (double)s.blocks);
    cJSON_AddItemToObject(o, "zero_trit_fraction",
                          number_or_null(1, s.weights ? (double)s.zero_weights / (double)s.weights : 0));
    cJSON_AddItemToObject(o, "all_zero_block_fraction",
                          number_or_null(1, s.blocks ? (double)s.all_zero_blocks / (double)s.blocks : 0));
    if (t->type == GGML_T_PQ2_0)
        cJSON_AddNumberToObject(o, "code3_count", (double)s.code3);
    cJSON *sc = cJSON_AddObjectToObject(o, "scales");
    const int valid = s.scales_counted > 0;
    cJSON_AddItemToObject(sc, "min", number_or_null(valid, s.min));
    cJSON_AddItemToObject(sc, "p5", number_or_null(valid, s.p5));
    cJSON_AddItemToObject(sc, "median", number_or_null(valid, s.median));
    cJSON_AddItemToObject(sc, "p95", number_or_null(valid, s.p95));
    cJSON_AddItemToObject(sc, "max", number_or_null(valid, s.max));
    cJSON_AddNumberToObject(sc, "subnormal", (double)s.subnormal);
    cJSON_AddNumberToObject(sc, "zero", (double)s.zero);
    cJSON_AddNumberToObject(sc, "nan", (double)s.nan);
    return o;
}

static int print_json(const char *path, const gguf_file *g, FILE *out)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "file", path);
    cJSON_AddNumberToObject(root, "file_bytes", (double)g->size);
    cJSON_AddNumberToObject(root, "version", g->version);
    cJSON_AddNumberToObject(root, "alignment", g->alignment);
    cJSON_AddNumberToObject(root, "data_offset", (double)g->data_offset);
    cJSON_AddNumberToObject(root, "kv_count", (double)g->n_kv);
    cJSON_AddNumberToObject(root, "tensor_count", (double)g->n_tensors);
    cJSON *meta = cJSON_AddObjectToObject(root, "metadata");
    for (uint64_t i = 0; i < g->n_kv; i++) {
        char *key = gguf_str_dup(g->kv[i].key);
        cJSON_AddItemToObject(meta, key ? key : "?", kv_json(&g->kv[i]));
        free(key);
    }
    cJSON *tensors = cJSON_AddArrayToObject(root, "tensors");
    for (uint64_t i = 0; i < g->n_tensors; i++)
        cJSON_AddItemToArray(tensors, tensor_json(&g->tensors[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "hsdr inspect: out of memory printing the JSON\n");
        return HSDR_EXIT_FAIL;
    }
    fprintf(out, "%s\n", text);
    cJSON_free(text);
    return HSDR_EXIT_OK;
}

static void print_text(const char *path, const gguf_file *g, FILE *out)
{
    const char *wanted[] = {"general.architecture", "general.name"};
    fprintf(out, "%s: GGUF v%" PRIu32 ", %zu bytes, %" PRIu64 " metadata pairs, %" PRIu64
            " tensors, alignment %" PRIu32 ", data at offset %" PRIu64 "\n",
            path, g->version, g->size, g->n_kv, g->n_tensors, g->alignment, g->data_offset);
    for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; w++) {
        const gguf_kv *kv = gguf_find(g, wanted[w]);
        fprintf(out, "%-22s ", wanted[w] + strlen("general."));
        if (kv)
            kv_text(kv, out);
        else
            fputs("(absent)", out);
        fputc('\n', out);
    }
    fputs("\nmetadata (file order; arrays as TYPE[count]):\n", out);
    for (uint64_t i = 0; i < g->n_kv; i++) {
        char *key = gguf_str_dup(g->kv[i].key);
        fprintf(out, "  %-40s %-8s ", key ? key : "?", gguf_value_type_name(g->kv[i].type));
        kv_text(&g->kv[i], out);
        fputc('\n', out);
        free(key);
    }
    fputs("\nternary tensors (zero = share of 0 weights; zero blocks = share of all-zero 128-blocks; scales = the\n"
          "blocks' fp16 d: min p5 median p95 max, nearest rank; subn = subnormal scales):\n", out);
    fprintf(out, "  %-32s %-6s %-12s %10s %7s %7s  %-52s %5s\n", "name", "type", "shape", "bytes", "zero",
            "0-blk", "scales min / p5 / median / p95 / max", "subn");
    uint64_t ternary = 0, ternary_bytes = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const gguf_tensor *t = &g->tensors[i];
        inspect_ternary_stats s;
        if (hsdr_inspect_ternary(t, &s) != 0)
            continue;
        char shape[96], *name = gguf_str_dup(t->name);
        shape_text(t, shape, sizeof shape);
        fprintf(out, "  %-32s %-6s %-12s %10" PRIu64 " %6.2f%% %6.2f%%  ", name ? name : "?",
                gguf_ggml_type_name(t->type), shape, t->bytes,
                s.weights ? 100.0 * (double)s.zero_weights / (double)s.weights : 0.0,
                s.blocks ? 100.0 * (double)s.all_zero_blocks / (double)s.blocks : 0.0);
        if (s.scales_counted)
            fprintf(out, "%-10.4g %-10.4g %-10.4g %-10.4g %-10.4g", s.min, s.p5, s.median, s.p95, s.max);
        else
            fprintf(out, "%-54s", "(no scale)");
        fprintf(out, " %5" PRIu64 "%s", s.subnormal, s.nan ? " NaN scales!" : "");
        if (s.code3)
            fprintf(out, " %" PRIu64 " codes +2 (not ternary)", s.code3);
        fputc('\n', out);
        free(name);
        ternary++;
        ternary_bytes += t->bytes;
    }
    if (ternary == 0)
        fputs("  (none)\n", out);
    fputs("\nother tensors:\n", out);
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const gguf_tensor *t = &g->tensors[i];
        if (t->type == GGML_T_PTQ1_0 || t->type == GGML_T_PQ2_0)
            continue;
        char shape[96], *name = gguf_str_dup(t->name);
        shape_text(t, shape, sizeof shape);
        fprintf(out, "  %-32s %-6s %-12s %10" PRIu64 "\n", name ? name : "?", gguf_ggml_type_name(t->type), shape,
                t->bytes);
        free(name);
    }
    fprintf(out, "\n%" PRIu64 " ternary tensors, %" PRIu64 " bytes (%.3f GB)\n", ternary, ternary_bytes,
            (double)ternary_bytes / 1e9);
}

int hsdr_inspect_run(const char *path, int json, FILE *out)
{
    gguf_file g;
    char err[512];
    if (gguf_open(&g, path, err, sizeof err) != 0) {
        fprintf(stderr, "hsdr inspect: %s\n", err);
        return HSDR_EXIT_USAGE;
    }
    int rc = HSDR_EXIT_OK;
    if (json)
        rc = print_json(path, &g, out);
    else
        print_text(path, &g, out);
    gguf_close(&g);
    return rc;
}
