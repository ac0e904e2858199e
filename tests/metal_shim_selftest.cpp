// The CPU shim's own semantics (kernels/metal/shim/metal_shim.h), checked on small kernels written like the .metal
// ones: simd_sum, simd_min, simd_any, simd_ballot, simd_shuffle, simd_shuffle_xor and threadgroup barriers over two
// simdgroups; with the argument "divergent", a kernel whose lanes reach different collectives must abort with the
// shim's message (the test expects it) instead of hanging or passing.
#include <cstdio>
#include <cstring>
#include <vector>

#define HSDR_METAL_SHIM 1
#include "../kernels/metal/shim/metal_shim.h"

static int failures;
#define EXPECT(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            std::fprintf(stderr, "metal_shim_selftest: " __VA_ARGS__);                                             \
            std::fputc('\n', stderr);                                                                              \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

kernel void collectives(device int *out, uint lid, uint lane, uint sid)
{
    threadgroup int shared_sum[2];
    const int s = simd_sum(int(lane) + 1);                       // 1 + ... + 32 = 528
    const uint m = simd_min(uint(100 - lane));                   // 69
    const bool any = simd_any(lane == 31u && sid == 1u);         // only in simdgroup 1
    const ulong v = static_cast<simd_vote::vote_t>(simd_ballot((lane & 1u) == 0u));
    const int sh = simd_shuffle(int(lane) * 10, ushort(5));      // 50
    const int x = simd_shuffle_xor(int(lane), ushort(3));        // lane ^ 3
    if (lane == 0u)
        shared_sum[sid] = s + int(sid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid * 8 + 0] = s;
    out[lid * 8 + 1] = int(m);
    out[lid * 8 + 2] = any ? 1 : 0;
    out[lid * 8 + 3] = int(v & 0xffffffffu);
    out[lid * 8 + 4] = sh;
    out[lid * 8 + 5] = x;
    out[lid * 8 + 6] = shared_sum[1 - sid]; // the other simdgroup's value, after the barrier
    out[lid * 8 + 7] = 0;
}

kernel void divergent(device int *out, uint lid, uint lane, uint sid)
{
    out[lid] = lane < 16u ? simd_sum(1) : int(simd_min(uint(lane))); // two different collectives at once
}

#undef kernel
#undef device
#undef constant
#undef thread
#undef threadgroup

struct job {
    void (*k)(int *, uint, uint, uint);
    int *out;
    hsdr_shim::simdgroup *simd;
    hsdr_shim::barrier *group;
    unsigned lid;
};

static void *run(void *arg)
{
    const job &j = *static_cast<const job *>(arg);
    hsdr_shim::context &c = hsdr_shim::self();
    c.simd = j.simd;
    c.group_bar = j.group;
    c.lane = j.lid % 32;
    j.k(j.out, j.lid, j.lid % 32, j.lid / 32);
    return nullptr;
}

static void launch(void (*k)(int *, uint, uint, uint), int *out)
{
    std::vector<hsdr_shim::simdgroup> simds(2);
    hsdr_shim::barrier group;
    group.init(64);
    for (auto &s : simds)
        s.bar.init(32);
    std::vector<job> jobs(64);
    std::vector<pthread_t> ids(64);
    for (unsigned i = 0; i < 64; i++) {
        jobs[i] = {k, out, &simds[i / 32], &group, i};
        pthread_create(&ids[i], nullptr, run, &jobs[i]);
    }
    for (auto &t : ids)
        pthread_join(t, nullptr);
}

int main(int argc, char **argv)
{
    std::vector<int> out(64 * 8, -1);
    if (argc > 1 && std::strcmp(argv[1], "divergent") == 0) {
        launch(divergent, out.data());
        std::printf("metal_shim_selftest: the divergent kernel was not stopped\n");
        return 1;
    }
    launch(collectives, out.data());
    for (unsigned lid = 0; lid < 64; lid++) {
        const int *o = &out[lid * 8];
        const unsigned lane = lid % 32, sid = lid / 32;
        EXPECT(o[0] == 528, "thread %u: simd_sum %d, expected 528", lid, o[0]);
        EXPECT(o[1] == 69, "thread %u: simd_min %d, expected 69", lid, o[1]);
        EXPECT(o[2] == (sid == 1 ? 1 : 0), "thread %u: simd_any %d", lid, o[2]);
        EXPECT((unsigned)o[3] == 0x55555555u, "thread %u: simd_ballot 0x%08x, expected 0x55555555", lid, (unsigned)o[3]);
        EXPECT(o[4] == 50, "thread %u: simd_shuffle %d, expected 50", lid, o[4]);
        EXPECT(o[5] == (int)(lane ^ 3u), "thread %u: simd_shuffle_xor %d, expected %u", lid, o[5], lane ^ 3u);
        EXPECT(o[6] == 528 + (int)(1 - sid), "thread %u: the other simdgroup's value %d after the barrier", lid,
               o[6]);
    }
    std::printf("metal_shim_selftest: %d failures\n", failures);
    return failures ? 1 : 0;
}
