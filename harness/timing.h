/* The measurement engine: the one place where anything is timed, for every backend (host, CUDA, Vulkan, Metal).
 *
 * A subject is one prepared launch: a host matvec on the thread pool, a device run, a read of the ceiling, a whole
 * token. The engine owns everything around it -- warm-up, repetitions and the stopping rule (matrix settings), cold
 * rotation over weight copies, rounds of several subjects -- and only the launch sits inside a timed window:
 *   host    clock; launch; clock           (the pool is woken, untimed, just before)
 *   device  mark(0); enqueue; mark(1); elapsed   (the backend's own clock: CUDA events, Vulkan timestamps, Metal
 *                                                  command-buffer GPU times)
 * Several subjects are measured in rounds (A B C A B C ...): sample r of every subject comes from round r. A subject
 * with a reference (its backend's production) has the reference sampled again right before it in every round, so
 * their per-round ratios cancel the drift that a machine shows between minutes (hsdr_paired_ratio).
 *
 * Also here: the timing setup of one variant on one configuration (buffers, rotating weight copies, per-thread
 * scratch, row ranges) and the matvec subject made from it. */
#ifndef HSDR_TIMING_H
#define HSDR_TIMING_H
#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "inputs.h"
#include "stats.h"
#include "threads.h"

/* ---- the engine ---- */

/* Weight copies visited in turn (cold runs); subjects that share copies share the rotation, so that each of their
 * launches finds the next copy, not the one the previous subject just read. */
typedef struct {
    size_t n;    /* copies; 1 = hot */
    size_t next; /* the copy the next launch reads */
    size_t launches; /* launches made over this rotation (tests check the accounting) */
} hsdr_rotation;

typedef struct hsdr_subject hsdr_subject;
struct hsdr_subject {
    const char *name; /* for messages */
    /* host: `count` launches, the first on weight copy `copy`, each next one on the next copy; the engine reads the
     * monotonic clock around the call. 0, or -1 with a message in err. */
    int (*launch)(hsdr_subject *s, size_t copy, int count);
    void *ctx;
    hsdr_pool *wake; /* host: woken by an empty, untimed call before each sample (NULL: none) */
    /* optional, any subject: untimed work before each sample (fresh activations per token); 0, or -1 with err */
    int (*before)(hsdr_subject *s);
    void *before_ctx;
    /* device: mark(0); enqueue(copy, stage, skip, twice) x count; mark(1); elapsed */
    const hsdr_device_ops *dev;
    hsdr_device_run *run;
    int stage; /* -1: the full matvec with the masks below; else that stage alone */
    unsigned skip, twice;
    hsdr_rotation *rot; /* NULL: always copy 0 */
    hsdr_subject *ref;  /* NULL, or the subject this one is compared with (its backend's production): in every round
                         * the reference is sampled again right before this subject, into ref_samples */
    int count;          /* launches per sample: 1, or calibrated to the policy's min_sample_ns during warm-up */
    char err[256];
};

typedef struct {
    int warmup, min_reps, max_reps; /* per subject; a measurement of n subjects runs rounds of n samples */
    double noise_target;            /* stop when every subject's (p75 - p25) / median is at most this */
    double time_limit_s;            /* per subject: n subjects stop after n x this */
    double min_sample_ns;           /* 0, or: during warm-up, launches per sample grow until one sample takes this */
    int rewarm;                     /* an untimed launch of the same subject right before each sample (on the next
                                     * copy of its rotation), so that the sample does not follow another subject's
                                     * launch, whose code and data displace this one's */
} hsdr_timing_policy;

/* One sample of s: ns per launch over s->count launches. 0, or -1 with the message in s->err. */
int hsdr_sample(hsdr_subject *s, double *ns);

/* Measure n subjects in rounds under pol: warm-up rounds (where min_sample_ns calibrates each subject's count),
 * then rounds until every subject meets the noise target (after min_reps), the time limit, or max_reps rounds.
 * stats[i] holds subject i's samples in round order; every subject gets the same number of rounds. A subject with a
 * reference (s->ref, one of the n) is preceded in each round by a sample of its reference (R A R B ...), kept in
 * stats[i].ref_samples: the ratio of the two cancels drift slower than the pair. 0, or -1 with a message naming the
 * subject (nothing is left allocated in stats). */
int hsdr_measure(hsdr_subject *const *subjects, int n, const hsdr_timing_policy *pol, hsdr_stats *stats, char *err,
                 size_t errlen);

/* ---- the timing setup of one variant on one configuration ---- */

/* Raw PTQ1_0 weight copies shared by the subjects of one configuration that read the weights as stored (no
 * prepare): cold, copies totalling more than 4x the last-level cache; hot, one. */
typedef struct {
    void **copies;
    void *block;
    size_t bytes;
    hsdr_rotation rot;
} hsdr_weight_copies;
int hsdr_weight_copies_create(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, hsdr_mode mode, char *err,
                              size_t errlen);
/* n >= 1 copies of W, whatever the mode (a token's rotation is sized by its caller: profile_plan.h). 0, or -1 when
 * out of memory. */
