/* The vector checker. Tolerances are those of spec/vectors.md:
 *   integers (codes, blocks, A, C, fLNS, prescale) exact;
 *   y_q8_0 bit-identical fp32;
 *   y_exact within 1e-9 * max(1, sum|terms|);
 *   group_sum / y_lns8: fp64 variants within 1e-12 * max(1, |ref|), fp32 variants within 2^-20 * sum|terms|;
 *   q15_16 within 1 (|d 2^e| <= 4) or 1 + |d 2^e| / 8 per group, summed over a row's groups. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fp16.h"
#include "hsdr.h"
#include "kernel.h"
#include "lns8.h"
#include "matvec.h"
#include "outputs.h"
#include "ptq1_0.h"
#include "util.h"

static bool selected(const hsdr_variant *v, const check_options *opt)
{
    if (opt->backend && strcmp(opt->backend, v->backend) != 0)
        return false;
    return !opt->variant || hsdr_glob_match(opt->variant, v->name);
}

int hsdr_check_count_selected(const check_options *opt)
{
    int n = 0;
    for (size_t i = 0; i < hsdr_registry_count; i++)
        n += selected(&hsdr_registry[i], opt);
    return n;
}

/* One (case, variant) verdict: the first mismatch wins. */
typedef struct {
    char msg[512];
    bool failed;
} verdict;

