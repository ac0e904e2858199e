/* Seeded random numbers (xoshiro256** seeded through splitmix64) and the activation distributions of the harness. */
#ifndef HSDR_RNG_H
#define HSDR_RNG_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
} hsdr_rng;

void hsdr_rng_seed(hsdr_rng *r, uint64_t seed);
uint64_t hsdr_rng_u64(hsdr_rng *r);
double hsdr_rng_uniform(hsdr_rng *r);   /* [0, 1) with 53 random bits */
double hsdr_rng_gaussian(hsdr_rng *r);  /* standard normal (Box-Muller) */
double hsdr_rng_laplace(hsdr_rng *r);   /* unit variance */
double hsdr_rng_student_t3(hsdr_rng *r); /* Student-t with 3 degrees of freedom, scaled to unit variance */
uint32_t hsdr_rng_below(hsdr_rng *r, uint32_t n); /* uniform in 0..n-1 */

/* Activation distributions, by name. */
typedef enum { HSDR_DIST_GAUSSIAN, HSDR_DIST_LAPLACE, HSDR_DIST_STUDENT_T3, HSDR_DIST_BONSAI, HSDR_DIST_COUNT } hsdr_dist;
const char *hsdr_dist_name(hsdr_dist d);
int hsdr_dist_from_name(const char *name, hsdr_dist *d); /* 0 or -1 */
/* Fill K values RMS-normalized to 1 (post-RMSNorm). BONSAI: heavy-tailed with a few outlier channels, RMSNorm'd,
 * then the sign + WHT-1024 fold (K must be a multiple of 1024; returns -1 otherwise). signs: K entries, only for
 * BONSAI (the per-width sign vector; NULL draws one from r). */
int hsdr_dist_fill(hsdr_dist d, hsdr_rng *r, float *x, size_t K, const int8_t *signs);

#endif
