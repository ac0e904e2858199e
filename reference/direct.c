/* Direct 8-phase reduction of one group (spec/lns8.md section 3). */
#include "hsdr.h"

void hsdr_direct_group(const uint8_t codes[HSDR_QK], const int8_t t[HSDR_QK], int32_t A[8])
{
    for (int p = 0; p < 8; p++)
        A[p] = 0;
    for (int i = 0; i < HSDR_QK; i++) {
        int k = codes[i] & 0x7f;
        if (k == 0 || t[i] == 0)
            continue; /* k = 0 must be skipped: it would add +-1 to A[0] */
        int32_t v = (int32_t)1 << (k >> 3);
        int negative = ((codes[i] >> 7) != 0) != (t[i] < 0);
        A[k & 7] += negative ? -v : v;
    }
}
