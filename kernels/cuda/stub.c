/* The CUDA entry points of a build without CUDA (no nvcc, or HSDR_CUDA=OFF): the variants stay in the registry and
 * say why they cannot run. */
#include <stdio.h>

#include "cuda.h"

static const char reason[] = "built without CUDA (nvcc not found, or HSDR_CUDA=OFF)";

const char *hsdr_cuda_unavailable(void)
{
    return reason;
}

const char *hsdr_cuda_production_unavailable(void)
{
    return reason;
}

const char *hsdr_cuda_tma_unavailable(void)
{
    return reason;
}

int hsdr_cuda_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    (void)v, (void)io;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

int hsdr_cuda_cols(const uint8_t *W, const float *X, int K, int N, int ncols, float *Y, char *err,
                              size_t errlen)
{
    (void)W, (void)X, (void)K, (void)N, (void)ncols, (void)Y;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

int hsdr_cuda_cols_supported(int K, int N, int ncols, char *err, size_t errlen)
{
    (void)K, (void)N, (void)ncols;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

/* never called: the variants are unavailable */
const hsdr_device_ops hsdr_cuda_production_ops = {0};
const hsdr_device_ops hsdr_cuda_production_pt_ops = {0};
const hsdr_device_ops hsdr_cuda_planar2_ops = {0};
const hsdr_device_ops hsdr_cuda_planar2_tma_ops = {0};
const hsdr_device_ops hsdr_cuda_planar2_tma_fused_ops = {0};
const hsdr_device_ops hsdr_cuda_ptq1_0_tma_ops = {0};
const hsdr_device_ops hsdr_cuda_ptq1_0_tma_fused_ops = {0};
const hsdr_device_ops hsdr_cuda_planar2_ring_ops = {0};
const hsdr_device_ops hsdr_cuda_planar2_wr_ops = {0};
const hsdr_device_ops hsdr_cuda_ptq1_0_ring_ops = {0};
const hsdr_device_ops hsdr_cuda_lanes8_ops = {0};
const hsdr_device_ops hsdr_cuda_cols_ops = {0};
const hsdr_device_ops hsdr_cuda_direct_ops = {0};
const hsdr_device_ops hsdr_cuda_direct_mma_ops = {0};
const hsdr_device_ops hsdr_cuda_stateset_ops = {0};
const hsdr_device_ops hsdr_cuda_q1516_ops = {0};
const hsdr_device_ops hsdr_cuda_direct_mma_p2_ops = {0};
const hsdr_device_ops hsdr_cuda_q1516_p2_ops = {0};
