// The CPU shim: enough of the Metal Shading Language for the hsdr kernels (kernels/metal/*.metal) to compile as C++
// and run on the CPU, so the test suite validates the very same sources against the vectors on a machine without
// Apple hardware. Model: every thread of a threadgroup is an OS thread; threadgroups run one after another (so
// `threadgroup` variables are function statics, shared by the threads of the running threadgroup); a simdgroup is 32
// consecutive threads; every simd_* collective is a rendezvous of the simdgroup's 32 lanes (a barrier, the lanes'
// values exchanged, a second barrier), so a collective reached by only some lanes, or by lanes calling different
// collectives, is detected and stops the process (exit 70) with a message instead of hanging or silently passing. Known limits (what the
// shim does not model): simdgroups narrower than 32, divergent collectives (Metal would run them on the active lanes;
// the kernels keep every collective uniform), the order of simd_sum on floats (the kernels sum integers only),
// fast math (the host compiles with it off), and performance: a shim run is never timed.
#ifndef HSDR_METAL_SHIM_H
#define HSDR_METAL_SHIM_H
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <cstring>
#include <pthread.h>
#include <sched.h>

extern "C" {
#include "fp16.h"
}

#pragma GCC diagnostic ignored "-Wattributes" // [[buffer(0)]] and friends: Metal's, meaningless to g++

// ---- address spaces, qualifiers, types ----
#define kernel
#define device
#define constant
#define thread
#define threadgroup static // one instance for the threads of the running threadgroup (they run one group at a time)

typedef unsigned int uint;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong; // 64-bit on the Linux targets, like Metal's ulong
static_assert(sizeof(long) == 8, "Metal's long is 64 bits");

using std::abs;
using std::floor;
using std::fma;
using std::ldexp;
using std::max;
using std::min;

inline float hsdr_half_bits_to_float(ushort b)
{
    return hsdr_fp16_to_fp32(b);
}

inline uint popcount(uint x)
{
    return (uint)__builtin_popcount(x);
}

template <class T, class U> inline T as_type(U u)
{
    static_assert(sizeof(T) == sizeof(U), "as_type: sizes differ");
    T t;
    std::memcpy(&t, &u, sizeof t);
    return t;
}

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };

struct simd_vote {
    typedef ulong vote_t;
    vote_t v;
    explicit operator vote_t() const { return v; }
};

// ---- the execution model ----
namespace hsdr_shim {

enum { SIMD = 32 };
enum op { OP_SUM = 1, OP_SHUFFLE, OP_SHUFFLE_XOR, OP_MIN, OP_ANY, OP_BALLOT, OP_BARRIER };

// A barrier for n threads that yields the CPU while it waits: with many more lanes than cores, a waiting lane gives
// its core to the lanes that have not arrived (a futex sleep and wake per lane was several times slower here).
struct barrier {
    unsigned n = 0;
    std::atomic<unsigned> count{0}, generation{0};
    void init(unsigned threads)
    {
        n = threads;
        count = 0;
    }
    void wait()
    {
        const unsigned gen = generation.load(std::memory_order_acquire);
        if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
            count.store(0, std::memory_order_relaxed);
            generation.fetch_add(1, std::memory_order_acq_rel);
            return;
        }
        while (generation.load(std::memory_order_acquire) == gen)
            sched_yield();
    }
};

struct simdgroup {
    barrier bar;
    uint64_t slot[SIMD];
    int op[SIMD];
};

struct context {
    simdgroup *simd;
    barrier *group_bar;
    unsigned lane;
};

inline context &self()
{
    static thread_local context c;
    return c;
}

[[noreturn]] inline void divergent(int op, int other)
{
    std::fprintf(stderr, "metal shim: simdgroup lanes reached different collectives (%d and %d): the kernel has a "
                         "non-uniform simd_* call\n", op, other);
    std::fflush(stderr);
    std::_Exit(70); // no unwinding: the other lanes are blocked in the rendezvous

}

// Deposit this lane's value, wait for the 32 lanes, check they all called the same collective.
inline const uint64_t *arrive(int op, uint64_t bits)
{
    context &c = self();
    c.simd->slot[c.lane] = bits;
    c.simd->op[c.lane] = op;
    c.simd->bar.wait();
    for (int l = 0; l < SIMD; l++)
        if (c.simd->op[l] != op)
            divergent(op, c.simd->op[l]);
    return c.simd->slot;
}

// Everyone has read: the slots may be reused.
inline void leave()
{
    self().simd->bar.wait();
}

template <class T> inline uint64_t bits(T v)
{
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}

template <class T> inline T value(uint64_t b)
{
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

} // namespace hsdr_shim

template <class T> inline T simd_sum(T x)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_SUM, hsdr_shim::bits(x));
    T r = T(0);
    for (int l = 0; l < hsdr_shim::SIMD; l++)
        r += hsdr_shim::value<T>(s[l]);
    hsdr_shim::leave();
    return r;
}

template <class T> inline T simd_shuffle(T x, ushort from)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_SHUFFLE, hsdr_shim::bits(x));
    const T r = hsdr_shim::value<T>(s[from % hsdr_shim::SIMD]);
    hsdr_shim::leave();
    return r;
}

template <class T> inline T simd_shuffle_xor(T x, ushort mask)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_SHUFFLE_XOR, hsdr_shim::bits(x));
    const T r = hsdr_shim::value<T>(s[(hsdr_shim::self().lane ^ mask) % hsdr_shim::SIMD]);
    hsdr_shim::leave();
    return r;
}

template <class T> inline T simd_min(T x)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_MIN, hsdr_shim::bits(x));
    T r = hsdr_shim::value<T>(s[0]);
    for (int l = 1; l < hsdr_shim::SIMD; l++)
        r = std::min(r, hsdr_shim::value<T>(s[l]));
    hsdr_shim::leave();
    return r;
}

inline bool simd_any(bool b)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_ANY, b ? 1u : 0u);
    bool r = false;
    for (int l = 0; l < hsdr_shim::SIMD; l++)
        r = r || s[l] != 0;
    hsdr_shim::leave();
    return r;
}

inline simd_vote simd_ballot(bool b)
{
    const uint64_t *s = hsdr_shim::arrive(hsdr_shim::OP_BALLOT, b ? 1u : 0u);
    simd_vote v = {0};
    for (int l = 0; l < hsdr_shim::SIMD; l++)
        v.v |= (ulong)(s[l] != 0) << l;
    hsdr_shim::leave();
    return v;
}

inline void simdgroup_barrier(mem_flags)
{
    hsdr_shim::arrive(hsdr_shim::OP_BARRIER, 0);
    hsdr_shim::leave();
}

inline void threadgroup_barrier(mem_flags)
{
    hsdr_shim::self().group_bar->wait();
}

#endif
