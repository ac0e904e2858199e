/* The scalar reference as timed pipelines (ref.exact, ref.q8_0, ref.direct, ref.stateset, ref.tile64, ref.flns,
 * ref.q1516): the slow, readable baselines of the harness; the optimized kernels live in kernels/cpu/.
 *   Idea     every stage is a separate loop over a buffer, so a stage can run alone, be left out or be doubled
 *            (ablation), and the fused run is exactly the sequence of stages; the arithmetic is reference/'s as
 *            written (sequential accumulation: the registry's depths are those of these loops).
 *   Layout   weights: PTQ1_0 as stored; ref.stateset and ref.tile64 convert them once into planar masks (per group
 *            nz[2], neg[2]) and then every group's scale as a double (hsdr_reft_masks_prepare). Activations: LNS8
 *            [int e][codes K][route: int32 value K][uint8 phase K], or Q8_0 blocks (ref.q8_0); ref.exact reads x.
 *            Scratch: each pipeline's per-row hand-over buffers (t[K], A, G_g, S / Q, isum, sumi).
 *   Stages   per matvec (prologue, the thread with row 0): encode x -> LNS8 codes + pre-scale (or Q8_0 blocks); the
 *            direct paths also route codes -> per-lane phase and signed 2^q. Per row (rows): decode PTQ1_0 -> t[K] |
 *            state sets: route = build the tiles every R rows, reduce = POPCOUNT counts folded to A | reduce -> A[8]
 *            per group (or Q8_0 integer sums) | scale -> G_g | materialize (Q15.16) | merge -> y.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=ref.direct *' (ref.exact, ref.q8_0, ref.stateset,
 *            ref.tile64, ref.flns, ref.q1516 likewise; the default matrix skips them at model sizes) */
#include "reference_timed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../reference/fp16.h"
#include "../reference/hsdr.h"
#include "../reference/lns8.h"
#include "../reference/lns8_const.h"
#include "../reference/q8.h"
#include "stages.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static const uint8_t *row_blocks(const hsdr_exec *e, int r)
{
    return (const uint8_t *)e->weights + (size_t)r * (e->K / HSDR_QK) * HSDR_PTQ1_0_BYTES;
}

static double block_d(const uint8_t *blk)
{
    return hsdr_fp16_to_fp32(hsdr_ptq1_0_d_bits(blk));
}

/* ---- LNS8 activations: [int e][codes K][route: int32 value K][uint8 phase K] ---- */

typedef struct {
    int e;
    int pad[15];
} lns8_head;

static uint8_t *act_codes(const hsdr_exec *e)
{
    return (uint8_t *)e->act + sizeof(lns8_head);
}

static int act_e(const hsdr_exec *e)
{
    return ((const lns8_head *)e->act)->e;
}

static int32_t *act_value(const hsdr_exec *e)
{
    return (int32_t *)(act_codes(e) + align64((size_t)e->K));
}

static uint8_t *act_phase(const hsdr_exec *e)
{
    return (uint8_t *)(act_value(e) + e->K);
}

size_t hsdr_reft_lns8_act_bytes(int K)
{
    return sizeof(lns8_head) + align64((size_t)K) + sizeof(int32_t) * (size_t)K + align64((size_t)K);
}

static void lns8_encode_stage(const hsdr_exec *e)
{
    size_t bad;
    int pe = 0;
    /* inputs are finite (the harness draws them): no error path here */
    (void)hsdr_lns8_auto_prescale(e->x, (size_t)e->K, &pe, &bad);
    (void)hsdr_lns8_encode(e->x, (size_t)e->K, pe, act_codes(e), &bad);
    ((lns8_head *)e->act)->e = pe;
}

/* direct route: lane -> phase and signed power of two (0 for k = 0) */
static void lns8_route_stage(const hsdr_exec *e)
{
    const uint8_t *c = act_codes(e);
    int32_t *val = act_value(e);
    uint8_t *ph = act_phase(e);
    for (int i = 0; i < e->K; i++) {
        int k = c[i] & 0x7f;
        int32_t v = k ? (int32_t)1 << (k >> 3) : 0;
        val[i] = (c[i] & 0x80) ? -v : v;
        ph[i] = (uint8_t)(k & 7);
    }
}

