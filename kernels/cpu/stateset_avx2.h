/* cpu.stateset (stateset_avx2.c): 128-lane reusable activation state sets, per-row AND/POPCOUNT over the occupied
 * states only; cpu.tile64 (tile64_avx2.c): the same with 64-lane tiles. Both share the converted weights (planar
 * masks + fp32 scales), the LNS8 prologue, the tile analysis and the scale / merge stages of stateset_avx2.c. Layout,
 * stages and how to time them: the two .c files.
 *
 * Critical-path depths (the registry's rows) per 128-lane group, for a typical Gaussian tile (~42 occupied states
 * per 128 lanes, ~32 per 64): route = occupancy (16 dependent ORs + 4 to combine + 2 to transpose) + the extraction
 * walk over the occupied states (42; tile64: 8 + 4 + 2 + 32); reduce = one count (AND, pshufb, add, psadbw, shift:
 * 5) + the running sum over the group's entries (43 with padding) + the phase fold (8) (tile64: ANDN, POPCNT, sub,
 * shift + 32 entries + 3); scale = convert, multiply, 3 dependent adds per half, join, times d (7); merge:
 * sequential over K/128 groups. */
#ifndef HSDR_CPU_STATESET_AVX2_H
#define HSDR_CPU_STATESET_AVX2_H
#include "../kernel.h"

/* ---- shared by both files (defined in stateset_avx2.c) ---- */
const char *hsdr_cpu_ss_unavailable(void);
/* convert: per (row, group) nz[2], neg[2] (natural lane order), then N*G fp32 scales */
int hsdr_cpu_ss_prepare(const uint8_t *ptq1_0, int K, int N, void **prepared, size_t *bytes, char *err,
                        size_t errlen);
void hsdr_cpu_ss_release(void *prepared);
size_t hsdr_cpu_ss_act_bytes(int K);
void hsdr_cpu_ss_prologue(const hsdr_exec *e);
void hsdr_cpu_ss_prologue_part(const hsdr_exec *e, int part, int parts); /* kernel.h's prologue_part */
void hsdr_cpu_ss_encode(const hsdr_exec *e); /* the encode stage alone */
const uint8_t *hsdr_cpu_ss_codes(const hsdr_exec *e);
int hsdr_cpu_ss_prescale(const hsdr_exec *e);
/* scale: G_g = d_g * sum_p A[p] c_p (double, 2^(e - 9) applied by the merge); merge: y = 2^(e - 9) sum_g G_g */
void hsdr_cpu_ss_scale_row(const hsdr_exec *e, int r, const int32_t *A, double *g);
void hsdr_cpu_ss_merge_row(const hsdr_exec *e, int r, const double *g);

/* One tile (64 or 128 lanes) analysed for a build: m[p] bit q set when state k = 8q + p (k >= 1) is occupied; lane
 * masks of each phase p (code bits 0..2) and octave q (bits 3..6), words 0..lanes/64-1; neg = N_a. The lane mask of
 * state k is ph[k & 7] & oc[k >> 3]. */
typedef struct {
    uint16_t m[8];
    uint64_t ph[8][2], oc[16][2], neg[2];
} hsdr_cpu_ss_tile;
void hsdr_cpu_ss_analyze(const uint8_t *codes, int lanes, hsdr_cpu_ss_tile *t);

/* What differs between the 128-lane and the 64-lane kernels; the rows loop (a tile set built every R rows, two rows
 * per reduce pass, scale and merge per row, stage control) and the checking interface are shared. */
typedef struct {
    void *s;   /* the kernel's scratch layout */
    int32_t *A; /* 2 rows x G x 8: what reduce writes */
    double *g;  /* G: what scale writes */
    void (*route)(const hsdr_exec *e, void *s);              /* build the tile set */
    void (*reduce)(const hsdr_exec *e, int r, int nr, void *s); /* rows r .. r + nr - 1 (nr = 1, 2) into A */
} hsdr_cpu_ss_loop;
void hsdr_cpu_ss_rows(const hsdr_exec *e, int r0, int r1, unsigned only, const hsdr_cpu_ss_loop *L);
/* The stage function of a kernel whose rows loop is rows(e, r0, r1, scratch, only). */
void hsdr_cpu_ss_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch,
                       void (*rows)(const hsdr_exec *e, int r0, int r1, void *scratch, unsigned only));
/* The checking interface: one tile set for all rows; counts(e, scratch, A, C) lays out the scratch, builds the
 * tiles and reduces every row with C. */
int hsdr_cpu_ss_matvec(hsdr_matvec_io *io, size_t scratch_bytes,
                       void (*counts)(const hsdr_exec *e, void *scratch, int32_t *A, int16_t *C), char *err,
                       size_t errlen);

/* ---- cpu.stateset ---- */
size_t hsdr_cpu_stateset_scratch_bytes(int K, int R);
void hsdr_cpu_stateset_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_stateset_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_stateset_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

/* ---- cpu.tile64 ---- */
size_t hsdr_cpu_tile64_scratch_bytes(int K, int R);
void hsdr_cpu_tile64_rows(const hsdr_exec *e, int r0, int r1, void *scratch);
void hsdr_cpu_tile64_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch);
int hsdr_cpu_tile64_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

#endif
