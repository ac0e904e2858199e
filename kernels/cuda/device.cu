/* The host side every CUDA variant shares: whether a device can run the kernels (one check, cached), and the device
 * ops of kernel.h over three kinds of run -- a variant's matvec (weight copies, activations, the variant's prepared
 * launch), the plain streaming read of one buffer copy (the roofline's ceiling), and a token (the full launches of
 * several matvec runs captured into one CUDA graph). Each op enqueues or records once; warm-up, repetitions and
 * rotation over the copies are harness/timing.c's. The checking interface goes through the same ops, so the code
 * checked is the code timed. */
#include <stdio.h>
#include <stdlib.h>

#include "common.cuh"
#include "stream.cuh"
extern "C" {
#include "host_encode.h"
}

extern "C" const char *hsdr_cuda_unavailable(void)
{
    static int checked;
    static char why[512];
    if (!checked) {
        checked = 1;
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        cudaDeviceProp p;
        if (e != cudaSuccess)
            snprintf(why, sizeof why, "no CUDA device (cudaGetDeviceCount: %s)", cudaGetErrorString(e));
        else if (n == 0)
            snprintf(why, sizeof why, "no CUDA device");
        else if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
            snprintf(why, sizeof why, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
        else if (p.major * 10 + p.minor < 61)
            snprintf(why, sizeof why, "%s is compute capability %d.%d; the kernels need 6.1 (dp4a)", p.name, p.major,
                     p.minor);
    }
    return why[0] ? why : NULL;
}

/* A variant's own refusal on top of hsdr_cuda_unavailable: refuse(p, why, size) writes why the device p cannot run
 * it (or nothing), once; the answer is kept in why. */
template <class Refuse>
static const char *unavailable_unless(int &checked, char (&why)[512], Refuse refuse)
{
    const char *no = hsdr_cuda_unavailable();
    if (no)
        return no;
    if (!checked) {
        checked = 1;
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
            refuse(p, why, sizeof why);
    }
    return why[0] ? why : NULL;
}

extern "C" const char *hsdr_cuda_production_unavailable(void)
{
    static int checked;
    static char why[512];
    return unavailable_unless(checked, why, [](const cudaDeviceProp &p, char *w, size_t n) {
        const int cc = p.major * 100 + p.minor * 10;
        if (cc >= 750 && cc < 890) /* the fork's ggml_cuda_q8_1_layout_host: Turing and Ampere take PT */
            snprintf(w, n,
                     "%s (sm_%d): the fork dispatches its planar PT one-column kernel here, which is "
                     "cuda.production_pt; cuda.production is its SOA_ISUM path of sm_89 and newer "
                     "(docs/cuda-production.md)",
                     p.name, cc / 10);
    });
}

extern "C" const char *hsdr_cuda_tma_unavailable(void)
{
    static int checked;
    static char why[512];
    return unavailable_unless(checked, why, [](const cudaDeviceProp &p, char *w, size_t n) {
        if (p.major < 9)
            snprintf(w, n,
                     "%s is compute capability %d.%d; the streamed kernels (kernels/cuda/tma.cuh) need 9.0: bulk "
                     "copies into shared memory completing on an mbarrier",
                     p.name, p.major, p.minor);
    });
}

/* ---- the shared device ops of the CUDA variants ---- */

static size_t round256(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

static const char *kind_name(const hsdr_device_run *r)
{
    return r->kind == HSDR_CU_RUN_READ ? "a read run" : r->kind == HSDR_CU_RUN_TOKEN ? "a token run" : "a matvec run";
}

extern "C" void hsdr_cu_destroy(hsdr_device_run *r)
{
    if (!r)
        return;
    if (r->exec)
        cudaGraphExecDestroy(r->exec);
    if (r->graph)
        cudaGraphDestroy(r->graph);
    if (r->kind == HSDR_CU_RUN_TOKEN && r->stream) /* only a token run owns its stream */
        cudaStreamDestroy(r->stream);
    cudaFree(r->wblock);
    cudaFree(r->x);
    cudaFree(r->y);
    cudaFree(r->act);
    cudaFree(r->A);
    cudaFree(r->qg);
    cudaFree(r->qr);
    cudaFree(r->scratch);
    cudaFree(r->sink);
    if (r->start)
        cudaEventDestroy(r->start);
    if (r->stop)
        cudaEventDestroy(r->stop);
    free(r);
}

int hsdr_cu_open(const hsdr_cu_kernels *k, const char *name, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                 hsdr_device_run **run, char *err, size_t errlen)
{
    const int max_cols = k->max_cols > 1 ? k->max_cols : 1;
    if (e->cols < 1 || e->cols > max_cols) {
        if (max_cols == 1)
            snprintf(err, errlen, "%s takes one activation column; asked for cols = %d", name, e->cols);
        else
            snprintf(err, errlen, "%s takes 1..%d activation columns; asked for cols = %d", name, max_cols, e->cols);
        return -1;
    }
    if (ncopies < 1) {
        snprintf(err, errlen, "%s: ncopies = %d; need at least one weight copy", name, ncopies);
        return -1;
    }
    hsdr_device_run *r = (hsdr_device_run *)calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    r->kind = HSDR_CU_RUN_MATVEC;
    r->K = e->K, r->N = e->N, r->R = e->R, r->F = e->flns_F, r->b = e->flns_b, r->cols = e->cols;
    r->k = k;
    r->ncopies = ncopies;
    const size_t ptq_bytes = (size_t)e->N * (e->K / 128) * HSDR_PTQ1_0_BLOCK;
    uint8_t *src = NULL; /* the PTQ1_0 blocks on the device, for a converting variant */
    r->wbytes = k->convert ? k->layout_bytes(e->K, e->N) : ptq_bytes;
    r->wstride = round256(r->wbytes);
    if (k->prepare && k->prepare(r, err, errlen) != 0) /* before the allocations: a refused case costs nothing */
        goto fail;
    HSDR_CU(cudaMalloc((void **)&r->wblock, r->wstride * (size_t)ncopies));
    HSDR_CU(cudaMalloc((void **)&r->x, sizeof(float) * (size_t)e->K * e->cols));
    HSDR_CU(cudaMalloc((void **)&r->y, sizeof(float) * (size_t)e->N * e->cols));
    HSDR_CU(cudaMalloc(&r->act, k->act_bytes(e->K) * (size_t)e->cols));
    HSDR_CU(cudaMemset(r->act, 0, k->act_bytes(e->K) * (size_t)e->cols)); /* defined; counters kept there start at 0 */
    HSDR_CU(cudaEventCreate(&r->start));
    HSDR_CU(cudaEventCreate(&r->stop));
    if (k->convert) { /* upload, convert into copy 0 (the convert stage, timed on the device), drop the upload */
        float ms = 0.0f;
        HSDR_CU(cudaMalloc((void **)&src, ptq_bytes));
        HSDR_CU(cudaMemcpy(src, ptq1_0, ptq_bytes, cudaMemcpyHostToDevice));
        HSDR_CU(cudaEventRecord(r->start, r->stream));
        HSDR_CU(k->convert(r, src, r->wblock));
        HSDR_CU(cudaEventRecord(r->stop, r->stream));
        HSDR_CU(cudaEventSynchronize(r->stop));
        HSDR_CU(cudaEventElapsedTime(&ms, r->start, r->stop));
        r->convert_ns = 1e6 * (double)ms;
        HSDR_CU(cudaFree(src));
        src = NULL;
    } else {
        HSDR_CU(cudaMemcpy(r->wblock, ptq1_0, r->wbytes, cudaMemcpyHostToDevice));
    }
    for (int c = 1; c < ncopies; c++)
        HSDR_CU(cudaMemcpy(r->wblock + (size_t)c * r->wstride, r->wblock, r->wbytes, cudaMemcpyDeviceToDevice));
    HSDR_CU(cudaDeviceSynchronize());
    *run = r;
    return 0;
fail:
    cudaFree(src);
    hsdr_cu_destroy(r);
    return -1;
}

extern "C" int hsdr_cu_create(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                              hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen)
{
    if (hsdr_cu_open((const hsdr_cu_kernels *)v->device->impl, v->name, e, ptq1_0, ncopies, run, err, errlen) != 0)
        return -1;
    *convert_ns = (*run)->convert_ns; /* 0 for the kernels that read PTQ1_0 as stored */
    *footprint = (*run)->wbytes;
    return 0;
}

extern "C" int hsdr_cu_set_input(hsdr_device_run *r, const float *x, char *err, size_t errlen)
{
    if (r->kind != HSDR_CU_RUN_MATVEC) {
        snprintf(err, errlen, "set_input on %s: only a matvec run takes activations", kind_name(r));
        return -1;
    }
    HSDR_CU(cudaMemcpy(r->x, x, sizeof(float) * (size_t)r->K * r->cols, cudaMemcpyHostToDevice));
    return 0;
fail:
    return -1;
}

/* The plain streaming read (stream.cuh). */
__global__ void hsdr_cu_read_kernel(const uint4 *p, size_t n, unsigned *sink)
{
    hsdr_read_span(p, n, sink);
}

/* One launch, no waiting: a matvec run's full matvec (stage < 0) or one stage, on weight copy `copy`; a read run's
 * read of buffer copy `copy` (its bytes / 16 words of 16 bytes); a token run's replay of its graph (copy 0). Read and
 * token runs have no stages: a stage, skip or twice is refused, as is a copy the run does not have. */
extern "C" int hsdr_cu_enqueue(hsdr_device_run *r, int copy, int stage, unsigned skip, unsigned twice, char *err,
                               size_t errlen)
{
    /* the checks are host arithmetic: nothing here waits or asks the device */
    if (r->kind == HSDR_CU_RUN_TOKEN ? copy != 0 : (copy < 0 || copy >= r->ncopies)) {
        snprintf(err, errlen, "enqueue on %s: copy %d; it has %d", kind_name(r), copy,
                 r->kind == HSDR_CU_RUN_TOKEN ? 1 : r->ncopies);
        return -1;
    }
    if (r->kind != HSDR_CU_RUN_MATVEC && (stage >= 0 || skip || twice)) {
        snprintf(err, errlen, "enqueue on %s: stage %d, skip 0x%x, twice 0x%x; it has no stages (stage -1, no "
                 "ablation)", kind_name(r), stage, skip, twice);
        return -1;
    }
    if (stage >= HSDR_STAGE_COUNT) {
        snprintf(err, errlen, "enqueue: stage %d; the stages are 0..%d, or -1 for the full matvec", stage,
                 HSDR_STAGE_COUNT - 1);
        return -1;
    }
    switch (r->kind) {
    case HSDR_CU_RUN_MATVEC:
        HSDR_CU(r->k->launch(r, r->wblock + (size_t)copy * r->wstride, stage, skip, twice));
        break;
    case HSDR_CU_RUN_READ:
        hsdr_cu_read_kernel<<<r->shape.ctas, r->shape.threads, 0, r->stream>>>(
            (const uint4 *)(r->wblock + (size_t)copy * r->wstride), r->wbytes / 16, r->sink);
        HSDR_CU_LAUNCHED();
        break;
    case HSDR_CU_RUN_TOKEN:
        HSDR_CU(cudaGraphLaunch(r->exec, r->stream));
        break;
    }
    return 0;
fail:
    return -1;
}

extern "C" int hsdr_cu_mark(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    HSDR_CU(cudaEventRecord(end ? r->stop : r->start, r->stream));
    return 0;
fail:
    return -1;
}

extern "C" int hsdr_cu_elapsed(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    float ms = 0.0f;
    HSDR_CU(cudaEventSynchronize(r->stop));
    HSDR_CU(cudaGetLastError()); /* a fault inside the launches */
    HSDR_CU(cudaEventElapsedTime(&ms, r->start, r->stop));
    *ns = (double)ms * 1e6;
    return 0;
fail:
    return -1;
}

extern "C" int hsdr_cu_output(hsdr_device_run *r, float *y, char *err, size_t errlen)
{
    if (r->kind != HSDR_CU_RUN_MATVEC) {
        snprintf(err, errlen, "output of %s: only a matvec run has a y", kind_name(r));
        return -1;
    }
    HSDR_CU(cudaMemcpy(y, r->y, sizeof(float) * (size_t)r->N * r->cols, cudaMemcpyDeviceToHost));
    return 0;
fail:
    return -1;
}

extern "C" size_t hsdr_cu_l2_bytes(void)
{
    int dev = 0, l2 = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess)
        return (size_t)64 << 20;
    return (size_t)l2;
}

extern "C" const char *hsdr_cu_describe(void)
{
    static char text[512];
    if (!text[0]) {
        cudaDeviceProp p;
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
            snprintf(text, sizeof text, "%s, compute %d.%d, %d SMs, L2 %d KiB, %.1f GiB, driver %d, runtime %d", p.name,
                     p.major, p.minor, p.multiProcessorCount, p.l2CacheSize / 1024, p.totalGlobalMem / 1073741824.0,
                     driver, runtime);
        else
            snprintf(text, sizeof text, "CUDA device (properties unreadable)");
    }
    return text;
}

extern "C" int hsdr_cu_read_create(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen)
{
    if (bytes < 16 || ncopies < 1) {
        snprintf(err, errlen, "read run of %zu bytes in %d copies: need at least 16 bytes and one copy", bytes,
                 ncopies);
        return -1;
    }
    int dev = 0, sms = 0;
    hsdr_device_run *r = (hsdr_device_run *)calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    r->kind = HSDR_CU_RUN_READ;
    r->ncopies = ncopies;
    r->wbytes = bytes;
    r->wstride = round256(bytes);
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    r->shape.ctas = (unsigned)sms * 8, r->shape.threads = 512;
    HSDR_CU(cudaMalloc((void **)&r->wblock, r->wstride * (size_t)ncopies));
    HSDR_CU(cudaMalloc((void **)&r->sink, sizeof(unsigned)));
    HSDR_CU(cudaMemset(r->wblock, 1, r->wstride * (size_t)ncopies));
    HSDR_CU(cudaEventCreate(&r->start));
    HSDR_CU(cudaEventCreate(&r->stop));
    HSDR_CU(cudaDeviceSynchronize());
    *run = r;
    return 0;
fail:
    hsdr_cu_destroy(r);
    return -1;
}

/* Whether the runs' token is their variant's own (hsdr_cu_kernels.token): every run of one variant that has one. */
static bool own_token(hsdr_device_run *const *runs, int n)
{
    for (int i = 0; i < n; i++)
        if (runs[i]->k != runs[0]->k)
            return false;
    return runs[0]->k->token != NULL;
}

/* A variant's own token is checked before it is ever timed: every run's y from one replay (every y poisoned first)
 * must equal, bit for bit, y of the run's own launch (the kernel hsdr check validates) on the same inputs. */
static int check_own_token(hsdr_device_run *tok, hsdr_device_run *const *runs, int n, char *err, size_t errlen)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)runs[i]->N;
    uint32_t *want = (uint32_t *)malloc(total * sizeof *want), *got = (uint32_t *)malloc(total * sizeof *got);
    int rc = -1;
    if (!want || !got) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    for (size_t i = 0, at = 0; i < (size_t)n; at += (size_t)runs[i]->N, i++) {
        hsdr_device_run *q = runs[i];
        HSDR_CU(q->k->launch(q, q->wblock, -1, 0, 0));
        HSDR_CU(cudaStreamSynchronize(q->stream));
        HSDR_CU(cudaMemcpy(want + at, q->y, sizeof(float) * (size_t)q->N, cudaMemcpyDeviceToHost));
        HSDR_CU(cudaMemset(q->y, 0xff, sizeof(float) * (size_t)q->N)); /* a NaN no row keeps by chance */
    }
    HSDR_CU(cudaGraphLaunch(tok->exec, tok->stream));
    HSDR_CU(cudaStreamSynchronize(tok->stream));
    for (size_t i = 0, at = 0; i < (size_t)n; at += (size_t)runs[i]->N, i++) {
        const hsdr_device_run *q = runs[i];
        HSDR_CU(cudaMemcpy(got + at, q->y, sizeof(float) * (size_t)q->N, cudaMemcpyDeviceToHost));
        for (int row = 0; row < q->N; row++)
            if (got[at + row] != want[at + row]) {
                snprintf(err, errlen, "token: the variant's own token gives y[%d] = 0x%08x for runs[%zu] (K %d, N %d), "
                                      "its own launch 0x%08x: not timed", row, got[at + row], i, q->K, q->N,
                         want[at + row]);
                goto fail;
            }
    }
    rc = 0;