void hsdr_reft_lns8_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, lns8_encode_stage(e));
}

void hsdr_reft_direct_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, lns8_encode_stage(e));
    STAGE(e, ROUTE, lns8_route_stage(e));
}

/* ---- per-thread scratch of the direct family: t[K], A[G*8], G_g[G] (double), S/Q[G] (int64) ---- */

typedef struct {
    int8_t *t;
    int32_t *A;
    double *g;
    int64_t *s;
    int64_t *q;
} direct_scratch;

static direct_scratch direct_layout(void *scratch, int K)
{
    int G = K / HSDR_QK;
    direct_scratch d;
    char *p = scratch;
    d.t = (int8_t *)p;
    p += align64((size_t)K);
    d.A = (int32_t *)p;
    p += align64(sizeof(int32_t) * 8 * (size_t)G);
    d.g = (double *)p;
    p += align64(sizeof(double) * (size_t)G);
    d.s = (int64_t *)p;
    p += align64(sizeof(int64_t) * (size_t)G);
    d.q = (int64_t *)p;
    return d;
}

size_t hsdr_reft_direct_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return align64((size_t)K) + align64(32 * G) + 3 * align64(8 * G);
}

static void decode_row(const hsdr_exec *e, int r, int8_t *t)
{
    const uint8_t *w = row_blocks(e, r);
    for (int g = 0; g < e->K / HSDR_QK; g++)
        hsdr_ptq1_0_unpack(w + (size_t)g * HSDR_PTQ1_0_BYTES, t + (size_t)g * HSDR_QK, HSDR_DECODE_INT);
}

static void direct_reduce_row(const hsdr_exec *e, const int8_t *t, int32_t *A)
{
    const int32_t *val = act_value(e);
    const uint8_t *ph = act_phase(e);
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        int32_t *a = A + 8 * g;
        memset(a, 0, 8 * sizeof(int32_t));
        for (int i = g * HSDR_QK; i < (g + 1) * HSDR_QK; i++)
            a[ph[i]] += t[i] * val[i];
    }
}

/* G_g = sum_p A[p] c_p * d * 2^(e - 9) in double: the scale stage of every LNS8 pipeline (scale2 = 2^(e - 9)) */
static double lns8_group_value(const int32_t A[8], double d, double scale2)
{
    double s = 0.0;
    for (int p = 0; p < 8; p++)
        s += A[p] * hsdr_lns8_cp_hi[p];
    return s * d * scale2;
}

static void lns8_scale_row(const hsdr_exec *e, int r, const int32_t *A, double *gv)
{
    const uint8_t *w = row_blocks(e, r);
    double s2 = ldexp(1.0, act_e(e) - 9);
    for (int g = 0; g < e->K / HSDR_QK; g++)
        gv[g] = lns8_group_value(A + 8 * g, block_d(w + (size_t)g * HSDR_PTQ1_0_BYTES), s2);
}

static void sum_merge_row(const hsdr_exec *e, int r, const double *gv)
{
    double y = 0.0;
    for (int g = 0; g < e->K / HSDR_QK; g++)
        y += gv[g];
    e->y[r] = (float)y;
}

static void flns_scale_row(const hsdr_exec *e, int r, const int32_t *A, double *gv)
{
    const uint8_t *w = row_blocks(e, r);
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        hsdr_flns root = hsdr_flns_tree(A + 8 * g, e->flns_F, e->flns_b);
        gv[g] = hsdr_flns_value(root, e->flns_F, act_e(e), block_d(w + (size_t)g * HSDR_PTQ1_0_BYTES));
    }
}

static void q1516_scale_row(const hsdr_exec *e, const int32_t *A, int64_t *S)
{
    for (int g = 0; g < e->K / HSDR_QK; g++)
        S[g] = hsdr_q1516_scale(A + 8 * g);
}

static void q1516_materialize_row(const hsdr_exec *e, int r, const int64_t *S, int64_t *Q)
{
    const uint8_t *w = row_blocks(e, r);
    for (int g = 0; g < e->K / HSDR_QK; g++)
        Q[g] = hsdr_q1516_materialize(S[g], block_d(w + (size_t)g * HSDR_PTQ1_0_BYTES), act_e(e));
}

