// token-ring.cu: the data path of a whole-token persistent kernel (docs/perf-notes.md, issue 18 step 4's plan) alone,
// beside one graph of plain reads: how close can a token's 26 weight reads (bonsai2-27b, 4 layers + head, PTQ1_0
// bytes) come to the floor when one persistent kernel walks them as one sequence of passes per CTA, the S-stage ring
// of bulk copies (cp.async.bulk + mbarrier, as kernels/cuda/tma.cuh) refilled across the GEMV boundaries? Nothing is
// computed on the bytes but one word per thread and pass (consumed as the kernels consume: wait, read, barrier,
// refill).
//   graph             26 plain-read launches captured in one CUDA graph (the harness's token)
//   graph, PDL        the same, each launch programmatically dependent, waiting for the one before at its start
//   ring, free        one persistent kernel, no dependency between the reads (the upper bound)
//   ring, dependent   one persistent kernel; before consuming its first pass of read i + 1, a CTA waits until every
//                     CTA has consumed all of read i (a decoder's dependency), while read i + 1's first passes are
//                     already in flight (the ring does not stop at the boundary)
//   ring, drained     the same dependency, but no pass of read i + 1 requested before the wait (the ring drains)
// Per token, cold (611 MB per token: each read is evicted before it comes again), event-timed, median of 30 tokens;
// the floor is the token's bytes at the 1 GiB plain read measured in the same run.
// Build and run (a machine with an NVIDIA GPU, sm_90):
//   nvcc -O3 -arch=sm_90a -o token-ring scripts/token-ring.cu && ./token-ring
#include <stdint.h>

#include "../kernels/cuda/stream.cuh"
#include "bench.cuh"

enum { MAX_READS = 32 };

struct reads {
    const uint8_t *p[MAX_READS];
    size_t bytes[MAX_READS];
    int n;
};

__global__ void plain_read(const uint4 *p, size_t n, unsigned *sink, int pdl)
{
    if (pdl) {
        cudaTriggerProgrammaticLaunchCompletion();
        cudaGridDependencySynchronize();
    }
    hsdr_read_span(p, n, sink);
}

// A CTA's place in its sequence of passes: read r, its k-th pass of that read (passes of read r are dealt round
// robin: CTA c takes c, c + grid, ...).
struct cursor {
    int r;
    long k;
};

static __device__ __forceinline__ long passes_of(const reads &R, int r, unsigned chunk)
{
    return (long)((R.bytes[r] + chunk - 1) / chunk);
}

