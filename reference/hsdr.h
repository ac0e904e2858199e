/* The HSDR state-domain reduction paths of one 128-lane ternary group (spec/lns8.md sections 3-6).
 *
 *   direct   A[p] = sum over lanes with k != 0 and phase p of s * t * 2^q          (exact int32)
 *   stateset per tile: S_k lane masks of every code k, N_a negative lanes; per row: C[k] = popcount(S_k & Wp) -
 *            popcount(S_k & Wn); fold A[p] = sum_q C[8q + p] * 2^q                  (exact, equals direct)
 *   tile64   the same with 64-lane tiles (two per group), counts summed
 *   flns     fractional-LNS tree over the 8 phases with LC / kappa tables (F in 0..8, b in 4..16)
 *   q1516    Q_g = rint(S * d * 2^(e + 16 - 31 - 9)), S = sum A[p] * C31[p] in int64
 *   sum      G_g = 2^e * d / 512 * sum_p A[p] * c_p, evaluated in double-double
 * Codes and ternary values are in natural lane order. */
#ifndef HSDR_HSDR_H
#define HSDR_HSDR_H
#include <stdint.h>

#include "dd.h"
#include "ptq1_0.h"

#define HSDR_NSTATES 128 /* code k = 0..127; k = 0 (zero) is never a state */

/* ---- direct 8-phase ---- */
void hsdr_direct_group(const uint8_t codes[HSDR_QK], const int8_t t[HSDR_QK], int32_t A[8]);

/* ---- activation state sets ---- */
typedef struct {
    uint64_t S[HSDR_NSTATES][2]; /* lane mask of code k (k >= 1); S[0] stays empty */
    uint64_t neg[2];             /* N_a: lanes whose code has the sign bit */
    uint8_t occupied[HSDR_NSTATES - 1]; /* occupied codes, increasing */
    int n_occupied;
} hsdr_stateset128;

typedef struct {
    uint64_t S[HSDR_NSTATES];
    uint64_t neg;
    uint8_t occupied[64];
    int n_occupied;
} hsdr_stateset64;

void hsdr_stateset128_build(const uint8_t codes[HSDR_QK], hsdr_stateset128 *s);
/* C[k] for k = 0..127 (all written; unoccupied states are 0). w_nz / w_neg: planar weight masks of the row group. */
void hsdr_stateset128_counts(const hsdr_stateset128 *s, const uint64_t w_nz[2], const uint64_t w_neg[2],
                             int16_t C[HSDR_NSTATES]);
void hsdr_stateset64_build(const uint8_t codes[64], hsdr_stateset64 *s);
/* Adds the tile's counts into C (callers zero C first; a 128-lane group is two tiles). */
void hsdr_stateset64_counts_add(const hsdr_stateset64 *s, uint64_t w_nz, uint64_t w_neg, int16_t C[HSDR_NSTATES]);
/* A[p] = sum_q C[8q + p] * 2^q. */
void hsdr_fold_counts(const int16_t C[HSDR_NSTATES], int32_t A[8]);

/* ---- fractional LNS ---- */
typedef struct {
    int32_t lambda; /* value = sign * 2^((lambda / 2^F - 74) / 8) before d * 2^e */
    int8_t sign;    /* +1, -1, or 0 for absent (zero) */
} hsdr_flns;

/* 1 when F in 0..8 and b in 4..16. */
int hsdr_flns_params_ok(int F, int b);
hsdr_flns hsdr_flns_from_phase(int32_t a, int p, int F, int b);
hsdr_flns hsdr_flns_combine(hsdr_flns x, hsdr_flns y, int F);
/* Three-stage tree (0,1)(2,3)(4,5)(6,7) -> (01,23)(45,67) -> root. */
hsdr_flns hsdr_flns_tree(const int32_t A[8], int F, int b);
/* sign * 2^((lambda / 2^F - 74) / 8) * 2^e * d, in fp64; absent gives 0. */
double hsdr_flns_value(hsdr_flns r, int F, int e, double d);
/* Table entries, exposed for tests: LC[c] (c in 1..65535), kappa+[d] (d >= 0), kappa-[d] (d >= 1). */
int32_t hsdr_flns_lc_at(int F, uint32_t c);
int32_t hsdr_flns_kplus_at(int F, int64_t d);
int32_t hsdr_flns_kminus_at(int F, int64_t d);

/* ---- exact group value and Q15.16 ---- */
/* G_g = 2^e * d / 512 * sum_p A[p] c_p as double-double (c_p double-double, products exact, sums compensated). */
hsdr_dd hsdr_group_sum_dd(const int32_t A[8], double d, int e);
double hsdr_group_sum(const int32_t A[8], double d, int e);
/* Spec implementation in its two steps: S = sum A[p] * C31[p] (int64, |S| <= 2^54), then
 * Q = rint(S * d * 2^(e + 16 - 31 - 9)) in fp64; hsdr_q1516_group does both. */
int64_t hsdr_q1516_scale(const int32_t A[8]);
int64_t hsdr_q1516_materialize(int64_t S, double d, int e);
int64_t hsdr_q1516_group(const int32_t A[8], double d, int e);
/* Correctly rounded round_half_even(2^16 * G_g) from the double-double value (the tests' yardstick). */
int64_t hsdr_q1516_group_correct(const int32_t A[8], double d, int e);
/* Allowed |Q - correct|: 1 when |d * 2^e| <= 4, else 1 + |d * 2^e| / 8 (spec/lns8.md section 6). */
double hsdr_q1516_bound(double d, int e);

#endif