static void q1516_merge_row(const hsdr_exec *e, int r, const int64_t *Q)
{
    int64_t y = 0;
    for (int g = 0; g < e->K / HSDR_QK; g++)
        y += Q[g];
    e->y[r] = (float)ldexp((double)y, -16);
}

enum direct_kind { DK_DIRECT, DK_FLNS, DK_Q1516 };

static void direct_family_row(const hsdr_exec *e, int r, direct_scratch *d, enum direct_kind kind, unsigned only)
{
    DO(e, only, DECODE, decode_row(e, r, d->t));
    DO(e, only, REDUCE, direct_reduce_row(e, d->t, d->A));
    switch (kind) {
    case DK_DIRECT:
        DO(e, only, SCALE, lns8_scale_row(e, r, d->A, d->g));
        DO(e, only, MERGE, sum_merge_row(e, r, d->g));
        break;
    case DK_FLNS:
        DO(e, only, SCALE, flns_scale_row(e, r, d->A, d->g));
        DO(e, only, MERGE, sum_merge_row(e, r, d->g));
        break;
    case DK_Q1516:
        DO(e, only, SCALE, q1516_scale_row(e, d->A, d->s));
        DO(e, only, MATERIALIZE, q1516_materialize_row(e, r, d->s, d->q));
        DO(e, only, MERGE, q1516_merge_row(e, r, d->q));
        break;
    }
}

static void direct_family_rows(const hsdr_exec *e, int r0, int r1, void *scratch, enum direct_kind kind,
                               unsigned only)
{
    direct_scratch d = direct_layout(scratch, e->K);
    for (int r = r0; r < r1; r++)
        direct_family_row(e, r, &d, kind, only);
}

static void direct_family_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch,
                                enum direct_kind kind)
{
    if (s == HSDR_STAGE_ENCODE || s == HSDR_STAGE_ROUTE) {
        if (r0 == 0)
            (s == HSDR_STAGE_ENCODE ? lns8_encode_stage : lns8_route_stage)(e);
        return;
    }
    direct_family_rows(e, r0, r1, scratch, kind, HSDR_STAGE_BIT(s));
}

void hsdr_reft_direct_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    direct_family_rows(e, r0, r1, scratch, DK_DIRECT, 0);
}
void hsdr_reft_direct_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    direct_family_stage(e, s, r0, r1, scratch, DK_DIRECT);
}
void hsdr_reft_flns_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    direct_family_rows(e, r0, r1, scratch, DK_FLNS, 0);
}
void hsdr_reft_flns_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    direct_family_stage(e, s, r0, r1, scratch, DK_FLNS);
}
void hsdr_reft_q1516_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    direct_family_rows(e, r0, r1, scratch, DK_Q1516, 0);
}
void hsdr_reft_q1516_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    direct_family_stage(e, s, r0, r1, scratch, DK_Q1516);
}

/* ---- state sets (128- and 64-lane tiles): prepared weights are planar masks, 4 words per group ---- */

int hsdr_reft_masks_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                            size_t errlen)
{
    (void)err, (void)errlen;
    size_t ng = (size_t)N * (K / HSDR_QK);
    /* per group: nz[2], neg[2] (32 bytes), then the fp16 scales as doubles after all groups (8 bytes each) */
    size_t n = ng * (4 * sizeof(uint64_t) + sizeof(double));
    uint64_t *m = malloc(n);
    if (!m)
        return -1;
    double *d = (double *)(m + 4 * ng);
    for (size_t i = 0; i < ng; i++) {
        const uint8_t *blk = ptq1_0 + i * HSDR_PTQ1_0_BYTES;
        hsdr_ptq1_0_to_masks(blk, m + 4 * i, m + 4 * i + 2);
        d[i] = block_d(blk);
    }
    *prepared = m;
    *bytes = n;
    return 0;
}

void hsdr_reft_masks_release(void *prepared)
{
    free(prepared);
}

static const uint64_t *mask_group(const hsdr_exec *e, int r, int g)
{
    return (const uint64_t *)e->weights + 4 * ((size_t)r * (e->K / HSDR_QK) + g);
}

