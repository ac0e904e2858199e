/* The part of the streamed design (tma.cuh: idea, layout, stages, how to time it) that is not per format: its encode
 * kernel (the knobs: tma_knobs.c). */
#include "tma.cuh"

__global__ void __launch_bounds__(256) hsdr_tma_quantize(const float *x, int K, int8_t *q)
{
    cudaTriggerProgrammaticLaunchCompletion(); /* the mat-vec may launch and start its weight copies now */
    cudaGridDependencySynchronize();           /* x is the previous kernel's output */
    const int j = (int)blockIdx.x * 8 + (int)(threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (j >= K / 32) /* whole warps */
        return;
    float d;
    int v, s;
    hsdr_cu_q8_1_lane(x[32 * j + lane], d, v, s);
    q[32 * j + lane] = (int8_t)v;
    if (lane == 0) {
        ((float *)(q + K))[j] = __half2float(__float2half_rn(d));
        ((int *)(q + K + K / 32 * 4))[j] = s;
    }
}
