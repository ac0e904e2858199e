#include "case.h"

#include <stdio.h>
#include <string.h>

static const char *const mode_names[HSDR_MODE_COUNT] = {"hot", "cold"};

const char *hsdr_mode_name(hsdr_mode m)
{
    return (unsigned)m < HSDR_MODE_COUNT ? mode_names[m] : "?";
}

int hsdr_mode_from_name(const char *name, hsdr_mode *m)
{
    for (int i = 0; i < HSDR_MODE_COUNT; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *m = (hsdr_mode)i;
            return 0;
        }
    return -1;
}

void hsdr_case_key(const hsdr_case *c, char *buf, size_t n)
{
    int len = snprintf(buf, n, "variant=%s K=%d N=%d R=%d threads=%d dist=%s mode=%s", c->variant->name, c->K, c->N,
                       c->R, c->threads, hsdr_dist_name(c->dist), hsdr_mode_name(c->mode));
    if (c->variant->max_cols > 1 && c->cols > 1 && len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " cols=%d", c->cols);
    if (c->variant->uses_flns && len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " F=%d b=%d", c->flns_F, c->flns_b);
    if (c->shape[0] && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " shape=%s", c->shape);
}

uint64_t hsdr_case_seed(const hsdr_case *c, uint64_t matrix_seed)
{
    /* Inputs depend on the data axes only (not on variant, threads, mode, R or cols), so every variant of one
     * configuration sees the same weights and activations and their outputs are comparable; a case of several
     * columns draws its extra columns from this same seed. */
    char key[160];
    snprintf(key, sizeof key, "K=%d N=%d dist=%s shape=%s", c->K, c->N, hsdr_dist_name(c->dist), c->shape);
    uint64_t h = 0xcbf29ce484222325ull ^ matrix_seed;
    for (const char *p = key; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ull;
    }
    return h & ((1ull << 53) - 1); /* exact in a JSON number (a double) */
}
