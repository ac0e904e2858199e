/* cpu.tile64: reusable 64-lane activation state sets + POPCOUNT (spec/lns8.md section 4, "Tile64").
 *   Idea     cpu.stateset with each 128-lane group as two 64-lane tiles, so a state mask is ONE uint64 and the
 *            per-row work is scalar: per occupied state and row two ANDN + two POPCNT + one subtraction, shifted by q
 *            into a running sum; ~64 cheap states a group (~32 per tile) instead of ~42 wide ones.
 *   Layout   weights, activations, scale and merge are cpu.stateset's (stateset_avx2.c): per (row, group)
 *            {nz[0], nz[1], neg[0], neg[1]}, word t = lanes 64t..64t+63 = tile t of the group. Per-thread scratch:
 *            per tile a head {N_a, first entry, entry count, phase ends[8]}, a compact pool of entries S_k (uint64)
 *            with their q and k (all 2G tiles of the current R-row block), the running sums of one tile (2 rows),
 *            then A[2][G][8], G_g[G].
 *   Stages   encode (prologue), route (build 2G tiles every R rows), reduce (ANDN/POPCNT/fold -> A[8]), scale, merge.
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.tile64 *'
 *   Details  entries sorted by phase, then q (A[p] += running sum across phase p). Two rows share each entry load.
 *            C of the group = sum of its two tiles' counts (checking interface only). The build is cpu.stateset's
 *            scatter-free tile analysis (hsdr_cpu_ss_analyze) on 64 lanes. */
#include "stateset_avx2.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../reference/hsdr.h"
#include "../../reference/ptq1_0.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}
#define TARGET __attribute__((target("avx2,popcnt,bmi")))

typedef struct {
    uint64_t neg;   /* N_a */
    uint32_t off;   /* first entry in the pool */
    uint32_t n;     /* occupied states */
    uint8_t end[8]; /* entries of phases 0..p (sorted by phase, then q) */
} tile_head;

typedef struct {
    tile_head *head; /* 2G */
    uint64_t *E;     /* pool: up to 64 entries per tile (odd counts padded), S_k */
    uint8_t *q;      /* octave of each entry (shift count) */
    uint8_t *k;      /* code of each entry (checking interface) */
    uint32_t *P;     /* running sums of one tile, 2 rows interleaved: 2 x 65 */
    int32_t *A;      /* 2 rows x G x 8 */
    double *g;       /* G */
} t64_scratch;

static t64_scratch t64_layout(void *scratch, int K)
{
    size_t G = (size_t)K / HSDR_QK;
    t64_scratch s;
    char *p = scratch;
    s.head = (tile_head *)p;
    p += align64(sizeof(tile_head) * 2 * G);
    s.E = (uint64_t *)p;
    p += align64(8 * 128 * G);
    s.q = (uint8_t *)p;
    p += align64(128 * G);
    s.k = (uint8_t *)p;
    p += align64(128 * G);
    s.P = (uint32_t *)p;
    p += align64(4 * 2 * 65);
    s.A = (int32_t *)p;
    p += align64(2 * 32 * G);
    s.g = (double *)p;
    return s;
}

size_t hsdr_cpu_tile64_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return align64(sizeof(tile_head) * 2 * G) + align64(8 * 128 * G) + 2 * align64(128 * G) + align64(4 * 2 * 65) +
           align64(2 * 32 * G) + align64(8 * G);
}

/* Build one 64-lane tile: occupancy and phase / octave masks (hsdr_cpu_ss_analyze), then one entry S_k = phase
 * mask & octave mask per occupied state, in (phase, q) order. Returns the entry count. */
TARGET static uint32_t build_tile(const uint8_t *c, tile_head *h, uint64_t *E, uint8_t *Q, uint8_t *kk)
{
    hsdr_cpu_ss_tile t;
    hsdr_cpu_ss_analyze(c, 64, &t);
    h->neg = t.neg[0];
    uint32_t n = 0;
    for (int p = 0; p < 8; p++) {
        const uint64_t ph = t.ph[p][0];
        for (unsigned b = t.m[p]; b; b &= b - 1) {
            const unsigned q = (unsigned)__builtin_ctz(b);
            E[n] = ph & t.oc[q][0];
            Q[n] = (uint8_t)q;
            kk[n++] = (uint8_t)(8 * q + (unsigned)p);
        }
        h->end[p] = (uint8_t)n;
    }
    h->n = n;
    if (n & 1) { /* pad to an even count with an empty state: after the last phase end, it changes no A */
        E[n] = 0;
        Q[n] = 0;
        kk[n++] = 0;
    }
    return n;
}

TARGET static void t64_route(const hsdr_exec *e, t64_scratch *s)
{
    const uint8_t *c = hsdr_cpu_ss_codes(e);
    uint32_t off = 0;
    for (int t = 0; t < 2 * (e->K / HSDR_QK); t++) {
        s->head[t].off = off;
        off += build_tile(c + (size_t)t * 64, &s->head[t], s->E + off, s->q + off, s->k + off);
    }
}

/* Tile h of a row group for NR (1 or 2) rows sharing each entry load: per entry two AND + two POPCNT per row, the
 * signed count shifted by q into a running sum stored after every entry; A[p] += running sum at the end of phase p
 * minus at the end of phase p - 1 (two's complement: exact). Counts into C when C is not NULL (NR = 1). */