static void mismatch(verdict *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(verdict *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->failed = true;
}

static bool float_close(double got, double ref, int precision, double abs_terms)
{
    if (isnan(got))
        return false;
    double tol = precision == 64 ? 1e-12 * fmax(1.0, fabs(ref)) : 0x1p-20 * abs_terms;
    return fabs(got - ref) <= tol;
}

/* ---- codec cases ---- */

static void check_lns8_encode(const vec_case *c, const hsdr_variant *v, verdict *r)
{
    uint8_t *codes = malloc(c->n ? c->n : 1);
    if (!codes) {
        mismatch(r, "out of memory");
        return;
    }
    size_t bad = 0;
    int e = c->prescale_e, st = 0;
    if (c->auto_prescale)
        st = v->auto_prescale(c->x, c->n, &e, &bad);
    if (st == 0 && c->auto_prescale && !c->expect_error && e != c->expect_prescale_e)
        mismatch(r, "field expect.prescale_e: got %d, expected %d", e, c->expect_prescale_e);
    if (st == 0)
        st = v->encode_lns8(c->x, c->n, e, codes, &bad);
    if (c->expect_error) {
        if (st == 0)
            mismatch(r, "field expect.error: returned codes for an input that must be refused");
    } else if (st != 0) {
        mismatch(r, "field x[%zu]: refused (%s) but codes were expected", bad, hsdr_lns8_strerror(st));
    } else {
        for (size_t i = 0; i < c->n; i++)
            if (codes[i] != c->expect_codes[i]) {
                mismatch(r, "field expect.codes[%zu]: got 0x%02x, expected 0x%02x (x = %.9g)", i, codes[i],
                         c->expect_codes[i], (double)c->x[i]);
                break;
            }
    }
    free(codes);
}

static void compare_block(const uint8_t *got, const uint8_t *want, verdict *r)
{
    for (int i = 0; i < HSDR_PTQ1_0_BYTES; i++)
        if (got[i] != want[i]) {
            mismatch(r, "field expect.block_hex byte %d: got 0x%02x, expected 0x%02x", i, got[i], want[i]);
            return;
        }
}

static void check_ptq1_0_pack(const vec_case *c, verdict *r)
{
    uint8_t blk[HSDR_PTQ1_0_BYTES];
    hsdr_ptq1_0_pack(c->t, c->d_bits, blk);
    compare_block(blk, c->block, r);
    static const char *const form_names[3] = {"integer", "compare", "float"};
    for (int form = 0; form < 3; form++) {
        int8_t t[HSDR_QK];
        hsdr_ptq1_0_unpack(c->block, t, (enum hsdr_decode_form)form);
        for (int i = 0; i < HSDR_QK; i++)
            if (t[i] != c->t[i]) {
                mismatch(r, "field t[%d]: unpack (%s form) got %d, expected %d", i, form_names[form], t[i], c->t[i]);
                break;
            }
    }
    if (hsdr_ptq1_0_d_bits(c->block) != c->d_bits)
        mismatch(r, "field d_f16_bits: block holds 0x%04x, expected 0x%04x", hsdr_ptq1_0_d_bits(c->block),
                 c->d_bits);
}

static void check_ptq1_0_quantize(const vec_case *c, verdict *r)
{
    uint8_t blk[HSDR_PTQ1_0_BYTES];
    hsdr_ptq1_0_quantize(c->x, blk);
    compare_block(blk, c->block, r);
}

/* ---- matvec-shaped cases (group and matvec) ---- */

static void check_group(const vec_case *c, const hsdr_variant *v, verdict *r)
{
    uint8_t blk[HSDR_PTQ1_0_BYTES];
    hsdr_ptq1_0_pack(c->t, c->d_bits, blk);
    hsdr_matvec_io io = {.K = HSDR_QK, .N = 1, .weights = blk, .codes = c->codes, .prescale_e = c->prescale_e,
                         .flns_F = c->has_flns ? c->flns_F : 8, .flns_b = c->has_flns ? c->flns_b : 8};
    hsdr_outputs o;
    char err[256] = "";
    if (hsdr_outputs_alloc(&o, v, 1, 1, &io) != 0) {
        mismatch(r, "out of memory");
    } else if (v->matvec(v, &io, err, sizeof err) != 0) {
        mismatch(r, "the variant failed: %s", err);
    } else {
        unsigned out = v->outputs;
        if (out & HSDR_OUT_A)
            for (int p = 0; p < 8; p++)
                if (o.A[p] != c->expect_A[p]) {
                    mismatch(r, "field expect.A[%d]: got %d, expected %d", p, o.A[p], c->expect_A[p]);
                    break;
                }
        if ((out & HSDR_OUT_C) && c->has_C)
            for (int k = 1; k < HSDR_NSTATES; k++)
                if (o.C[k] != c->expect_C[k]) {
                    mismatch(r, "field expect.C[\"%d\"]: got %d, expected %d", k, o.C[k], c->expect_C[k]);
                    break;
                }
        if (out & HSDR_OUT_Y_LNS8) {
            double got = hsdr_outputs_y(&o, v, 0);
            if (!float_close(got, c->expect_group_sum, v->precision, hsdr_lns8_group_abs_terms(blk, c->codes, c->prescale_e)))
                mismatch(r, "field expect.group_sum: got %.17g, expected %.17g (fp%d tolerance)", got,
                         c->expect_group_sum, v->precision);
        }
        if (out & HSDR_OUT_Q1516) {
            double bound = hsdr_q1516_bound(hsdr_fp16_to_fp32(c->d_bits), c->prescale_e);
            double diff = fabs((double)o.q_group[0] - (double)c->expect_q1516);
            if (o.q_group[0] == INT64_MIN || diff > bound)
                mismatch(r, "field expect.q15_16: got %lld, expected %lld (allowed +-%g)", (long long)o.q_group[0],
                         (long long)c->expect_q1516, bound);
        }
        if ((out & HSDR_OUT_FLNS) && c->has_flns &&
            (o.sign[0] != c->flns_sign || (c->flns_sign != 0 && o.lambda[0] != c->flns_lambda)))
            mismatch(r, "field expect.flns (F=%d, b=%d): got lambda %d sign %d, expected lambda %d sign %d", c->flns_F,
                     c->flns_b, o.lambda[0], o.sign[0], c->flns_lambda, c->flns_sign);
    }
    hsdr_outputs_free(&o);
}

static void check_matvec(const vec_case *c, const hsdr_variant *v, verdict *r)
{
    const int G = c->K / HSDR_QK;
    uint8_t *codes = NULL;
    int e = 0;
    if (!v->needs_x) {
        size_t bad = 0;
        int st;
        codes = malloc((size_t)c->K);
        if (!codes) {
            mismatch(r, "out of memory");
            return;
        }
        if ((st = hsdr_lns8_auto_prescale(c->x, c->n, &e, &bad)) != 0 ||
            (st = hsdr_lns8_encode(c->x, c->n, e, codes, &bad)) != 0) {
            mismatch(r, "field x[%zu]: LNS8 encoding refused it: %s", bad, hsdr_lns8_strerror(st));
            free(codes);
            return;
        }
    }
    hsdr_matvec_io io = {.K = c->K, .N = c->N, .weights = c->weights, .x = c->x, .codes = codes, .prescale_e = e,
                         .flns_F = 8, .flns_b = 8};
    hsdr_outputs o;
    char err[256] = "";
    /* the tolerance scale of y_exact: sum |terms| per row, from the exact reference itself */
    double *abs_exact = (v->outputs & HSDR_OUT_Y_EXACT) ? malloc(sizeof(double) * 2 * (size_t)c->N) : NULL;
    /* the variants' own sequences are not in the vector files: the reference computes them from the case's inputs */
    float *q8_1_want = (v->outputs & HSDR_OUT_Y_Q8_1) ? malloc(sizeof(float) * (size_t)c->N) : NULL;
    hsdr_block_q8_1 *q8_1_act = q8_1_want ? malloc(sizeof(hsdr_block_q8_1) * (size_t)(c->K / 32)) : NULL;
    if (q8_1_act)
        hsdr_matvec_q8_1(c->weights, c->x, c->K, c->N, v->q8_1_order(c->K, c->N), q8_1_act, q8_1_want);
    if (hsdr_outputs_alloc(&o, v, c->N, G, &io) != 0 || ((v->outputs & HSDR_OUT_Y_EXACT) && !abs_exact) ||
        ((v->outputs & HSDR_OUT_Y_Q8_1) && !q8_1_act)) {
        mismatch(r, "out of memory");
    } else if (v->matvec(v, &io, err, sizeof err) != 0) {
        mismatch(r, "the variant failed: %s", err);
    } else {
        unsigned out = v->outputs;
        if (abs_exact)
            hsdr_matvec_exact(c->weights, c->x, c->K, c->N, abs_exact + c->N, abs_exact);
        for (int row = 0; row < c->N && !r->failed; row++) {
            const uint8_t *wrow = c->weights + (size_t)row * G * HSDR_PTQ1_0_BYTES;
            if (out & HSDR_OUT_Y_EXACT) {
                double got = hsdr_outputs_y(&o, v, row);
                if (isnan(got) || fabs(got - c->expect_y_exact[row]) > 1e-9 * fmax(1.0, abs_exact[row]))
                    mismatch(r, "field expect.y_exact[%d]: got %.17g, expected %.17g", row, got,
                             c->expect_y_exact[row]);
            }
            if ((out & HSDR_OUT_Y_Q8_1) && q8_1_want) {
                float got = o.y_f32[row], want = q8_1_want[row];
                if (hsdr_f32_bits(got) != hsdr_f32_bits(want))
                    mismatch(r, "y[%d] against its own sequence (reference hsdr_matvec_q8_1): got %.9g "
                                "(0x%08x), expected %.9g (0x%08x): not bit-identical",
                             row, (double)got, hsdr_f32_bits(got), (double)want, hsdr_f32_bits(want));
            }
            if (out & HSDR_OUT_Y_Q8_0) {
                float got = o.y_f32[row], want = c->expect_y_q8_0[row];
                if (hsdr_f32_bits(got) != hsdr_f32_bits(want))
                    mismatch(r, "field expect.y_q8_0[%d]: got %.9g (0x%08x), expected %.9g (0x%08x): not bit-identical",
                             row, (double)got, hsdr_f32_bits(got), (double)want, hsdr_f32_bits(want));
            }
            if (out & HSDR_OUT_Y_LNS8) {
                double got = hsdr_outputs_y(&o, v, row), mag = 0.0;
                for (int g = 0; g < G; g++)
                    mag += hsdr_lns8_group_abs_terms(wrow + (size_t)g * HSDR_PTQ1_0_BYTES, codes + (size_t)g * HSDR_QK, e);
                if (!float_close(got, c->expect_y_lns8[row], v->precision, mag))
                    mismatch(r, "field expect.y_lns8[%d]: got %.17g, expected %.17g (fp%d tolerance)", row, got,
                             c->expect_y_lns8[row], v->precision);
            }
            if ((out & HSDR_OUT_A) && c->expect_mA)
                for (size_t i = (size_t)row * G * 8; i < (size_t)(row + 1) * G * 8; i++)
                    if (o.A[i] != c->expect_mA[i]) {
                        size_t gi = i / 8 - (size_t)row * G;
                        mismatch(r, "field expect.A[%d][%zu][%zu]: got %d, expected %d", row, gi, i % 8, o.A[i],
                                 c->expect_mA[i]);
                        break;
                    }
            if (out & HSDR_OUT_Q1516) {
                double bound = 0.0;
                for (int g = 0; g < G; g++)
                    bound += hsdr_q1516_bound(
                        hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(wrow + (size_t)g * HSDR_PTQ1_0_BYTES)), e);
                double diff = fabs((double)o.q_row[row] - (double)c->expect_q_rows[row]);
                if (o.q_row[row] == INT64_MIN || diff > bound)
                    mismatch(r, "field expect.q15_16[%d]: got %lld, expected %lld (allowed +-%g)", row,
                             (long long)o.q_row[row], (long long)c->expect_q_rows[row], bound);
            }
        }
    }
    hsdr_outputs_free(&o);
    free(abs_exact);
    free(q8_1_want);
    free(q8_1_act);
    free(codes);
}

