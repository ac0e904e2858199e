/* Allocation helpers of the matrix loader's layers (yaml_tree.c, matrix_spec.c, matrix_load.c, matrix_expand.c):
 * allocation that aborts on out of memory, and growable arrays. Header-only (static inline); depends on libc only. */
#ifndef HSDR_XALLOC_H
#define HSDR_XALLOC_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) {
        fprintf(stderr, "hsdr: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return q;
}

static inline char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

/* Room for one more element in arr (n used, *cap allocated); returns the (possibly moved) array. */
static inline void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return arr;
    *cap = *cap ? *cap * 2 : 8;
    return xrealloc(arr, *cap * size);
}
/* Append one zeroed element to a dynamic array (pointer arr, count n, capacity cap); yields its address. */
#define PUSH(arr, n, cap)                                                                                          \
    ((arr) = grow((arr), (n), &(cap), sizeof *(arr)), memset(&(arr)[(n)], 0, sizeof *(arr)), &(arr)[(n)++])

#endif
