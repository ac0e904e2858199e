/* Every CPU kernel of the registry against the scalar reference on fresh random inputs (seed printed):
 *  1. every variant, through the harness's own validation (hsdr_validate: the checking interface with every declared
 *     output -- integers A, C, fLNS roots exactly, Q15.16 within the spec bound, y within its family tolerance or
 *     bit-identical for the production-equivalent families -- and the timed path on converted weights), over random
 *     K, N, R, distributions and fLNS parameters;
 *  2. every variant, split invariance: prologue + rows over random uneven row ranges, each range with its own
 *     zeroed scratch, give bit for bit the y of one serial run (poisoned before), as the thread split must;
 *     The same through the pool (hsdr_timing_run_pool on 3 threads, a random number of them active: run_n with the
 *     prologue's barrier over the active ones) gives that y bit for bit too;
 *  3. production-family kernels bit for bit against the reference's fused production sequence on weights with
 *     any finite fp16 scale (subnormals, negatives) and sparse activations;
 *  4. every variant with a split prologue (prologue_part): its parts, 1 to 40 of them run in a random order, write
 *     every byte of the activation buffer (poisoned the same before) exactly as one prologue does. */
#include <math.h>
#include <string.h>

#include "fp16.h"
#include "inputs.h"
#include "kernel.h"
#include "matvec.h"
#include "ptq1_0.h"
#include "rng.h"
#include "testing.h"
#include "threads.h"
#include "timing.h"
#include "validate.h"

static hsdr_pool *pool3; /* three threads, unpinned: the pool path of part 2 */

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

/* Parts 1 and 2 for one variant on one random configuration. */
static void check_case(hsdr_rng *rng, const hsdr_variant *v, int K, int N, int R, hsdr_dist dist)
{
    hsdr_case c = {.variant = v, .K = K, .N = N, .R = v->uses_R ? R : 1, .threads = 1, .dist = dist,
                   .mode = HSDR_MODE_HOT, .flns_F = (int)hsdr_rng_below(rng, 9), .flns_b = 4 + (int)hsdr_rng_below(rng, 13),
                   .seed = hsdr_rng_u64(rng) >> 11};
    hsdr_inputs in;
    char err[256];
    if (hsdr_inputs_build(&in, K, N, dist, c.seed, err, sizeof err) != 0) {
        CHECK(0, "%s: inputs: %s", v->name, err);
        return;
    }
    hsdr_validation val;
    hsdr_validate(&c, &in, &val);
    CHECK(val.passed, "%s K=%d N=%d R=%d F=%d b=%d dist=%d seed=%llu: %s", v->name, K, N, c.R, c.flns_F, c.flns_b,
          (int)dist, (unsigned long long)c.seed, val.detail);
    hsdr_timing_setup ts;
    if (hsdr_timing_setup_create(&ts, &c, &in, 1, HSDR_MODE_HOT, NULL, NULL, err, sizeof err) != 0) {
        CHECK(0, "%s: setup: %s", v->name, err);
        hsdr_inputs_free(&in);
        return;
    }
    float *serial = malloc(sizeof(float) * (size_t)N);
    hsdr_exec e = ts.exec;
    for (int r = 0; r < N; r++)
        e.y[r] = NAN;
    hsdr_timing_run_serial(&ts);
    memcpy(serial, e.y, sizeof(float) * (size_t)N);
    for (int r = 0; r < N; r++)
        e.y[r] = NAN;
    if (v->prologue)
        v->prologue(&e);
    size_t sb = (v->scratch_bytes ? v->scratch_bytes(K, c.R) : 0) + 64;
    void *scratch = aligned_alloc(64, (sb + 63) & ~(size_t)63);
    for (int r0 = 0; r0 < N;) {
        int r1 = r0 + 1 + (int)hsdr_rng_below(rng, (uint32_t)(N - r0));
        memset(scratch, 0, sb);
        v->rows(&e, r0, r1, scratch);
        r0 = r1;
    }
    for (int r = 0; r < N; r++)
        CHECK(hsdr_f32_bits(e.y[r]) == hsdr_f32_bits(serial[r]), "%s K=%d N=%d R=%d split rows: y[%d] = %a, serial %a",
              v->name, K, N, c.R, r, (double)e.y[r], (double)serial[r]);
    hsdr_timing_setup tp;
    hsdr_case c3 = c;
    c3.threads = 3;
    if (hsdr_timing_setup_create(&tp, &c3, &in, 3, HSDR_MODE_HOT, pool3, NULL, err, sizeof err) != 0) {
        CHECK(0, "%s: setup on 3 threads: %s", v->name, err);
    } else {
        const int active = 1 + (int)hsdr_rng_below(rng, 3);
        hsdr_timing_setup_threads(&tp, active);
        for (int r = 0; r < N; r++)
            tp.exec.y[r] = NAN;
        hsdr_timing_run_pool(&tp);
        for (int r = 0; r < N; r++)
            CHECK(hsdr_f32_bits(tp.exec.y[r]) == hsdr_f32_bits(serial[r]),
                  "%s K=%d N=%d R=%d pool, %d of 3 threads: y[%d] = %a, serial %a", v->name, K, N, c.R, active, r,
                  (double)tp.exec.y[r], (double)serial[r]);
        hsdr_timing_setup_free(&tp);
    }
    free(scratch);
    free(serial);
    hsdr_timing_setup_free(&ts);
    hsdr_inputs_free(&in);
}

