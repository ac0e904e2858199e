/* cuda.ptq1_0_tma, cuda.ptq1_0_tma_fused and cuda.ptq1_0_ring (our baselines): PTQ1_0 as stored through the streamed
 * design of tma.cuh. y is bit-identical to cuda.production's.
 *   Idea     whole passes of rows bulk-copied into shared memory ahead of use, activations held in registers, each
 *            thread decoding its 28-byte block with the fork's x3 digit steps (common.cuh's hsdr_cu_ptq1_0_sums:
 *            byte spread into 16-bit lanes, one multiply and mask per digit, one byte permute per dp4a word).
 *   Layout   PTQ1_0 as stored: rows back to back, 28 G bytes each; thread t reads words 7t .. 7t + 6 of its pass's
 *            span (conflict-free: 7 is odd). Activations: tma.cuh's q[K], d8, isum.
 *   Stages   encode (its own kernel; inside the mat-vec for _fused and _ring), reduce (the streamed mat-vec).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.ptq1_0_tma *'
 *            (likewise cuda.ptq1_0_tma_fused, cuda.ptq1_0_ring; hsdr profile builds a token of them) */
#include "tma.cuh"

struct ptq1_0_tma {
    static unsigned row_bytes(int G)
    {
        return (unsigned)G * HSDR_PTQ1_0_BLOCK;
    }
    static __device__ __forceinline__ float sums(const uint8_t *row, int G, int b, const int32_t act[32], int sumi[4])
    {
        (void)G;
        const uint8_t *blk = row + (size_t)b * HSDR_PTQ1_0_BLOCK;
        hsdr_cu_ptq1_0_sums(blk, [act](int e) { return (int)act[e >> 2]; }, sumi);
        return __half2float(*(const __half *)(blk + 26));
    }
};

static const hsdr_cu_kernels kernels = {1,    hsdr_tma_act_bytes, hsdr_tma_prepare<ptq1_0_tma, false>,
                                        hsdr_tma_launch<ptq1_0_tma, false>, NULL, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_ptq1_0_tma_ops = HSDR_CU_OPS(kernels);

/* cuda.ptq1_0_tma_fused: the same, the encode inside the mat-vec (the grid shares it: tma.cuh). */
static const hsdr_cu_kernels fused_kernels = {1,    hsdr_tma_act_bytes, hsdr_tma_prepare<ptq1_0_tma, true>,
                                           hsdr_tma_launch<ptq1_0_tma, true>, NULL, NULL, NULL, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_ptq1_0_tma_fused_ops = HSDR_CU_OPS(fused_kernels);

/* cuda.ptq1_0_ring: the fused kernel as one persistent kernel per token (tma.cuh's ring). */
static const hsdr_cu_kernels ring_kernels = {1,    hsdr_tma_ring_act_bytes, hsdr_tma_ring_prepare<ptq1_0_tma>,
                                             hsdr_tma_ring_launch<ptq1_0_tma>, NULL, NULL, NULL,
                                             hsdr_tma_ring_token<ptq1_0_tma>};
extern "C" const hsdr_device_ops hsdr_cuda_ptq1_0_ring_ops = HSDR_CU_OPS(ring_kernels);
