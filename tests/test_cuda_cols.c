/* The dedicated 1..8-column CUDA kernel (hsdr_cuda_cols) against its reference, column by column and bit
 * for bit: every column of every column count must equal hsdr_matvec_q8_1 of that column alone, in the
 * kernel's order (hsdr_cuda_cols_order). Shapes cross the lane thresholds (8192 and 16384 rows), K covers one
 * block to the 17408 of bonsai2-27b's ffn_down, and some columns are all zeros (the amax = 0 path). The output is
 * poisoned (NaN) by the kernel's driver before the launch; every element is checked. Without a CUDA device the test
 * says why once and is skipped (exit 77). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "fp16.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "q8.h"
#include "rng.h"
#include "random_ptq1_0.h"
#include "testing.h"

int main(void)
{
    const char *why = hsdr_cuda_unavailable();
    if (why) {
        printf("test_cuda_cols: skipped: %s\n", why);
        return 77;
    }
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_cuda_cols"));
    static const int Ns[] = {1, 3, 31, 32, 33, 1000, 5120, 8191, 8192, 8200, 16383, 16384, 17408};
    for (int it = 0; it < 48; it++) {
        const int ncols = 1 + it % 8;
        const int N = it < 26 ? Ns[it % 13] : 1 + (int)hsdr_rng_below(&rng, 20000);
        const int G = it % 7 == 0 ? 136 : it % 7 == 1 ? 1 : 1 + (int)hsdr_rng_below(&rng, N > 8000 ? 24 : 80);
        const int K = G * HSDR_QK;
        uint8_t *W = malloc((size_t)N * G * HSDR_PTQ1_0_BYTES);
        float *X = malloc(sizeof(float) * (size_t)K * ncols), *Y = malloc(sizeof(float) * (size_t)N * ncols);
        float *want = malloc(sizeof(float) * (size_t)N);
        hsdr_block_q8_1 *q = malloc(sizeof(hsdr_block_q8_1) * (size_t)(K / 32));
        if (!W || !X || !Y || !want || !q) {
            fprintf(stderr, "test_cuda_cols: out of memory\n");
            return 1;
        }
        random_ptq1_0_blocks(&rng, W, (size_t)N * G);
        for (int c = 0; c < ncols; c++) {
            const double scale = hsdr_rng_below(&rng, 9) == 0 ? 0.0 : ldexp(1.0, (int)hsdr_rng_below(&rng, 16) - 8);
            for (int k = 0; k < K; k++)
                X[(size_t)c * K + k] = (float)(hsdr_rng_gaussian(&rng) * scale);
        }
        char err[512] = "";
        const int rc = hsdr_cuda_cols(W, X, K, N, ncols, Y, err, sizeof err);
        CHECK(rc == 0, "K=%d N=%d columns=%d: %s", K, N, ncols, err);
        const int lanes = hsdr_cuda_cols_order(K, N).lanes;
        for (int c = 0; c < ncols && rc == 0; c++) {
            hsdr_matvec_q8_1(W, X + (size_t)c * K, K, N, hsdr_cuda_cols_order(K, N), q, want);
            for (int r = 0; r < N; r++) {
                const float got = Y[(size_t)c * N + r];
                CHECK(memcmp(&got, &want[r], sizeof got) == 0,
                      "K=%d N=%d columns=%d (lanes %d): column %d row %d: %.9g, the reference gives %.9g: not "
                      "bit-identical", K, N, ncols, lanes, c, r, (double)got, (double)want[r]);
            }
        }
        free(W), free(X), free(Y), free(want), free(q);
    }
    return test_finish("test_cuda_cols");
}
