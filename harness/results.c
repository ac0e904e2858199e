/* Result files: atomic JSONL + CSV writer, progress file, JSONL reader (schema hsdr-results/1). */
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel.h"
#include "schema.h"
#include "util.h"

/* ---- the CSV columns: derived from the schema's table (schema.c) ---------------------------------------------- */

size_t hsdr_results_csv_columns(const char ***names)
{
    return hsdr_schema_csv_columns(NULL, names);
}

/* ---- formatting -------------------------------------------------------------------------------------------------- */

/* Integers when integral (below 1e17), else the shortest of %.15g / %.16g / %.17g that reads back to the same
 * double: exact, and short where a short form exists. "" when not finite. */
static void format_number(double v, char *buf, size_t n)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return;
    }
    if (v == floor(v) && fabs(v) < 1e17) {
        snprintf(buf, n, "%" PRId64, (int64_t)v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* ---- exact JSON printing ----------------------------------------------------------------------------------------- */

/* cJSON_PrintUnformatted prints a double with 15 significant digits whenever that reads back within a relative
 * epsilon, so it changes the last bits of raw samples (and merge would alter the rows it copies). This printer has
 * the same layout but exact numbers (format_number; NaN and infinities print as null, as in cJSON). */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} json_buf;

static void jb_put(json_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *g = realloc(b->buf, cap);
        if (!g) {
            b->failed = 1;
            return;
        }
        b->buf = g;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void jb_puts(json_buf *b, const char *s)
{
    jb_put(b, s, strlen(s));
}

static void jb_string(json_buf *b, const char *s)
{
    jb_put(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jb_put(b, run, (size_t)(s - run));
        char esc[8];
        switch (c) {
        case '"': jb_puts(b, "\\\""); break;
        case '\\': jb_puts(b, "\\\\"); break;
        case '\b': jb_puts(b, "\\b"); break;
        case '\f': jb_puts(b, "\\f"); break;
        case '\n': jb_puts(b, "\\n"); break;
        case '\r': jb_puts(b, "\\r"); break;
        case '\t': jb_puts(b, "\\t"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            jb_puts(b, esc);
        }
        run = s + 1;
    }
    jb_put(b, run, (size_t)(s - run));
    jb_put(b, "\"", 1);
}

static void jb_value(json_buf *b, const cJSON *v)
{
    char num[40];
    const cJSON *c;
    switch (v->type & 0xff) {
    case cJSON_NULL: jb_puts(b, "null"); break;
    case cJSON_False: jb_puts(b, "false"); break;
    case cJSON_True: jb_puts(b, "true"); break;
    case cJSON_Number:
        format_number(v->valuedouble, num, sizeof num);
        jb_puts(b, num[0] ? num : "null");
        break;
    case cJSON_String:
        if (!v->valuestring)
            b->failed = 1;
        else
            jb_string(b, v->valuestring);
        break;
    case cJSON_Raw:
        if (!v->valuestring)
            b->failed = 1;
        else
            jb_puts(b, v->valuestring);
        break;
    case cJSON_Array:
        jb_put(b, "[", 1);
        for (c = v->child; c; c = c->next) {
            jb_value(b, c);
            if (c->next)
                jb_put(b, ",", 1);
        }
        jb_put(b, "]", 1);
        break;
    case cJSON_Object:
        jb_put(b, "{", 1);
        for (c = v->child; c; c = c->next) {
            if (!c->string) {
                b->failed = 1;
                return;
            }
            jb_string(b, c->string);
            jb_put(b, ":", 1);
            jb_value(b, c);
            if (c->next)
                jb_put(b, ",", 1);
        }
        jb_put(b, "}", 1);
        break;
    default: b->failed = 1;
    }
}

char *hsdr_results_print(const cJSON *item)
{
    json_buf b = {0};
    if (!item)
        return NULL;
    jb_value(&b, item);
    if (b.failed) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}

void hsdr_results_emit(cJSON *o)
{
    char *txt = hsdr_results_print(o);
    printf("%s\n", txt ? txt : "{}");
    fflush(stdout);
    free(txt);
    cJSON_Delete(o);
}

static int write_csv_string(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n"))
        return fputs(s, f) < 0 ? -1 : 0;
    if (fputc('"', f) == EOF)
        return -1;
    for (; *s; s++) {
        if (*s == '"' && fputc('"', f) == EOF)
            return -1;
        if (fputc(*s, f) == EOF)
            return -1;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

static const cJSON *column_value(const cJSON *row, const hsdr_csv_column *col)
{
    const cJSON *v = row;
    for (int i = 0; i < 3 && col->path[i]; i++) {
        if (!cJSON_IsObject(v))
            return NULL;
        v = cJSON_GetObjectItemCaseSensitive(v, col->path[i]);
    }
    return v;
}

static int write_csv_cell(FILE *f, const cJSON *v)
{
    char num[40];
    if (cJSON_IsString(v))
        return write_csv_string(f, v->valuestring);
    if (cJSON_IsNumber(v)) {
        format_number(v->valuedouble, num, sizeof num);
        return fputs(num, f) < 0 ? -1 : 0;
    }
    if (cJSON_IsBool(v))
        return fputs(cJSON_IsTrue(v) ? "true" : "false", f) < 0 ? -1 : 0;
    return 0; /* missing, null, object, array: empty cell */
}

static int write_csv(FILE *f, cJSON *const *rows, size_t n)
{
    const hsdr_csv_column *columns;
    const size_t ncolumns = hsdr_schema_csv_columns(&columns, NULL);
    for (size_t c = 0; c < ncolumns; c++)
        if (fprintf(f, "%s%s", c ? "," : "", columns[c].name) < 0)
            return -1;
    if (fputc('\n', f) == EOF)
        return -1;
    for (size_t r = 0; r < n; r++) {
        for (size_t c = 0; c < ncolumns; c++) {
            if (c && fputc(',', f) == EOF)
                return -1;
            if (write_csv_cell(f, column_value(rows[r], &columns[c])) != 0)
                return -1;
        }
        if (fputc('\n', f) == EOF)
            return -1;
    }
    return 0;
}

/* One row as one line (line breaks inside strings are escaped). */
static int write_json_line(FILE *f, const cJSON *row)
{
    char *txt = hsdr_results_print(row);
    if (!txt)
        return -1;
    int rc = (fputs(txt, f) < 0 || fputc('\n', f) == EOF) ? -1 : 0;
    free(txt);
    return rc;
}

/* ---- files ------------------------------------------------------------------------------------------------------- */

/* mkdir -p */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
    size_t len = strlen(dir);
    char *p = malloc(len + 1);
    if (!p)
        return hsdr_errorf(err, errlen, "%s: out of memory", dir);
    memcpy(p, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char saved = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            hsdr_errorf(err, errlen, "%s: cannot create directory: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
            hsdr_errorf(err, errlen, "%s: exists and is not a directory", p);
            free(p);
            return -1;
        }
        p[i] = saved;
    }
    free(p);
    return 0;
}

static char *join_path(const char *dir, const char *prefix, const char *base, const char *suffix)
{
    size_t n = strlen(dir) + strlen(prefix) + strlen(base) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s%s", dir, prefix, base, suffix);
    return p;
}

/* A file being written under a temporary name in the final file's directory. */
typedef struct {
    char *final_path, *tmp_path;
    FILE *f;
} atomic_file;

static int atomic_open(atomic_file *a, const char *dir, const char *base, const char *ext, char *err, size_t errlen)
{
    static atomic_uint counter;
    a->final_path = join_path(dir, "", base, ext);
    a->tmp_path = NULL;
    a->f = NULL;
    if (!a->final_path)
        return hsdr_errorf(err, errlen, "%s: out of memory", dir);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[80];
        snprintf(suffix, sizeof suffix, "%s.%ld.%u.tmp", ext, (long)getpid(), atomic_fetch_add(&counter, 1u));
        free(a->tmp_path);
        a->tmp_path = join_path(dir, ".", base, suffix);
        if (!a->tmp_path)
            return hsdr_errorf(err, errlen, "%s: out of memory", dir);
        int fd = open(a->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return hsdr_errorf(err, errlen, "%s: cannot create: %s", a->tmp_path, strerror(errno));
        a->f = fdopen(fd, "w");
        if (!a->f) {
            close(fd);
            unlink(a->tmp_path);
            return hsdr_errorf(err, errlen, "%s: %s", a->tmp_path, strerror(errno));
        }
        return 0;
    }
    return hsdr_errorf(err, errlen, "%s: no free temporary name", a->final_path);
}

/* Flush, fsync and close; -1 with a message (the temporary file stays for atomic_discard). */
static int atomic_finish(atomic_file *a, char *err, size_t errlen)
{
    FILE *f = a->f;
    a->f = NULL;
    int failed = ferror(f) || fflush(f) != 0;
    int e = errno;
    if (!failed && fsync(fileno(f)) != 0) {
        failed = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    if (failed)
        return hsdr_errorf(err, errlen, "%s: write failed: %s", a->tmp_path, strerror(e));
    return 0;
}

static void atomic_discard(atomic_file *a)
{
    if (a->f)
        fclose(a->f);
    if (a->tmp_path)
        unlink(a->tmp_path);
    free(a->tmp_path);
    free(a->final_path);
    a->f = NULL;
    a->tmp_path = a->final_path = NULL;
}

static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* best effort: makes the renames durable */
        close(fd);
    }
}

/* The temporary files (".BASE.jsonl.PID.N.tmp", ".BASE.csv...", ".BASE.partial.jsonl...") of writers that no longer
 * run: a process killed inside a write (SIGKILL, a crash, the second signal of an interrupted `hsdr run`) leaves one,
 * and the next writer of the same base removes it. Files of a live process (another writer now) are left alone. */
static void remove_stale_tmp(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t blen = strlen(base);
    static const char *const exts[] = {".jsonl.", ".csv.", ".partial.jsonl."};
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name, *rest = name + 1 + blen;
        if (name[0] != '.' || strncmp(name + 1, base, blen) != 0)
            continue;
        size_t e = 0;
        while (e < 3 && strncmp(rest, exts[e], strlen(exts[e])) != 0)
            e++;
        if (e == 3)
            continue;
        char *end;
        errno = 0;
        long pid = strtol(rest + strlen(exts[e]), &end, 10);
        if (errno || pid <= 0 || *end != '.')
            continue;
        strtoul(end + 1, &end, 10); /* the writer's counter */
        if (strcmp(end, ".tmp") != 0)
            continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* ours, or a process that runs (EPERM: another user's) */
        unlinkat(dirfd(d), name, 0);
    }
    closedir(d);
}

static int check_row(const cJSON *row, size_t i, char *err, size_t errlen)
{
    char why[256];
    const cJSON *key = cJSON_IsObject(row) ? cJSON_GetObjectItemCaseSensitive(row, "key") : NULL;
    if (hsdr_schema_check_row(row, why, sizeof why) != 0)
        return hsdr_errorf(err, errlen, "row %zu (%s): %s", i, cJSON_IsString(key) ? key->valuestring : "no key", why);
    return 0;
}

static int check_base(const char *base, char *err, size_t errlen)
{
    if (!base || !*base || strchr(base, '/'))
        return hsdr_errorf(err, errlen, "results base name '%s': expected a file name without '/'", base ? base : "");
    return 0;
}

int hsdr_results_write(const char *dir, const char *base, cJSON *const *rows, size_t n, char *err, size_t errlen)
{
    if (check_base(base, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (check_row(rows[i], i, err, errlen) != 0)
            return -1;
    if (make_dirs(dir, err, errlen) != 0)
        return -1;
    atomic_file jsonl = {0}, csv = {0};
    int rc = -1;
    if (atomic_open(&jsonl, dir, base, ".jsonl", err, errlen) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (write_json_line(jsonl.f, rows[i]) != 0) {
            hsdr_errorf(err, errlen, "%s: write failed: %s", jsonl.tmp_path, strerror(errno));
            goto out;
        }
    if (atomic_finish(&jsonl, err, errlen) != 0)
        goto out;
    if (atomic_open(&csv, dir, base, ".csv", err, errlen) != 0)
        goto out;
    if (write_csv(csv.f, rows, n) != 0) {
        hsdr_errorf(err, errlen, "%s: write failed: %s", csv.tmp_path, strerror(errno));
        goto out;
    }
    if (atomic_finish(&csv, err, errlen) != 0)
        goto out;
    /* Both complete: only now do they take the final names. */
    if (rename(jsonl.tmp_path, jsonl.final_path) != 0) {
        hsdr_errorf(err, errlen, "%s: cannot rename to %s: %s", jsonl.tmp_path, jsonl.final_path, strerror(errno));
        goto out;
    }
    if (rename(csv.tmp_path, csv.final_path) != 0) {
        hsdr_errorf(err, errlen, "%s: cannot rename to %s: %s", csv.tmp_path, csv.final_path, strerror(errno));
        unlink(jsonl.final_path); /* never a JSONL without its CSV mirror */
        goto out;
    }
    remove_stale_tmp(dir, base);
    sync_dir(dir);
    rc = 0;
out:
    atomic_discard(&jsonl);
    atomic_discard(&csv);
    return rc;
}

/* ---- the progress file ------------------------------------------------------------------------------------------- */

struct hsdr_partial {
    int fd;
    char *path;
};

hsdr_partial *hsdr_results_partial_open(const char *dir, const char *base, char *err, size_t errlen)
{
    return hsdr_results_partial_reopen(dir, base, NULL, 0, err, errlen);
}

hsdr_partial *hsdr_results_partial_reopen(const char *dir, const char *base, cJSON *const *keep, size_t nkeep,
                                          char *err, size_t errlen)
{
    if (check_base(base, err, errlen) != 0 || make_dirs(dir, err, errlen) != 0)
        return NULL;
    for (size_t i = 0; i < nkeep; i++)
        if (check_row(keep[i], i, err, errlen) != 0)
            return NULL;
    hsdr_partial *p = calloc(1, sizeof *p);
    if (!p || !(p->path = join_path(dir, "", base, ".partial.jsonl"))) {
        free(p);
        hsdr_errorf(err, errlen, "%s: out of memory", dir);
        return NULL;
    }
    p->fd = -1;
    /* The kept rows replace the old file in one rename: a resumed run never appends after a torn last line, and an
     * interruption while this is written leaves the old file as it was. */
    atomic_file a = {0};
    if (atomic_open(&a, dir, base, ".partial.jsonl", err, errlen) != 0)
        goto fail;
    for (size_t i = 0; i < nkeep; i++)
        if (write_json_line(a.f, keep[i]) != 0) {
            hsdr_errorf(err, errlen, "%s: write failed: %s", a.tmp_path, strerror(errno));
            atomic_discard(&a);
            goto fail;
        }
    if (atomic_finish(&a, err, errlen) != 0) {
        atomic_discard(&a);
        goto fail;
    }
    if (rename(a.tmp_path, a.final_path) != 0) {
        hsdr_errorf(err, errlen, "%s: cannot rename to %s: %s", a.tmp_path, a.final_path, strerror(errno));
        atomic_discard(&a);
        goto fail;
    }
    atomic_discard(&a);
    remove_stale_tmp(dir, base);
    p->fd = open(p->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (p->fd < 0) {
        hsdr_errorf(err, errlen, "%s: cannot open for appending: %s", p->path, strerror(errno));
        goto fail;
    }
    return p;
fail:
    free(p->path);
    free(p);
    return NULL;
}

int hsdr_results_partial_append(hsdr_partial *p, const cJSON *row)
{
    if (!p || p->fd < 0)
        return -1;
    char *txt = hsdr_results_print(row);
    if (!txt)
        return -1;
    /* The whole line, newline included, in one write(2) where the kernel allows (O_APPEND): a process killed between
     * rows leaves only whole lines, and one killed inside a write at worst a last line without its newline, which
     * hsdr_results_read_journal drops. */
    size_t len = strlen(txt);
    txt[len] = '\n'; /* hsdr_results_print's NUL: the line is not used as a C string below */
    const char *s = txt;
    size_t left = len + 1;
    int rc = 0;
    while (left > 0) {
        ssize_t w = write(p->fd, s, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        s += w;
        left -= (size_t)w;
    }
    free(txt);
    return rc;
}

const char *hsdr_results_partial_path(const hsdr_partial *p)
{
    return p ? p->path : NULL;
}

void hsdr_results_partial_close(hsdr_partial *p, int remove_it)
{
    if (!p)
        return;
    if (p->fd >= 0)
        close(p->fd);
    if (remove_it)
        unlink(p->path);
    free(p->path);
    free(p);
}

const cJSON *hsdr_results_partial_marker(cJSON *const *rows, size_t n, size_t *index)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(rows[i], "partial");
        if (cJSON_IsObject(m)) {
            if (index)
                *index = i;
            return m;
        }
    }
    return NULL;
}

void hsdr_results_partial_describe(const cJSON *mark, char *buf, size_t n)
{
    const cJSON *done = cJSON_GetObjectItemCaseSensitive(mark, "done");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(mark, "total");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(mark, "interrupted_by");
    snprintf(buf, n, "%.0f of %.0f cases done, interrupted by %s", cJSON_IsNumber(done) ? done->valuedouble : NAN,
             cJSON_IsNumber(total) ? total->valuedouble : NAN, cJSON_IsString(by) ? by->valuestring : "a signal");
}

/* ---- reading ----------------------------------------------------------------------------------------------------- */

void hsdr_results_free(cJSON **rows, size_t n)
{
    if (!rows)
        return;
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(rows[i]);
    free(rows);
}

static int blank(const char *s, const char *end)
{
    for (; s < end; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r')
            return 0;
    return 1;
}

/* Parse the len bytes of text (the contents of path) as JSON Lines rows. */
static int parse_rows(const char *path, const char *text, size_t len, cJSON ***rows_out, size_t **lines_out,
                      size_t *n_out, char *err, size_t errlen)
{
    cJSON **rows = NULL;
    size_t *lines = NULL, n = 0, cap = 0, line = 0;
    int rc = -1;
    for (const char *s = text; s < text + len;) {
        const char *eol = memchr(s, '\n', (size_t)(text + len - s));
        if (!eol)
            eol = text + len;
        line++;
        if (blank(s, eol)) {
            s = eol + 1;
            continue;
        }
        if (memchr(s, '\0', (size_t)(eol - s))) {
            hsdr_errorf(err, errlen, "%s:%zu: NUL byte in the line", path, line);
            goto out;
        }
        const char *end = NULL;
        cJSON *row = cJSON_ParseWithLengthOpts(s, (size_t)(eol - s), &end, 0);
        if (!row) {
            hsdr_errorf(err, errlen, "%s:%zu:%ld: malformed JSON", path, line, end ? (long)(end - s) + 1 : 1L);
            goto out;
        }
        if (!blank(end, eol)) {
            cJSON_Delete(row);
            hsdr_errorf(err, errlen, "%s:%zu:%ld: text after the JSON object (one object per line)", path, line,
                        (long)(end - s) + 1);
            goto out;
        }
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(row, "key");
        char why[256] = "";
        if (!cJSON_IsObject(row))
            snprintf(why, sizeof why, "expected a JSON object");
        else if (!cJSON_GetObjectItemCaseSensitive(row, "schema"))
            snprintf(why, sizeof why, "missing field 'schema' (expected \"" HSDR_RESULTS_SCHEMA "\")");
        else if (hsdr_schema_upgrade_row(row, why, sizeof why) < 0)
            ;
        else if (!key)
            snprintf(why, sizeof why, "missing field 'key'");
        else if (!cJSON_IsString(key))
            snprintf(why, sizeof why, "field 'key': expected a string");
        if (why[0]) {
            cJSON_Delete(row);
            hsdr_errorf(err, errlen, "%s:%zu: %s", path, line, why);
            goto out;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cJSON **r = realloc(rows, cap * sizeof *r);
            if (r)
                rows = r;
            size_t *l = realloc(lines, cap * sizeof *l);
            if (l)
                lines = l;
            if (!r || !l) {
                cJSON_Delete(row);
                hsdr_errorf(err, errlen, "%s:%zu: out of memory", path, line);
                goto out;
            }
        }
        rows[n] = row;
        lines[n++] = line;
        s = eol + 1;
    }
    rc = 0;
out:
    if (rc != 0) {
        hsdr_results_free(rows, n);
        free(lines);
        return -1;
    }
    *rows_out = rows;
    *n_out = n;
    if (lines_out)
        *lines_out = lines;
    else
        free(lines);
    return 0;
}

int hsdr_results_read_lines(const char *path, cJSON ***rows, size_t **lines, size_t *n, char *err, size_t errlen)
{
    size_t len;
    char *text = hsdr_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = parse_rows(path, text, len, rows, lines, n, err, errlen);
    free(text);
    return rc;
}

int hsdr_results_read_journal(const char *path, cJSON ***rows, size_t **lines, size_t *n, size_t *torn_bytes,
                              char *err, size_t errlen)
{
    size_t len;
    char *text = hsdr_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    /* Rows are appended whole, newline last: bytes after the last newline are a row whose writer was killed. */
    size_t whole = len;
    while (whole > 0 && text[whole - 1] != '\n')
        whole--;
    *torn_bytes = len - whole;
    int rc = parse_rows(path, text, whole, rows, lines, n, err, errlen);
    free(text);
    return rc;
}

int hsdr_results_read(const char *path, cJSON ***rows, size_t *n, char *err, size_t errlen)
{
    return hsdr_results_read_lines(path, rows, NULL, n, err, errlen);
}

void hsdr_results_add_time(cJSON *o, const char *name, const hsdr_stats *st, const char *samples_name)
{
    cJSON *t = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(t, "median", st->median);
    cJSON_AddNumberToObject(t, "p10", st->p10);
    cJSON_AddNumberToObject(t, "p25", st->p25);
    cJSON_AddNumberToObject(t, "p75", st->p75);
    cJSON_AddNumberToObject(t, "p90", st->p90);
    cJSON_AddNumberToObject(t, "min", st->min);
    cJSON_AddNumberToObject(t, "mean", st->mean);
    cJSON_AddNumberToObject(t, "rel_spread", st->rel_spread);
    cJSON_AddNumberToObject(t, "reps", st->reps);
    cJSON_AddStringToObject(t, "stop", st->stop ? st->stop : "max_reps");
    cJSON_AddNumberToObject(t, "launches_per_sample", st->launches_per_sample > 0 ? st->launches_per_sample : 1);
    if (samples_name) {
        cJSON *s = cJSON_AddArrayToObject(o, samples_name);
        for (int i = 0; i < st->reps; i++)
            cJSON_AddItemToArray(s, cJSON_CreateNumber(st->samples[i]));
    }
}

const char *hsdr_row_str(const cJSON *row, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

double hsdr_row_num(const cJSON *row, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

double hsdr_row_median(const cJSON *row)
{
    return hsdr_row_num(cJSON_GetObjectItemCaseSensitive(row, "time_ns"), "median");
}
