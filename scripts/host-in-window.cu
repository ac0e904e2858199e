// host-in-window.cu: how much time the host calls that the old cuda.production_cols (now cuda.cols) launch path made
// between its CUDA events (cudaGetDevice, two cudaDeviceGetAttribute, cudaFuncSetAttribute, the occupancy query;
// kernels/cuda/production_cols.cu before the one-engine change) add to an event-timed launch. A streaming read of one
// bonsai2-27b FFN matrix's bytes is timed with and without those calls inside the window, interleaved in rounds, so
// that drift cancels; the calls' own host time is measured too. Not part of the build:
//   nvcc -O2 -arch=sm_90a -o host-in-window scripts/host-in-window.cu && ./host-in-window
#include <chrono>

#include <cuda_runtime.h>

#include "../kernels/cuda/stream.cuh"
#include "bench.cuh"

__global__ void __launch_bounds__(512) read16(const uint4 *p, size_t n, unsigned *sink)
{
    hsdr_read_span(p, n, sink);
}

// The old launch path's queries, as it made them before every launch.
static cudaError_t queries(int *blocks)
{
    int dev = 0, sms = 0, smem = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(read16, cudaFuncAttributeMaxDynamicSharedMemorySize, 24 * 1024)) != cudaSuccess)
        return e;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, read16, 512, 24 * 1024);
}

int main()
{
    const size_t bytes = 19496960, n16 = bytes / 16; // 5120 x 17408 PTQ1_0
    const int copies = 12, rounds = 400;              // cold: 234 MB in rotation, > 3x the 60 MiB L2
    uint8_t *buf;
    unsigned *sink;
    int sms = 0, blocks = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&buf, bytes * copies));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(buf, 1, bytes * copies));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> plain, with, host;
    for (int r = -4; r < rounds; r++)
        for (int variant = 0; variant < 2; variant++) {
            const uint4 *p = (const uint4 *)(buf + (size_t)((2 * (r + 4) + variant) % copies) * bytes);
            CK(cudaEventRecord(a));
            auto t0 = std::chrono::steady_clock::now();
            if (variant)
                CK(queries(&blocks));
            auto t1 = std::chrono::steady_clock::now();
            read16<<<sms * 8, 512>>>(p, n16, sink);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r < 0)
                continue;
            (variant ? with : plain).push_back(ms * 1e3);
            if (variant)
                host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
    std::vector<double> diff(rounds);
    for (int i = 0; i < rounds; i++)
        diff[i] = with[i] - plain[i];
    std::printf("cold 19.5 MB read, %d rounds: launch alone %.2f us, with the queries in the window %.2f us; "
                "per-round difference %.2f us (median); the queries' host time %.2f us (median)\n",
                rounds, median(plain), median(with), median(diff), median(host));
    return 0;
}
