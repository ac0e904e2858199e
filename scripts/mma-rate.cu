// mma-rate.cu: the sustained rate of the int8 tensor-core instruction cuda.direct_mma and cuda.q1516 issue
// (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, and the u8 x s8 form a 16-column layout would use), against the
// H200's dense int8 peak: how many int8 multiply-adds a second the SMs sustain when every warp does nothing else
// (independent accumulators, operands in registers). docs/perf-notes.md (issue 18, item 4) needs the number to say
// whether the tensor pipe or the issue slots bound direct_mma: 32 MACs a weight at 2.0e13 PTQ1_0 weights a second.
// Build and run (a machine with an NVIDIA GPU, sm_80 or newer):
//   nvcc -O3 -arch=sm_90a -o mma-rate scripts/mma-rate.cu && ./mma-rate
#include <stdint.h>

#include "bench.cuh"

enum { CHAINS = 8, ITERS = 4096 };

template <bool U8>
static __device__ __forceinline__ void mma(int c[4], const uint32_t a[4], const uint32_t b[2])
{
    if (U8)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// CHAINS independent accumulators per warp, ITERS rounds; the sum is stored so nothing is dropped
template <bool U8>
__global__ void rate(uint32_t seed, int *out)
{
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; i++)
        a[i] = seed * (threadIdx.x + 7 * i + 1);
    b[0] = seed ^ threadIdx.x, b[1] = seed + threadIdx.x;
    int c[CHAINS][4] = {};
    for (int it = 0; it < ITERS; it++)
#pragma unroll
        for (int k = 0; k < CHAINS; k++)
            mma<U8>(c[k], a, b);
    int s = 0;
    for (int k = 0; k < CHAINS; k++)
        s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main()
{
    int sms = 0, clock_khz = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    int *out;
    CK(cudaMalloc(&out, sizeof(int) * sms * 32 * 1024));
    printf("%d SMs, %.2f GHz max clock; m16n8k32 = 4096 MACs\n", sms, clock_khz / 1e6);
    for (int u8 = 0; u8 < 2; u8++)
        for (int warps : {4, 8, 16, 32}) {
            auto launch = [&] {
                if (u8)
                    rate<true><<<sms * 4, 32 * warps / 4>>>(12345u, out);
                else
                    rate<false><<<sms * 4, 32 * warps / 4>>>(12345u, out);
            };
            launch(); // warm
            CK(cudaEventRecord(a));
            launch();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            const double macs = (double)sms * warps * ITERS * CHAINS * 4096.0;
            printf("%s x s8, %2d warps/SM: %8.1f TMAC/s = %7.1f TOPS (dense int8 peak of the H200: 1979 TOPS)\n",
                   u8 ? "u8" : "s8", warps, macs / (ms * 1e-3) / 1e12, 2 * macs / (ms * 1e-3) / 1e12);
        }
    return 0;
}
