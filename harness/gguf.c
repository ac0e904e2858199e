/* The GGUF reader (gguf.h): one forward pass over header, key/value pairs and tensor infos with a cursor that
 * checks every read against the bytes left, then the data section's checks (alignment, sizes, overlaps).
 * Every count is bounded by the bytes left divided by its element's smallest encoding before it sizes anything,
 * so a hostile count never leads to a large allocation or a long loop. */
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

typedef struct {
    const char *name;
    const uint8_t *base;
    size_t size;
    size_t pos;
    char *err;
    size_t errlen;
} cursor;

/* "NAME: offset AT: FIELD: what"; returns -1. */
static int fail_at(cursor *c, uint64_t at, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(cursor *c, uint64_t at, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hsdr_verr_at(c->err, c->errlen, c->name, at, field, fmt, ap);
    va_end(ap);
    return -1;
}

static int need(cursor *c, uint64_t bytes, const char *field)
{
    if (bytes > c->size - c->pos)
        return fail_at(c, c->pos, field, "needs %" PRIu64 " bytes, %zu left (the file ends at %zu)", bytes,
                       c->size - c->pos, c->size);
    return 0;
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int read_u32(cursor *c, const char *field, uint32_t *out)
{
    if (need(c, 4, field))
        return -1;
    *out = (uint32_t)le(c->base + c->pos, 4);
    c->pos += 4;
    return 0;
}

static int read_u64(cursor *c, const char *field, uint64_t *out)
{
    if (need(c, 8, field))
        return -1;
    *out = le(c->base + c->pos, 8);
    c->pos += 8;
    return 0;
}

/* A string of at most max_len bytes (its length field at the cursor). */
static int read_str(cursor *c, const char *field, uint64_t max_len, gguf_str *out)
{
    const size_t at = c->pos;
    uint64_t len;
    if (read_u64(c, field, &len))
        return -1;
    if (len > max_len)
        return fail_at(c, at, field, "string length %" PRIu64 " is above the limit %" PRIu64, len, max_len);
    if (len > c->size - c->pos)
        return fail_at(c, at, field, "string length %" PRIu64 " runs past the end of the file (%zu bytes left)",
                       len, c->size - c->pos);
    out->ptr = c->base + c->pos;
    out->len = len;
    c->pos += len;
    return 0;
}

/* Bytes of one scalar value, 0 for STRING and ARRAY (variable). */
static uint64_t scalar_bytes(uint32_t type)
{
    static const uint8_t bytes[GGUF_T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < GGUF_T_COUNT ? bytes[type] : 0;
}

/* One value of type (not ARRAY) at the cursor, skipped after its checks. */
static int skip_value(cursor *c, uint32_t type, const char *field)
{
    if (type == GGUF_T_STRING) {
        gguf_str s;
        return read_str(c, field, UINT64_MAX, &s);
    }
    const uint64_t n = scalar_bytes(type);
    if (need(c, n, field))
        return -1;
    if (type == GGUF_T_BOOL && c->base[c->pos] > 1)
        return fail_at(c, c->pos, field, "bool value %u is not 0 or 1", c->base[c->pos]);
    c->pos += n;
    return 0;
}

static int read_kv(cursor *c, uint64_t index, gguf_kv *kv)
{
    char field[96];
    kv->offset = c->pos;
    snprintf(field, sizeof field, "kv[%" PRIu64 "].key", index);
    if (read_str(c, field, GGUF_MAX_KEY, &kv->key))
        return -1;
    for (uint64_t i = 0; i < kv->key.len; i++) /* the format: keys are ASCII; no control bytes either */
        if (kv->key.ptr[i] < 0x20 || kv->key.ptr[i] > 0x7e)
            return fail_at(c, kv->offset, field, "byte %" PRIu64 " of the key is 0x%02x, not printable ASCII", i,
                           kv->key.ptr[i]);
    char *key = gguf_str_dup(kv->key);
    snprintf(field, sizeof field, "kv[%" PRIu64 "] '%.48s'.value_type", index, key ? key : "?");
    const size_t type_at = c->pos;
    int rc = -1;
    if (read_u32(c, field, &kv->type))
        goto out;
    if (kv->type >= GGUF_T_COUNT) {
        fail_at(c, type_at, field, "%" PRIu32 " is not a GGUF value type (0..12)", kv->type);
        goto out;
    }
    snprintf(field, sizeof field, "kv[%" PRIu64 "] '%.48s'.value", index, key ? key : "?");
    if (kv->type != GGUF_T_ARRAY) {
        kv->value = c->base + c->pos;
        kv->count = 1;
        rc = skip_value(c, kv->type, field);
        goto out;
    }
    const size_t elem_at = c->pos;
    if (read_u32(c, field, &kv->elem_type))
        goto out;
    if (kv->elem_type >= GGUF_T_COUNT) {
        fail_at(c, elem_at, field, "array element type %" PRIu32 " is not a GGUF value type (0..12)",
                kv->elem_type);
        goto out;
    }
    if (kv->elem_type == GGUF_T_ARRAY) {
        fail_at(c, elem_at, field, "arrays of arrays are not supported");
        goto out;
    }
    const size_t count_at = c->pos;
    if (read_u64(c, field, &kv->count))
        goto out;
    const uint64_t min_elem = kv->elem_type == GGUF_T_STRING ? 8 : scalar_bytes(kv->elem_type);
    if (kv->count > (c->size - c->pos) / min_elem) {
        fail_at(c, count_at, field, "array of %" PRIu64 " %s needs at least %" PRIu64 " bytes per element, %zu left",
                kv->count, gguf_value_type_name(kv->elem_type), min_elem, c->size - c->pos);
        goto out;
    }
    kv->value = c->base + c->pos;
    if (kv->elem_type == GGUF_T_STRING || kv->elem_type == GGUF_T_BOOL) {
        for (uint64_t i = 0; i < kv->count; i++)
            if (skip_value(c, kv->elem_type, field))
                goto out;
    } else {
        c->pos += kv->count * min_elem; /* bounded above */
    }
    rc = 0;
out:
    free(key);
    return rc;
}

static const struct {
    uint32_t id;
    const char *name;
    uint32_t block_weights, block_bytes;
} ggml_types[] = {
    {0, "F32", 1, 4},        {1, "F16", 1, 2},        {2, "Q4_0", 32, 18},    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},     {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},   {11, "Q3_K", 256, 110},  {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292},  {24, "I8", 1, 1},      {25, "I16", 1, 2},
    {26, "I32", 1, 4},       {27, "I64", 1, 8},       {28, "F64", 1, 8},      {30, "BF16", 1, 2},
    {34, "TQ1_0", 256, 54},  {35, "TQ2_0", 256, 66},  {142, "PQ2_0", 128, 34}, {143, "PTQ1_0", 128, 28},
};

const char *gguf_ggml_type_name(uint32_t type)
{
    for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++)
        if (ggml_types[i].id == type)
            return ggml_types[i].name;
    return NULL;
}

int gguf_ggml_type_block(uint32_t type, uint64_t *block_weights, uint64_t *block_bytes)
{
    for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++)
        if (ggml_types[i].id == type) {
            *block_weights = ggml_types[i].block_weights;
            *block_bytes = ggml_types[i].block_bytes;
            return 0;
        }
    return -1;
}

