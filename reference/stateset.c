/* Reusable activation state sets + POPCOUNT (spec/lns8.md section 4), 128-lane and 64-lane tiles. */
#include <string.h>

#include "hsdr.h"

void hsdr_stateset128_build(const uint8_t codes[HSDR_QK], hsdr_stateset128 *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < HSDR_QK; i++) {
        int k = codes[i] & 0x7f;
        uint64_t bit = 1ull << (i & 63);
        if (codes[i] & 0x80)
            s->neg[i >> 6] |= bit;
        if (k != 0)
            s->S[k][i >> 6] |= bit;
    }
    for (int k = 1; k < HSDR_NSTATES; k++)
        if (s->S[k][0] | s->S[k][1])
            s->occupied[s->n_occupied++] = (uint8_t)k;
}

void hsdr_stateset128_counts(const hsdr_stateset128 *s, const uint64_t w_nz[2], const uint64_t w_neg[2],
                             int16_t C[HSDR_NSTATES])
{
    uint64_t wp[2], wn[2];
    for (int h = 0; h < 2; h++) {
        uint64_t p_neg = s->neg[h] ^ w_neg[h]; /* product negative */
        wp[h] = w_nz[h] & ~p_neg;
        wn[h] = w_nz[h] & p_neg;
    }
    memset(C, 0, sizeof(int16_t) * HSDR_NSTATES);
    for (int j = 0; j < s->n_occupied; j++) {
        int k = s->occupied[j];
        int c = __builtin_popcountll(s->S[k][0] & wp[0]) + __builtin_popcountll(s->S[k][1] & wp[1]) -
                __builtin_popcountll(s->S[k][0] & wn[0]) - __builtin_popcountll(s->S[k][1] & wn[1]);
        C[k] = (int16_t)c;
    }
}

void hsdr_stateset64_build(const uint8_t codes[64], hsdr_stateset64 *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 64; i++) {
        int k = codes[i] & 0x7f;
        uint64_t bit = 1ull << i;
        if (codes[i] & 0x80)
            s->neg |= bit;
        if (k != 0)
            s->S[k] |= bit;
    }
    for (int k = 1; k < HSDR_NSTATES; k++)
        if (s->S[k])
            s->occupied[s->n_occupied++] = (uint8_t)k;
}

void hsdr_stateset64_counts_add(const hsdr_stateset64 *s, uint64_t w_nz, uint64_t w_neg, int16_t C[HSDR_NSTATES])
{
    uint64_t p_neg = s->neg ^ w_neg;
    uint64_t wp = w_nz & ~p_neg, wn = w_nz & p_neg;
    for (int j = 0; j < s->n_occupied; j++) {
        int k = s->occupied[j];
        C[k] = (int16_t)(C[k] + __builtin_popcountll(s->S[k] & wp) - __builtin_popcountll(s->S[k] & wn));
    }
}

void hsdr_fold_counts(const int16_t C[HSDR_NSTATES], int32_t A[8])
{
    for (int p = 0; p < 8; p++) {
        int32_t a = 0;
        for (int q = 0; q < 16; q++)
            a += (int32_t)C[8 * q + p] * ((int32_t)1 << q);
        A[p] = a;
    }
}
