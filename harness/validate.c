#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "hsdr.h"
#include "matvec.h"
#include "outputs.h"
#include "ptq1_0.h"
#include "timing.h"

int hsdr_y_reference_for(const hsdr_variant *v, const hsdr_case *c, const hsdr_inputs *in, hsdr_y_reference *yr)
{
    const int N = in->N;
    const char *f = v->family;
    if (v->outputs & HSDR_OUT_Y_Q8_1) {
        /* the variant's own sequence (CUDA: its lanes, warps and butterfly; Vulkan: its workgroup and subgroup):
         * bit-identical to its reference */
        float *y = malloc(sizeof(float) * (size_t)N);
        hsdr_block_q8_1 *q = malloc(sizeof(hsdr_block_q8_1) * (size_t)(in->K / 32));
        if (!y || !q) {
            free(y), free(q);
            return -1;
        }
        hsdr_matvec_q8_1(in->W, in->x, in->K, N, v->q8_1_order(in->K, N), q, y);
        for (int r = 0; r < N; r++) {
            yr->ref[r] = y[r];
            yr->tol[r] = -1.0;
        }
        free(y), free(q);
        yr->what = "bit-identical to its own sequence (hsdr_matvec_q8_1 in its order)";
    } else if (strcmp(f, "production") == 0 || strcmp(f, "baseline") == 0) {
        /* production-equivalent and our own baselines: bit-identical to the production fused sequence */
        for (int r = 0; r < N; r++) {
            yr->ref[r] = in->y_q8[r];
            yr->tol[r] = -1.0;
        }
        yr->what = "bit-identical to production PTQ1_0 x Q8_0";
    } else if (strcmp(f, "exact") == 0) {
        /* fp32 rounding of an fp64-or-better sum: half an fp32 ulp of |y| plus the exact tolerance */
        for (int r = 0; r < N; r++) {
            yr->ref[r] = in->y_exact[r];
            yr->tol[r] = 0x1p-24 * fabs(in->y_exact[r]) + 1e-9 * fmax(1.0, in->abs_exact[r]);
        }
        yr->what = "within fp32 rounding of the exact sum";
    } else if (strcmp(f, "direct") == 0 || strcmp(f, "stateset") == 0 || strcmp(f, "tile64") == 0) {
        /* spec/vectors.md: fp32 kernels within 2^-20 sum|terms| of the exact LNS8 value */
        for (int r = 0; r < N; r++) {
            yr->ref[r] = in->y_lns8[r];
            yr->tol[r] = 0x1p-20 * in->abs_lns8[r];
        }
        yr->what = "within 2^-20 sum|terms| of y_lns8";
    } else if (strcmp(f, "flns") == 0) {
        /* the fLNS tree is exact in integers; its fp64 value per group is only summed: same fp32 tolerance */
        hsdr_inputs_flns(in, c->flns_F, c->flns_b, yr->ref);
        for (int r = 0; r < N; r++)
            yr->tol[r] = 0x1p-20 * in->abs_lns8[r];
        yr->what = "within 2^-20 sum|terms| of the reference fLNS value";
    } else if (strcmp(f, "q1516") == 0) {
        /* two values each within the spec bound of the correctly rounded one, plus fp32 rounding of y */
        for (int r = 0; r < N; r++) {
            yr->ref[r] = ldexp((double)in->q_row[r], -16);
            yr->tol[r] = 2.0 * ldexp(in->q_bound[r], -16) + 0x1p-24 * fabs(yr->ref[r]);
        }
        yr->what = "within twice the Q15.16 bound of the reference";
    } else {
        return -1;
    }
    return 0;
}

/* First mismatch of the timed path's y against the family reference, or "" */
static void check_y(const float *y, const hsdr_y_reference *yr, int N, char *msg, size_t n)
{
    msg[0] = '\0';
    for (int r = 0; r < N; r++) {
        bool ok = yr->tol[r] < 0 ? hsdr_f32_bits(y[r]) == hsdr_f32_bits((float)yr->ref[r])
                                 : !isnan(y[r]) && fabs((double)y[r] - yr->ref[r]) <= yr->tol[r];
        if (!ok) {
            snprintf(msg, n, "timed path y[%d] = %.9g, reference %.17g (%s)", r, (double)y[r], yr->ref[r], yr->what);
            return;
        }
    }
}