const char *gguf_value_type_name(uint32_t type)
{
    static const char *const names[GGUF_T_COUNT] = {"UINT8", "INT8",   "UINT16", "INT16", "UINT32",
                                                    "INT32", "FLOAT32", "BOOL",  "STRING", "ARRAY",
                                                    "UINT64", "INT64", "FLOAT64"};
    return type < GGUF_T_COUNT ? names[type] : NULL;
}

static int read_tensor_info(cursor *c, uint64_t index, gguf_tensor *t)
{
    char field[128];
    t->info_offset = c->pos;
    snprintf(field, sizeof field, "tensor[%" PRIu64 "].name", index);
    if (read_str(c, field, GGUF_MAX_NAME, &t->name))
        return -1;
    char *name = gguf_str_dup(t->name);
    const char *shown = name ? name : "?";
    int rc = -1;
    snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.n_dims", index, shown);
    const size_t dims_at = c->pos;
    if (read_u32(c, field, &t->n_dims))
        goto out;
    if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS) {
        fail_at(c, dims_at, field, "%" PRIu32 " is not 1..%d", t->n_dims, GGUF_MAX_DIMS);
        goto out;
    }
    t->elements = 1;
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t->dims[d] = 1;
        if (d >= t->n_dims)
            continue;
        snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.dims[%" PRIu32 "]", index, shown, d);
        const size_t at = c->pos;
        if (read_u64(c, field, &t->dims[d]))
            goto out;
        if (t->dims[d] == 0 || t->dims[d] > (uint64_t)INT64_MAX / t->elements) {
            fail_at(c, at, field, "%" PRIu64 " %s", t->dims[d],
                    t->dims[d] == 0 ? "is 0 (every dim is at least 1)" : "makes the element count overflow 2^63");
            goto out;
        }
        t->elements *= t->dims[d];
    }
    snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.type", index, shown);
    const size_t type_at = c->pos;
    if (read_u32(c, field, &t->type))
        goto out;
    uint64_t bw, bb;
    if (gguf_ggml_type_block(t->type, &bw, &bb)) {
        fail_at(c, type_at, field, "%" PRIu32 " is not a ggml type this reader knows", t->type);
        goto out;
    }
    if (t->dims[0] % bw != 0) {
        fail_at(c, type_at, field, "ne0 = %" PRIu64 " is not a multiple of %s's block of %" PRIu64 " weights",
                t->dims[0], gguf_ggml_type_name(t->type), bw);
        goto out;
    }
    const uint64_t blocks = t->elements / bw; /* exact: ne0 is a multiple of bw */
    if (blocks > UINT64_MAX / bb) {
        fail_at(c, type_at, field, "%" PRIu64 " blocks of %" PRIu64 " bytes overflow 64 bits", blocks, bb);
        goto out;
    }
    t->bytes = blocks * bb;
    snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.offset", index, shown);
    if (read_u64(c, field, &t->offset))
        goto out;
    rc = 0;
