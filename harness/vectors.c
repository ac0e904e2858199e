/* hsdr-vectors/1 loader. cJSON gives no source positions, so a small scanner walks the same text in the same
 * (document) order and records where every JSON value starts; the i-th value cJSON visits in pre-order is the i-th
 * value the scanner saw. That gives every error a line:column and lets int64 fields be read from their exact text
 * (cJSON stores numbers as doubles, which cannot hold every int64). */
#include "vectors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "util.h"

static const char *const kind_names[VEC_KIND_COUNT] = {"lns8_encode", "ptq1_0_pack", "ptq1_0_quantize", "group",
                                                       "matvec"};

const char *vec_kind_name(vec_kind k)
{
    return (unsigned)k < VEC_KIND_COUNT ? kind_names[k] : "?";
}

/* ---- value positions ---- */

typedef struct {
    const cJSON *node;
    size_t offset; /* start of the value in the text */
} value_pos;

typedef struct {
    const char *text;
    size_t len, at;
    size_t *starts; /* value start offsets in document order */
    size_t n, cap;
    value_pos *map; /* node -> offset, sorted by node */
    size_t nmap;
} positions;

/* JSON whitespace (RFC 8259). cJSON also skips any other byte up to 0x20 between tokens; the scanner does not, so
 * such bytes are refused first (first_stray_control) and both walk the same tokens. */
static bool json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(positions *p)
{
    while (p->at < p->len && json_space(p->text[p->at]))
        p->at++;
}

/* A UTF-8 byte order mark at the start: cJSON skips it, and so do the scanner and the line:column count. */
static size_t bom_bytes(const char *text)
{
    return text[0] == '\xef' && text[1] == '\xbb' && text[2] == '\xbf' ? 3 : 0;
}

/* Offset of the first control byte outside a string that is not JSON whitespace, or len. */
static size_t first_stray_control(const char *text, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c < 0x20 && !json_space((char)c)) {
            return i;
        }
    }
    return len;
}

static void skip_string(positions *p)
{
    p->at++; /* opening quote */
    while (p->at < p->len && p->text[p->at] != '"')
        p->at += p->text[p->at] == '\\' ? 2 : 1;
    p->at++;
}

static int push_start(positions *p)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        size_t *grown = realloc(p->starts, cap * sizeof *grown);
        if (!grown)
            return -1;
        p->starts = grown;
        p->cap = cap;
    }
    p->starts[p->n++] = p->at;
    return 0;
}

/* Scan one value (the text is already known to be valid JSON). */
static int scan_value(positions *p, int depth)
{
    skip_ws(p);
    if (p->at >= p->len || depth > 1000 || push_start(p) != 0)
        return -1;
    char c = p->text[p->at];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        p->at++;
        skip_ws(p);
        if (p->at < p->len && p->text[p->at] == close) {
            p->at++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                skip_ws(p);
                skip_string(p); /* key */
                skip_ws(p);
                p->at++; /* ':' */
            }
            if (scan_value(p, depth + 1) != 0)
                return -1;
            skip_ws(p);
            if (p->at >= p->len)
                return -1;
            if (p->text[p->at++] == close)
                return 0;
        }
    }
    if (c == '"') {
        skip_string(p);
        return 0;
    }
    while (p->at < p->len && !strchr(",]} \t\r\n", p->text[p->at]))
        p->at++;
    return 0;
}

/* Whether the text at a recorded start can begin a value of node's type: the check that scanner and cJSON walk the
 * text in step (a value read at the wrong place would be a wrong value, not an error). */
static bool starts_like(const cJSON *node, char c)
{
    if (cJSON_IsObject(node))
        return c == '{';
    if (cJSON_IsArray(node))
        return c == '[';
    if (cJSON_IsString(node))
        return c == '"';
    if (cJSON_IsNumber(node))
        return c == '-' || (c >= '0' && c <= '9');
    if (cJSON_IsBool(node))
        return c == 't' || c == 'f';
    return c == 'n';
}