/* The checking interface against the bundle: every declared output. */
static void check_interface(const hsdr_case *c, const hsdr_inputs *in, char *msg, size_t n)
{
    const hsdr_variant *v = c->variant;
    const int K = in->K, N = in->N, G = K / HSDR_QK;
    const size_t ng = (size_t)N * G;
    msg[0] = '\0';
    hsdr_matvec_io io = {.K = K, .N = N, .weights = in->W, .x = in->x, .codes = in->codes, .prescale_e = in->e,
                         .flns_F = c->flns_F, .flns_b = c->flns_b};
    hsdr_outputs o;
    char err[256] = "";
    if (hsdr_outputs_alloc(&o, v, N, G, &io) != 0) {
        snprintf(msg, n, "out of memory for validation buffers");
        goto out;
    }
    if (v->matvec(v, &io, err, sizeof err) != 0) {
        snprintf(msg, n, "checking interface failed: %s", err);
        goto out;
    }
    unsigned out = v->outputs;
    for (int r = 0; r < N && !msg[0]; r++) {
        double got = hsdr_outputs_y(&o, v, r);
        if ((out & HSDR_OUT_Y_EXACT) && !(fabs(got - in->y_exact[r]) <= 1e-9 * fmax(1.0, in->abs_exact[r])))
            snprintf(msg, n, "y_exact[%d] = %.17g, reference %.17g", r, got, in->y_exact[r]);
        else if ((out & HSDR_OUT_Y_Q8_0) && hsdr_f32_bits(o.y_f32[r]) != hsdr_f32_bits(in->y_q8[r]))
            snprintf(msg, n, "y_q8_0[%d] = %.9g, production %.9g: not bit-identical", r, (double)o.y_f32[r],
                     (double)in->y_q8[r]);
        else if ((out & HSDR_OUT_Y_LNS8) &&
                 !(fabs(got - in->y_lns8[r]) <= (v->precision == 64 ? 1e-12 * fmax(1.0, fabs(in->y_lns8[r]))
                                                                    : 0x1p-20 * in->abs_lns8[r])))
            snprintf(msg, n, "y_lns8[%d] = %.17g, reference %.17g", r, got, in->y_lns8[r]);
        else if ((out & HSDR_OUT_Q1516) && !(fabs((double)(o.q_row[r] - in->q_row[r])) <= 2.0 * in->q_bound[r]))
            snprintf(msg, n, "q15_16[%d] = %lld, reference %lld", r, (long long)o.q_row[r], (long long)in->q_row[r]);
    }
    if (!msg[0] && (out & HSDR_OUT_A))
        for (size_t i = 0; i < ng * 8; i++)
            if (o.A[i] != in->A[i]) {
                snprintf(msg, n, "A[row %zu][group %zu][%zu] = %d, reference %d", i / 8 / G, i / 8 % G, i % 8,
                         o.A[i], in->A[i]);
                break;
            }
    if (!msg[0] && (out & HSDR_OUT_C)) {
        for (size_t rg = 0; rg < ng && !msg[0]; rg++) {
            hsdr_stateset128 s;
            uint64_t nz[2], neg[2];
            int16_t ref[HSDR_NSTATES];
            hsdr_stateset128_build(in->codes + (rg % G) * HSDR_QK, &s);
            hsdr_ptq1_0_to_masks(in->W + rg * HSDR_PTQ1_0_BYTES, nz, neg);
            hsdr_stateset128_counts(&s, nz, neg, ref);
            for (int k = 1; k < HSDR_NSTATES; k++)
                if (o.C[rg * HSDR_NSTATES + k] != ref[k]) {
                    snprintf(msg, n, "C[row %zu][group %zu][k=%d] = %d, reference %d", rg / G, rg % G, k,
                             o.C[rg * HSDR_NSTATES + k], ref[k]);
                    break;
                }
        }
    }
    if (!msg[0] && (out & HSDR_OUT_FLNS))
        for (size_t rg = 0; rg < ng; rg++) {
            hsdr_flns root = hsdr_flns_tree(in->A + rg * 8, c->flns_F, c->flns_b);
            if (o.sign[rg] != root.sign || (root.sign && o.lambda[rg] != root.lambda)) {
                snprintf(msg, n, "fLNS root [row %zu][group %zu] = (%d, %d), reference (%d, %d)", rg / G, rg % G,
                         o.lambda[rg], o.sign[rg], root.lambda, root.sign);
                break;
            }
        }
out:
    hsdr_outputs_free(&o);
}