out:
    free(name);
    return rc;
}

static int cmp_str(gguf_str a, gguf_str b)
{
    const uint64_t n = a.len < b.len ? a.len : b.len;
    const int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return r ? r : (a.len > b.len) - (a.len < b.len);
}

/* qsort contexts: index arrays over the kv / tensor arrays (qsort has no user pointer in C11) */
static const gguf_kv *sort_kv;
static const gguf_tensor *sort_tensors;

static int cmp_kv_key(const void *a, const void *b)
{
    const uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    const int r = cmp_str(sort_kv[i].key, sort_kv[j].key);
    return r ? r : (i > j) - (i < j);
}

static int cmp_tensor_name(const void *a, const void *b)
{
    const uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    const int r = cmp_str(sort_tensors[i].name, sort_tensors[j].name);
    return r ? r : (i > j) - (i < j);
}

static int cmp_tensor_offset(const void *a, const void *b)
{
    const gguf_tensor *x = &sort_tensors[*(const uint64_t *)a], *y = &sort_tensors[*(const uint64_t *)b];
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (*(const uint64_t *)a > *(const uint64_t *)b) - (*(const uint64_t *)a < *(const uint64_t *)b);
}

/* Duplicate keys and names, alignment, bounds and overlaps: everything that needs all the infos. */
static int check_all(cursor *c, gguf_file *g)
{
    const uint64_t n = g->n_kv > g->n_tensors ? g->n_kv : g->n_tensors;
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return fail_at(c, 0, "file", "out of memory for %" PRIu64 " index entries", n);
    int rc = -1;
    for (uint64_t i = 0; i < g->n_kv; i++)
        order[i] = i;
    sort_kv = g->kv;
    qsort(order, g->n_kv, sizeof *order, cmp_kv_key);
    for (uint64_t i = 1; i < g->n_kv; i++)
        if (cmp_str(g->kv[order[i - 1]].key, g->kv[order[i]].key) == 0) {
            const gguf_kv *dup = &g->kv[order[i]];
            char *key = gguf_str_dup(dup->key);
            char field[32];
            snprintf(field, sizeof field, "kv[%" PRIu64 "].key", order[i]);
            fail_at(c, dup->offset, field, "'%s' appears again (first as kv[%" PRIu64 "])", key ? key : "?",
                    order[i - 1]);
            free(key);
            goto out;
        }
    sort_tensors = g->tensors;
    for (uint64_t i = 0; i < g->n_tensors; i++)
        order[i] = i;
    qsort(order, g->n_tensors, sizeof *order, cmp_tensor_name);
    for (uint64_t i = 1; i < g->n_tensors; i++)
        if (cmp_str(g->tensors[order[i - 1]].name, g->tensors[order[i]].name) == 0) {
            const gguf_tensor *dup = &g->tensors[order[i]];
            char *name = gguf_str_dup(dup->name);
            char field[40];
            snprintf(field, sizeof field, "tensor[%" PRIu64 "].name", order[i]);
            fail_at(c, dup->info_offset, field, "'%s' appears again (first as tensor[%" PRIu64 "])",
                    name ? name : "?", order[i - 1]);
            free(name);
            goto out;
        }
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        /* the offset field is the last 8 bytes of the info */
        const uint64_t at = t->info_offset + 8 + t->name.len + 4 + 8 * (uint64_t)t->n_dims + 4;
        char *name = gguf_str_dup(t->name);
        char field[128];
        snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.offset", i, name ? name : "?");
        free(name);
        if (t->offset % g->alignment != 0) {
            fail_at(c, at, field, "%" PRIu64 " is not a multiple of the alignment %" PRIu32, t->offset,
                    g->alignment);
            goto out;
        }
        if (g->data_offset > g->size || t->offset > g->size - g->data_offset ||
            t->bytes > g->size - g->data_offset - t->offset) {
            fail_at(c, at, field, "%" PRIu64 " bytes at data offset %" PRIu64 " (file offset %" PRIu64
                    ") run past the end of the file (%zu bytes)", t->bytes, t->offset, g->data_offset + t->offset,
                    g->size);
            goto out;
        }
        t->file_offset = g->data_offset + t->offset;
        t->data = g->base + t->file_offset;
    }
    for (uint64_t i = 0; i < g->n_tensors; i++)
        order[i] = i;
    qsort(order, g->n_tensors, sizeof *order, cmp_tensor_offset);
    for (uint64_t i = 1; i < g->n_tensors; i++) {
        const gguf_tensor *a = &g->tensors[order[i - 1]], *b = &g->tensors[order[i]];
        if (b->offset < a->offset + a->bytes) { /* no overflow: a ends inside the file */
            const uint64_t at = b->info_offset + 8 + b->name.len + 4 + 8 * (uint64_t)b->n_dims + 4;
            char *an = gguf_str_dup(a->name), *bn = gguf_str_dup(b->name);
            char field[128];
            snprintf(field, sizeof field, "tensor[%" PRIu64 "] '%s'.offset", order[i], bn ? bn : "?");
            fail_at(c, at, field, "data %" PRIu64 "..%" PRIu64 " overlaps tensor[%" PRIu64 "] '%s' (%" PRIu64
                    "..%" PRIu64 ")", b->offset, b->offset + b->bytes, order[i - 1], an ? an : "?", a->offset,
                    a->offset + a->bytes);
            free(an);
            free(bn);
            goto out;
        }
    }
    rc = 0;
