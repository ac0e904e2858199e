#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int hsdr_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

char *hsdr_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        hsdr_errorf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        char *grown = realloc(buf, cap + 1);
        if (!grown)
            free(buf);
        buf = grown;
    }
    int read_error = ferror(f);
    fclose(f);
    if (!buf) {
        hsdr_errorf(err, errlen, "%s: out of memory reading the file", path);
        return NULL;
    }
    if (read_error) {
        free(buf);
        hsdr_errorf(err, errlen, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

double hsdr_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int hsdr_glob_match(const char *pattern, const char *name)
{
    return fnmatch(pattern, name, 0) == 0;
}

int hsdr_parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "hsdr: %s: '%s' is not an integer in %ld..%ld\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int hsdr_glob_list_match(const char *list, const char *name)
{
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char pattern[256];
        if (n > 0 && n < sizeof pattern) {
            memcpy(pattern, p, n);
            pattern[n] = '\0';
            if (hsdr_glob_match(pattern, name))
                return 1;
        }
        p += n + (end != NULL);
    }
    return 0;
}

int hsdr_verr_at(char *err, size_t errlen, const char *name, uint64_t at, const char *field, const char *fmt,
                 va_list ap)
{
    int n = snprintf(err, errlen, "%s: offset %" PRIu64 ": %s: ", name, at, field);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}