/* Whether variant v has anything to compare in case c. */
static bool applies(const vec_case *c, const hsdr_variant *v)
{
    unsigned out = v->outputs;
    switch (c->kind) {
    case VEC_LNS8_ENCODE: return (out & HSDR_OUT_CODEC) && v->encode_lns8 && v->auto_prescale;
    case VEC_PTQ1_0_PACK:
    case VEC_PTQ1_0_QUANTIZE: return (out & HSDR_OUT_CODEC) != 0;
    case VEC_GROUP:
        return v->matvec && !v->needs_x &&
               (out & (HSDR_OUT_A | HSDR_OUT_Y_LNS8 | HSDR_OUT_Q1516 | (c->has_C ? HSDR_OUT_C : 0u) |
                       (c->has_flns ? HSDR_OUT_FLNS : 0u)));
    case VEC_MATVEC:
        if (out & HSDR_OUT_CODEC)
            return v->auto_prescale != NULL; /* the automatic pre-scale of x */
        return v->matvec && (out & (HSDR_OUT_Y_EXACT | HSDR_OUT_Y_Q8_0 | HSDR_OUT_Y_Q8_1 | HSDR_OUT_Y_LNS8 |
                                    HSDR_OUT_Q1516 | (c->expect_mA ? HSDR_OUT_A : 0u)));
    default: return false;
    }
}