/* Pairs the i-th node of cJSON's pre-order with the i-th start; false when they are out of step. */
static bool collect_nodes(const cJSON *node, positions *p, size_t *i)
{
    if (*i >= p->n || !starts_like(node, p->text[p->starts[*i]]))
        return false;
    p->map[p->nmap].node = node;
    p->map[p->nmap].offset = p->starts[*i];
    p->nmap++;
    (*i)++;
    for (const cJSON *c = node->child; c; c = c->next)
        if (!collect_nodes(c, p, i))
            return false;
    return true;
}

static int cmp_pos(const void *a, const void *b)
{
    const cJSON *x = ((const value_pos *)a)->node, *y = ((const value_pos *)b)->node;
    return x < y ? -1 : x > y;
}

static size_t node_offset(const positions *p, const cJSON *node)
{
    size_t lo = 0, hi = p->nmap;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->map[mid].node == node)
            return p->map[mid].offset;
        if (p->map[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void offset_line_col(const char *text, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = bom_bytes(text); i < off && text[i]; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ---- validation context ---- */

typedef struct {
    const char *path;
    positions pos;
    const char *case_id; /* NULL before the id is known */
    int case_index;
    char *err;
    size_t errlen;
} ctx;

/* Error at node (or at the case when node is NULL) naming file:line:col, case and field. */
static int fail_at(ctx *c, const cJSON *node, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(ctx *c, const cJSON *node, const char *field, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line = 1, col = 1;
    if (node)
        offset_line_col(c->pos.text, node_offset(&c->pos, node), &line, &col);
    if (c->case_index >= 0)
        snprintf(c->err, c->errlen, "%s:%d:%d: case '%s' (#%d): field '%s': %s", c->path, line, col,
                 c->case_id ? c->case_id : "?", c->case_index, field, what);
    else
        snprintf(c->err, c->errlen, "%s:%d:%d: field '%s': %s", c->path, line, col, field, what);
    return -1;
}

static const char *type_name(const cJSON *n)
{
    if (!n)
        return "nothing";
    if (cJSON_IsNumber(n))
        return "a number";
    if (cJSON_IsString(n))
        return "a string";
    if (cJSON_IsArray(n))
        return "an array";
    if (cJSON_IsObject(n))
        return "an object";
    if (cJSON_IsBool(n))
        return "a boolean";
    if (cJSON_IsNull(n))
        return "null";
    return "an invalid value";
}

/* Required member of an object, or NULL after reporting it missing (at the parent object). */
static const cJSON *member(ctx *c, const cJSON *obj, const char *key, const char *field)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!m)
        fail_at(c, obj, field, "missing required field");
    return m;
}

/* Integer from the exact text of a number value, within [lo, hi]. */
static int get_int64(ctx *c, const cJSON *n, const char *field, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(n))
        return fail_at(c, n, field, "expected an integer, got %s", type_name(n));
    const char *s = c->pos.text + node_offset(&c->pos, n);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return fail_at(c, n, field, "integer out of range");
    if (*end == '.' || *end == 'e' || *end == 'E') {
        /* 12.0 or 1e3: accept when the value is an integer that a double holds exactly */
        double d = n->valuedouble;
        if (d != floor(d) || fabs(d) > 9007199254740992.0)
            return fail_at(c, n, field, "expected an integer, got %.17g", d);
        v = (long long)d;
    }
    if (v < lo || v > hi)
        return fail_at(c, n, field, "value %lld outside %lld..%lld", v, (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

static int get_int(ctx *c, const cJSON *n, const char *field, int lo, int hi, int *out)
{
    int64_t v;
    if (get_int64(c, n, field, lo, hi, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* A JSON number as fp32: must be finite and within fp32 range (parse as double, convert to fp32). */
static int get_f32(ctx *c, const cJSON *n, const char *field, float *out)
{
    if (!cJSON_IsNumber(n))
        return fail_at(c, n, field, "expected a number, got %s", type_name(n));
    double d = n->valuedouble;
    if (!isfinite(d))
        return fail_at(c, n, field, "non-finite number (write Inf/NaN through x_bits)");
    float f = (float)d;
    if (isinf(f))
        return fail_at(c, n, field, "%.17g overflows fp32", d);
    *out = f;
    return 0;
}

/* A decimal string holding an exact reference value. */
static int get_decimal(ctx *c, const cJSON *n, const char *field, double *out)
{
    if (!cJSON_IsString(n))
        return fail_at(c, n, field, "expected a decimal string, got %s", type_name(n));
    char *end;
    errno = 0;
    double d = strtod(n->valuestring, &end);
    if (end == n->valuestring || *end != '\0' || !isfinite(d))
        return fail_at(c, n, field, "'%s' is not a finite decimal number", n->valuestring);
    *out = d;
    return 0;
}

/* Array of exactly `want` elements (want = 0: any length in 1..max); returns its size or -1. */
static int get_array(ctx *c, const cJSON *n, const char *field, int want, int max)
{
    if (!cJSON_IsArray(n))
        return fail_at(c, n, field, "expected an array, got %s", type_name(n));
    int len = cJSON_GetArraySize(n);
    if (want > 0 && len != want)
        return fail_at(c, n, field, "expected %d elements, got %d", want, len);
    if (want == 0 && (len < 1 || len > max))
        return fail_at(c, n, field, "expected 1..%d elements, got %d", max, len);
    return len;
}

static int get_int_array(ctx *c, const cJSON *n, const char *field, int want, int max, int64_t lo, int64_t hi,
                         int64_t *out, int *count)
{
    int len = get_array(c, n, field, want, max);
    if (len < 0)
        return -1;
    int i = 0;
    char f[128];
    for (const cJSON *e = n->child; e; e = e->next, i++) {
        snprintf(f, sizeof f, "%s[%d]", field, i);
        if (get_int64(c, e, f, lo, hi, &out[i]) != 0)
            return -1;
    }
    if (count)
        *count = len;
    return 0;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static int get_hex(ctx *c, const cJSON *n, const char *field, uint8_t *out, size_t nbytes)
{
    if (!cJSON_IsString(n))
        return fail_at(c, n, field, "expected a hex string, got %s", type_name(n));
    size_t len = strlen(n->valuestring);
    if (len != 2 * nbytes)
        return fail_at(c, n, field, "expected %zu hex characters (%zu bytes), got %zu", 2 * nbytes, nbytes, len);
    for (size_t i = 0; i < nbytes; i++) {
        int hi = hexval(n->valuestring[2 * i]), lo = hexval(n->valuestring[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return fail_at(c, n, field, "character %zu is not a hex digit", hi < 0 ? 2 * i : 2 * i + 1);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static int get_d_bits(ctx *c, const cJSON *obj, uint16_t *out)
{
    const cJSON *n = member(c, obj, "d_f16_bits", "d_f16_bits");
    int v;
    if (!n || get_int(c, n, "d_f16_bits", 0, 65535, &v) != 0)
        return -1;
    if ((v & 0x7c00) == 0x7c00)
        return fail_at(c, n, "d_f16_bits", "0x%04x is an fp16 Inf/NaN, not a scale", v);
    *out = (uint16_t)v;
    return 0;
}

static int get_ternary(ctx *c, const cJSON *n, const char *field, int want, int max, int8_t *t, int *count)
{
    int64_t v[128];
    if (get_int_array(c, n, field, want, max, -1, 1, v, count) != 0)
        return -1;
    for (int i = 0; i < (want ? want : *count); i++)
        t[i] = (int8_t)v[i];
    return 0;
}

/* ---- per-kind parsers ---- */

static int parse_lns8_encode(ctx *c, const cJSON *cs, vec_case *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cs, "x");
    const cJSON *xb = cJSON_GetObjectItemCaseSensitive(cs, "x_bits");
    if (!x && !xb)
        return fail_at(c, cs, "x", "missing required field (x or x_bits)");
    const cJSON *src = x ? x : xb;
    const char *fname = x ? "x" : "x_bits";
    int len = get_array(c, src, fname, 0, 1 << 24);
    if (len < 0)
        return -1;
    v->n = (size_t)len;
    v->x = malloc(sizeof(float) * v->n);
    v->expect_codes = malloc(v->n);
    if (!v->x || !v->expect_codes)
        return fail_at(c, cs, fname, "out of memory");
    bool has_nan = false;
    int i = 0;
    char f[64];
    for (const cJSON *e = src->child; e; e = e->next, i++) {
        snprintf(f, sizeof f, "%s[%d]", fname, i);
        if (x) {
            if (get_f32(c, e, f, &v->x[i]) != 0)
                return -1;
        } else {
            int64_t bits;
            if (get_int64(c, e, f, 0, 0xffffffffLL, &bits) != 0)
                return -1;
            v->x[i] = hsdr_f32_from_bits((uint32_t)bits);
            has_nan |= isnan(v->x[i]);
        }
    }
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(cs, "prescale_e");
    if (pe && get_int(c, pe, "prescale_e", -1000, 1000, &v->prescale_e) != 0)
        return -1;
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(cs, "auto_prescale");
    if (ap) {
        if (!cJSON_IsBool(ap))
            return fail_at(c, ap, "auto_prescale", "expected true or false, got %s", type_name(ap));
        v->auto_prescale = cJSON_IsTrue(ap);
    }
    if (pe && v->auto_prescale)
        return fail_at(c, pe, "prescale_e", "both prescale_e and auto_prescale: give one");
    const cJSON *ex = member(c, cs, "expect", "expect");
    if (!ex)
        return -1;
    const cJSON *er = cJSON_GetObjectItemCaseSensitive(ex, "error");
    if (er) {
        if (!cJSON_IsBool(er))
            return fail_at(c, er, "expect.error", "expected true or false, got %s", type_name(er));
        v->expect_error = cJSON_IsTrue(er);
    }
    if (v->expect_error)
        return 0;
    if (has_nan)
        return fail_at(c, src, fname, "NaN input must be refused: the case must expect {\"error\": true}");
    const cJSON *codes = member(c, ex, "codes", "expect.codes");
    int64_t *tmp = malloc(sizeof(int64_t) * v->n);
    if (!codes || !tmp) {
        free(tmp);
        return codes ? fail_at(c, cs, "expect.codes", "out of memory") : -1;
    }
    int rc = get_int_array(c, codes, "expect.codes", (int)v->n, 0, 0, 255, tmp, NULL);
    for (size_t j = 0; rc == 0 && j < v->n; j++)
        v->expect_codes[j] = (uint8_t)tmp[j];
    free(tmp);
    if (rc != 0)
        return -1;
    if (v->auto_prescale) {
        const cJSON *e = member(c, ex, "prescale_e", "expect.prescale_e");
        if (!e || get_int(c, e, "expect.prescale_e", -1000, 1000, &v->expect_prescale_e) != 0)
            return -1;
    }
    return 0;
}

static int parse_ptq1_0_pack(ctx *c, const cJSON *cs, vec_case *v)
{
    const cJSON *t = member(c, cs, "t", "t");
    if (!t || get_ternary(c, t, "t", 128, 0, v->t, NULL) != 0 || get_d_bits(c, cs, &v->d_bits) != 0)
        return -1;
    const cJSON *ex = member(c, cs, "expect", "expect");
    const cJSON *b = ex ? member(c, ex, "block_hex", "expect.block_hex") : NULL;
    return b ? get_hex(c, b, "expect.block_hex", v->block, 28) : -1;
}

static int parse_ptq1_0_quantize(ctx *c, const cJSON *cs, vec_case *v)
{
    const cJSON *w = member(c, cs, "w", "w");
    if (!w || get_array(c, w, "w", 128, 0) < 0)
        return -1;
    v->n = 128;
    if (!(v->x = malloc(sizeof(float) * 128)))
        return fail_at(c, cs, "w", "out of memory");
    int i = 0;
    char f[32];
    for (const cJSON *e = w->child; e; e = e->next, i++) {
        snprintf(f, sizeof f, "w[%d]", i);
        if (get_f32(c, e, f, &v->x[i]) != 0)
            return -1;
    }
    const cJSON *ex = member(c, cs, "expect", "expect");
    const cJSON *b = ex ? member(c, ex, "block_hex", "expect.block_hex") : NULL;
    return b ? get_hex(c, b, "expect.block_hex", v->block, 28) : -1;
}

static int parse_flns(ctx *c, const cJSON *fl, vec_case *v)
{
    const cJSON *F = member(c, fl, "F", "expect.flns.F"), *b = member(c, fl, "b", "expect.flns.b");
    const cJSON *lam = member(c, fl, "lambda_fix", "expect.flns.lambda_fix");
    const cJSON *sg = member(c, fl, "sign", "expect.flns.sign");
    int64_t lambda;
    if (!F || !b || !lam || !sg || get_int(c, F, "expect.flns.F", 0, 8, &v->flns_F) != 0 ||
        get_int(c, b, "expect.flns.b", 4, 16, &v->flns_b) != 0 ||
        get_int64(c, lam, "expect.flns.lambda_fix", INT32_MIN, INT32_MAX, &lambda) != 0 ||
        get_int(c, sg, "expect.flns.sign", -1, 1, &v->flns_sign) != 0)
        return -1;
    v->flns_lambda = (int32_t)lambda;
    v->has_flns = true;
    return 0;
}

static int parse_group(ctx *c, const cJSON *cs, vec_case *v)
{
    const cJSON *codes = member(c, cs, "codes", "codes");
    const cJSON *t = member(c, cs, "t", "t");
    if (!codes || !t)
        return -1;
    int64_t tmp[128];
    int n, nt;
    if (get_int_array(c, codes, "codes", 0, 128, 0, 255, tmp, &n) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        v->codes[i] = (uint8_t)tmp[i];
    if (get_ternary(c, t, "t", 0, 128, v->t, &nt) != 0)
        return -1;
    if (nt != n)
        return fail_at(c, t, "t", "%d entries but codes has %d", nt, n);
    v->n = (size_t)n;
    if (get_d_bits(c, cs, &v->d_bits) != 0)
        return -1;
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(cs, "prescale_e");
    if (pe && get_int(c, pe, "prescale_e", -1000, 1000, &v->prescale_e) != 0)
        return -1;
    const cJSON *ex = member(c, cs, "expect", "expect");
    if (!ex)
        return -1;
    const cJSON *A = member(c, ex, "A", "expect.A");
    if (!A || get_int_array(c, A, "expect.A", 8, 0, -(1 << 23), 1 << 23, tmp, NULL) != 0)
        return -1;
    for (int p = 0; p < 8; p++)
        v->expect_A[p] = (int32_t)tmp[p];
    const cJSON *C = cJSON_GetObjectItemCaseSensitive(ex, "C");
    if (C) {
        if (!cJSON_IsObject(C))
            return fail_at(c, C, "expect.C", "expected an object mapping codes to counts, got %s", type_name(C));
        v->has_C = true;
        for (const cJSON *e = C->child; e; e = e->next) {
            char f[64];
            snprintf(f, sizeof f, "expect.C[\"%s\"]", e->string);
            char *end;
            long k = strtol(e->string, &end, 10);
            if (*e->string == '\0' || *end != '\0' || k < 1 || k > 127)
                return fail_at(c, e, f, "key '%s' is not a code 1..127", e->string);
            int cnt;
            if (get_int(c, e, f, -128, 128, &cnt) != 0)
                return -1;
            v->expect_C[k] = (int16_t)cnt;
        }
    }
    const cJSON *gs = member(c, ex, "group_sum", "expect.group_sum");
    const cJSON *q = member(c, ex, "q15_16", "expect.q15_16");
    if (!gs || !q || get_decimal(c, gs, "expect.group_sum", &v->expect_group_sum) != 0 ||
        get_int64(c, q, "expect.q15_16", INT64_MIN, INT64_MAX, &v->expect_q1516) != 0)
        return -1;
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(ex, "flns");
    if (fl) {
        if (!cJSON_IsObject(fl))
            return fail_at(c, fl, "expect.flns", "expected an object, got %s", type_name(fl));
        if (parse_flns(c, fl, v) != 0)
            return -1;
    }
    return 0;
}

#define MATVEC_MAX_K (1 << 20)
#define MATVEC_MAX_N (1 << 20)
#define MATVEC_MAX_BYTES ((size_t)1 << 30)

static int parse_matvec(ctx *c, const cJSON *cs, vec_case *v)
{
    const cJSON *K = member(c, cs, "K", "K"), *N = member(c, cs, "N", "N");
    if (!K || !N || get_int(c, K, "K", 1, MATVEC_MAX_K, &v->K) != 0 || get_int(c, N, "N", 1, MATVEC_MAX_N, &v->N) != 0)
        return -1;
    if (v->K % 128 != 0)
        return fail_at(c, K, "K", "K = %d is not a multiple of 128", v->K);
    const int G = v->K / 128;
    size_t wbytes = (size_t)v->N * G * 28;
    if (wbytes > MATVEC_MAX_BYTES)
        return fail_at(c, N, "N", "N x K = %d x %d needs %zu weight bytes, above the %zu limit", v->N, v->K, wbytes,
                       MATVEC_MAX_BYTES);
    const cJSON *w = member(c, cs, "weights_hex", "weights_hex");
    if (!w || !(v->weights = malloc(wbytes)) || get_hex(c, w, "weights_hex", v->weights, wbytes) != 0)
        return w && !v->weights ? fail_at(c, w, "weights_hex", "out of memory") : -1;
    const cJSON *x = member(c, cs, "x", "x");
    if (!x || get_array(c, x, "x", v->K, 0) < 0)
        return -1;
    v->n = (size_t)v->K;
    size_t N_ = (size_t)v->N;
    v->x = malloc(sizeof(float) * v->n);
    v->expect_y_exact = malloc(sizeof(double) * N_);
    v->expect_y_q8_0 = malloc(sizeof(float) * N_);
    v->expect_y_lns8 = malloc(sizeof(double) * N_);
    v->expect_q_rows = malloc(sizeof(int64_t) * N_);
    if (!v->x || !v->expect_y_exact || !v->expect_y_q8_0 || !v->expect_y_lns8 || !v->expect_q_rows)
        return fail_at(c, cs, "x", "out of memory");
    int i = 0;
    char f[64];
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        snprintf(f, sizeof f, "x[%d]", i);
        if (get_f32(c, e, f, &v->x[i]) != 0)
            return -1;
    }
    const cJSON *ex = member(c, cs, "expect", "expect");
    if (!ex)
        return -1;
    const cJSON *ye = member(c, ex, "y_exact", "expect.y_exact"), *yq = member(c, ex, "y_q8_0", "expect.y_q8_0");
    const cJSON *pe = member(c, ex, "prescale_e", "expect.prescale_e");
    const cJSON *yl = member(c, ex, "y_lns8", "expect.y_lns8"), *q = member(c, ex, "q15_16", "expect.q15_16");
    if (!ye || !yq || !pe || !yl || !q || get_array(c, ye, "expect.y_exact", v->N, 0) < 0 ||
        get_array(c, yq, "expect.y_q8_0", v->N, 0) < 0 || get_array(c, yl, "expect.y_lns8", v->N, 0) < 0 ||
        get_array(c, q, "expect.q15_16", v->N, 0) < 0 ||
        get_int(c, pe, "expect.prescale_e", -1000, 1000, &v->expect_prescale_e) != 0)
        return -1;
    const cJSON *a = ye->child, *b = yq->child, *l = yl->child, *qq = q->child;
    for (i = 0; i < v->N; i++, a = a->next, b = b->next, l = l->next, qq = qq->next) {
        char f1[64], f2[64], f3[64], f4[64];
        snprintf(f1, sizeof f1, "expect.y_exact[%d]", i);
        snprintf(f2, sizeof f2, "expect.y_q8_0[%d]", i);
        snprintf(f3, sizeof f3, "expect.y_lns8[%d]", i);
        snprintf(f4, sizeof f4, "expect.q15_16[%d]", i);
        if (get_decimal(c, a, f1, &v->expect_y_exact[i]) != 0 || get_f32(c, b, f2, &v->expect_y_q8_0[i]) != 0 ||
            get_decimal(c, l, f3, &v->expect_y_lns8[i]) != 0 ||
            get_int64(c, qq, f4, INT64_MIN, INT64_MAX, &v->expect_q_rows[i]) != 0)
            return -1;
    }
    const cJSON *A = cJSON_GetObjectItemCaseSensitive(ex, "A");
    if (A) {
        if (get_array(c, A, "expect.A", v->N, 0) < 0)
            return -1;
        if (!(v->expect_mA = malloc(sizeof(int32_t) * N_ * G * 8)))
            return fail_at(c, A, "expect.A", "out of memory");
        int r = 0;
        for (const cJSON *row = A->child; row; row = row->next, r++) {
            snprintf(f, sizeof f, "expect.A[%d]", r);
            if (get_array(c, row, f, G, 0) < 0)
                return -1;
            int g = 0;
            for (const cJSON *grp = row->child; grp; grp = grp->next, g++) {
                int64_t tmp[8];
                char fg[80];
                snprintf(fg, sizeof fg, "expect.A[%d][%d]", r, g);
                if (get_int_array(c, grp, fg, 8, 0, -(1 << 23), 1 << 23, tmp, NULL) != 0)
                    return -1;
                for (int p = 0; p < 8; p++)
                    v->expect_mA[((size_t)r * G + g) * 8 + p] = (int32_t)tmp[p];
            }
        }
    }
    return 0;
}

static void free_case(vec_case *v)
{
    free(v->id);
    free(v->x);
    free(v->expect_codes);
    free(v->weights);
    free(v->expect_y_exact);
    free(v->expect_y_q8_0);
    free(v->expect_y_lns8);
    free(v->expect_q_rows);
    free(v->expect_mA);
}

void vec_free(vec_file *f)
{
    for (size_t i = 0; i < f->ncases; i++)
        free_case(&f->cases[i]);
    free(f->cases);
    free(f->path);
    free(f->description);
    memset(f, 0, sizeof *f);
}

static int parse_case(ctx *c, const cJSON *cs, vec_case *v)
{
    if (!cJSON_IsObject(cs))
        return fail_at(c, cs, "cases", "expected an object, got %s", type_name(cs));
    int col;
    offset_line_col(c->pos.text, node_offset(&c->pos, cs), &v->line, &col);
    const cJSON *id = member(c, cs, "id", "id");
    if (!id)
        return -1;
    if (!cJSON_IsString(id) || id->valuestring[0] == '\0')
        return fail_at(c, id, "id", "expected a non-empty string, got %s", type_name(id));
    c->case_id = id->valuestring;
    if (!(v->id = strdup(id->valuestring)))
        return fail_at(c, id, "id", "out of memory");
    const cJSON *kind = member(c, cs, "kind", "kind");
    if (!kind)
        return -1;
    if (!cJSON_IsString(kind))
        return fail_at(c, kind, "kind", "expected a string, got %s", type_name(kind));
    int k = 0;
    while (k < VEC_KIND_COUNT && strcmp(kind->valuestring, kind_names[k]) != 0)
        k++;
    if (k == VEC_KIND_COUNT)
        return fail_at(c, kind, "kind", "unknown kind '%s' (known: lns8_encode, ptq1_0_pack, ptq1_0_quantize, group, "
                                        "matvec)", kind->valuestring);
    v->kind = (vec_kind)k;
    switch (v->kind) {
    case VEC_LNS8_ENCODE: return parse_lns8_encode(c, cs, v);
    case VEC_PTQ1_0_PACK: return parse_ptq1_0_pack(c, cs, v);
    case VEC_PTQ1_0_QUANTIZE: return parse_ptq1_0_quantize(c, cs, v);
    case VEC_GROUP: return parse_group(c, cs, v);
    default: return parse_matvec(c, cs, v);
    }
}

static int cmp_case_id(const void *a, const void *b)
{
    return strcmp((*(const vec_case *const *)a)->id, (*(const vec_case *const *)b)->id);
}

int vec_load(const char *path, vec_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = hsdr_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = vec_load_text(path, text, len, out, err, errlen);
    free(text);
    return rc;
}

int vec_load_text(const char *path, const char *data, size_t len, vec_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *nul = memchr(data, '\0', len);
    if (nul) {
        int line, col;
        offset_line_col(data, (size_t)(nul - data), &line, &col);
        return hsdr_errorf(err, errlen, "%s:%d:%d: contains a NUL byte: not a JSON text", path, line, col);
    }
    /* the scanner and strtoll read up to a terminating NUL: work on a terminated copy, whatever the caller holds */
    char *text = malloc(len + 1);
    if (!text)
        return hsdr_errorf(err, errlen, "%s: out of memory", path);
    memcpy(text, data, len);
    text[len] = '\0';
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1, col = 1;
        if (at && at >= text && at <= text + len)
            offset_line_col(text, (size_t)(at - text), &line, &col);
        hsdr_errorf(err, errlen, "%s:%d:%d: malformed JSON%s", path, line, col,
                    len == 0 ? " (empty file)" : (at && at >= text + len ? " (truncated?)" : ""));
        free(text);
        return -1;
    }
    ctx c = {.path = path, .pos = {.text = text, .len = len, .at = bom_bytes(text)}, .case_index = -1, .err = err,
             .errlen = errlen};
    int rc = -1;
    size_t idx = 0;
    size_t stray = first_stray_control(text, len);
    if (stray < len) {
        int line, col;
        offset_line_col(text, stray, &line, &col);
        hsdr_errorf(err, errlen, "%s:%d:%d: malformed JSON: control character 0x%02x outside a string", path, line, col,
                    (unsigned char)text[stray]);
        goto done;
    }
    if (scan_value(&c.pos, 0) != 0) {
        int line, col;
        offset_line_col(text, c.pos.at < len ? c.pos.at : len, &line, &col);
        hsdr_errorf(err, errlen, "%s:%d:%d: loader bug: the position scanner stopped (or ran out of memory)", path,
                    line, col);
        goto done;
    }
    if (!(c.pos.map = malloc(sizeof(value_pos) * (c.pos.n + 1)))) {
        hsdr_errorf(err, errlen, "%s: out of memory indexing the JSON text", path);
        goto done;
    }
    if (!collect_nodes(root, &c.pos, &idx) || idx != c.pos.n) {
        int line = 1, col = 1;
        if (idx < c.pos.n)
            offset_line_col(text, c.pos.starts[idx], &line, &col);
        hsdr_errorf(err, errlen, "%s:%d:%d: loader bug: value positions out of step with the JSON parser", path, line,
                    col);
        goto done;
    }
    qsort(c.pos.map, c.pos.nmap, sizeof(value_pos), cmp_pos);

    if (!cJSON_IsObject(root)) {
        fail_at(&c, root, "(top level)", "expected an object, got %s", type_name(root));
        goto done;
    }
    const cJSON *schema = member(&c, root, "schema", "schema");
    if (!schema)
        goto done;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "hsdr-vectors/1") != 0) {
        fail_at(&c, schema, "schema", "expected \"hsdr-vectors/1\"");
        goto done;
    }
    const cJSON *desc = member(&c, root, "description", "description");
    if (!desc)
        goto done;
    if (!cJSON_IsString(desc)) {
        fail_at(&c, desc, "description", "expected a string, got %s", type_name(desc));
        goto done;
    }
    const cJSON *cases = member(&c, root, "cases", "cases");
    if (!cases)
        goto done;
    if (!cJSON_IsArray(cases)) {
        fail_at(&c, cases, "cases", "expected an array, got %s", type_name(cases));
        goto done;
    }
    out->path = strdup(path);
    out->description = strdup(desc->valuestring);
    size_t n = (size_t)cJSON_GetArraySize(cases);
    out->cases = calloc(n ? n : 1, sizeof(vec_case));
    if (!out->path || !out->description || !out->cases) {
        hsdr_errorf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    for (const cJSON *cs = cases->child; cs; cs = cs->next) {
        c.case_index = (int)out->ncases;
        c.case_id = NULL;
        vec_case *v = &out->cases[out->ncases++];
        if (parse_case(&c, cs, v) != 0)
            goto done;
    }
    /* ids must be unique within a file (hsdr check also checks across files) */
    const vec_case **byid = malloc(sizeof(vec_case *) * (out->ncases + 1));
    if (!byid) {
        hsdr_errorf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    for (size_t i = 0; i < out->ncases; i++)
        byid[i] = &out->cases[i];
    qsort(byid, out->ncases, sizeof(vec_case *), cmp_case_id);
    for (size_t i = 1; i < out->ncases; i++)
        if (strcmp(byid[i - 1]->id, byid[i]->id) == 0) {
            int a = byid[i - 1]->line < byid[i]->line ? byid[i - 1]->line : byid[i]->line;
            int b = byid[i - 1]->line < byid[i]->line ? byid[i]->line : byid[i - 1]->line;
            hsdr_errorf(err, errlen, "%s:%d: case id '%s' already used at line %d", path, b, byid[i]->id, a);
            free(byid);
            goto done;
        }
    free(byid);
    rc = 0;
done:
    if (rc != 0)
        vec_free(out);
    cJSON_Delete(root);
    free(c.pos.starts);
    free(c.pos.map);
    free(text);
    return rc;
}
