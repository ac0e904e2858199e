// tma-stream.cu: the data path of the streamed kernels (kernels/cuda/tma.cuh) alone, beside the plain read that
// `hsdr bandwidth` and the matrix's ceilings use: how fast can whole passes bulk-copied into shared memory
// (cp.async.bulk completing on an mbarrier, S passes in flight per CTA, CTAs persistent) move bytes per launch, for
// which stage size, stage count and CTAs per SM. Nothing is computed on the bytes but one word per thread (so that the
// copy is consumed as the kernels consume it: wait, read, barrier, refill).
// Per launch, cold (each launch reads the next of enough copies to exceed 4x the L2), event-timed like the matrix,
// median of 60; sizes: ffn_gate's 2-bit form (23.7 MB) and 1 GiB.
// Build and run (a machine with an NVIDIA GPU, sm_90):
//   nvcc -O3 -arch=sm_90a -o tma-stream scripts/tma-stream.cu && ./tma-stream
#include <stdint.h>

#include "../kernels/cuda/stream.cuh"
#include "bench.cuh"

__global__ void plain_read(const uint4 *p, size_t n, unsigned *sink)
{
    hsdr_read_span(p, n, sink);
}

// passes of `chunk` bytes (a multiple of 16), dealt round robin; S in flight per CTA
__global__ void tma_read(const uint8_t *src, size_t bytes, unsigned chunk, int S, unsigned *sink)
{
    extern __shared__ __align__(16) uint8_t smem[];
    uint64_t *bar = (uint64_t *)(smem + (size_t)S * chunk);
    const int tid = threadIdx.x;
    const long passes = (long)((bytes + chunk - 1) / chunk);
    const long iters = (passes - blockIdx.x + gridDim.x - 1) / gridDim.x;
    auto issue = [&](long i) {
        const long pass = blockIdx.x + i * gridDim.x;
        const size_t off = (size_t)pass * chunk;
        const unsigned n = (unsigned)(bytes - off < chunk ? bytes - off : chunk);
        hsdr_bulk_copy(smem + (size_t)(i % S) * chunk, src + off, n, bar + i % S);
    };
    if (tid == 0) {
        hsdr_bulk_init(bar, S);
        for (long i = 0; i < S && i < iters; i++)
            issue(i);
    }
    __syncthreads();
    unsigned acc = 0;
    for (long i = 0; i < iters; i++) {
        hsdr_bulk_wait(bar + i % S, (unsigned)(i / S) & 1u);
        acc ^= ((const unsigned *)(smem + (size_t)(i % S) * chunk))[tid % (chunk / 4)];
        __syncthreads();
        if (tid == 0 && i + S < iters)
            issue(i + S);
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

int main()
{
    int sms = 0, l2 = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const size_t sizes[2] = {23674880, (size_t)1 << 30};
    printf("%-40s %12s %10s %10s\n", "kernel (per launch, cold)", "bytes", "us", "GB/s");
    for (size_t bytes : sizes) {
        const size_t stride = (bytes + 255) / 256 * 256;
        const int copies = (int)std::max<size_t>(2, (4 * (size_t)l2 + bytes - 1) / bytes + 1);
        uint8_t *buf;
        CK(cudaMalloc(&buf, stride * copies));
        CK(cudaMemset(buf, 1, stride * copies));
        int copy = 0;
        auto run = [&](const char *name, auto launch) {
            std::vector<float> t;
            for (int rep = 0; rep < 63; rep++) {
                CK(cudaEventRecord(a));
                launch(buf + (size_t)copy * stride);
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                CK(cudaGetLastError());
                copy = (copy + 1) % copies;
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                if (rep >= 3)
                    t.push_back(ms);
            }
            const float ms = median(t);
            printf("%-40s %12zu %10.2f %10.1f\n", name, bytes, 1e3 * ms, bytes / (ms * 1e-3) / 1e9);
        };
        run("plain read (hsdr's: 8 x 512 per SM)", [&](const uint8_t *p) {
            plain_read<<<sms * 8, 512>>>((const uint4 *)p, bytes / 16, sink);
        });
        for (unsigned chunk : {4096u, 8192u, 16384u, 32768u})
            for (int S : {2, 4, 8})
                for (int per_sm : {1, 2, 4}) {
                    const size_t smem = (size_t)S * chunk + 8 * S;
                    if (smem > 200 * 1024 || (size_t)per_sm * smem > 220 * 1024)
                        continue;
                    CK(cudaFuncSetAttribute(tma_read, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                    char name[64];
                    snprintf(name, sizeof name, "tma chunk %uK x %d stages, %d CTA/SM", chunk / 1024, S, per_sm);
                    const long passes = (long)((bytes + chunk - 1) / chunk);
                    const unsigned grid = (unsigned)std::min<long>(passes, (long)sms * per_sm);
                    run(name, [&](const uint8_t *p) { tma_read<<<grid, 256, smem>>>(p, bytes, chunk, S, sink); });
                }
        CK(cudaFree(buf));
    }
    return 0;
}
