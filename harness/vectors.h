/* Loader of JSON test vectors in schema hsdr-vectors/1 (spec/vectors.md), parsed with cJSON.
 * A file is validated completely at load: a missing required field, a wrong type, an out-of-range value or an unknown
 * kind is an error naming file:line:column, the case id and the field. Unknown fields are ignored. */
#ifndef HSDR_VECTORS_H
#define HSDR_VECTORS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { VEC_LNS8_ENCODE, VEC_PTQ1_0_PACK, VEC_PTQ1_0_QUANTIZE, VEC_GROUP, VEC_MATVEC, VEC_KIND_COUNT } vec_kind;
const char *vec_kind_name(vec_kind k);

typedef struct {
    char *id;
    vec_kind kind;
    int line; /* where the case object starts */

    /* lns8_encode: x (n values); ptq1_0_quantize: w in x (n = 128); matvec: x (n = K) */
    size_t n;
    float *x;
    bool auto_prescale;
    int prescale_e;         /* lns8_encode explicit pre-scale, group pre-scale */
    bool expect_error;
    uint8_t *expect_codes;  /* n */
    int expect_prescale_e;  /* lns8_encode with auto_prescale; matvec */

    /* ptq1_0_pack / group: t (natural order, lanes beyond n are 0), d bits; pack/quantize: the 28-byte block */
    int8_t t[128];
    uint16_t d_bits;
    uint8_t block[28];

    /* group */
    uint8_t codes[128];     /* lanes beyond n are 0 */
    int32_t expect_A[8];
    bool has_C;
    int16_t expect_C[128];
    double expect_group_sum;
    int64_t expect_q1516;
    bool has_flns;
    int flns_F, flns_b, flns_sign;
    int32_t flns_lambda;

    /* matvec */
    int K, N;
    uint8_t *weights;       /* N * K/128 * 28 */
    double *expect_y_exact; /* N */
    float *expect_y_q8_0;   /* N (fp32 bit patterns matter) */
    double *expect_y_lns8;  /* N */
    int64_t *expect_q_rows; /* N */
    int32_t *expect_mA;     /* N x K/128 x 8, NULL when absent */
} vec_case;

typedef struct {
    char *path;
    char *description;
    vec_case *cases;
    size_t ncases;
} vec_file;

/* Load and validate one file. 0, or -1 with a message in err. */
int vec_load(const char *path, vec_file *out, char *err, size_t errlen);
/* The same from len bytes in memory (need not be NUL-terminated; a NUL byte inside is an error); path names the
 * input in messages and out->path and is not opened. vec_load reads the file and calls this: one code path. */
int vec_load_text(const char *path, const char *text, size_t len, vec_file *out, char *err, size_t errlen);
void vec_free(vec_file *f);

#endif
