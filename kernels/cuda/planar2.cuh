/* The 2-bit layouts of PTQ1_0, converted once on the device (planar2.cu: the convert stage of cuda.planar2 and its
 * kin, cuda.direct_mma_p2 and cuda.q1516_p2; how to time them: planar2.cu, direct.cu). Code byte b of a K-block holds
 * the digits {0, 1, 2} of weights b, b + 32, b + 64, b + 96 in bit pairs 0, 2, 4, 6: word w shifted right by 2j and
 * masked with 0x03030303 is the digits of weights 32 j + 4 w .. + 3.
 * blocks  (cuda.planar2; also the LNS8 tensor-core rows cuda.direct_mma_p2, cuda.q1516_p2 in direct.cu): each
 *         block's 32 code bytes together, row-major over (row, K-block), then every block's fp16 scale in the same
 *         order.
 * rows    (cuda.planar2_tma and its kin): per row, bytes 0..15 of its K-blocks' 32 code bytes, then bytes 16..31,
 *         then its fp16 scales, padded to 16 bytes. */
#ifndef HSDR_CUDA_PLANAR2_CUH
#define HSDR_CUDA_PLANAR2_CUH
#include "common.cuh"

/* bytes of one row of G K-blocks */
static __host__ __device__ __forceinline__ unsigned hsdr_planar2_row_bytes(int G)
{
    return (unsigned)(((size_t)G * 34 + 15) / 16 * 16);
}

/* each layout's bytes for K x N, and the convert stage into it (one thread per (row, K-block)) */
size_t hsdr_planar2_blocks_layout_bytes(int K, int N);
cudaError_t hsdr_planar2_blocks_convert(hsdr_device_run *r, const uint8_t *src, uint8_t *dst);
size_t hsdr_planar2_layout_bytes(int K, int N);
cudaError_t hsdr_planar2_convert(hsdr_device_run *r, const uint8_t *src, uint8_t *dst);

#endif