out:
    free(order);
    return rc;
}

int gguf_parse(gguf_file *g, const char *name, const uint8_t *data, size_t size, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    cursor c = {.name = name, .base = data, .size = size, .pos = 0, .err = err, .errlen = errlen};
    if (need(&c, 4, "header.magic"))
        return -1;
    if (memcmp(data, "GGUF", 4) != 0)
        return fail_at(&c, 0, "header.magic", "bytes %02x %02x %02x %02x are not \"GGUF\"", data[0], data[1],
                       data[2], data[3]);
    c.pos = 4;
    uint32_t version;
    if (read_u32(&c, "header.version", &version))
        return -1;
    if (version != 2 && version != 3)
        return fail_at(&c, 4, "header.version", "%" PRIu32 " is not 2 or 3%s", version,
                       version == 1 ? " (GGUF v1 used 32-bit counts and lengths; convert the file)" : "");
    uint64_t n_tensors, n_kv;
    if (read_u64(&c, "header.tensor_count", &n_tensors) || read_u64(&c, "header.metadata_kv_count", &n_kv))
        return -1;
    /* smallest encodings: a pair = key length + type + a 1-byte value; a tensor info = name length + n_dims + one
     * dim + type + offset */
    if (n_kv > (size - c.pos) / 13)
        return fail_at(&c, 16, "header.metadata_kv_count", "%" PRIu64 " pairs cannot fit in the %zu bytes left",
                       n_kv, size - c.pos);
    if (n_tensors > (size - c.pos) / 32)
        return fail_at(&c, 8, "header.tensor_count", "%" PRIu64 " tensor infos cannot fit in the %zu bytes left",
                       n_tensors, size - c.pos);
    g->base = data;
    g->size = size;
    g->version = version;
    g->n_tensors = n_tensors;
    g->n_kv = n_kv;
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    g->kv = calloc(n_kv ? n_kv : 1, sizeof *g->kv);
    g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors);
    if (!g->kv || !g->tensors) {
        gguf_close(g);
        return fail_at(&c, 0, "file", "out of memory for %" PRIu64 " pairs and %" PRIu64 " tensors", n_kv,
                       n_tensors);
    }
    for (uint64_t i = 0; i < n_kv; i++)
        if (read_kv(&c, i, &g->kv[i]))
            goto fail;
    const gguf_kv *al = gguf_find(g, "general.alignment");
    if (al) {
        const uint64_t at = al->offset + 8 + al->key.len + 4;
        if (al->type != GGUF_T_UINT32) {
            fail_at(&c, at - 4, "kv 'general.alignment'.value_type", "%s, expected UINT32",
                    gguf_value_type_name(al->type));
            goto fail;
        }
        const uint32_t a = (uint32_t)le(al->value, 4);
        if (a == 0 || (a & (a - 1)) != 0) {
            fail_at(&c, at, "kv 'general.alignment'.value", "%" PRIu32 " is not a power of two", a);
            goto fail;
        }
        g->alignment = a;
    }
    for (uint64_t i = 0; i < n_tensors; i++)
        if (read_tensor_info(&c, i, &g->tensors[i]))
            goto fail;
    g->data_offset = c.pos + (g->alignment - c.pos % g->alignment) % g->alignment;
    if (check_all(&c, g))
        goto fail;
    return 0;
