/* `hsdr compare A.jsonl B.jsonl`: per key present in both result files, is B faster, slower, the same as A, or is
 * the difference inside the noise? Decided from the raw samples (samples_ns) by a bootstrap interval of the ratio
 * median(B) / median(A); the resampling uses a fixed seed, so the same files always give the same report. */
#ifndef HSDR_COMPARE_H
#define HSDR_COMPARE_H
#include <stddef.h>

typedef enum { HSDR_SAME, HSDR_FASTER, HSDR_SLOWER, HSDR_AMBIGUOUS } hsdr_verdict;

#define HSDR_COMPARE_MIN_SAMPLES 3   /* fewer raw samples on either side: no verdict (AMBIGUOUS / not comparable) */
#define HSDR_COMPARE_RESAMPLES 2000  /* bootstrap resamples per comparison */
#define HSDR_COMPARE_SEED 0x68736472u /* the fixed bootstrap seed ("hsdr"); reset for every comparison */

/* "SAME" | "FASTER" | "SLOWER" | "AMBIGUOUS" */
const char *hsdr_verdict_name(hsdr_verdict v);

/* Verdict for B relative to A. *ratio = median(b) / median(a); [*lo, *hi] = the central `confidence` percentile
 * interval of that ratio over HSDR_COMPARE_RESAMPLES bootstrap resamples (a and b resampled independently).
 * FASTER: hi < 1 - threshold; SLOWER: lo > 1 + threshold; SAME: [lo, hi] inside [1 - threshold, 1 + threshold];
 * AMBIGUOUS otherwise: the interval reaches across a boundary, so the data cannot tell. Also AMBIGUOUS, with
 * [lo, hi] = [0, inf], when either side has fewer than HSDR_COMPARE_MIN_SAMPLES samples, a sample is not finite,
 * median(a) is not positive, or threshold / confidence is outside (0, 1) (*ratio is NaN when it cannot be formed).
 * Output pointers may be NULL. Deterministic: the same inputs give bit-identical outputs. */
hsdr_verdict hsdr_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                                  double confidence, double *ratio, double *lo, double *hi);

/* The CLI: hsdr compare A.jsonl B.jsonl [--threshold 0.02] [--confidence 0.95] [--json]. Exit 0 (a report, also
 * when B is slower), 2 on bad usage or an unreadable / malformed file (the message names file:line). */
int hsdr_cmd_compare(int argc, char **argv);

#endif
