/* The host side every CUDA variant shares: whether a device can run the kernels (one check, cached), the device ops
 * of kernel.h (weight copies, events, output), the checking interface through the timed path, and the device's
 * plain streaming-read bandwidth. */
#include <stdio.h>
#include <stdlib.h>

#include "common.cuh"
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

/* ---- the shared device ops of the CUDA variants ---- */

static size_t round256(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

extern "C" void hsdr_cu_destroy(hsdr_device_run *r)
{
    if (!r)
        return;
    cudaFree(r->wblock);
    cudaFree(r->x);
    cudaFree(r->y);
    cudaFree(r->act);
    cudaFree(r->A);
    cudaFree(r->qg);
    cudaFree(r->qr);
    if (r->start)
        cudaEventDestroy(r->start);
    if (r->stop)
        cudaEventDestroy(r->stop);
    free(r);
}

extern "C" int hsdr_cu_create(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                              hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen)
{
    hsdr_device_run *r = (hsdr_device_run *)calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    r->K = e->K, r->N = e->N, r->R = e->R, r->F = e->flns_F, r->b = e->flns_b;
    r->k = (const hsdr_cu_kernels *)v->device->impl;
    r->ncopies = ncopies;
    r->wbytes = (size_t)e->N * (e->K / 128) * HSDR_PTQ1_0_BLOCK;
    r->wstride = round256(r->wbytes);
    HSDR_CU(cudaMalloc((void **)&r->wblock, r->wstride * (size_t)ncopies));
    HSDR_CU(cudaMalloc((void **)&r->x, sizeof(float) * (size_t)e->K));
    HSDR_CU(cudaMalloc((void **)&r->y, sizeof(float) * (size_t)e->N));
    HSDR_CU(cudaMalloc(&r->act, r->k->act_bytes(e->K)));
    HSDR_CU(cudaEventCreate(&r->start));
    HSDR_CU(cudaEventCreate(&r->stop));
    HSDR_CU(cudaMemcpy(r->wblock, ptq1_0, r->wbytes, cudaMemcpyHostToDevice));
    for (int c = 1; c < ncopies; c++)
        HSDR_CU(cudaMemcpy(r->wblock + (size_t)c * r->wstride, r->wblock, r->wbytes, cudaMemcpyDeviceToDevice));
    HSDR_CU(cudaDeviceSynchronize());
    *convert_ns = 0.0; /* these kernels read PTQ1_0 as stored */
    *footprint = r->wbytes;
    *run = r;
    return 0;
fail:
    hsdr_cu_destroy(r);
    return -1;
}

extern "C" int hsdr_cu_time(hsdr_device_run *r, const float *x, int copy, int stage, unsigned skip, unsigned twice,
                            double *ns, char *err, size_t errlen)
{
    float ms = 0.0f;
    HSDR_CU(cudaMemcpy(r->x, x, sizeof(float) * (size_t)r->K, cudaMemcpyHostToDevice)); /* not timed */
    HSDR_CU(cudaEventRecord(r->start));
    HSDR_CU(r->k->launch(r, r->wblock + (size_t)copy * r->wstride, stage, skip, twice));
    HSDR_CU(cudaEventRecord(r->stop));
    HSDR_CU(cudaEventSynchronize(r->stop));
    HSDR_CU(cudaGetLastError()); /* a fault inside the kernels */
    HSDR_CU(cudaEventElapsedTime(&ms, r->start, r->stop));
    *ns = (double)ms * 1e6;
    return 0;
fail:
    return -1;
}

extern "C" int hsdr_cu_output(hsdr_device_run *r, float *y, char *err, size_t errlen)
{
    HSDR_CU(cudaMemcpy(y, r->y, sizeof(float) * (size_t)r->N, cudaMemcpyDeviceToHost));
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

/* The plain streaming read: 16-byte loads, grid-stride; the XOR of everything read is stored only when it equals a
 * value it cannot have in practice, so the loads cannot be dropped. */
__global__ void hsdr_cu_read_kernel(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

extern "C" int hsdr_cu_read_bandwidth(size_t bytes, int cold, double *bytes_per_s, char *err, size_t errlen)
{
    enum { REPS = 30 };
    const size_t stride = round256(bytes), n = bytes / 16;
    const int copies = cold ? (int)(3 * hsdr_cu_l2_bytes() / bytes + 2) : 1;
    uint8_t *buf = NULL;
    unsigned *sink = NULL;
    cudaEvent_t a = NULL, b = NULL;
    float best[REPS];
    int rc = -1, sms = 0, dev = 0;
    HSDR_CU(cudaGetDevice(&dev));
    HSDR_CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    HSDR_CU(cudaMalloc((void **)&buf, stride * (size_t)copies));
    HSDR_CU(cudaMalloc((void **)&sink, sizeof(unsigned)));
    HSDR_CU(cudaMemset(buf, 1, stride * (size_t)copies));
    HSDR_CU(cudaEventCreate(&a));
    HSDR_CU(cudaEventCreate(&b));
    for (int rep = -2; rep < REPS; rep++) { /* two warm-ups */
        const uint4 *p = (const uint4 *)(buf + (size_t)((rep + 2) % copies) * stride);
        HSDR_CU(cudaEventRecord(a));
        hsdr_cu_read_kernel<<<sms * 8, 512>>>(p, n, sink);
        HSDR_CU(cudaEventRecord(b));
        HSDR_CU(cudaEventSynchronize(b));
        HSDR_CU(cudaGetLastError());
        if (rep >= 0)
            HSDR_CU(cudaEventElapsedTime(&best[rep], a, b));
    }
    /* the median launch */
    for (int i = 1; i < REPS; i++)
        for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
            float t = best[j];
            best[j] = best[j - 1], best[j - 1] = t;
        }
    *bytes_per_s = (double)(n * 16) / (best[REPS / 2] * 1e-3);
    rc = 0;
fail:
    cudaFree(buf);
    cudaFree(sink);
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    return rc;
}

extern "C" int hsdr_cuda_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const hsdr_cu_kernels *k = (const hsdr_cu_kernels *)v->device->impl;
    const bool codes_only = !io->x;
    if (hsdr_device_io_check(io, k->upload_codes != NULL, err, errlen) != 0)
        return -1;
    hsdr_exec e = {};
    e.K = io->K, e.N = io->N, e.R = 1, e.flns_F = io->flns_F, e.flns_b = io->flns_b;
    hsdr_device_run *r = NULL;
    double convert_ns, ns;
    size_t footprint;
    const size_t abytes = sizeof(int32_t) * (size_t)io->N * (io->K / 128) * 8;
    const size_t qgbytes = sizeof(int64_t) * (size_t)io->N * (io->K / 128);
    int rc = -1;
    float *zeros = NULL;
    if (hsdr_cu_create(v, &e, io->weights, 1, &r, &convert_ns, &footprint, err, errlen) != 0)
        return -1;
    if ((v->outputs & HSDR_OUT_A) && io->A)
        HSDR_CU(cudaMalloc((void **)&r->A, abytes));
    if ((v->outputs & HSDR_OUT_Q1516) && io->q_group && io->q_row) {
        HSDR_CU(cudaMalloc((void **)&r->qg, qgbytes));
        HSDR_CU(cudaMalloc((void **)&r->qr, sizeof(int64_t) * (size_t)io->N));
    }
    if (codes_only) {
        /* x is not used once the codes are given; hsdr_cu_time still uploads K values */
        zeros = (float *)calloc((size_t)io->K, sizeof(float));
        if (!zeros) {
            snprintf(err, errlen, "out of host memory");
            goto fail;
        }
        HSDR_CU(k->upload_codes(r, io->codes, io->prescale_e));
    }
    if (hsdr_cu_time(r, codes_only ? zeros : io->x, 0, -1, codes_only ? 1u << HSDR_STAGE_ENCODE : 0, 0, &ns, err,
                     errlen) != 0 ||
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
    free(zeros);
    hsdr_cu_destroy(r);
    return rc;
}

extern "C" int hsdr_cu_token(hsdr_device_run **runs, int n, int reps, double *samples_ns, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t a = NULL, b = NULL;
    cudaError_t launched = cudaSuccess;
    float ms = 0.0f;
    int rc = -1;
    HSDR_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    HSDR_CU(cudaEventCreate(&a));
    HSDR_CU(cudaEventCreate(&b));
    HSDR_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n && launched == cudaSuccess; i++) {
        runs[i]->stream = s;
        launched = runs[i]->k->launch(runs[i], runs[i]->wblock, -1, 0, 0);
        runs[i]->stream = 0;
    }
    HSDR_CU(cudaStreamEndCapture(s, &graph)); /* ends the capture also after a failed launch */
    HSDR_CU(launched);
    HSDR_CU(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = -2; rep < reps; rep++) { /* two warm-ups */
        HSDR_CU(cudaEventRecord(a, s));
        HSDR_CU(cudaGraphLaunch(exec, s));
        HSDR_CU(cudaEventRecord(b, s));
        HSDR_CU(cudaEventSynchronize(b));
        HSDR_CU(cudaGetLastError());
        HSDR_CU(cudaEventElapsedTime(&ms, a, b));
        if (rep >= 0)
            samples_ns[rep] = (double)ms * 1e6;
    }
    rc = 0;
fail:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (s)
        cudaStreamDestroy(s);
    return rc;
}
