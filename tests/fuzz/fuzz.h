/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): the libFuzzer entry point, and a finding that is not a crash (a
 * broken invariant) turned into one, so libFuzzer and the corpus replay (replay.c) both stop on it with the input. */
#ifndef HSDR_FUZZ_H
#define HSDR_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond, ...)                                                                                    \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fprintf(stderr, "%s:%d: FUZZ_REQUIRE(%s) failed: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

#endif
