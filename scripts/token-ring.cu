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
//   deal rr / even    a read's passes dealt round robin (CTA c takes passes c, c + grid, ...: up to one pass more
//                     than others) or evenly (CTA c its own contiguous 1/grid of the bytes, cut into passes)
//   consumer x r      each pass held for the time a consumer running at r times the SM's share of the 1 GiB read
//                     would take (a spin: the latency of a compute chain, not its instructions); r = 0: none
//   graph, prefetch   one kernel per read (as the harness's token), programmatically dependent, CTAs sized so that
//                     the next read's CTAs fit beside this one's: each requests its first passes, lets the next
//                     kernel launch, and only then waits for the one before
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

// A CTA's place in its sequence of passes: read r, its k-th pass of that read.
struct cursor {
    int r;
    long k;
};

// This CTA's bytes of a read of `bytes` when dealt evenly: [lo, hi), 16-byte boundaries.
static __device__ __forceinline__ void even_span(size_t bytes, size_t *lo, size_t *hi)
{
    const size_t w = (bytes + 15) / 16;
    *lo = w * blockIdx.x / gridDim.x * 16, *hi = w * (blockIdx.x + 1) / gridDim.x * 16;
}

// The passes of read r this CTA takes (deal 0: round robin; 1: even), and where its k-th one starts and how long it is.
static __device__ __forceinline__ long share_of(const reads &R, int r, unsigned chunk, int deal)
{
    if (deal) {
        size_t lo, hi;
        even_span(R.bytes[r], &lo, &hi);
        return (long)((hi - lo + chunk - 1) / chunk);
    }
    const long p = (long)((R.bytes[r] + chunk - 1) / chunk);
    return p > (long)blockIdx.x ? (p - (long)blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
}

static __device__ __forceinline__ unsigned pass_at(const reads &R, int r, long k, unsigned chunk, int deal,
                                                   size_t *off)
{
    size_t end;
    if (deal) {
        size_t lo, hi;
        even_span(R.bytes[r], &lo, &hi);
        *off = lo + (size_t)k * chunk, end = hi;
    } else {
        *off = ((size_t)blockIdx.x + (size_t)k * gridDim.x) * chunk, end = R.bytes[r];
    }
    const size_t n = end - *off < chunk ? end - *off : chunk;
    return (unsigned)((n + 15) / 16 * 16); // the buffers are 256-byte aligned and padded
}

// A consumer's time for n bytes: `spin` clocks a KB (0: none).
static __device__ __forceinline__ void consume_time(unsigned n, unsigned spin)
{
    if (spin) {
        const long long t0 = clock64(), t = (long long)n * spin / 1024;
        while (clock64() - t0 < t)
            ;
    }
}

// mode 0: free, 1: dependent, 2: drained. done[r] counts the CTAs that have consumed all of read r (zeroed per token).
__global__ void ring(const reads R, unsigned chunk, int S, int mode, int deal, unsigned spin, unsigned *done,
                     unsigned *sink)
{
    extern __shared__ __align__(16) uint8_t smem[];
    uint64_t *bar = (uint64_t *)(smem + (size_t)S * chunk);
    const int tid = threadIdx.x;
    cursor in = {0, 0};               // the next pass to request (thread 0)
    long issued = 0, consumed = 0;    // sequence numbers: the stage and parity of pass j are j % S, (j / S) & 1
    auto skip_empty = [&](cursor &c) {
        while (c.r < R.n && c.k >= share_of(R, c.r, chunk, deal))
            c.r++, c.k = 0;
    };
    auto issue = [&]() {
        size_t off;
        const unsigned n16 = pass_at(R, in.r, in.k, chunk, deal, &off);
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
        const long mine = share_of(R, r, chunk, deal);
        for (long k = 0; k < mine; k++) {
            hsdr_bulk_wait(bar + consumed % S, (unsigned)(consumed / S) & 1u);
            acc ^= ((const unsigned *)(smem + (size_t)(consumed % S) * chunk))[tid % (chunk / 4)];
            if (spin) {
                size_t off;
                consume_time(pass_at(R, r, k, chunk, deal, &off), spin);
            }
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

// One read per launch, dealt evenly: the first S passes requested, the next kernel let launch, then the wait for the
// kernel before (prefetch 1) or the wait first (prefetch 0), then the passes consumed as the ring consumes them.
__global__ void one_read(const reads R, int r, unsigned chunk, int S, int prefetch, unsigned spin, unsigned *sink)
{
    extern __shared__ __align__(16) uint8_t smem[];
    uint64_t *bar = (uint64_t *)(smem + (size_t)S * chunk);
    const int tid = threadIdx.x;
    const long mine = share_of(R, r, chunk, 1);
    auto issue = [&](long k) {
        size_t off;
        const unsigned n16 = pass_at(R, r, k, chunk, 1, &off);
        hsdr_bulk_copy(smem + (size_t)(k % S) * chunk, R.p[r] + off, n16, bar + k % S);
    };
    if (tid == 0) {
        hsdr_bulk_init(bar, S);
        if (prefetch)
            for (long k = 0; k < S && k < mine; k++)
                issue(k);
    }
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
    if (tid == 0 && !prefetch)
        for (long k = 0; k < S && k < mine; k++)
            issue(k);
    __syncthreads();
    unsigned acc = 0;
    for (long k = 0; k < mine; k++) {
        hsdr_bulk_wait(bar + k % S, (unsigned)(k / S) & 1u);
        acc ^= ((const unsigned *)(smem + (size_t)(k % S) * chunk))[tid % (chunk / 4)];
        if (spin) {
            size_t off;
            consume_time(pass_at(R, r, k, chunk, 1, &off), spin);
        }
        __syncthreads();
        if (tid == 0 && k + S < mine)
            issue(k + S);
    }
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

// A launch configuration on st, programmatically dependent on the kernel before it when pdl (attr: its storage).
static cudaLaunchConfig_t launch_config(dim3 grid, dim3 block, size_t smem, cudaStream_t st, bool pdl,
                                       cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = st;
    cfg.attrs = attr, cfg.numAttrs = pdl ? 1 : 0;
    return cfg;
}

// One graph of n launches (launch(i) enqueues launch i on st), instantiated.
template <class Launch> static cudaGraphExec_t capture(cudaStream_t st, int n, Launch launch)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n; i++)
        launch(i);
    CK(cudaStreamEndCapture(st, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphDestroy(graph));
    return exec;
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
        cudaGraphExec_t exec = capture(st, R.n, [&](int i) {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = launch_config(dim3((unsigned)sms * 8), dim3(512), 0, st, pdl, &attr);
            CK(cudaLaunchKernelEx(&cfg, plain_read, (const uint4 *)R.p[i], R.bytes[i] / 16, sink, pdl));
        });
        run(pdl ? "graph of 26 plain reads, PDL" : "graph of 26 plain reads", [&] { CK(cudaGraphLaunch(exec, st)); });
        CK(cudaGraphExecDestroy(exec));
    }
    // the consumer's time: r times the SM's share of the 1 GiB read (clocks a KB at the device's clock)
    int khz = 0;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const double sm_bytes_per_clk = gbps * 1e9 / sms / (khz * 1e3);
    auto spin_of = [&](double r) { return r > 0 ? (unsigned)(1024.0 / (sm_bytes_per_clk * r)) : 0u; };
    printf("SM clock %.2f GHz: the SM's share of the read %.1f bytes a clock\n", khz / 1e6, sm_bytes_per_clk);
    struct cfg_t {
        unsigned chunk;
        int S, per_sm;
    };
    static const char *modes[3] = {"free", "dependent", "drained"};
    for (double r : {0.0, 2.0, 1.5, 1.2})
        for (cfg_t c : {cfg_t{32768u, 2, 2}, cfg_t{32768u, 3, 2}, cfg_t{16384u, 6, 2}, cfg_t{32768u, 6, 1}})
            for (int deal = 0; deal < 2; deal++) {
                const size_t smem = (size_t)c.S * c.chunk + 8 * c.S;
                CK(cudaFuncSetAttribute(ring, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                int fit = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, ring, 256, smem));
                if (fit < c.per_sm)
                    continue;
                // a CTA of an SM holding per_sm of them sees 1 / per_sm of the SM's share
                const unsigned spin = spin_of(r) * c.per_sm;
                for (int mode = 0; mode < 3; mode++) {
                    if (r > 0 && mode == 2)
                        continue;
                    char name[96];
                    snprintf(name, sizeof name, "ring %s, %uK x %d, %d/SM, %s, consumer x%.1f", modes[mode],
                             c.chunk / 1024, c.S, c.per_sm, deal ? "even" : "rr", r);
                    run(name, [&] {
                        ring<<<sms * c.per_sm, 256, smem, st>>>(R, c.chunk, c.S, mode, deal, spin, done, sink);
                    });
                }
            }
    // one kernel per read in a graph, each leaving room for the next one's CTAs
    for (double r : {0.0, 2.0, 1.5})
        for (cfg_t c : {cfg_t{32768u, 3, 1}, cfg_t{16384u, 4, 2}, cfg_t{32768u, 2, 1}})
            for (int prefetch = 0; prefetch < 2; prefetch++) {
                const size_t smem = (size_t)c.S * c.chunk + 8 * c.S;
                CK(cudaFuncSetAttribute(one_read, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                int fit = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, one_read, 256, smem));
                if (fit < 2 * c.per_sm)
                    continue;
                const unsigned spin = spin_of(r) * c.per_sm;
                cudaGraphExec_t exec = capture(st, R.n, [&](int i) {
                    cudaLaunchAttribute attr;
                    const cudaLaunchConfig_t cfg =
                        launch_config(dim3((unsigned)(sms * c.per_sm)), dim3(256), smem, st, true, &attr);
                    CK(cudaLaunchKernelEx(&cfg, one_read, R, i, c.chunk, c.S, prefetch, spin, sink));
                });
                char name[96];
                snprintf(name, sizeof name, "graph, %s, %uK x %d, %d/SM, consumer x%.1f",
                         prefetch ? "prefetch" : "wait first", c.chunk / 1024, c.S, c.per_sm, r);
                run(name, [&] { CK(cudaGraphLaunch(exec, st)); });
                CK(cudaGraphExecDestroy(exec));
            }
    return 0;
}
