/* Fuzz target: the JSON test-vector loader (harness/vectors.c through vec_load_text, the code path of vec_load).
 * Any input either loads or is refused with a message naming the input ("fuzz.json:..."); never a crash, an
 * out-of-bounds access, undefined behaviour or a leak. A loaded file is walked completely: every array the loader
 * hands out is read to the length it claims, so AddressSanitizer checks those lengths. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "vectors.h"

#define NAME "fuzz.json"

static unsigned sum_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s += b[i];
    return s;
}

/* A refusal that is the loader's own consistency check ("fuzz.json:L:C: loader bug: ..."), not the input's fault; the
 * message is matched at its fixed place, since input text echoed into messages can hold any words. */
static bool loader_bug(const char *err)
{
    int line, col, at = 0;
    return sscanf(err, NAME ":%d:%d: %n", &line, &col, &at) == 2 && at > 0 && strncmp(err + at, "loader bug:", 11) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vec_file f;
    char err[1024] = "";
    if (vec_load_text(NAME, (const char *)data, size, &f, err, sizeof err) != 0) {
        FUZZ_REQUIRE(strncmp(err, NAME ":", strlen(NAME) + 1) == 0, "refusal does not name the input: '%s'", err);
        FUZZ_REQUIRE(!loader_bug(err), "%s", err);
        return 0;
    }
    FUZZ_REQUIRE(f.path && strcmp(f.path, NAME) == 0 && f.description, "loaded file without path or description");
    volatile unsigned sink = 0;
    for (size_t i = 0; i < f.ncases; i++) {
        const vec_case *c = &f.cases[i];
        FUZZ_REQUIRE(c->id && c->id[0] && (unsigned)c->kind < VEC_KIND_COUNT && c->line >= 1,
                     "case %zu: no id, kind or line", i);
        sink += sum_bytes(c->id, strlen(c->id));
        if (c->x)
            sink += sum_bytes(c->x, c->n * sizeof *c->x);
        if (c->kind == VEC_LNS8_ENCODE && !c->expect_error)
            sink += sum_bytes(c->expect_codes, c->n);
        if (c->kind == VEC_GROUP)
            FUZZ_REQUIRE(c->n >= 1 && c->n <= 128, "case '%s': group of %zu lanes", c->id, c->n);
        if (c->kind == VEC_MATVEC) {
            FUZZ_REQUIRE(c->K >= 128 && c->K % 128 == 0 && c->N >= 1 && c->n == (size_t)c->K,
                         "case '%s': K = %d, N = %d, n = %zu", c->id, c->K, c->N, c->n);
            size_t N = (size_t)c->N, G = (size_t)c->K / 128;
            sink += sum_bytes(c->weights, N * G * 28);
            sink += sum_bytes(c->expect_y_exact, N * sizeof(double));
            sink += sum_bytes(c->expect_y_q8_0, N * sizeof(float));
            sink += sum_bytes(c->expect_y_lns8, N * sizeof(double));
            sink += sum_bytes(c->expect_q_rows, N * sizeof(int64_t));
            if (c->expect_mA)
                sink += sum_bytes(c->expect_mA, N * G * 8 * sizeof(int32_t));
        }
    }
    (void)sink;
    vec_free(&f);
    return 0;
}