fail:
    gguf_close(g);
    return -1;
}

int gguf_open(gguf_file *g, const char *path, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "not a regular file");
        close(fd);
        return -1;
    }
    const size_t size = (size_t)st.st_size;
    void *map = NULL;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
    }
    close(fd);
    static const uint8_t empty[1];
    if (gguf_parse(g, path, map ? map : empty, size, err, errlen) != 0) {
        if (map)
            munmap(map, size);
        return -1;
    }
    g->mapped = map != NULL;
    return 0;
}

void gguf_close(gguf_file *g)
{
    if (g->mapped)
        munmap((void *)g->base, g->size);
    free(g->kv);
    free(g->tensors);
    memset(g, 0, sizeof *g);
}

int gguf_str_eq(gguf_str s, const char *text)
{
    const size_t n = strlen(text);
    return s.len == n && (n == 0 || memcmp(s.ptr, text, n) == 0);
}

const gguf_kv *gguf_find(const gguf_file *g, const char *key)
{
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (gguf_str_eq(g->kv[i].key, key))
            return &g->kv[i];
    return NULL;
}

int gguf_kv_u64(const gguf_kv *kv, uint64_t *out)
{
    int64_t s;
    switch (kv->type) {
    case GGUF_T_UINT8: case GGUF_T_BOOL: *out = kv->value[0]; return 0;
    case GGUF_T_UINT16: *out = le(kv->value, 2); return 0;
    case GGUF_T_UINT32: *out = le(kv->value, 4); return 0;
    case GGUF_T_UINT64: *out = le(kv->value, 8); return 0;
    case GGUF_T_INT8: case GGUF_T_INT16: case GGUF_T_INT32: case GGUF_T_INT64:
        if (gguf_kv_i64(kv, &s) || s < 0)
            return -1;
        *out = (uint64_t)s;
        return 0;
    default: return -1;
    }
}

