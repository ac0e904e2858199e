/* The .npy reader (npy.h): magic, version, header length, then the header dict parsed as the small subset of Python
 * literal syntax NumPy writes (quoted strings, True/False, a tuple of integers), then the data, converted element by
 * element with a finiteness check. Every read is checked against the bytes left before it happens. */
#include "npy.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "util.h"

#define NPY_MAX_DIMS 32 /* NumPy's own limit; more is refused while parsing the tuple */

typedef struct {
    const char *name;
    const uint8_t *base;
    size_t size; /* bytes of the file */
    size_t pos;
    size_t end;  /* end of the header (parsing never reads at or past it) */
    char *err;
    size_t errlen;
} cursor;

static int fail_at(const cursor *c, size_t at, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(const cursor *c, size_t at, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hsdr_verr_at(c->err, c->errlen, c->name, at, field, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The byte at the cursor as text for a message: 'c', or 0xNN, or "the end of the header". */
static const char *shown(const cursor *c, char *buf, size_t n)
{
    if (c->pos >= c->end)
        snprintf(buf, n, "the end of the header");
    else if (c->base[c->pos] >= 0x20 && c->base[c->pos] < 0x7f)
        snprintf(buf, n, "'%c'", c->base[c->pos]);
    else
        snprintf(buf, n, "byte 0x%02x", c->base[c->pos]);
    return buf;
}

static void skip_spaces(cursor *c)
{
    while (c->pos < c->end && c->base[c->pos] == ' ')
        c->pos++;
}

static int peek(const cursor *c, char ch)
{
    return c->pos < c->end && c->base[c->pos] == (uint8_t)ch;
}

static int expect(cursor *c, char ch, const char *field, const char *what)
{
    char buf[32];
    if (!peek(c, ch))
        return fail_at(c, c->pos, field, "expected '%c' %s, found %s", ch, what, shown(c, buf, sizeof buf));
    c->pos++;
    return 0;
}

/* A quoted string ('...' or "...", no escapes: none of the accepted values has one) into out (at most n - 1). */
static int quoted(cursor *c, const char *field, char *out, size_t n)
{
    char buf[32];
    if (!peek(c, '\'') && !peek(c, '"'))
        return fail_at(c, c->pos, field, "expected a quoted string, found %s", shown(c, buf, sizeof buf));
    const size_t at = c->pos;
    const uint8_t q = c->base[c->pos++];
    size_t len = 0;
    while (c->pos < c->end && c->base[c->pos] != q) {
        uint8_t ch = c->base[c->pos];
        if (ch == '\\' || ch < 0x20 || ch >= 0x7f)
            return fail_at(c, c->pos, field, "byte 0x%02x in a string (escapes and non-ASCII are not accepted)", ch);
        if (len + 1 >= n)
            return fail_at(c, at, field, "a string longer than %zu characters", n - 1);
        out[len++] = (char)ch;
        c->pos++;
    }
    if (c->pos >= c->end)
        return fail_at(c, at, field, "the string does not end before the end of the header");
    c->pos++;
    out[len] = '\0';
    return 0;
}

static int word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    if (c->end - c->pos < n || memcmp(c->base + c->pos, w, n) != 0)
        return 0;
    c->pos += n;
    return 1;
}

/* A tuple of non-negative decimal integers: "()", "(5,)", "(3, 4)", "(3, 4,)". */
static int shape_tuple(cursor *c, uint64_t *dims, int *ndims)
{
    const char *field = "header.shape";
    char buf[32];
    if (expect(c, '(', field, "(a tuple)"))
        return -1;
    *ndims = 0;
    skip_spaces(c);
    while (!peek(c, ')')) {
        if (c->pos >= c->end || c->base[c->pos] < '0' || c->base[c->pos] > '9')
            return fail_at(c, c->pos, field, "expected a non-negative integer or ')', found %s",
                           shown(c, buf, sizeof buf));
        const size_t at = c->pos;
        uint64_t v = 0;
        while (c->pos < c->end && c->base[c->pos] >= '0' && c->base[c->pos] <= '9') {
            v = v * 10 + (uint64_t)(c->base[c->pos++] - '0');
            if (v > INT_MAX)
                return fail_at(c, at, field, "a dimension above %d", INT_MAX);
        }
        if (*ndims == NPY_MAX_DIMS)
            return fail_at(c, at, field, "more than %d dimensions", NPY_MAX_DIMS);
        dims[(*ndims)++] = v;
        skip_spaces(c);
        if (peek(c, ',')) {
            c->pos++;
            skip_spaces(c);
        } else if (!peek(c, ')')) {
            return fail_at(c, c->pos, field, "expected ',' or ')', found %s", shown(c, buf, sizeof buf));
        }
    }
    c->pos++;
    return 0;
}

enum { KEY_DESCR, KEY_FORTRAN, KEY_SHAPE, KEY_COUNT };
static const char *const key_names[KEY_COUNT] = {"descr", "fortran_order", "shape"};

/* The header dict between c->pos and c->end. */
static int header(cursor *c, char *descr, size_t descr_len, size_t *descr_at, int *fortran, size_t *fortran_at,
                  uint64_t *dims, int *ndims, size_t *shape_at)
{
    char buf[32];
    const size_t start = c->pos;
    if (!peek(c, '{'))
        return fail_at(c, c->pos, "header", "expected '{' (the header is a Python dict literal), found %s",
                       shown(c, buf, sizeof buf));
    c->pos++;
    size_t seen[KEY_COUNT] = {0};
    int have[KEY_COUNT] = {0};
    for (;;) {
        skip_spaces(c);
        if (peek(c, '}'))
            break;
        const size_t key_at = c->pos;
        char key[32];
        if (quoted(c, "header", key, sizeof key))
            return -1;
        int k = 0;
        while (k < KEY_COUNT && strcmp(key, key_names[k]) != 0)
            k++;
        if (k == KEY_COUNT)
            return fail_at(c, key_at, "header", "unknown key '%s' (expected descr, fortran_order, shape)", key);
        if (have[k])
            return fail_at(c, key_at, "header", "key '%s' appears again (first at offset %zu)", key, seen[k]);
        have[k] = 1, seen[k] = key_at;
        skip_spaces(c);
        if (expect(c, ':', "header", "after a key"))
            return -1;
        skip_spaces(c);
        if (k == KEY_DESCR) {
            *descr_at = c->pos;
            if (peek(c, '['))
                return fail_at(c, c->pos, "header.descr", "a structured dtype (a list) is not accepted; save a "
                                                          "plain float array ('<f4', '<f2' or '<f8')");
            if (quoted(c, "header.descr", descr, descr_len))
                return -1;
        } else if (k == KEY_FORTRAN) {
            *fortran_at = c->pos;
            if (word(c, "True"))
                *fortran = 1;
            else if (word(c, "False"))
                *fortran = 0;
            else
                return fail_at(c, c->pos, "header.fortran_order", "expected True or False, found %s",
                               shown(c, buf, sizeof buf));
        } else {
            *shape_at = c->pos;
            if (shape_tuple(c, dims, ndims))
                return -1;
        }
        skip_spaces(c);
        if (peek(c, ','))
            c->pos++;
        else if (!peek(c, '}'))
            return fail_at(c, c->pos, "header", "expected ',' or '}' after the value of '%s', found %s", key,
                           shown(c, buf, sizeof buf));
    }
    c->pos++;
    for (int k = 0; k < KEY_COUNT; k++)
        if (!have[k])
            return fail_at(c, start, "header", "key '%s' missing", key_names[k]);
    /* padding: spaces, then the final '\n' as the header's last byte */
    skip_spaces(c);
    if (c->pos + 1 != c->end || c->base[c->pos] != '\n')
        return fail_at(c, c->pos, "header.padding", "found %s after the dict; expected spaces and a final '\\n'",
                       shown(c, buf, sizeof buf));
    return 0;
}

int hsdr_npy_parse(hsdr_npy *a, const char *name, const uint8_t *data, size_t size, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    cursor c = {name, data, size, 0, size, err, errlen};
    static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (size < 6)
        return fail_at(&c, 0, "magic", "needs 6 bytes, %zu left (the file ends at %zu)", size, size);
    if (memcmp(data, magic, 6) != 0)
        return fail_at(&c, 0, "magic", "bytes %02x %02x %02x %02x %02x %02x are not \"\\x93NUMPY\" (not a .npy file)",
                       data[0], data[1], data[2], data[3], data[4], data[5]);
    if (size < 8)
        return fail_at(&c, 6, "version", "needs 2 bytes, %zu left (the file ends at %zu)", size - 6, size);
    a->version_major = data[6];
    if (data[6] < 1 || data[6] > 3 || data[7] != 0)
        return fail_at(&c, 6, "version", "%u.%u is not 1.0, 2.0 or 3.0", data[6], data[7]);
    const int len_bytes = data[6] == 1 ? 2 : 4;
    if (size - 8 < (size_t)len_bytes)
        return fail_at(&c, 8, "header_len", "needs %d bytes, %zu left (the file ends at %zu)", len_bytes, size - 8,
                       size);
    const size_t hstart = 8 + (size_t)len_bytes;
    const uint64_t hlen = le(data + 8, len_bytes);
    if (hlen > size - hstart)
        return fail_at(&c, 8, "header_len", "%" PRIu64 " bytes of header run past the end of the file (%zu left)", hlen,
                       size - hstart);
    c.pos = hstart;
    c.end = hstart + (size_t)hlen;
    char descr[16] = "";
    int fortran = -1, ndims = 0;
    uint64_t dims[NPY_MAX_DIMS];
    size_t descr_at = 0, fortran_at = 0, shape_at = 0;
    if (header(&c, descr, sizeof descr, &descr_at, &fortran, &fortran_at, dims, &ndims, &shape_at))
        return -1;
    size_t item;
    if (strcmp(descr, "<f4") == 0)
        item = 4;
    else if (strcmp(descr, "<f2") == 0)
        item = 2;
    else if (strcmp(descr, "<f8") == 0)
        item = 8;
    else if ((descr[0] == '>' || descr[0] == '<' || descr[0] == '=' || descr[0] == '|') && descr[1] == 'f')
        return fail_at(&c, descr_at, "header.descr", "'%s' is not little-endian float16/32/64; accepted: '<f4', "
                                                     "'<f2', '<f8'", descr);
    else
        return fail_at(&c, descr_at, "header.descr", "'%s' is not a float dtype this reader accepts ('<f4', '<f2', "
                                                     "'<f8')", descr);
    if (fortran)
        return fail_at(&c, fortran_at, "header.fortran_order", "True (column-major); save a C-order array "
                                                               "(np.ascontiguousarray)");
    if (ndims != 2) {
        char text[64] = "";
        for (int i = 0; i < ndims && i < 4; i++)
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%" PRIu64, i ? ", " : "", dims[i]);
        return fail_at(&c, shape_at, "header.shape", "%d dimension%s (%s%s); expected 2: (tokens, K)", ndims,
                       ndims == 1 ? "" : "s", text, ndims > 4 ? ", ..." : "");
    }
    if (dims[0] == 0 || dims[1] == 0)
        return fail_at(&c, shape_at, "header.shape", "(%" PRIu64 ", %" PRIu64 ") is empty; expected at least one "
                                                     "token and one value", dims[0], dims[1]);
    const uint64_t count = dims[0] * dims[1]; /* each <= INT_MAX: no overflow */
    const size_t at = c.end, left = size - at;
    if (count > left / item)
        return fail_at(&c, at, "data", "needs %" PRIu64 " bytes (%" PRIu64 " x %" PRIu64 " x %zu), %zu left "
                                       "(truncated)", count * item, dims[0], dims[1], item, left);
    if (left != count * item)
        return fail_at(&c, at + count * item, "data", "%" PRIu64 " bytes after the %" PRIu64 " x %" PRIu64
                                                      " array's data", left - count * item, dims[0], dims[1]);
    float *x = malloc(sizeof(float) * (size_t)count);
    if (!x)
        return fail_at(&c, at, "data", "out of memory for %" PRIu64 " floats", count);
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *p = data + at + i * item;
        double v;
        if (item == 4) {
            uint32_t u = (uint32_t)le(p, 4);
            float f;
            memcpy(&f, &u, sizeof f);
            v = f;
        } else if (item == 2) {
            v = hsdr_fp16_to_fp32((uint16_t)le(p, 2));
        } else {
            uint64_t u = le(p, 8);
            memcpy(&v, &u, sizeof v);
        }
        const char *bad = isnan(v) ? "NaN" : isinf(v) ? "infinite" : fabs(v) > FLT_MAX ? "beyond float's range" : NULL;
        if (bad) {
            char field[64];
            snprintf(field, sizeof field, "element (%" PRIu64 ", %" PRIu64 ")", i / dims[1], i % dims[1]);
            free(x);
            return fail_at(&c, at + i * item, field, "%s (%g); every activation must be a finite float", bad, v);
        }
        x[i] = (float)v;
    }
    a->rows = (int)dims[0], a->cols = (int)dims[1];
    memcpy(a->descr, descr, 4);
    a->data_offset = at;
    a->x = x;
    return 0;
}

int hsdr_npy_read(hsdr_npy *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    size_t len;
    char *buf = hsdr_read_file(path, &len, err, errlen);
    if (!buf)
        return -1;
    int rc = hsdr_npy_parse(a, path, (const uint8_t *)buf, len, err, errlen);
    free(buf);
    return rc;
}

void hsdr_npy_free(hsdr_npy *a)
{
    free(a->x);
    memset(a, 0, sizeof *a);
}
