/* The activation sets of a path (activations.h): a directory's *.npy files in name order, or one .npy file, each
 * read by the strict .npy reader (npy.h). */
#include "activations.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "util.h"

static char *dup_str(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const hsdr_act_set *)a)->name, ((const hsdr_act_set *)b)->name);
}

/* Read file into set, named after base (".npy" dropped). */
static int load_set(hsdr_act_set *set, const char *file, const char *base, char *err, size_t errlen)
{
    hsdr_npy npy;
    if (hsdr_npy_read(&npy, file, err, errlen) != 0)
        return -1;
    size_t n = strlen(base);
    if (ends_with(base, ".npy"))
        n -= 4;
    set->name = dup_str(base, n);
    set->path = dup_str(file, strlen(file));
    if (!set->name || !set->path) {
        hsdr_npy_free(&npy);
        return hsdr_errorf(err, errlen, "%s: out of memory", file);
    }
    set->T = npy.rows, set->K = npy.cols, set->x = npy.x;
    return 0;
}

int hsdr_activations_open(hsdr_activations *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    struct stat st;
    if (stat(path, &st) != 0)
        return hsdr_errorf(err, errlen, "%s: %s", path, strerror(errno));
    a->path = dup_str(path, strlen(path));
    if (!a->path)
        return hsdr_errorf(err, errlen, "%s: out of memory", path);
    if (S_ISREG(st.st_mode)) {
        const char *slash = strrchr(path, '/');
        a->sets = calloc(1, sizeof *a->sets);
        if (!a->sets)
            return hsdr_activations_close(a), hsdr_errorf(err, errlen, "%s: out of memory", path);
        a->n = 1;
        if (load_set(&a->sets[0], path, slash ? slash + 1 : path, err, errlen) != 0) {
            hsdr_activations_close(a);
            return -1;
        }
        return 0;
    }
    if (!S_ISDIR(st.st_mode))
        return hsdr_activations_close(a), hsdr_errorf(err, errlen, "%s: neither a directory nor a regular file", path);
    DIR *d = opendir(path);
    if (!d)
        return hsdr_activations_close(a), hsdr_errorf(err, errlen, "%s: %s", path, strerror(errno));
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!ends_with(e->d_name, ".npy") || strcmp(e->d_name, ".npy") == 0)
            continue;
        size_t plen = strlen(path) + strlen(e->d_name) + 2;
        char *file = malloc(plen);
        if (a->n == cap) {
            hsdr_act_set *grown = realloc(a->sets, sizeof *grown * (cap = cap ? 2 * cap : 16));
            if (grown)
                a->sets = grown;
            else
                cap = 0;
        }
        if (!file || !cap) {
            free(file);
            rc = hsdr_errorf(err, errlen, "%s: out of memory", path);
            break;
        }
        snprintf(file, plen, "%s/%s", path, e->d_name);
        memset(&a->sets[a->n], 0, sizeof a->sets[a->n]);
        rc = load_set(&a->sets[a->n], file, e->d_name, err, errlen);
        a->n++;
        free(file);
    }
    closedir(d);
    if (rc == 0 && a->n == 0)
        rc = hsdr_errorf(err, errlen, "%s: no .npy file in the directory (one per tensor: NAME.weight.npy)", path);
    if (rc != 0) {
        hsdr_activations_close(a);
        return -1;
    }
    qsort(a->sets, a->n, sizeof *a->sets, by_name);
    return 0;
}

/* Length of name without a trailing ".weight". */
static size_t stem_len(const char *name)
{
    size_t n = strlen(name);
    return ends_with(name, ".weight") ? n - 7 : n;
}

const hsdr_act_set *hsdr_activations_find(const hsdr_activations *a, const char *tensor)
{
    const size_t n = stem_len(tensor);
    for (size_t i = 0; i < a->n; i++)
        if (stem_len(a->sets[i].name) == n && strncmp(a->sets[i].name, tensor, n) == 0)
            return &a->sets[i];
    return NULL;
}

void hsdr_activations_close(hsdr_activations *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->sets[i].name);
        free(a->sets[i].path);
        free(a->sets[i].x);
    }
    free(a->sets);
    free(a->path);
    memset(a, 0, sizeof *a);
}