int gguf_kv_i64(const gguf_kv *kv, int64_t *out)
{
    uint64_t u;
    switch (kv->type) {
    case GGUF_T_INT8: *out = (int8_t)kv->value[0]; return 0;
    case GGUF_T_INT16: *out = (int16_t)(uint16_t)le(kv->value, 2); return 0;
    case GGUF_T_INT32: *out = (int32_t)(uint32_t)le(kv->value, 4); return 0;
    case GGUF_T_INT64: u = le(kv->value, 8); memcpy(out, &u, 8); return 0;
    case GGUF_T_UINT8: case GGUF_T_BOOL: case GGUF_T_UINT16: case GGUF_T_UINT32: case GGUF_T_UINT64:
        if (gguf_kv_u64(kv, &u) || u > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)u;
        return 0;
    default: return -1;
    }
}

int gguf_kv_f64(const gguf_kv *kv, double *out)
{
    if (kv->type == GGUF_T_FLOAT32) {
        const uint32_t u = (uint32_t)le(kv->value, 4);
        float f;
        memcpy(&f, &u, 4);
        *out = f;
        return 0;
    }
    if (kv->type == GGUF_T_FLOAT64) {
        const uint64_t u = le(kv->value, 8);
        memcpy(out, &u, 8);
        return 0;
    }
    return -1;
}

int gguf_kv_str(const gguf_kv *kv, gguf_str *out)
{
    if (kv->type != GGUF_T_STRING)
        return -1;
    out->len = le(kv->value, 8); /* checked by the parse */
    out->ptr = kv->value + 8;
    return 0;
}

int gguf_kv_array_str(const gguf_kv *kv, uint64_t i, gguf_str *out)
{
    if (kv->type != GGUF_T_ARRAY || kv->elem_type != GGUF_T_STRING || i >= kv->count)
        return -1;
    const uint8_t *p = kv->value;
    for (uint64_t k = 0; k < i; k++)
        p += 8 + le(p, 8);
    out->len = le(p, 8);
    out->ptr = p + 8;
    return 0;
}

/* Bytes of the valid UTF-8 sequence (2..4, no overlongs, no surrogates, at most U+10FFFF) at p, or 0. */
static int utf8_seq(const uint8_t *p, uint64_t left)
{
    const uint8_t b = p[0];
    const int n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n == 0 || (uint64_t)n > left)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((b == 0xe0 && p[1] < 0xa0) || (b == 0xed && p[1] > 0x9f) || (b == 0xf0 && p[1] < 0x90) ||
        (b == 0xf4 && p[1] > 0x8f))
        return 0;
    return n;
}

char *gguf_str_dup(gguf_str s)
{
    char *out = malloc(s.len + 1);
    if (!out)
        return NULL;
    for (uint64_t i = 0; i < s.len;) {
        const uint8_t b = s.ptr[i];
        int n = b >= 0x20 && b < 0x7f ? 1 : b >= 0x80 ? utf8_seq(s.ptr + i, s.len - i) : 0;
        if (n == 0) {
            out[i++] = '?';
            continue;
        }
        memcpy(out + i, s.ptr + i, (size_t)n);
        i += (uint64_t)n;
    }
    out[s.len] = '\0';
    return out;
}
