/* Fuzz target: the .npy reader of the activation files (harness/npy.c through hsdr_npy_parse, the code path of
 * hsdr_npy_read). Any input either parses or is refused with "fuzz.npy: offset N: FIELD: what" (N inside the input);
 * never a crash, an out-of-bounds access, undefined behaviour or a leak. A parsed array is walked completely and its
 * invariants checked: a 2-D shape, exactly rows x cols x itemsize data bytes, every value finite. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "npy.h"

#define NAME "fuzz.npy"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdr_npy a;
    char err[512] = "";
    if (hsdr_npy_parse(&a, NAME, data, size, err, sizeof err) != 0) {
        size_t at;
        int used = 0;
        FUZZ_REQUIRE(sscanf(err, NAME ": offset %zu: %n", &at, &used) == 1 && used > 0,
                     "refusal without the input's name and an offset: '%s'", err);
        FUZZ_REQUIRE(at <= size, "offset %zu past the input's %zu bytes: '%s'", at, size, err);
        FUZZ_REQUIRE(a.x == NULL, "a refused file keeps its data");
        return 0;
    }
    size_t item = strcmp(a.descr, "<f2") == 0 ? 2 : strcmp(a.descr, "<f4") == 0 ? 4 : 8;
    FUZZ_REQUIRE(strcmp(a.descr, "<f8") == 0 || item != 8, "descr '%s'", a.descr);
    FUZZ_REQUIRE(a.version_major >= 1 && a.version_major <= 3, "version %d", a.version_major);
    FUZZ_REQUIRE(a.rows >= 1 && a.cols >= 1 && a.x, "shape (%d, %d)", a.rows, a.cols);
    FUZZ_REQUIRE(a.data_offset <= size && size - a.data_offset == (size_t)a.rows * (size_t)a.cols * item,
                 "data length %zu for (%d, %d) x %zu", size - a.data_offset, a.rows, a.cols, item);
    FUZZ_REQUIRE(a.data_offset >= 10 && data[a.data_offset - 1] == '\n', "header end at %zu", a.data_offset);
    for (size_t i = 0; i < (size_t)a.rows * (size_t)a.cols; i++)
        FUZZ_REQUIRE(isfinite(a.x[i]), "element %zu not finite", i);
    hsdr_npy_free(&a);
    return 0;
}