fail:
    free(want);
    free(got);
    return rc;
}

extern "C" int hsdr_cu_token_create(hsdr_device_run *const *runs, int n, hsdr_device_run **token, char *err,
                                    size_t errlen)
{
    if (n < 1) {
        snprintf(err, errlen, "token of %d runs: need at least one", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!runs[i] || runs[i]->kind != HSDR_CU_RUN_MATVEC) {
            snprintf(err, errlen, "token: runs[%d] is %s; a token captures matvec runs only", i,
                     runs[i] ? kind_name(runs[i]) : "NULL");
            return -1;
        }
    cudaError_t launched = cudaSuccess, ended;
    int failed = -1;
    const bool own = own_token(runs, n);
    hsdr_device_run *r = (hsdr_device_run *)calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    r->kind = HSDR_CU_RUN_TOKEN;
    r->ncopies = 1;
    HSDR_CU(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    HSDR_CU(cudaEventCreate(&r->start));
    HSDR_CU(cudaEventCreate(&r->stop));
    if (own) {
        if (runs[0]->k->token(r, runs, n, err, errlen) != 0)
            goto fail;
    } else {
        HSDR_CU(cudaStreamBeginCapture(r->stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < n && launched == cudaSuccess; i++) {
            const cudaStream_t own = runs[i]->stream;
            runs[i]->stream = r->stream; /* the run's launches go into the capture, on its copy 0 */
            launched = runs[i]->k->launch(runs[i], runs[i]->wblock, -1, 0, 0);
            runs[i]->stream = own;
            if (launched != cudaSuccess)
                failed = i;
        }
        ended = cudaStreamEndCapture(r->stream, &r->graph); /* ends the capture also after a failed launch */
        if (launched != cudaSuccess) {
            snprintf(err, errlen, "token: capturing the launches of runs[%d]: %s", failed,
                     cudaGetErrorString(launched));
            goto fail;
        }
        HSDR_CU(ended);
    }
    HSDR_CU(cudaGraphInstantiate(&r->exec, r->graph, 0));
    HSDR_CU(cudaGraphUpload(r->exec, r->stream)); /* the first replay then finds the graph on the device */
    HSDR_CU(cudaStreamSynchronize(r->stream));
    if (own && check_own_token(r, runs, n, err, errlen) != 0)
        goto fail;
    *token = r;
    return 0;
fail:
    hsdr_cu_destroy(r);
    return -1;
}

int hsdr_cu_run_once(hsdr_device_run *r, unsigned skip, char *err, size_t errlen)
{
    double ns;
    if (hsdr_cu_mark(r, 0, err, errlen) != 0 || hsdr_cu_enqueue(r, 0, -1, skip, 0, err, errlen) != 0 ||
        hsdr_cu_mark(r, 1, err, errlen) != 0 || hsdr_cu_elapsed(r, &ns, err, errlen) != 0)
        return -1;
    return 0;
}

extern "C" int hsdr_cuda_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const hsdr_cu_kernels *k = (const hsdr_cu_kernels *)v->device->impl;
    const bool codes_only = !io->x;
    if (hsdr_device_io_check(io, k->upload_codes != NULL, err, errlen) != 0)
        return -1;
    hsdr_exec e = {};
    e.K = io->K, e.N = io->N, e.R = 1, e.cols = 1, e.flns_F = io->flns_F, e.flns_b = io->flns_b;
    hsdr_device_run *r = NULL;
    double convert_ns;
    size_t footprint;
    const size_t abytes = sizeof(int32_t) * (size_t)io->N * (io->K / 128) * 8;
    const size_t qgbytes = sizeof(int64_t) * (size_t)io->N * (io->K / 128);
    int rc = -1;
    if (hsdr_cu_create(v, &e, io->weights, 1, &r, &convert_ns, &footprint, err, errlen) != 0)
        return -1;
    if ((v->outputs & HSDR_OUT_A) && io->A)
        HSDR_CU(cudaMalloc((void **)&r->A, abytes));
    if ((v->outputs & HSDR_OUT_Q1516) && io->q_group && io->q_row) {
        HSDR_CU(cudaMalloc((void **)&r->qg, qgbytes));
        HSDR_CU(cudaMalloc((void **)&r->qr, sizeof(int64_t) * (size_t)io->N));
    }
    if (codes_only)
        HSDR_CU(k->upload_codes(r, io->codes, io->prescale_e)); /* x stays unread: the launch skips the encode */
    else if (hsdr_cu_set_input(r, io->x, err, errlen) != 0)
        goto fail;
    if (hsdr_cu_run_once(r, codes_only ? 1u << HSDR_STAGE_ENCODE : 0, err, errlen) != 0 ||
        hsdr_cu_output(r, io->y_f32, err, errlen) != 0)
        goto fail;
    if (r->A)
        HSDR_CU(cudaMemcpy(io->A, r->A, abytes, cudaMemcpyDeviceToHost));
    if (r->qg) {
        HSDR_CU(cudaMemcpy(io->q_group, r->qg, qgbytes, cudaMemcpyDeviceToHost));
        HSDR_CU(cudaMemcpy(io->q_row, r->qr, sizeof(int64_t) * (size_t)io->N, cudaMemcpyDeviceToHost));
    }
    rc = 0;
fail:
    hsdr_cu_destroy(r);
    return rc;
}