void hsdr_validate(const hsdr_case *c, const hsdr_inputs *in, hsdr_validation *out)
{
    const hsdr_variant *v = c->variant;
    out->passed = false;
    char msg[400] = "";
    if (v->matvec) {
        check_interface(c, in, msg, sizeof msg);
        if (msg[0]) {
            snprintf(out->detail, sizeof out->detail, "checking interface: %s", msg);
            return;
        }
    }
    hsdr_y_reference yr = {malloc(sizeof(double) * (size_t)in->N), malloc(sizeof(double) * (size_t)in->N), ""};
    float *y = NULL;
    hsdr_timing_setup ts;
    char err[256] = "";
    bool have_setup = false;
    if (!yr.ref || !yr.tol) {
        snprintf(out->detail, sizeof out->detail, "out of memory");
        goto out;
    }
    if (hsdr_y_reference_for(v, c, in, &yr) != 0) {
        snprintf(out->detail, sizeof out->detail, "no reference for family '%s'", v->family);
        goto out;
    }
    /* the timed path, single-threaded over all rows, on the base weights */
    if (hsdr_timing_setup_create(&ts, c, in, 1, HSDR_MODE_HOT, NULL, NULL, err, sizeof err) != 0) {
        snprintf(out->detail, sizeof out->detail, "timed path setup failed: %s", err);
        goto out;
    }
    have_setup = true;
    const int cols = ts.exec.cols;
    if (cols > 1 && !(v->outputs & HSDR_OUT_Y_Q8_1)) {
        /* the bundle's references are of column 0; only a reference computed from x can serve every column */
        snprintf(out->detail, sizeof out->detail, "cols = %d: no per-column reference for family '%s'", cols,
                 v->family);
        goto out;
    }
    y = ts.exec.y;
    for (size_t r = 0; r < (size_t)in->N * (size_t)cols; r++)
        y[r] = NAN;
    if (hsdr_timing_run_serial(&ts) != 0) {
        snprintf(out->detail, sizeof out->detail, "timed path failed: %s", ts.err);
        goto out;
    }
    for (int col = 0; col < cols; col++) {
        hsdr_inputs column = *in; /* column col's activations; a Y_Q8_1 reference is computed from W and x */
        column.x = (float *)ts.exec.x + (size_t)col * (size_t)in->K; /* read only */
        if (col > 0 && hsdr_y_reference_for(v, c, &column, &yr) != 0) {
            snprintf(out->detail, sizeof out->detail, "out of memory");
            goto out;
        }
        check_y(y + (size_t)col * (size_t)in->N, &yr, in->N, msg, sizeof msg);
        if (msg[0]) {
            if (cols > 1)
                snprintf(out->detail, sizeof out->detail, "column %d: %s", col, msg);
            else
                snprintf(out->detail, sizeof out->detail, "%s", msg);
            goto out;
        }
    }
    out->passed = true;
    snprintf(out->detail, sizeof out->detail, "%s; timed path %s (%d rows%s)",
             v->matvec ? "checking interface: every declared output matches (integers exactly)" : "no checking interface",
             yr.what, in->N, cols > 1 ? " in every column" : "");
out:
    if (have_setup)
        hsdr_timing_setup_free(&ts);
    free(yr.ref);
    free(yr.tol);
}

void hsdr_validate_sample(const hsdr_variant *v, int K, int N, hsdr_dist dist, uint64_t seed, int F, int b,
                          hsdr_validation *out)
{
    hsdr_case c = {.variant = v, .K = K, .N = N < 256 ? N : 256, .R = 1, .threads = 1, .dist = dist,
                   .mode = HSDR_MODE_HOT, .flns_F = F, .flns_b = b};
    hsdr_inputs in;
    char err[400];
    *out = (hsdr_validation){false, ""};
    if (hsdr_inputs_build(&in, c.K, c.N, c.dist, seed, err, sizeof err) != 0) {
        snprintf(out->detail, sizeof out->detail, "inputs: %s", err);
        return;
    }
    hsdr_validate(&c, &in, out);
    hsdr_inputs_free(&in);
}