TARGET static inline __attribute__((always_inline)) void reduce_tile(const tile_head *h, const uint64_t *E,
                                                                     const uint8_t *Q, const uint8_t *kk,
                                                                     const uint64_t *W0, const uint64_t *W1,
                                                                     int t, const int NR, uint32_t *P,
                                                                     uint32_t acc0[8], uint32_t acc1[8], int16_t *C)
{
    /* complemented masks: ANDN (three-operand) keeps the entry register intact */
    const uint64_t pn0 = h->neg ^ W0[2 + t], xp0 = ~(W0[t] & ~pn0), xn0 = ~(W0[t] & pn0);
    const uint64_t pn1 = NR > 1 ? h->neg ^ W1[2 + t] : 0, xp1 = NR > 1 ? ~(W1[t] & ~pn1) : 0,
                   xn1 = NR > 1 ? ~(W1[t] & pn1) : 0;
    const uint32_t n = (h->n + 1) & ~1u;
    uint32_t run0 = 0, run1 = 0;
    P[0] = 0;
    if (NR > 1)
        P[1] = 0;
    uint32_t *out = P + NR;
    for (uint32_t j = 0; j < n; j += 2, out += 2 * NR) /* n is even: two entries per iteration */
        for (int u = 0; u < 2; u++) {
            const uint64_t sk = E[j + u];
            const unsigned q = Q[j + u];
            const int c0 = (int)_mm_popcnt_u64(_andn_u64(xp0, sk)) - (int)_mm_popcnt_u64(_andn_u64(xn0, sk));
            run0 += (uint32_t)c0 << q;
            if (NR > 1) {
                const int c1 = (int)_mm_popcnt_u64(_andn_u64(xp1, sk)) - (int)_mm_popcnt_u64(_andn_u64(xn1, sk));
                run1 += (uint32_t)c1 << q;
                out[NR * u + 1] = run1;
            }
            out[NR * u] = run0;
            if (C && j + u < h->n)
                C[kk[j + u]] = (int16_t)(C[kk[j + u]] + c0);
        }
    uint32_t prev0 = 0, prev1 = 0;
    for (int p = 0; p < 8; p++) {
        const uint32_t cur0 = P[NR * h->end[p]];
        acc0[p] += cur0 - prev0;
        prev0 = cur0;
        if (NR > 1) {
            const uint32_t cur1 = P[NR * h->end[p] + 1];
            acc1[p] += cur1 - prev1;
            prev1 = cur1;
        }
    }
}

TARGET static inline __attribute__((always_inline)) void reduce_groups(const t64_scratch *s, int g,
                                                                       const uint64_t *W0, const uint64_t *W1,
                                                                       const int NR, int32_t *A0, int32_t *A1,
                                                                       int16_t *C)
{
    uint32_t acc0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, acc1[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (C)
        memset(C, 0, sizeof(int16_t) * HSDR_NSTATES);
    for (int t = 0; t < 2; t++) {
        const tile_head *h = &s->head[2 * g + t];
        reduce_tile(h, s->E + h->off, s->q + h->off, s->k + h->off, W0, W1, t, NR, s->P, acc0, acc1, C);
    }
    for (int p = 0; p < 8; p++) {
        A0[p] = (int32_t)acc0[p];
        if (NR > 1)
            A1[p] = (int32_t)acc1[p];
    }
}

TARGET static void t64_reduce_row(const hsdr_exec *e, int r, const t64_scratch *s)
{
    const int G = e->K / HSDR_QK;
    const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
    for (int g = 0; g < G; g++)
        reduce_groups(s, g, W + 4 * g, W + 4 * g, 1, s->A + 8 * g, s->A + 8 * g, NULL);
}

TARGET static void t64_reduce_row2(const hsdr_exec *e, int r, const t64_scratch *s)
{
    const int G = e->K / HSDR_QK;
    const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
    for (int g = 0; g < G; g++)
        reduce_groups(s, g, W + 4 * g, W + 4 * ((size_t)G + g), 2, s->A + 8 * g, s->A + 8 * ((size_t)G + g), NULL);
}


static void t64_route_v(const hsdr_exec *e, void *s)
{
    t64_route(e, s);
}

static void t64_reduce_v(const hsdr_exec *e, int r, int nr, void *s)
{
    if (nr > 1)
        t64_reduce_row2(e, r, s);
    else
        t64_reduce_row(e, r, s);
}

static void t64_rows(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only)
{
    t64_scratch s = t64_layout(scratch, e->K);
    const hsdr_cpu_ss_loop L = {&s, s.A, s.g, t64_route_v, t64_reduce_v};
    hsdr_cpu_ss_rows(e, r0, r1, only, &L);
}

void hsdr_cpu_tile64_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    t64_rows(e, r0, r1, scratch, 0);
}

void hsdr_cpu_tile64_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    hsdr_cpu_ss_stage(e, s, r0, r1, scratch, t64_rows);
}

/* Checking interface: the same tiles and reduce kernel (with C), one tile set for all rows. */
TARGET static void t64_counts(const hsdr_exec *e, void *scratch, int32_t *A, int16_t *C)
{
    t64_scratch s = t64_layout(scratch, e->K);
    t64_route(e, &s);
    const int G = e->K / HSDR_QK;
    for (int r = 0; r < e->N; r++) {
        const uint64_t *W = (const uint64_t *)e->weights + 4 * (size_t)r * G;
        for (int g = 0; g < G; g++) {
            size_t rg = (size_t)r * G + g;
            reduce_groups(&s, g, W + 4 * g, W + 4 * g, 1, A + 8 * rg, A + 8 * rg, C + HSDR_NSTATES * rg);
        }
    }
}

int hsdr_cpu_tile64_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v;
    return hsdr_cpu_ss_matvec(io, hsdr_cpu_tile64_scratch_bytes(io->K, 1), t64_counts, err, errlen);
}