/* Part 4 for one variant: K random, inputs of a random distribution (zeros sprinkled in), 1..40 parts. */
static void check_prologue_parts(hsdr_rng *rng, const hsdr_variant *v, int K)
{
    const int parts = 1 + (int)hsdr_rng_below(rng, 40);
    const size_t ab = (v->act_bytes(K) + 63) & ~(size_t)63;
    uint8_t *whole = aligned_alloc(64, ab), *split = aligned_alloc(64, ab);
    float *x = malloc(sizeof(float) * (size_t)K);
    int *order = malloc(sizeof(int) * (size_t)parts);
    const hsdr_dist dist = K % 1024 == 0 && hsdr_rng_below(rng, 4) == 0 ? HSDR_DIST_BONSAI
                                                                          : (hsdr_dist)hsdr_rng_below(rng, 3);
    hsdr_dist_fill(dist, rng, x, (size_t)K, NULL);
    if (hsdr_rng_below(rng, 3) == 0)
        for (int i = (int)hsdr_rng_below(rng, 5); i < K; i += 5)
            x[i] = 0.0f;
    const uint8_t poison = (uint8_t)hsdr_rng_u64(rng);
    memset(whole, poison, ab);
    memset(split, poison, ab);
    hsdr_exec e = {.K = K, .N = 1, .R = 1, .cols = 1, .x = x, .act = whole};
    v->prologue(&e);
    for (int i = 0; i < parts; i++)
        order[i] = i;
    for (int i = parts - 1; i > 0; i--) { /* parts run in any order on the pool's threads */
        int j = (int)hsdr_rng_below(rng, (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    e.act = split;
    for (int i = 0; i < parts; i++)
        v->prologue_part(&e, order[i], parts);
    size_t first = ab;
    for (size_t b = ab; b-- > 0;)
        if (whole[b] != split[b])
            first = b;
    CHECK(first == ab, "%s K=%d %d parts (dist %d): activation byte %zu is %u, the whole prologue's %u", v->name, K,
          parts, (int)dist, first, first < ab ? split[first] : 0, first < ab ? whole[first] : 0);
    free(order);
    free(x);
    free(split);
    free(whole);
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_cpu_kernels"));
    char perr[256];
    pool3 = hsdr_pool_create(3, 0, perr, sizeof perr);
    CHECK(pool3 != NULL, "pool of 3: %s", perr);
    if (!pool3)
        return test_finish("test_cpu_kernels");
    int tested = 0, production = 0;
    static const int Rs[] = {1, 2, 3, 5, 8, 64};
    for (size_t vi = 0; vi < hsdr_registry_count; vi++) {
        const hsdr_variant *v = &hsdr_registry[vi];
        if (strcmp(v->backend, "cpu") != 0)
            continue;
        if (hsdr_variant_unavailable(v)) {
            printf("test_cpu_kernels: %s skipped: %s\n", v->name, hsdr_variant_unavailable(v));
            continue;
        }
        tested++;
        for (int it = 0; v->prologue_part && it < 40; it++)
            check_prologue_parts(&rng, v, it == 0 ? 128 : 128 * (1 + (int)hsdr_rng_below(&rng, 136)));
        for (int it = 0; it < 12; it++) {
            int K = it == 0 ? 128 : it == 1 ? 5120 : 128 * (1 + (int)hsdr_rng_below(&rng, 24));
            int N = it == 1 ? 19 : 1 + (int)hsdr_rng_below(&rng, 70);
            hsdr_dist dist = K % 1024 == 0 && it % 4 == 3 ? HSDR_DIST_BONSAI : (hsdr_dist)(it % 3);
            check_case(&rng, v, K, N, Rs[hsdr_rng_below(&rng, 6)], dist);
        }
        if (strcmp(v->family, "production") != 0 && strcmp(v->family, "baseline") != 0)
            continue;
        production++;
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
            void *prepared = NULL;
            size_t pbytes = 0;
            char err[256];
            CHECK(v->matvec(v, &io, err, sizeof err) == 0, "%s: %s", v->name, err);
            for (int r = 0; r < N; r++)
                CHECK(hsdr_f32_bits(y[r]) == hsdr_f32_bits(ref[r]), "%s K=%d N=%d row %d: %a vs reference %a", v->name,
                      K, N, r, (double)y[r], (double)ref[r]);
            /* timed path over uneven row ranges */
            void *act = aligned_alloc(64, (v->act_bytes(K) + 63) & ~(size_t)63);
            size_t sb = ((v->scratch_bytes ? v->scratch_bytes(K, 1) : 0) + 63) & ~(size_t)63;
            void *scratch = aligned_alloc(64, sb);
            memset(scratch, 0, sb);
            for (int r = 0; r < N; r++)
                y[r] = NAN;
            if (v->prepare)
                CHECK(v->prepare(W, K, N, &prepared, &pbytes, err, sizeof err) == 0, "%s prepare: %s", v->name, err);
            hsdr_exec e = {.K = K, .N = N, .R = 1, .weights = prepared ? prepared : (const void *)W, .x = x, .act = act,
                           .y = y};
            v->prologue(&e);
            int cut = (int)hsdr_rng_below(&rng, (uint32_t)N + 1);
            v->rows(&e, 0, cut, scratch);
            v->rows(&e, cut, N, scratch);
            for (int r = 0; r < N; r++)
                CHECK(hsdr_f32_bits(y[r]) == hsdr_f32_bits(ref[r]), "%s timed path K=%d row %d: %a vs %a", v->name, K,
                      r, (double)y[r], (double)ref[r]);
            if (prepared)
                v->release(prepared);
            free(act), free(scratch), free(W), free(x), free(y), free(ref), free(q);
        }
    }
    printf("test_cpu_kernels: %d CPU kernel(s) tested, %d of them bit-identical to production\n", tested, production);
    hsdr_pool_destroy(pool3);
    return test_finish("test_cpu_kernels");
}