int hsdr_weight_copies_create_n(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, size_t n, char *err,
                                size_t errlen);
/* One copy that is the caller's bytes, read in place (hot; nothing copied, W must outlive wc): a mapped model file's
 * tensor. 0, or -1 when out of memory. hsdr_weight_copies_free leaves W alone. */
int hsdr_weight_copies_borrow(hsdr_weight_copies *wc, const uint8_t *W, size_t bytes, char *err, size_t errlen);
void hsdr_weight_copies_free(hsdr_weight_copies *wc);

typedef struct {
    const hsdr_variant *v;
    hsdr_exec exec;          /* template: weights = copy 0; y, act and x owned here (x: cols columns) */
    hsdr_weight_copies own;  /* host variants: its own copies (the prepared form, or raw PTQ1_0 when not shared) */
    hsdr_weight_copies *wc;  /* host variants: &own, or the configuration's shared raw copies */
    hsdr_rotation dev_rot;   /* device variants: the rotation over the copies the variant made */
    hsdr_rotation *rot;
    void **scratch;          /* per thread */
    int nthreads;
    int active;              /* host: threads its pool runs use (hsdr_pool_run_n): nthreads, or fewer when set */
    int *r0, *r1;            /* per-thread row ranges over the active threads (stages alone; chunk 0) */
    int chunk;               /* rows per chunk that the active threads claim in turn (dynamic split), 0: r0..r1 */
    double convert_ns;       /* time of the first prepare(), 0 without one */
    size_t footprint;        /* prepared bytes, or the PTQ1_0 bytes */
    hsdr_device_run *dev;    /* device variants: the variant's device state (no host copies, no scratch) */
    hsdr_pool *pool;         /* the pool its subjects run on (host variants) */
    char err[256];           /* why the last device call failed */
} hsdr_timing_setup;

/* Memory a setup may use for cold copies (bytes): min(4 GiB, a quarter of physical memory). Device variants: weight
 * copies on the device totalling more than 3x its L2 (cold), made by the variant. */
size_t hsdr_timing_memory_cap(void);
/* The setups alive at once (hsdr run: every member of the configurations in flight) share half the physical memory
 * from now on: each one's copies stay within half / setups as well as the memory cap (0: the cap alone). A run of
 * nine variants, each rotated over 4x a big last-level cache, reached 24 GB and was killed before this. */
void hsdr_timing_copy_share(size_t setups);
/* Columns 0..cols-1 of the case's activations, cols x K floats (column 0 is in->x; the others are drawn from the
 * case's seed and distribution). NULL when out of memory or the distribution cannot fill K. Caller frees. */
float *hsdr_timing_columns(const hsdr_inputs *in, int cols);
/* A setup for case c on inputs in (c->cols columns) with nthreads threads on pool (NULL for device variants and
 * serial-only use), in mode. shared: raw copies of this configuration to use when the variant reads PTQ1_0 as
 * stored (NULL: its own). 0, or -1 with a message (an out-of-memory message names the bytes needed). */
int hsdr_timing_setup_create(hsdr_timing_setup *ts, const hsdr_case *c, const hsdr_inputs *in, int nthreads,
                             hsdr_mode mode, hsdr_pool *pool, hsdr_weight_copies *shared, char *err, size_t errlen);
void hsdr_timing_setup_free(hsdr_timing_setup *ts);
/* Run ts's pool launches on the first n threads (clipped to 1..nthreads; the others skip them, run_n), rows split
 * evenly over those: a small GEMV on fewer threads (handoff.h's split rule chooses n). No effect on device variants. */
void hsdr_timing_setup_threads(hsdr_timing_setup *ts, int n);
/* A host setup with its own copies (a converted form, or raw PTQ1_0 when nothing was shared) rotates over n of them
 * from now on, the first one's bytes copied; shared copies and device variants are left as they are. 0, or -1 when
 * out of memory (ts unchanged). */
int hsdr_timing_setup_copies(hsdr_timing_setup *ts, size_t n, char *err, size_t errlen);
/* prologue + rows over all rows on the calling thread (validation, warming intermediate buffers); a device variant:
 * the activations at ts->exec.x uploaded again (they may have changed since the setup), one full run, y copied back.
 * 0, or -1 with the device's message in ts->err. */
int hsdr_timing_run_serial(hsdr_timing_setup *ts);
/* One full matvec on the pool (the prologue on thread 0, or its parts on every thread with prologue_part; barrier;
 * rows on every thread), on the first weight copy, on the activations ts->exec.x holds now (a device variant uploads
 * them first): what a timed launch runs, for callers that use the output (profile, quality). */
int hsdr_timing_run_pool(hsdr_timing_setup *ts);
/* The subject that launches ts: the full matvec with ablation masks skip / twice (stage < 0), or stage `stage`
 * alone, on ts's weight rotation. */
void hsdr_timing_subject(hsdr_timing_setup *ts, int stage, unsigned skip, unsigned twice, hsdr_subject *s);

#endif