static __device__ __forceinline__ long share_of(const reads &R, int r, unsigned chunk)
{
    const long p = passes_of(R, r, chunk);
    return p > (long)blockIdx.x ? (p - (long)blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
}

// mode 0: free, 1: dependent, 2: drained. done[r] counts the CTAs that have consumed all of read r (zeroed per token).
__global__ void ring(const reads R, unsigned chunk, int S, int mode, unsigned *done, unsigned *sink)
{
    extern __shared__ __align__(16) uint8_t smem[];
    uint64_t *bar = (uint64_t *)(smem + (size_t)S * chunk);
    const int tid = threadIdx.x;
    cursor in = {0, 0};               // the next pass to request (thread 0)
    long issued = 0, consumed = 0;    // sequence numbers: the stage and parity of pass j are j % S, (j / S) & 1
    auto skip_empty = [&](cursor &c) {
        while (c.r < R.n && c.k >= share_of(R, c.r, chunk))
            c.r++, c.k = 0;
    };
    auto issue = [&]() {
        const long pass = (long)blockIdx.x + in.k * gridDim.x;
        const size_t off = (size_t)pass * chunk;
        const unsigned n = (unsigned)(R.bytes[in.r] - off < chunk ? R.bytes[in.r] - off : chunk);
        const unsigned n16 = (n + 15) / 16 * 16; // the buffers are 256-byte aligned and padded
        hsdr_bulk_copy(smem + (size_t)(issued % S) * chunk, R.p[in.r] + off, n16, bar + issued % S);
        issued++, in.k++;
        skip_empty(in);
    };
    if (tid == 0)
        hsdr_bulk_init(bar, S);
    skip_empty(in);
    __syncthreads();
    unsigned acc = 0;
    int waited = 0; // reads whose predecessor this CTA has waited for
    for (int r = 0; r < R.n; r++) {
        if (mode != 0 && r > 0) { // a decoder's dependency: all of read r - 1 consumed by every CTA
            if (tid == 0) {
                while (hsdr_ld_acquire_gpu(done + r - 1) < gridDim.x)
                    ;
            }
            __syncthreads();
            waited = r;
        }
        // request up to S passes ahead: in mode 2 never past the reads this CTA has waited for
        if (tid == 0)
            while (in.r < R.n && issued < consumed + S && (mode != 2 || in.r <= waited))
                issue();
        const long mine = share_of(R, r, chunk);
        for (long k = 0; k < mine; k++) {
            hsdr_bulk_wait(bar + consumed % S, (unsigned)(consumed / S) & 1u);
            acc ^= ((const unsigned *)(smem + (size_t)(consumed % S) * chunk))[tid % (chunk / 4)];
            __syncthreads(); // the stage is read
            consumed++;
            if (tid == 0)
                while (in.r < R.n && issued < consumed + S && (mode != 2 || in.r <= waited))
                    issue();
        }
        if (tid == 0) {
            __threadfence();
            atomicAdd(done + r, 1u);
        }
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

int main()
{
    // bonsai2-27b, layers 0..3 (three Gated-DeltaNet, one attention) and the head: K x N of each GEMV
    static const int kn[][2] = {
        {5120, 10240}, {5120, 6144},  {6144, 5120},  {5120, 17408}, {5120, 17408}, {17408, 5120}, // layer 0
        {5120, 10240}, {5120, 6144},  {6144, 5120},  {5120, 17408}, {5120, 17408}, {17408, 5120}, // layer 1
        {5120, 10240}, {5120, 6144},  {6144, 5120},  {5120, 17408}, {5120, 17408}, {17408, 5120}, // layer 2
        {5120, 12288}, {5120, 1024},  {5120, 1024},  {6144, 5120},  {5120, 17408}, {5120, 17408},
        {17408, 5120}, // layer 3 (attention)
        {5120, 248320}, // the head
    };
    reads R = {};
    R.n = (int)(sizeof kn / sizeof kn[0]);
    size_t total = 0, alloc = 0;
    for (int i = 0; i < R.n; i++) {
        R.bytes[i] = (size_t)kn[i][0] / 128 * kn[i][1] * 28; // PTQ1_0: 28 bytes per 128 weights
        total += R.bytes[i];
        alloc += (R.bytes[i] + 255) / 256 * 256;
    }
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    uint8_t *buf;
    unsigned *sink, *done;
    CK(cudaMalloc(&buf, alloc));
    CK(cudaMemset(buf, 1, alloc));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMalloc(&done, sizeof(unsigned) * MAX_READS));
    for (size_t i = 0, off = 0; i < (size_t)R.n; i++) {
        R.p[i] = buf + off;
        off += (R.bytes[i] + 255) / 256 * 256;
    }
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    // the 1 GiB plain read: the ceiling the floor is taken at
    float gbps;
    {
        const size_t big = (size_t)1 << 30;
        uint8_t *g;
        CK(cudaMalloc(&g, big));
        CK(cudaMemset(g, 1, big));
        std::vector<float> t;
        for (int rep = 0; rep < 13; rep++) {
            CK(cudaEventRecord(a, st));
            plain_read<<<sms * 8, 512, 0, st>>>((const uint4 *)g, big / 16, sink, 0);
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (rep >= 3)
                t.push_back(ms);
        }
        gbps = big / (median(t) * 1e-3f) / 1e9f;
        CK(cudaFree(g));
    }
    const double floor_us = total / (gbps * 1e9) * 1e6;
    printf("token: %d reads, %.1f MB; 1 GiB plain read %.0f GB/s; floor %.1f us\n", R.n, total / 1e6, gbps, floor_us);
    printf("%-48s %10s %10s\n", "method (per token, cold)", "us", "% floor");
    auto run = [&](const char *name, auto launch) {
        std::vector<float> t;
        for (int rep = 0; rep < 33; rep++) {
            CK(cudaMemsetAsync(done, 0, sizeof(unsigned) * MAX_READS, st));
            CK(cudaEventRecord(a, st));
            launch();
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (rep >= 3)
                t.push_back(ms);
        }
        const float us = 1e3f * median(t);
        printf("%-48s %10.1f %10.1f\n", name, us, 100.0 * floor_us / us);
    };
    for (int pdl = 0; pdl < 2; pdl++) { // the harness's token: one graph of launches
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < R.n; i++) {
            cudaLaunchAttribute attr;
            attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr.val.programmaticStreamSerializationAllowed = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3((unsigned)sms * 8), cfg.blockDim = dim3(512), cfg.stream = st;
            cfg.attrs = &attr, cfg.numAttrs = pdl ? 1 : 0;
            CK(cudaLaunchKernelEx(&cfg, plain_read, (const uint4 *)R.p[i], R.bytes[i] / 16, sink, pdl));
        }
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        run(pdl ? "graph of 26 plain reads, PDL" : "graph of 26 plain reads", [&] { CK(cudaGraphLaunch(exec, st)); });
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
    }
    static const char *modes[3] = {"free", "dependent", "drained"};
    for (unsigned chunk : {8192u, 16384u, 32768u})
        for (int S : {2, 4})
            for (int per_sm : {1, 2}) {
                const size_t smem = (size_t)S * chunk + 8 * S;
                if ((size_t)per_sm * smem > 220 * 1024)
                    continue;
                CK(cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                int fit = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, ring, 256, smem));
                if (fit < per_sm)
                    continue;
                for (int mode = 0; mode < 3; mode++) {
                    char name[96];
                    snprintf(name, sizeof name, "ring %s, %uK x %d stages, %d CTA/SM", modes[mode], chunk / 1024, S,
                             per_sm);
                    run(name, [&] { ring<<<sms * per_sm, 256, smem, st>>>(R, chunk, S, mode, done, sink); });
                }
            }
    return 0;
}