static void check_one(const vec_case *c, const hsdr_variant *v, verdict *r)
{
    switch (c->kind) {
    case VEC_LNS8_ENCODE: check_lns8_encode(c, v, r); break;
    case VEC_PTQ1_0_PACK: check_ptq1_0_pack(c, r); break;
    case VEC_PTQ1_0_QUANTIZE: check_ptq1_0_quantize(c, r); break;
    case VEC_GROUP: check_group(c, v, r); break;
    case VEC_MATVEC:
        if (v->outputs & HSDR_OUT_CODEC) {
            int e = 0;
            size_t bad = 0;
            int st = v->auto_prescale(c->x, c->n, &e, &bad);
            if (st != 0)
                mismatch(r, "field x[%zu]: automatic pre-scale refused it: %s", bad, hsdr_lns8_strerror(st));
            else if (e != c->expect_prescale_e)
                mismatch(r, "field expect.prescale_e: got %d, expected %d", e, c->expect_prescale_e);
        } else {
            check_matvec(c, v, r);
        }
        break;
    default: break;
    }
}

void hsdr_check_file(const vec_file *f, const check_options *opt, check_totals *totals, FILE *out)
{
    long passed = 0, failed = 0;
    for (size_t i = 0; i < f->ncases; i++) {
        const vec_case *c = &f->cases[i];
        for (size_t j = 0; j < hsdr_registry_count; j++) {
            const hsdr_variant *v = &hsdr_registry[j];
            if (!selected(v, opt) || hsdr_variant_unavailable(v) || !applies(c, v))
                continue;
            verdict r = {.failed = false};
            check_one(c, v, &r);
            if (r.failed) {
                failed++;
                fprintf(out, "FAIL %s:%d case '%s' (%s) variant %s: %s\n", f->path, c->line, c->id,
                        vec_kind_name(c->kind), v->name, r.msg);
            } else {
                passed++;
                if (opt->verbose)
                    fprintf(out, "ok   %s case '%s' variant %s\n", f->path, c->id, v->name);
            }
        }
    }
    fprintf(out, "%s: %zu cases, %ld checks passed, %ld failed\n", f->path, f->ncases, passed, failed);
    totals->passed += passed;
    totals->failed += failed;
}

