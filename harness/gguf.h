/* A small, strict GGUF reader: the container of llama.cpp / ggml model files (versions 2 and 3, little-endian).
 *
 * What it holds: the header (version, counts), every metadata key/value pair (scalars decoded on demand, strings
 * and arrays as pointers into the file), every tensor info (name, ggml type, dims, offset) with its byte size and a
 * pointer to its data. The file is memory-mapped read-only (gguf_open) or parsed from a caller's buffer (gguf_parse,
 * the fuzz target's entry); nothing is copied but the two index arrays.
 *
 * What it refuses (one message "NAME: offset N: FIELD: what", N the byte offset of the field in the file): a bad
 * magic; a version other than 2 or 3; counts, string lengths or array lengths that cannot fit in the bytes left;
 * a key longer than 65535 bytes or not printable ASCII, a tensor name longer than 64 (the format's limits); a
 * duplicated key or tensor name; a bool other than 0/1; nested arrays; a general.alignment that is not a u32 power
 * of two; n_dims outside 1..4; a dim of 0 or an element count past 2^63; a ggml type this reader does not know; ne0
 * not a multiple of the type's block; a tensor offset not a multiple of the alignment, past the file's end, or
 * overlapping another tensor.
 *
 * Types known: F32 0, F16 1, the legacy and k-quants 2..15, I8..F64 24..28, BF16 30, TQ1_0 34, TQ2_0 35 (upstream
 * ggml), and the Ternary-Bonsai fork's PQ2_0 142 and PTQ1_0 143 (spec/ptq1_0.md).
 * Facts from ggml's format description, docs/gguf.md of github.com/ggml-org/ggml at commit
 * 9d325133eed396b7bf005a53a83d9747cbd8bde1 (header, value types, tensor infos, alignment, default 32); the block
 * sizes of the upstream quantized types are those of ggml's ggml-common.h (block_q4_0 ... block_tq2_0). No code was
 * taken from ggml. Depends on libc, POSIX mmap and util.c (its refusal message). */
#ifndef HSDR_GGUF_H
#define HSDR_GGUF_H
#include <stddef.h>
#include <stdint.h>

enum {
    GGUF_T_UINT8 = 0, GGUF_T_INT8 = 1, GGUF_T_UINT16 = 2, GGUF_T_INT16 = 3, GGUF_T_UINT32 = 4, GGUF_T_INT32 = 5,
    GGUF_T_FLOAT32 = 6, GGUF_T_BOOL = 7, GGUF_T_STRING = 8, GGUF_T_ARRAY = 9, GGUF_T_UINT64 = 10, GGUF_T_INT64 = 11,
    GGUF_T_FLOAT64 = 12, GGUF_T_COUNT = 13
};
enum { GGML_T_F32 = 0, GGML_T_F16 = 1, GGML_T_BF16 = 30, GGML_T_PQ2_0 = 142, GGML_T_PTQ1_0 = 143 };
enum { GGUF_MAX_DIMS = 4, GGUF_MAX_KEY = 65535, GGUF_MAX_NAME = 64, GGUF_DEFAULT_ALIGNMENT = 32 };

/* A GGUF string: len bytes at ptr inside the file, not NUL-terminated. */
typedef struct {
    const uint8_t *ptr;
    uint64_t len;
} gguf_str;

typedef struct {
    gguf_str key;
    uint32_t type;        /* GGUF_T_* */
    uint32_t elem_type;   /* arrays: the elements' GGUF_T_* (never ARRAY) */
    uint64_t count;       /* arrays: elements */
    const uint8_t *value; /* the value's bytes (arrays: the first element) */
    uint64_t offset;      /* file offset of the pair (its key length) */
} gguf_kv;

typedef struct {
    gguf_str name;
    uint32_t type; /* ggml type id */
    uint32_t n_dims;
    uint64_t dims[GGUF_MAX_DIMS]; /* ne0 (contiguous) first; unused ones are 1 */
    uint64_t elements;
    uint64_t offset;      /* relative to the data section, as stored */
    uint64_t file_offset; /* data_offset + offset */
    uint64_t bytes;
    const uint8_t *data;
    uint64_t info_offset; /* file offset of the tensor info */
} gguf_tensor;

typedef struct {
    const uint8_t *base;
    size_t size;
    int mapped; /* base is an mmap of size bytes (gguf_close unmaps) */
    uint32_t version;
    uint64_t n_tensors, n_kv;
    uint32_t alignment;
    uint64_t data_offset; /* start of the data section */
    gguf_kv *kv;
    gguf_tensor *tensors;
} gguf_file;

/* Parse size bytes at data (kept, not copied: they must outlive g). name only labels messages. 0, or -1 with
 * "NAME: offset N: FIELD: what" in err and g left empty (gguf_close is harmless). */
int gguf_parse(gguf_file *g, const char *name, const uint8_t *data, size_t size, char *err, size_t errlen);
/* mmap path read-only and parse it; messages name path. */
int gguf_open(gguf_file *g, const char *path, char *err, size_t errlen);
void gguf_close(gguf_file *g);

/* The pair whose key is key, or NULL. */
const gguf_kv *gguf_find(const gguf_file *g, const char *key);
/* An integer value (any integer type, or a bool) as int64/uint64: 0, or -1 for another type or one out of range. */
int gguf_kv_u64(const gguf_kv *kv, uint64_t *out);
int gguf_kv_i64(const gguf_kv *kv, int64_t *out);
/* A FLOAT32/FLOAT64 value: 0 or -1. */
int gguf_kv_f64(const gguf_kv *kv, double *out);
/* A STRING value: 0 or -1. */
int gguf_kv_str(const gguf_kv *kv, gguf_str *out);
/* Element i of an array of strings (i < count): 0 or -1. Walks the array: O(i). */
int gguf_kv_array_str(const gguf_kv *kv, uint64_t i, gguf_str *out);
/* 1 when s holds exactly the NUL-terminated text. */
int gguf_str_eq(gguf_str s, const char *text);
/* A NUL-terminated copy (malloc; NULL when out of memory), every byte that is not printable ASCII or part of valid
 * UTF-8 replaced by '?', so that the text prints and goes into JSON safely. */
char *gguf_str_dup(gguf_str s);

/* "UINT8" ... "FLOAT64", or NULL. */
const char *gguf_value_type_name(uint32_t type);
/* "F32", "PTQ1_0", ..., or NULL for a type this reader does not know. */
const char *gguf_ggml_type_name(uint32_t type);
/* Weights per block and bytes per block of a ggml type: 0, or -1 for an unknown type. */
int gguf_ggml_type_block(uint32_t type, uint64_t *block_weights, uint64_t *block_bytes);

#endif
