/* The CUDA backend's C entry points, called from the registry (kernels/registry.c). Built from the .cu files of
 * kernels/cuda/ when CMake finds nvcc (HSDR_CUDA); otherwise kernels/cuda/stub.c provides the same functions, and
 * every CUDA variant reports why it cannot run. Each kernel file's head says its idea, layouts and stages.
 * Time a variant: ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.direct *' (the
 * default matrix's 64 rows; scripts/gpu-bench.sh runs the GPU matrix: 16384 rows, bonsai2-27b's GEMVs, hot and
 * cold, 1..8 columns). */
#ifndef HSDR_CUDA_H
#define HSDR_CUDA_H
#include <stddef.h>
#include <stdint.h>

#include "../kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when a CUDA device can run the kernels, else why not (built without CUDA; no device; driver too old). */
const char *hsdr_cuda_unavailable(void);
/* cuda.production's: hsdr_cuda_unavailable, or why the device present is not one on which the fork dispatches its
 * SOA_ISUM path (sm_75 .. sm_87 get its planar PT kernel instead: docs/cuda-production.md section 1). */
const char *hsdr_cuda_production_unavailable(void);
/* The streamed kernels' (cuda.ptq1_0_tma, cuda.planar2_tma): hsdr_cuda_unavailable, or why the device is older than
 * sm_90 (they copy weights with Hopper's bulk copies, completing on shared-memory mbarriers). */
const char *hsdr_cuda_tma_unavailable(void);

/* The checking interface of every CUDA variant: its own timed path (create, set_input, mark, enqueue, mark, elapsed,
 * output: one column), so the code checked against the vectors is the code that is timed. */
int hsdr_cuda_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen);

/* The reference orders (hsdr_matvec_q8_1, reference/matvec.h) that the Q8_1 kernels' y follows bit for bit, in every
 * build (q8_1_orders.c: plain C). All HSDR_Q8_1_THREADS but the PT kernel's; a group is a warp.
 * The fork's one-column SOA_ISUM mat-vec (cuda.production, and cuda.planar2 and the streamed kernels, which keep its
 * y; docs/cuda-production.md section 3): K/128 < 128 blocks (K < 16384): a warp per row, {32 lanes, 1 group}; else
 * a 128-thread CTA per row, {32 lanes, 4 groups}. */
hsdr_q8_1_order hsdr_cuda_soa_order(int K, int N);
/* The fork's planar PT one-column kernel (cuda.production_pt: sm_75 .. sm_87): HSDR_Q8_1_PT4. */
hsdr_q8_1_order hsdr_cuda_pt_order(int K, int N);
/* Our 8-lanes-per-row kernel (cuda.lanes8): {8 lanes, 1 group}. */
hsdr_q8_1_order hsdr_cuda_lanes8_order(int K, int N);
/* Our dedicated 1..8-column kernel (cuda.cols) for an N-row matrix: 8 lanes from 16384 rows, 16 from 8192, else 32,
 * one group, so that a matrix of few rows still gives every SM enough warps. Fixed by the shape alone: every column
 * count gives each column the same bits. */
hsdr_q8_1_order hsdr_cuda_cols_order(int K, int N);

/* cuda.production: the PrismML fork's one-column PTQ1_0 mat-vec as it dispatches on sm_89 and newer (the H200):
 * Q8_1 activations quantized on the device into the SOA_ISUM layout (stage encode), then the fork's mul_mat_vec_q
 * geometry with the SOA vec-dot (stage reduce); y bit-identical to hsdr_matvec_q8_1 in hsdr_cuda_soa_order
 * (docs/cuda-production.md). */
extern const hsdr_device_ops hsdr_cuda_production_ops;

/* cuda.production_pt: the fork's planar PT one-column mat-vec (what the fork dispatches on sm_75 .. sm_87; a
 * baseline on newer devices): Q8_1 activations in the PT layout (stage encode), then mul_mat_vec_ptq1_0_pt's
 * geometry (stage reduce); y bit-identical to hsdr_matvec_q8_1 in hsdr_cuda_pt_order (docs/cuda-production.md). */
extern const hsdr_device_ops hsdr_cuda_production_pt_ops;

/* cuda.planar2 (our baseline): PTQ1_0 converted once on the device into a 2-bit planar form (stage convert), then
 * cuda.production's design on it (SOA_ISUM activations, the fork's row geometry and fp32 steps); y bit-identical to
 * hsdr_matvec_q8_1 in hsdr_cuda_soa_order, i.e. to cuda.production's y. */
extern const hsdr_device_ops hsdr_cuda_planar2_ops;

