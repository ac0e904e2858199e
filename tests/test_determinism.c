/* Determinism across runs and backends: on fresh random weights and activations (printed seed), every variant that
 * writes A[8] (any backend that can run here: the reference, the CPU kernels, Vulkan on lavapipe, Metal under the
 * shim, CUDA on a GPU) must give exactly ref.direct's integers; every variant that writes Q15.16 stays within 2 of
 * ref.q1516 (each is within 1 of the correctly rounded value by the spec); and every output of every variant is the
 * same bits on a second run. The thread-count half of the contract: tests/determinism.sh (validation outcomes of the
 * same matrix run twice and on 1 and 2 threads). */
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lns8.h"
#include "outputs.h"
#include "random_ptq1_0.h"
#include "testing.h"

enum { K = 1024, N = 9, G = K / 128 };

static uint8_t codes[K]; /* x in LNS8 with the automatic pre-scale, as `hsdr check` gives it to every variant */
static int prescale;

static int run_variant(const hsdr_variant *v, const uint8_t *W, const float *x, hsdr_outputs *o, char *err,
                       size_t errlen)
{
    hsdr_matvec_io io = {.K = K, .N = N, .weights = W, .x = x, .codes = codes, .prescale_e = prescale,
                         .flns_F = 8, .flns_b = 8};
    if (hsdr_outputs_alloc(o, v, N, G, &io) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return v->matvec(v, &io, err, errlen);
}

int main(void)
{
    hsdr_rng rng;
    hsdr_rng_seed(&rng, test_seed("test_determinism"));
    static uint8_t W[N * G * HSDR_PTQ1_0_BYTES];
    static float x[K];
    random_ptq1_0_blocks(&rng, W, (size_t)N * G);
    for (int k = 0; k < K; k++)
        x[k] = (float)hsdr_rng_gaussian(&rng);
    size_t bad = 0;
    CHECK(hsdr_lns8_auto_prescale(x, K, &prescale, &bad) == 0 && hsdr_lns8_encode(x, K, prescale, codes, &bad) == 0,
          "LNS8 encode of x failed at %zu", bad);
    const hsdr_variant *ref = hsdr_variant_find("ref.direct");
    hsdr_outputs want = {0}, qref = {0};
    char err[512] = "";
    CHECK(ref && run_variant(ref, W, x, &want, err, sizeof err) == 0 && want.A, "ref.direct: %s", err);
    const hsdr_variant *refq = hsdr_variant_find("ref.q1516");
    CHECK(refq && run_variant(refq, W, x, &qref, err, sizeof err) == 0 && qref.q_group, "ref.q1516: %s", err);
    int compared = 0;
    for (size_t i = 0; i < hsdr_registry_count && want.A && qref.q_group; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if (!v->matvec || hsdr_variant_unavailable(v) || !(v->outputs & (HSDR_OUT_A | HSDR_OUT_Q1516 | HSDR_OUT_Y_Q8_0 |
                                                                        HSDR_OUT_Y_Q8_1)))
            continue;
        hsdr_outputs a = {0}, b = {0};
        if (run_variant(v, W, x, &a, err, sizeof err) != 0 || run_variant(v, W, x, &b, err, sizeof err) != 0) {
            CHECK(0, "%s: %s", v->name, err);
        } else {
            compared++;
            if (v->outputs & HSDR_OUT_A) {
                CHECK(memcmp(a.A, want.A, sizeof(int32_t) * 8 * N * G) == 0, "%s: A[8] differs from ref.direct's",
                      v->name);
                CHECK(memcmp(a.A, b.A, sizeof(int32_t) * 8 * N * G) == 0, "%s: A[8] differs between two runs",
                      v->name);
            }
            if (v->outputs & HSDR_OUT_Q1516) {
                /* the Q15.16 materialization may differ by the spec's bound between methods, but never between runs */
                CHECK(memcmp(a.q_group, b.q_group, sizeof(int64_t) * N * G) == 0 &&
                          memcmp(a.q_row, b.q_row, sizeof(int64_t) * N) == 0,
                      "%s: Q15.16 differs between two runs", v->name);
                for (int j = 0; j < N * G; j++)
                    CHECK(llabs((long long)(a.q_group[j] - qref.q_group[j])) <= 2, "%s: Q15.16 of group %d: %lld, "
                          "ref.q1516 %lld (the spec allows each within 1 of the correctly rounded value)", v->name, j,
                          (long long)a.q_group[j], (long long)qref.q_group[j]);
            }
            if (v->precision == 32 && (v->outputs & ~(unsigned)HSDR_OUT_Q1516 & ~(unsigned)HSDR_OUT_A))
                CHECK(memcmp(a.y_f32, b.y_f32, sizeof(float) * N) == 0, "%s: y differs between two runs", v->name);
            if (v->precision == 64)
                CHECK(memcmp(a.y_f64, b.y_f64, sizeof(double) * N) == 0, "%s: y differs between two runs", v->name);
        }
        hsdr_outputs_free(&a);
        hsdr_outputs_free(&b);
    }
    printf("test_determinism: %d variants compared\n", compared);
    CHECK(compared >= 4, "only %d variants could run", compared);
    hsdr_outputs_free(&want);
    hsdr_outputs_free(&qref);
    return test_finish("test_determinism");
}