/* ---- the files of the command line ---- */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand PATHs: files as given, directories into their *.json files (sorted). */
static int expand_paths(char *const *args, int nargs, char ***out, int *nout)
{
    char **list = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < nargs; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0) {
            fprintf(stderr, "hsdr check: %s: %s\n", args[i], strerror(errno));
            goto fail;
        }
        char **found = NULL;
        int nfound = 0;
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(args[i]);
            if (!d) {
                fprintf(stderr, "hsdr check: %s: %s\n", args[i], strerror(errno));
                goto fail;
            }
            struct dirent *de;
            while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".json"))
                    continue;
                char **g = realloc(found, sizeof(char *) * (size_t)(nfound + 1));
                size_t len = strlen(args[i]) + strlen(de->d_name) + 2;
                char *p = malloc(len);
                if (!g || !p) {
                    free(p);
                    free(g ? g : found);
                    closedir(d);
                    goto fail;
                }
                found = g;
                snprintf(p, len, "%s%s%s", args[i], has_suffix(args[i], "/") ? "" : "/", de->d_name);
                found[nfound++] = p;
            }
            closedir(d);
            if (nfound == 0) {
                fprintf(stderr, "hsdr check: %s: directory holds no *.json file\n", args[i]);
                free(found);
                goto fail;
            }
            qsort(found, (size_t)nfound, sizeof(char *), cmp_str);
        } else {
            found = malloc(sizeof(char *));
            if (!found || !(found[0] = strdup(args[i]))) {
                free(found);
                goto fail;
            }
            nfound = 1;
        }
        if (n + nfound > cap) {
            cap = (n + nfound) * 2;
            char **g = realloc(list, sizeof(char *) * (size_t)cap);
            if (!g) {
                for (int j = 0; j < nfound; j++)
                    free(found[j]);
                free(found);
                goto fail;
            }
            list = g;
        }
        for (int j = 0; j < nfound; j++)
            list[n++] = found[j];
        free(found);
    }
    *out = list;
    *nout = n;
    return 0;
fail:
    for (int j = 0; j < n; j++)
        free(list[j]);
    free(list);
    return -1;
}

int hsdr_check_paths(const check_options *o, char *const *paths, int npaths)
{
    const check_options opt = *o;
    char **files;
    int nfiles;
    if (expand_paths(paths, npaths, &files, &nfiles) != 0)
        return HSDR_EXIT_USAGE;
    /* Load and validate everything first: a malformed file stops the run before any case runs. */
    vec_file *loaded = calloc((size_t)nfiles, sizeof *loaded);
    int rc = HSDR_EXIT_USAGE, nloaded = 0;
    char err[1024];
    if (!loaded) {
        fprintf(stderr, "hsdr check: out of memory\n");
        goto out;
    }
    for (; nloaded < nfiles; nloaded++)
        if (vec_load(files[nloaded], &loaded[nloaded], err, sizeof err) != 0) {
            fprintf(stderr, "hsdr check: %s\n", err);
            goto out;
        }
    /* Case ids are unique across all files. */
    for (int a = 0; a < nfiles; a++)
        for (int b = a + 1; b < nfiles; b++)
            for (size_t i = 0; i < loaded[a].ncases; i++)
                for (size_t j = 0; j < loaded[b].ncases; j++)
                    if (strcmp(loaded[a].cases[i].id, loaded[b].cases[j].id) == 0) {
                        fprintf(stderr, "hsdr check: case id '%s' appears in both %s:%d and %s:%d\n",
                                loaded[a].cases[i].id, files[a], loaded[a].cases[i].line, files[b],
                                loaded[b].cases[j].line);
                        goto out;
                    }
    int runnable = 0;
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if ((opt.backend && strcmp(opt.backend, v->backend) != 0) ||
            (opt.variant && !hsdr_glob_match(opt.variant, v->name)))
            continue;
        const char *why = hsdr_variant_unavailable(v);
        if (why)
            printf("skip: variant %s unavailable here: %s\n", v->name, why);
        else
            runnable++;
    }
    if (runnable == 0) { /* asked for a backend or variants of which none can run: nothing was checked */
        fprintf(stderr, "hsdr check: none of the selected variants can run here (see the skip lines)\n");
        rc = HSDR_EXIT_FAIL;
        goto out;
    }
    check_totals totals = {0, 0};
    for (int i = 0; i < nfiles; i++)
        hsdr_check_file(&loaded[i], &opt, &totals, stdout);
    printf("%ld passed, %ld failed\n", totals.passed, totals.failed);
    rc = totals.failed ? HSDR_EXIT_FAIL : HSDR_EXIT_OK;
out:
    for (int i = 0; i < nloaded; i++)
        vec_free(&loaded[i]);
    free(loaded);
    for (int i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    return rc;
}
