/* Fuzz target: the GGUF reader (harness/gguf.c through gguf_parse, the code path of gguf_open) and the statistics
 * of `hsdr inspect` (harness/inspect.c). Any input either parses or is refused with "fuzz.gguf: offset N: FIELD:
 * what" (N inside the input); never a crash, an out-of-bounds access, undefined behaviour or a leak. A parsed file
 * is walked completely: every pair's value and every tensor's bytes are read to the length the reader claims, so
 * AddressSanitizer checks those lengths, and the reader's invariants are checked. */
#include <inttypes.h>
#include <string.h>

#include "fuzz.h"
#include "gguf.h"
#include "inspect.h"

#define NAME "fuzz.gguf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_file g;
    char err[512] = "";
    if (gguf_parse(&g, NAME, data, size, err, sizeof err) != 0) {
        uint64_t at;
        int used = 0;
        FUZZ_REQUIRE(sscanf(err, NAME ": offset %" SCNu64 ": %n", &at, &used) == 1 && used > 0,
                     "refusal without the input's name and an offset: '%s'", err);
        FUZZ_REQUIRE(at <= size, "offset %" PRIu64 " past the input's %zu bytes: '%s'", at, size, err);
        FUZZ_REQUIRE(g.kv == NULL && g.tensors == NULL, "a refused file keeps its index arrays");
        return 0;
    }
    FUZZ_REQUIRE(g.version == 2 || g.version == 3, "version %" PRIu32, g.version);
    FUZZ_REQUIRE(g.alignment && !(g.alignment & (g.alignment - 1)), "alignment %" PRIu32, g.alignment);
    volatile unsigned sink = 0;
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const gguf_kv *kv = &g.kv[i];
        for (uint64_t k = 0; k < kv->key.len; k++)
            sink += kv->key.ptr[k];
        char *key = gguf_str_dup(kv->key);
        FUZZ_REQUIRE(key && strlen(key) == kv->key.len, "key copy");
        FUZZ_REQUIRE(gguf_find(&g, key) != NULL, "kv[%" PRIu64 "] not found by its own key", i);
        free(key);
        gguf_str s;
        uint64_t u;
        double f;
        if (gguf_kv_str(kv, &s) == 0)
            for (uint64_t k = 0; k < s.len; k++)
                sink += s.ptr[k];
        (void)gguf_kv_u64(kv, &u);
        (void)gguf_kv_f64(kv, &f);
        if (kv->type == GGUF_T_ARRAY && kv->elem_type == GGUF_T_STRING && kv->count)
            FUZZ_REQUIRE(gguf_kv_array_str(kv, kv->count - 1, &s) == 0 &&
                             s.ptr + s.len <= data + size, "last string of kv[%" PRIu64 "] outside the input", i);
    }
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        FUZZ_REQUIRE(t->data >= data && t->file_offset <= size && t->bytes <= size - t->file_offset,
                     "tensor[%" PRIu64 "] outside the input", i);
        FUZZ_REQUIRE(t->file_offset % g.alignment == g.data_offset % g.alignment, "tensor[%" PRIu64 "] alignment", i);
        sink += (unsigned)hsdr_inspect_hash(t->data, t->bytes);
        inspect_ternary_stats s;
        if (hsdr_inspect_ternary(t, &s) == 0) {
            FUZZ_REQUIRE(s.zero_weights <= s.weights && s.all_zero_blocks <= s.blocks &&
                             s.scales_counted + s.nan == s.blocks, "tensor[%" PRIu64 "] statistics", i);
            FUZZ_REQUIRE(s.scales_counted == 0 || (s.min <= s.p5 && s.p5 <= s.median && s.median <= s.p95 &&
                                                   s.p95 <= s.max), "tensor[%" PRIu64 "] scale order", i);
        }
    }
    (void)sink;
    gguf_close(&g);
    return 0;
}