/* cuda.planar2_tma and cuda.ptq1_0_tma (our baselines): one streamed kernel per GEMV (kernels/cuda/tma.cuh): passes
 * of rows bulk-copied into shared memory ahead of use, from the dependency wait on (HSDR_TMA: or before it); the
 * encode its own kernel; the predecoded 2-bit form (converted on the device, stage convert) or PTQ1_0 as stored; y
 * bit-identical to hsdr_matvec_q8_1 in hsdr_cuda_soa_order, i.e. to cuda.production's y. The _fused variants: the
 * same kernels with the encode inside (one launch: the grid quantizes x once, a K-block per warp, and waits on a
 * counter for it). */
extern const hsdr_device_ops hsdr_cuda_planar2_tma_ops;
extern const hsdr_device_ops hsdr_cuda_ptq1_0_tma_ops;
extern const hsdr_device_ops hsdr_cuda_planar2_tma_fused_ops;
extern const hsdr_device_ops hsdr_cuda_ptq1_0_tma_fused_ops;
/* cuda.planar2_ring and cuda.ptq1_0_ring: the fused kernels as one persistent kernel per token (tma.cuh: the ring of
 * passes runs across the GEMVs, a counter per GEMV keeps the decoder's dependency); a launch of one GEMV is the
 * per-launch row; y bit-identical to cuda.production's. */
extern const hsdr_device_ops hsdr_cuda_planar2_ring_ops;
/* cuda.planar2_wr: cuda.planar2_tma's passes through the warp-rows consumer (warp_rows.cuh: each warp reduces whole
 * rows, a producer warp refills a stage once every warp has released it, no CTA barrier per pass). */
extern const hsdr_device_ops hsdr_cuda_planar2_wr_ops;
extern const hsdr_device_ops hsdr_cuda_ptq1_0_ring_ops;

/* cuda.lanes8 (our baseline): Q8_1 activations quantized on the device (stage encode), then a mat-vec with the
 * activations staged in shared memory and 8 lanes per row (one thread per 128-block, 4-byte decode, dp4a: stage
 * reduce, with decode, scale and merge fused into it); y bit-identical to hsdr_matvec_q8_1 in
 * hsdr_cuda_lanes8_order. */
extern const hsdr_device_ops hsdr_cuda_lanes8_ops;

/* cuda.cols (our baseline): the dedicated 1..8-column kernel, run by the harness with hsdr_exec.cols columns (its
 * cols axis; create refuses more than 8, or more than this device's shared memory stages, with
 * hsdr_cuda_cols_supported's message); each column's y bit-identical to hsdr_matvec_q8_1 in
 * hsdr_cuda_cols_order(K, N). */
extern const hsdr_device_ops hsdr_cuda_cols_ops;

/* The dedicated kernel on ncols (1..8) columns, through the same run the harness times: X holds ncols vectors of K
 * floats, Y receives ncols vectors of N (column c at Y + c * N), each bit-identical to hsdr_matvec_q8_1 of that
 * column alone. Returns 0, or -1 with err. */
int hsdr_cuda_cols(const uint8_t *W, const float *X, int K, int N, int ncols, float *Y, char *err, size_t errlen);
/* 0 when this device's kernel takes ncols columns of K x N (1..8 columns, K a multiple of 128, the staged activations
 * within the shared memory a CTA may have), else -1 with the reason in err. */
int hsdr_cuda_cols_supported(int K, int N, int ncols, char *err, size_t errlen);

/* cuda.direct: LNS8 codes and the automatic pre-scale on the device (stage encode), then the warp direct 8-phase
 * kernel (stage reduce, with decode, routing by phase, scale and merge fused): A[8] exact, y within the fp32
 * tolerance of y_lns8. */
extern const hsdr_device_ops hsdr_cuda_direct_ops;

/* cuda.direct_mma: the same codes (encode), then V per group built once per matvec (route), then A[8] as an int8
 * tensor-core product C = t . V (mma.m16n8k32, 16 rows per warp; reduce, with decode, scale and merge fused). */
extern const hsdr_device_ops hsdr_cuda_direct_mma_ops;

/* cuda.stateset: the same codes (encode), then per tile of R rows (at most 32) and group the state set built once by
 * __ballot_sync (route, inside the kernel), and per row popc counts over the occupied states folded to A[8]. */
extern const hsdr_device_ops hsdr_cuda_stateset_ops;

/* cuda.q1516: cuda.direct_mma's exact A[8], then Q15.16 per group with the 31-bit constants (materialized in the
 * kernel) and an int64 merge over the groups; y = q_row * 2^-16. */
extern const hsdr_device_ops hsdr_cuda_q1516_ops;

/* cuda.direct_mma_p2 and cuda.q1516_p2: the same two on the 2-bit layout of cuda.planar2_tma (stage convert; each mma
 * thread's units from one 8-byte load, a shift and a mask each), K split over CTAs with each warp's group held in
 * registers (direct.cu): the same exact A[8] and outputs. */
extern const hsdr_device_ops hsdr_cuda_direct_mma_p2_ops;
extern const hsdr_device_ops hsdr_cuda_q1516_p2_ops;

#ifdef __cplusplus
}
#endif
#endif