static double mask_d(const hsdr_exec *e, int r, int g)
{
    size_t ng = (size_t)e->N * (e->K / HSDR_QK);
    return ((const double *)((const uint64_t *)e->weights + 4 * ng))[(size_t)r * (e->K / HSDR_QK) + g];
}

typedef struct {
    hsdr_stateset128 *s128; /* G tiles */
    hsdr_stateset64 *s64;   /* 2G tiles */
    int32_t *A;
    double *g;
} set_scratch;

static set_scratch set_layout(void *scratch, int K, int tile64)
{
    size_t G = (size_t)K / HSDR_QK;
    set_scratch s = {0};
    char *p = scratch;
    if (tile64) {
        s.s64 = (hsdr_stateset64 *)p;
        p += align64(sizeof(hsdr_stateset64) * 2 * G);
    } else {
        s.s128 = (hsdr_stateset128 *)p;
        p += align64(sizeof(hsdr_stateset128) * G);
    }
    s.A = (int32_t *)p;
    p += align64(sizeof(int32_t) * 8 * G);
    s.g = (double *)p;
    return s;
}

size_t hsdr_reft_stateset_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return align64(sizeof(hsdr_stateset128) * G) + align64(32 * G) + align64(8 * G);
}

size_t hsdr_reft_tile64_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return align64(sizeof(hsdr_stateset64) * 2 * G) + align64(32 * G) + align64(8 * G);
}

static void set_route(const hsdr_exec *e, set_scratch *s)
{
    const uint8_t *c = act_codes(e);
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        if (s->s128) {
            hsdr_stateset128_build(c + (size_t)g * HSDR_QK, &s->s128[g]);
        } else {
            hsdr_stateset64_build(c + (size_t)g * HSDR_QK, &s->s64[2 * g]);
            hsdr_stateset64_build(c + (size_t)g * HSDR_QK + 64, &s->s64[2 * g + 1]);
        }
    }
}

static void set_reduce_row(const hsdr_exec *e, int r, set_scratch *s)
{
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        const uint64_t *m = mask_group(e, r, g);
        int16_t C[HSDR_NSTATES];
        if (s->s128) {
            hsdr_stateset128_counts(&s->s128[g], m, m + 2, C);
        } else {
            memset(C, 0, sizeof C);
            hsdr_stateset64_counts_add(&s->s64[2 * g], m[0], m[2], C);
            hsdr_stateset64_counts_add(&s->s64[2 * g + 1], m[1], m[3], C);
        }
        hsdr_fold_counts(C, s->A + 8 * g);
    }
}

static void set_scale_row(const hsdr_exec *e, int r, set_scratch *s)
{
    double s2 = ldexp(1.0, act_e(e) - 9);
    for (int g = 0; g < e->K / HSDR_QK; g++)
        s->g[g] = lns8_group_value(s->A + 8 * g, mask_d(e, r, g), s2);
}

static void set_rows(const hsdr_exec *e, int r0, int r1, void *scratch, int tile64, unsigned only)
{
    set_scratch s = set_layout(scratch, e->K, tile64);
    int R = e->R > 0 ? e->R : 1;
    for (int b = r0; b < r1; b += R) {
        DO(e, only, ROUTE, set_route(e, &s)); /* one built tile set serves R rows */
        int bend = b + R < r1 ? b + R : r1;
        for (int r = b; r < bend; r++) {
            DO(e, only, REDUCE, set_reduce_row(e, r, &s));
            DO(e, only, SCALE, set_scale_row(e, r, &s));
            DO(e, only, MERGE, sum_merge_row(e, r, s.g));
        }
    }
}

void hsdr_reft_stateset_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    set_rows(e, r0, r1, scratch, 0, 0);
}
void hsdr_reft_tile64_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    set_rows(e, r0, r1, scratch, 1, 0);
}

static void set_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch, int tile64)
{
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            lns8_encode_stage(e);
        return;
    }
    set_rows(e, r0, r1, scratch, tile64, HSDR_STAGE_BIT(s));
}

void hsdr_reft_stateset_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    set_stage(e, s, r0, r1, scratch, 0);
}
void hsdr_reft_tile64_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    set_stage(e, s, r0, r1, scratch, 1);
}

/* ---- production PTQ1_0 x Q8_0: act = Q8_0 blocks; scratch t[K], isum[G*4], sumi[G] ---- */

