// bench.cuh: what the standalone CUDA benchmarks in scripts/ (tma-stream.cu, token-ring.cu, mma-rate.cu,
// host-in-window.cu) share on the host: a CUDA call that fails ends the program with its name, place and message;
// the median of a set of times.
#ifndef HSDR_SCRIPTS_BENCH_CUH
#define HSDR_SCRIPTS_BENCH_CUH
#include <algorithm>
#include <cstdio>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CK(call)                                                                                                   \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            fprintf(stderr, "%s (%s:%d): %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(e_));                \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

template <class T> static inline T median(std::vector<T> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

#endif
