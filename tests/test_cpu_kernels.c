/* Every CPU kernel of the registry against the scalar reference on fresh random inputs: production-family kernels
 * bit for bit (fp32) against the reference's fused production sequence, through both the checking interface and
 * the timed path (prologue + rows over uneven row ranges), with poisoned outputs. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "inputs.h"
#include "kernel.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "rng.h"
#include "testing.h"

static void random_weights(hsdr_rng *r, uint8_t *W, size_t nblocks, int extreme_scales)
{
    hsdr_random_ptq1_0(r, W, nblocks);
    if (!extreme_scales)
        return;
    for (size_t b = 0; b < nblocks; b++) { /* any finite fp16 scale, subnormals and negatives included */
        uint16_t d = (uint16_t)(hsdr_rng_u64(r) & 0xfbff);
        W[b * HSDR_PTQ1_0_BYTES + 26] = (uint8_t)(d & 0xff);
        W[b * HSDR_PTQ1_0_BYTES + 27] = (uint8_t)(d >> 8);
    }
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_cpu_kernels"));
    int tested = 0;
    for (size_t vi = 0; vi < hsdr_registry_count; vi++) {
        const hsdr_variant *v = &hsdr_registry[vi];
        if (strcmp(v->backend, "cpu") != 0)
            continue;
        if (hsdr_variant_unavailable(v)) {
            printf("test_cpu_kernels: %s skipped: %s\n", v->name, hsdr_variant_unavailable(v));
            continue;
        }
        if (strcmp(v->family, "production") != 0 && strcmp(v->family, "baseline") != 0)
            continue; /* the LNS8 families get their own checks with their kernels */
        tested++;
        for (int it = 0; it < 60; it++) {
            int K = 128 * (1 + (int)hsdr_rng_below(&rng, it < 50 ? 48 : 136)), N = 1 + (int)hsdr_rng_below(&rng, 37);
            size_t nb = (size_t)N * (K / HSDR_QK);
            uint8_t *W = malloc(nb * HSDR_PTQ1_0_BYTES);
            float *x = malloc(sizeof(float) * (size_t)K), *y = malloc(sizeof(float) * (size_t)N),
                  *ref = malloc(sizeof(float) * (size_t)N);
            hsdr_block_q8_0 *q = malloc(sizeof *q * (size_t)(K / 32));
            random_weights(&rng, W, nb, it % 3 == 0);
            hsdr_dist_fill((hsdr_dist)(it % 3), &rng, x, (size_t)K, NULL);
            if (it % 7 == 0)
                for (int i = 0; i < K; i += 3)
                    x[i] = 0.0f; /* sparse, and blocks of zeros */
            hsdr_matvec_q8_0(W, x, K, N, q, ref, HSDR_FUSED);
            /* checking interface */
            for (int r = 0; r < N; r++)
                y[r] = NAN;
            hsdr_matvec_io io = {.K = K, .N = N, .weights = W, .x = x, .y_f32 = y};
            char err[256];
            CHECK(v->matvec(v, &io, err, sizeof err) == 0, "%s: %s", v->name, err);
            for (int r = 0; r < N; r++)
                CHECK(hsdr_f32_bits(y[r]) == hsdr_f32_bits(ref[r]), "%s K=%d N=%d row %d: %a vs reference %a", v->name,
                      K, N, r, (double)y[r], (double)ref[r]);
            /* timed path over uneven row ranges */
            void *act = aligned_alloc(64, (v->act_bytes(K) + 63) & ~(size_t)63);
            size_t sb = (v->scratch_bytes(K, 1) + 63) & ~(size_t)63;
            void *scratch = aligned_alloc(64, sb);
            memset(scratch, 0, sb);
            for (int r = 0; r < N; r++)
                y[r] = NAN;
            hsdr_exec e = {.K = K, .N = N, .R = 1, .weights = W, .x = x, .act = act, .y = y};
            v->prologue(&e);
            int cut = (int)hsdr_rng_below(&rng, (uint32_t)N + 1);
            v->rows(&e, 0, cut, scratch);
            v->rows(&e, cut, N, scratch);
            for (int r = 0; r < N; r++)
                CHECK(hsdr_f32_bits(y[r]) == hsdr_f32_bits(ref[r]), "%s timed path K=%d row %d: %a vs %a", v->name, K,
                      r, (double)y[r], (double)ref[r]);
            free(act), free(scratch), free(W), free(x), free(y), free(ref), free(q);
        }
    }
    printf("test_cpu_kernels: %d production-family CPU kernel(s) tested\n", tested);
    return test_finish("test_cpu_kernels");
}
