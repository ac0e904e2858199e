/* A strict reader of NumPy .npy files holding a 2-D floating-point array (the activation files, activations.h).
 *
 * Format (facts from NumPy's format description, numpy/lib/format.py and NEP 1; no code taken): the magic
 * "\x93NUMPY", a major and a minor version byte (1.0, 2.0 or 3.0), the header length (little-endian u16 in 1.0, u32
 * in 2.0 and 3.0), then the header: a Python dict literal with exactly the keys 'descr', 'fortran_order' and
 * 'shape', padded with spaces and ended by '\n' (ASCII; 3.0 allows UTF-8, which no accepted value needs), then the
 * raw data. Accepted here: descr '<f4', '<f2' or '<f8' (converted to float), fortran_order False, a 2-D shape (T, K)
 * with T, K >= 1, exactly T * K * itemsize data bytes, every value finite (and a '<f8' value within float's range).
 *
 * Every refusal is one message "NAME: offset N: FIELD: what" (N the byte offset in the file); a value that is not
 * finite is "NAME: offset N: element (t, k): what". Depends on libc and reference/fp16.h. */
#ifndef HSDR_NPY_H
#define HSDR_NPY_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int rows, cols;      /* shape (T, K) */
    char descr[4];       /* "<f4", "<f2" or "<f8", as stored */
    int version_major;
    size_t data_offset;  /* where the data starts in the file */
    float *x;            /* rows x cols, row-major, converted to float (malloc; hsdr_npy_free) */
} hsdr_npy;

/* Parse size bytes at data; name only labels messages. 0, or -1 with the message in err and a->x NULL. */
int hsdr_npy_parse(hsdr_npy *a, const char *name, const uint8_t *data, size_t size, char *err, size_t errlen);
/* Read and parse the file at path (messages name path). */
int hsdr_npy_read(hsdr_npy *a, const char *path, char *err, size_t errlen);
void hsdr_npy_free(hsdr_npy *a);

#endif
