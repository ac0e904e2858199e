/* The checking interface of a variant whose only output is y: its own timed path (prepare, prologue, rows over all
 * rows on the calling thread, zeroed scratch), so what `hsdr check` and the harness compare is exactly the code that
 * is timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

int hsdr_matvec_via_rows(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const char *why = hsdr_variant_unavailable(v);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (v->needs_x && !io->x) {
        snprintf(err, errlen, "needs fp32 activations");
        return -1;
    }
    if (v->precision != 32 || !io->y_f32 || !v->rows) {
        snprintf(err, errlen, "the timed path gives fp32 y only");
        return -1;
    }
    void *w = NULL;
    size_t wbytes = 0;
    if (v->prepare && v->prepare(io->weights, io->K, io->N, &w, &wbytes, err, errlen) != 0)
        return -1;
    const size_t ab = align64(v->act_bytes ? v->act_bytes(io->K) : 64);
    const size_t sb = align64(v->scratch_bytes ? v->scratch_bytes(io->K, 1) : 64);
    void *act = aligned_alloc(64, ab), *scratch = aligned_alloc(64, sb);
    int rc = -1;
    if (!act || !scratch) {
        snprintf(err, errlen, "out of memory (%zu + %zu bytes)", ab, sb);
        goto out;
    }
    memset(scratch, 0, sb);
    hsdr_exec e = {.K = io->K, .N = io->N, .R = 1, .flns_F = io->flns_F, .flns_b = io->flns_b,
                   .weights = w ? w : (const void *)io->weights, .x = io->x, .act = act, .y = io->y_f32};
    if (v->prologue)
        v->prologue(&e);
    v->rows(&e, 0, io->N, scratch);
    rc = 0;
out:
    free(act);
    free(scratch);
    if (w)
        v->release(w);
    return rc;
}
