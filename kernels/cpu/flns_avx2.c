/* The fLNS table cache of cpu.flns's AVX2 finish (flns_avx2.h: idea, layout, stage, how to time it): per F, LC as
 * uint16 (65536 entries), kappa+ and kappa- as int16 (|kappa| < 2^15 for every F: half the cache footprint of int32)
 * up to their last non-zero entry, and 2^(r / 2^(F+3)) for the value; built once from the generated tables
 * (reference/flns_tables.h accessors), by the first thread that asks (the others wait). */
#include "flns_avx2.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../../reference/hsdr.h"


static flns_tab flns_tabs[9];
static atomic_int flns_state[9]; /* 0 not built, 1 building, 2 ready, 3 failed */

const flns_tab *hsdr_cpu_flns_tables(int F)
{
    if (F < 0 || F > 8)
        return NULL;
    int st = atomic_load_explicit(&flns_state[F], memory_order_acquire);
    if (st == 2)
        return &flns_tabs[F];
    int expected = 0;
    if (atomic_compare_exchange_strong(&flns_state[F], &expected, 1)) {
        flns_tab *t = &flns_tabs[F];
        int32_t n = 1;
        while (hsdr_flns_kplus_at(F, n) != 0)
            n++;
        t->kplus_len = n;
        n = 1;
        while (hsdr_flns_kminus_at(F, n) != 0)
            n++;
        t->kminus_len = n;
        int nf = 8 << F;
        t->lc = malloc(sizeof(uint16_t) * (65536 + 2)); /* + padding: 32-bit gathers read one entry past */
        /* + a trailing 0 (beyond the table) + padding for 32-bit gathers */
        t->kplus = malloc(sizeof(int16_t) * (size_t)(t->kplus_len + 2));
        t->kminus = malloc(sizeof(int16_t) * (size_t)(t->kminus_len + 2));
        t->pow_frac = malloc(sizeof(double) * (size_t)nf);
        if (!t->lc || !t->kplus || !t->kminus || !t->pow_frac) {
            atomic_store_explicit(&flns_state[F], 3, memory_order_release);
            return NULL;
        }
        t->lc[0] = 0;
        for (uint32_t c = 1; c < 65536; c++)
            t->lc[c] = (uint16_t)hsdr_flns_lc_at(F, c);
        for (int32_t d = 0; d < t->kplus_len; d++)
            t->kplus[d] = (int16_t)hsdr_flns_kplus_at(F, d);
        t->kminus[0] = 0;
        for (int32_t d = 1; d < t->kminus_len; d++)
            t->kminus[d] = (int16_t)hsdr_flns_kminus_at(F, d);
        t->kplus[t->kplus_len] = t->kplus[t->kplus_len + 1] = 0;
        t->kminus[t->kminus_len] = t->kminus[t->kminus_len + 1] = 0;
        t->lc[65536] = t->lc[65537] = 0;
        for (int r = 0; r < nf; r++)
            t->pow_frac[r] = exp2((double)r / (double)nf);
        atomic_store_explicit(&flns_state[F], 2, memory_order_release);
        return t;
    }
    while ((st = atomic_load_explicit(&flns_state[F], memory_order_acquire)) == 1)
        ;
    return st == 2 ? &flns_tabs[F] : NULL;
}

