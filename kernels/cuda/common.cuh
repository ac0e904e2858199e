/* Shared host and device helpers of the CUDA kernels: error checking that names the call, and the Q8_1 block. */
#ifndef HSDR_CUDA_COMMON_CUH
#define HSDR_CUDA_COMMON_CUH
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda.h"

/* Every CUDA call is checked: on failure, write "call: error string" into err and jump to the caller's `fail`. */
#define HSDR_CU(call)                                                                                               \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            snprintf(err, errlen, "%s (%s:%d): %s", #call, __FILE__, __LINE__, cudaGetErrorString(e_));            \
            goto fail;                                                                                             \
        }                                                                                                          \
    } while (0)

/* A kernel launch: the launch error, then (checking interfaces only) the execution error. */
#define HSDR_CU_LAUNCHED() HSDR_CU(cudaGetLastError())

/* Q8_1 activation block (reference/q8.h): fp16 d, fp16 s = fp16(d * sum q), 32 int8. 36 bytes, 4-byte aligned. */
struct hsdr_cu_q8_1 {
    __half d, s;
    int8_t qs[32];
};

#define HSDR_PTQ1_0_BLOCK 28 /* bytes per 128 weights */
#define HSDR_FULL_MASK 0xffffffffu

#endif
