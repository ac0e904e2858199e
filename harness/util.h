/* Small shared helpers of the harness: file reading, error buffers, the exit-code convention. */
#ifndef HSDR_UTIL_H
#define HSDR_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of every hsdr command. */
enum { HSDR_EXIT_OK = 0, HSDR_EXIT_FAIL = 1, HSDR_EXIT_USAGE = 2 };

/* Whole file into a NUL-terminated buffer (caller frees). NULL with a message in err on failure. */
char *hsdr_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* snprintf into err; returns -1 so callers can `return hsdr_errorf(...)`. */
int hsdr_errorf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Strict integer parse of an option value (the whole string, lo..hi); on error prints
 * "hsdr: OPT: 'S' is not an integer in LO..HI" and returns -1. */
int hsdr_parse_long(const char *opt, const char *s, long lo, long hi, long *out);
/* Monotonic clock in ns (exact in a double for centuries of uptime). */
double hsdr_now_ns(void);
/* 1 when name matches the shell glob pattern (fnmatch). */
int hsdr_glob_match(const char *pattern, const char *name);
/* 1 when name matches one of the comma-separated shell glob patterns of list ("cpu.*,ref.q8_0"). */
int hsdr_glob_list_match(const char *list, const char *name);

/* A file reader's refusal into err: "NAME: offset AT: FIELD: " then fmt with ap (harness/gguf.c, harness/npy.c).
 * Returns -1. */
int hsdr_verr_at(char *err, size_t errlen, const char *name, uint64_t at, const char *field, const char *fmt,
                 va_list ap) __attribute__((format(printf, 6, 0)));

#endif