size_t hsdr_reft_q8_act_bytes(int K)
{
    return sizeof(hsdr_block_q8_0) * (size_t)(K / HSDR_Q8_BLOCK);
}

size_t hsdr_reft_q8_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return align64((size_t)K) + align64(16 * G) + align64(4 * G);
}

static void q8_encode_stage(const hsdr_exec *e)
{
    hsdr_q8_0_quantize_x86(e->x, (size_t)e->K, (hsdr_block_q8_0 *)e->act);
}

void hsdr_reft_q8_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, q8_encode_stage(e));
}

static void q8_reduce_row(const hsdr_exec *e, const int8_t *t, int32_t *isum)
{
    const hsdr_block_q8_0 *y = e->act;
    for (int b = 0; b < e->K / HSDR_Q8_BLOCK; b++) {
        int32_t s = 0;
        for (int j = 0; j < HSDR_Q8_BLOCK; j++)
            s += t[HSDR_Q8_BLOCK * b + j] * y[b].qs[j];
        isum[b] = s;
    }
}

/* the production fp32 sequence: fused multiply-adds at exactly the two places of spec/ptq1_0.md section 7 */
static void q8_scale_row(const hsdr_exec *e, const int32_t *isum, float *sumi)
{
    const hsdr_block_q8_0 *y = e->act;
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        float si = 0.0f;
        for (int k = 0; k < 4; k++)
            si = fmaf(hsdr_fp16_to_fp32(y[4 * g + k].d), (float)isum[4 * g + k], si);
        sumi[g] = si;
    }
}

static void q8_merge_row(const hsdr_exec *e, int r, const float *sumi)
{
    const uint8_t *w = row_blocks(e, r);
    float sumf = 0.0f;
    for (int g = 0; g < e->K / HSDR_QK; g++)
        sumf = fmaf((float)block_d(w + (size_t)g * HSDR_PTQ1_0_BYTES), sumi[g], sumf);
    e->y[r] = sumf;
}

static void q8_rows(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only)
{
    const size_t G = (size_t)e->K / HSDR_QK;
    int8_t *t = scratch;
    int32_t *isum = (int32_t *)((char *)scratch + align64((size_t)e->K));
    float *sumi = (float *)((char *)isum + align64(16 * G));
    for (int r = r0; r < r1; r++) {
        DO(e, only, DECODE, decode_row(e, r, t));
        DO(e, only, REDUCE, q8_reduce_row(e, t, isum));
        DO(e, only, SCALE, q8_scale_row(e, isum, sumi));
        DO(e, only, MERGE, q8_merge_row(e, r, sumi));
    }
}

void hsdr_reft_q8_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    q8_rows(e, r0, r1, scratch, 0);
}

void hsdr_reft_q8_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            q8_encode_stage(e);
        return;
    }
    q8_rows(e, r0, r1, scratch, HSDR_STAGE_BIT(s));
}

/* ---- exact: decode, then a double-double reduction ---- */

size_t hsdr_reft_exact_scratch_bytes(int K, int R)
{
    (void)R;
    return align64((size_t)K);
}

static void exact_reduce_row(const hsdr_exec *e, int r, const int8_t *t)
{
    const uint8_t *w = row_blocks(e, r);
    hsdr_dd acc = {0.0, 0.0};
    for (int g = 0; g < e->K / HSDR_QK; g++) {
        double d = block_d(w + (size_t)g * HSDR_PTQ1_0_BYTES);
        for (int i = g * HSDR_QK; i < (g + 1) * HSDR_QK; i++)
            if (t[i])
                acc = hsdr_dd_add_d(acc, t[i] * d * (double)e->x[i]);
    }
    e->y[r] = (float)hsdr_dd_to_double(acc);
}

static void exact_rows_only(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only)
{
    int8_t *t = scratch;
    for (int r = r0; r < r1; r++) {
        DO(e, only, DECODE, decode_row(e, r, t));
        DO(e, only, REDUCE, exact_reduce_row(e, r, t));
    }
}

void hsdr_reft_exact_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    exact_rows_only(e, r0, r1, scratch, 0);
}

void hsdr_reft_exact_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    exact_rows_only(e, r0, r1, scratch, HSDR_STAGE_BIT(s));
}
