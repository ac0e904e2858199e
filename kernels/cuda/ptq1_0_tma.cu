/* cuda.ptq1_0_tma (our baseline): PTQ1_0 as stored, streamed (tma.cuh: whole passes of rows copied into shared
 * memory ahead of use, activations held in registers), each thread decoding its 28-byte block with
 * the fork's x3 digit steps (common.cuh's hsdr_cu_ptq1_0_sums: byte spread into 16-bit lanes, one multiply and mask
 * per digit, one byte permute per dp4a word). y is bit-identical to cuda.production's.
 *
 * layout  PTQ1_0 as stored: rows back to back, 28 G bytes each; thread t reads words 7t .. 7t + 6 of its pass's
 *         span (conflict-free: 7 is odd).
 * time it hsdr run --filter 'variant=cuda.ptq1_0_tma' (or hsdr profile, which builds a token of it). */
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

struct ptq1_0_tma {
    static unsigned row_bytes(int G)
    {
        return (unsigned)G * HSDR_PTQ1_0_BLOCK;
    }
    static __device__ __forceinline__ float sums(const uint8_t *row, int G, int b, const int32_t act[32], int sumi[4])
    {
        (void)G;
        const uint8_t *blk = row + (size_t)b * HSDR_PTQ1_0_BLOCK;
        hsdr_cu_ptq1_0_sums(blk, [act](int e) { return (int)act[e >> 2]; }, sumi);
        return __half2float(*(const __half *)(blk + 26));
    }
};

static const hsdr_cu_kernels kernels = {1,    hsdr_tma_act_bytes, hsdr_tma_prepare<ptq1_0_tma>, hsdr_tma_launch<ptq1_0_tma>,
                                        NULL, NULL,               NULL};
extern "C" const hsdr_device_ops hsdr_cuda_ptq1_0_tma_ops = HSDR_CU_OPS(kernels);
