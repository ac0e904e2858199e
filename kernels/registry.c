/* THE table of variants. Add a variant here and nowhere else.
 * cpu.* variants: x86-64 only (SSSE3/AVX2 intrinsics). CMakeLists.txt builds kernels/cpu/ and defines
 * HSDR_CPU_KERNELS only there; elsewhere the table has no cpu.* rows (`hsdr list` and the configure step say why:
 * hsdr_registry_not_built). */
#include <string.h>

#ifdef HSDR_CPU_KERNELS
#include "cpu/avx2_ptq1_0.h"
#include "cpu/avx512_ptq1_0.h"
#include "cpu/direct_avx2.h"
#include "cpu/planar2_avx2.h"
#include "cpu/production_ssse3.h"
#include "cpu/stateset_avx2.h"
#endif
#include "cuda/cuda.h"
#include "vulkan/vk.h"
#include "kernel.h"
#include "metal/metal.h"
#include "matvec.h"
#include "reference_timed.h"
#include "reference_variants.h"

#define ST(s) HSDR_STAGE_BIT(HSDR_STAGE_##s)
#define D(s) [HSDR_STAGE_##s]

/* The scalar reference variants are timed too: they are the readable baselines. Their critical-path depths are
 * those of the loops as written (sequential accumulation), per 128-lane group. */

const hsdr_variant hsdr_registry[] = {
    {.name = "ref.codec", .backend = "reference", .family = "codec",
     .summary = "LNS8 encoder (exact mantissa thresholds, auto pre-scale), PTQ1_0 pack/unpack in three decode forms, "
                "quantizer",
     .outputs = HSDR_OUT_CODEC, .stages = ST(ENCODE), .precision = 64,
     .encode_lns8 = hsdr_ref_encode_lns8, .auto_prescale = hsdr_ref_auto_prescale},
    {.name = "ref.exact", .backend = "reference", .family = "exact",
     .summary = "sum (t-1) * d * x in double-double: the fp64-or-better truth",
     .outputs = HSDR_OUT_Y_EXACT, .stages = ST(DECODE) | ST(REDUCE), .precision = 64, .needs_x = true,
     .matvec = hsdr_ref_exact_matvec,
     .ablatable = ST(DECODE) | ST(REDUCE), .depth = {D(DECODE) = 10, D(REDUCE) = 1280},
     .scratch_bytes = hsdr_reft_exact_scratch_bytes, .rows = hsdr_reft_exact_rows,
     .stage = hsdr_reft_exact_stage},
    {.name = "ref.q8_0", .backend = "reference", .family = "production",
     .summary = "production PTQ1_0 x Q8_0: x86 Q8_0 quantizer, fused fp32 sequence of spec/ptq1_0.md section 7",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .matvec = hsdr_ref_q8_0_matvec,
     .ablatable = ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 34, D(DECODE) = 10, D(REDUCE) = 32, D(SCALE) = 4},
     .act_bytes = hsdr_reft_q8_act_bytes, .scratch_bytes = hsdr_reft_q8_scratch_bytes,
     .prologue = hsdr_reft_q8_prologue, .rows = hsdr_reft_q8_rows, .stage = hsdr_reft_q8_stage},
    {.name = "ref.direct", .backend = "reference", .family = "direct",
     .summary = "direct 8-phase A[8] per group, G_g in double-double",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A,
     .stages = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 64,
     .matvec = hsdr_ref_direct_matvec,
     .ablatable = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 1, D(DECODE) = 10, D(REDUCE) = 128, D(SCALE) = 8},
     .act_bytes = hsdr_reft_lns8_act_bytes, .scratch_bytes = hsdr_reft_direct_scratch_bytes,
     .prologue = hsdr_reft_direct_prologue, .rows = hsdr_reft_direct_rows, .stage = hsdr_reft_direct_stage},
    {.name = "ref.stateset", .backend = "reference", .family = "stateset",
     .summary = "128-lane activation state sets + POPCOUNT, folded to A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A | HSDR_OUT_C,
     .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 64,
     .matvec = hsdr_ref_stateset_matvec,
     .uses_R = true, .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 128, D(REDUCE) = 19, D(SCALE) = 8},
     .prepare = hsdr_reft_masks_prepare, .release = hsdr_reft_masks_release,
     .act_bytes = hsdr_reft_lns8_act_bytes, .scratch_bytes = hsdr_reft_stateset_scratch_bytes,
     .prologue = hsdr_reft_lns8_prologue, .rows = hsdr_reft_stateset_rows, .stage = hsdr_reft_stateset_stage},
    {.name = "ref.tile64", .backend = "reference", .family = "tile64",
     .summary = "64-lane state sets (two tiles per group) + POPCOUNT, folded to A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A | HSDR_OUT_C,
     .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 64,
     .matvec = hsdr_ref_tile64_matvec,
     .uses_R = true, .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 64, D(REDUCE) = 20, D(SCALE) = 8},
     .prepare = hsdr_reft_masks_prepare, .release = hsdr_reft_masks_release,
     .act_bytes = hsdr_reft_lns8_act_bytes, .scratch_bytes = hsdr_reft_tile64_scratch_bytes,
     .prologue = hsdr_reft_lns8_prologue, .rows = hsdr_reft_tile64_rows, .stage = hsdr_reft_tile64_stage},
    {.name = "ref.flns", .backend = "reference", .family = "flns",
     .summary = "direct A[8], then the fractional-LNS tree (F, b) per group",
     .outputs = HSDR_OUT_FLNS | HSDR_OUT_A,
     .stages = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 64,
     .matvec = hsdr_ref_direct_matvec,
     .uses_flns = true, .ablatable = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 1, D(DECODE) = 10, D(REDUCE) = 128, D(SCALE) = 17},
     .act_bytes = hsdr_reft_lns8_act_bytes, .scratch_bytes = hsdr_reft_direct_scratch_bytes,
     .prologue = hsdr_reft_direct_prologue, .rows = hsdr_reft_flns_rows, .stage = hsdr_reft_flns_stage},
    {.name = "ref.q1516", .backend = "reference", .family = "q1516",
     .summary = "direct A[8], Q15.16 per group with 31-bit constants, int64 row merge",
     .outputs = HSDR_OUT_Q1516 | HSDR_OUT_A,
     .stages = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MATERIALIZE) | ST(MERGE),
     .precision = 64, .matvec = hsdr_ref_direct_matvec,
     .ablatable = ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MATERIALIZE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 1, D(DECODE) = 10, D(REDUCE) = 128, D(SCALE) = 8, D(MATERIALIZE) = 2},
     .act_bytes = hsdr_reft_lns8_act_bytes, .scratch_bytes = hsdr_reft_direct_scratch_bytes,
     .prologue = hsdr_reft_direct_prologue, .rows = hsdr_reft_q1516_rows, .stage = hsdr_reft_q1516_stage},
    /* ---- CPU kernels (kernels/cpu/): x86-64 only (SSSE3/AVX2 intrinsics), so only in an x86-64 build ---- */
#ifdef HSDR_CPU_KERNELS
    {.name = "cpu.production", .backend = "cpu", .family = "production",
     .summary = "production PTQ1_0 x Q8_0 (the fork's x86 design): SSSE3 compare-form digits, maddubs(d,q) - "
                "maddubs(1,q), four int32 sub-block sums, fused fp32 sequence",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_production_unavailable,
     .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 34, D(DECODE) = 15, D(REDUCE) = 7, D(SCALE) = 4},
     .act_bytes = hsdr_cpu_production_act_bytes, .scratch_bytes = hsdr_cpu_production_scratch_bytes,
     .prologue = hsdr_cpu_production_prologue, .rows = hsdr_cpu_production_rows,
     .stage = hsdr_cpu_production_stage},
    {.name = "cpu.avx2", .backend = "cpu", .family = "baseline",
     .summary = "our AVX2 PTQ1_0 x Q8_0 on the stored format: 8 rows transposed into dword lanes, compare-form digits "
                "on 32 bytes, maddubs against broadcast activations, no horizontal sums, fused fp32 across rows",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_avx2_unavailable, .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 34, D(DECODE) = 14, D(REDUCE) = 11, D(SCALE) = 5},
     .act_bytes = hsdr_cpu_avx2_act_bytes, .scratch_bytes = hsdr_cpu_avx2_scratch_bytes,
     .prologue = hsdr_cpu_avx2_prologue, .rows = hsdr_cpu_avx2_rows, .stage = hsdr_cpu_avx2_stage},
    {.name = "cpu.avx512", .backend = "cpu", .family = "baseline",
     .summary = "cpu.avx2 widened to AVX-512 (F, BW, VNNI) on the stored format: 16 rows transposed into dword lanes, "
                "compare-into-mask digits, vpdpbusd against broadcast activations, fused fp32 across rows",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_avx512_unavailable, .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 34, D(DECODE) = 14, D(REDUCE) = 8, D(SCALE) = 5},
     .act_bytes = hsdr_cpu_avx2_act_bytes, .scratch_bytes = hsdr_cpu_avx512_scratch_bytes,
     .prologue = hsdr_cpu_avx2_prologue, .rows = hsdr_cpu_avx512_rows, .stage = hsdr_cpu_avx512_stage},
    {.name = "cpu.ptq1_r16", .backend = "cpu", .family = "baseline",
     .summary = "cpu.avx512 on PTQ1_0 bytes permuted (convert): 16 rows interleaved by dword, seven aligned loads per "
                "block and no transpose, one sequential stream per thread; same 28 bytes per 128 weights",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(CONVERT) | ST(DECODE) | ST(ENCODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_avx512_unavailable, .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 34, D(DECODE) = 12, D(REDUCE) = 8, D(SCALE) = 5},
     .prepare = hsdr_cpu_ptq1_r16_prepare, .release = hsdr_cpu_ptq1_r16_release, .act_bytes = hsdr_cpu_avx2_act_bytes,
     .scratch_bytes = hsdr_cpu_avx512_scratch_bytes, .prologue = hsdr_cpu_avx2_prologue,
     .rows = hsdr_cpu_ptq1_r16_rows, .stage = hsdr_cpu_ptq1_r16_stage},
    {.name = "cpu.planar2", .backend = "cpu", .family = "baseline",
     .summary = "predecoded 2-bit planar form converted from PTQ1_0 (8 rows interleaved per dword, fp16 scales): "
                "shift+and digits, maddubs(t, q) vectorized across 8 rows, exact sum q subtracted, fused fp32",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(CONVERT) | ST(ENCODE) | ST(DECODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_avx2_unavailable, .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 40, D(DECODE) = 2, D(REDUCE) = 9, D(SCALE) = 6},
     .prepare = hsdr_cpu_planar2_prepare, .release = hsdr_cpu_planar2_release, .act_bytes = hsdr_cpu_q2_act_bytes,
     .scratch_bytes = hsdr_cpu_planar2_scratch_bytes, .prologue = hsdr_cpu_planar2_prologue,
     .rows = hsdr_cpu_planar2_rows, .stage = hsdr_cpu_planar2_stage},
    {.name = "cpu.pq2_0", .backend = "cpu", .family = "baseline",
     .summary = "PQ2_0 x Q8_0 (2.125 bpw, converted from PTQ1_0): shift+and codes against activations permuted "
                "to the byte order, maddubs, exact sum q subtracted, 8 rows transposed into the fused fp32 lanes",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(CONVERT) | ST(ENCODE) | ST(DECODE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .needs_x = true, .unavailable = hsdr_cpu_avx2_unavailable, .matvec = hsdr_matvec_via_rows,
     .ablatable = ST(ENCODE), .depth = {D(ENCODE) = 40, D(DECODE) = 2, D(REDUCE) = 8, D(SCALE) = 6},
     .prepare = hsdr_cpu_pq2_0_prepare, .release = hsdr_cpu_pq2_0_release, .act_bytes = hsdr_cpu_q2_act_bytes,
     .scratch_bytes = hsdr_cpu_pq2_0_scratch_bytes, .prologue = hsdr_cpu_pq2_0_prologue, .rows = hsdr_cpu_pq2_0_rows,
     .stage = hsdr_cpu_pq2_0_stage},
    /* cpu.direct, cpu.flns and cpu.q1516 share the converted weights, the activations (encode, and the pair program
     * of route) and the reduce to A[8] of kernels/cpu/direct_avx2.c; they differ from scale on (their depths:
     * kernels/cpu/direct_avx2.h). */
    {.name = "cpu.direct", .backend = "cpu", .family = "direct",
     .summary = "AVX2 direct 8-phase, vectorized over 16 rows: row-interleaved PTQ1_0 (convert), digits by x3 steps "
                "in 16-bit lanes, per phase lane pairs s2^(q-1) x 16-row digit pairs in two vpmaddwd, prefix slots -> "
                "exact A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A,
     .stages = ST(CONVERT) | ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_direct_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE),
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 10, D(MERGE) = 1},
     .prepare = hsdr_cpu_direct_prepare, .release = hsdr_cpu_direct_release, .act_bytes = hsdr_cpu_direct_act_bytes,
     .scratch_bytes = hsdr_cpu_direct_scratch_bytes, .prologue = hsdr_cpu_direct_prologue,
     .prologue_part = hsdr_cpu_direct_prologue_part,
     .rows = hsdr_cpu_direct_rows, .stage = hsdr_cpu_direct_stage},
    {.name = "cpu.flns", .backend = "cpu", .family = "flns",
     .summary = "cpu.direct's exact A[8] (lane pairs over 16 rows), then the fLNS tree (F, b) per group, 8 rows a "
                "vector, on cached LC/kappa tables",
     .outputs = HSDR_OUT_FLNS | HSDR_OUT_A,
     .stages = ST(CONVERT) | ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .precision = 32, .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_flns_matvec,
     .uses_flns = true, .ablatable = ST(ENCODE) | ST(ROUTE),
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 41, D(MERGE) = 1},
     .prepare = hsdr_cpu_direct_prepare, .release = hsdr_cpu_direct_release, .act_bytes = hsdr_cpu_direct_act_bytes,
     .scratch_bytes = hsdr_cpu_direct_scratch_bytes, .prologue = hsdr_cpu_direct_prologue,
     .prologue_part = hsdr_cpu_direct_prologue_part,
     .rows = hsdr_cpu_flns_rows, .stage = hsdr_cpu_flns_stage},
    {.name = "cpu.q1516", .backend = "cpu", .family = "q1516",
     .summary = "cpu.direct's exact A[8] (lane pairs over 16 rows), S = sum A[p] C31[p] (int64), Q15.16 per group "
                "materialized, int64 SIMD merge across groups",
     .outputs = HSDR_OUT_Q1516 | HSDR_OUT_A,
     .stages = ST(CONVERT) | ST(DECODE) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MATERIALIZE) | ST(MERGE),
     .precision = 32, .unavailable = hsdr_cpu_direct_unavailable, .matvec = hsdr_cpu_q1516_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE),
     .depth = {D(ENCODE) = 12, D(ROUTE) = 3, D(DECODE) = 7, D(REDUCE) = 76, D(SCALE) = 9, D(MATERIALIZE) = 5,
               D(MERGE) = 1},
     .prepare = hsdr_cpu_direct_prepare, .release = hsdr_cpu_direct_release, .act_bytes = hsdr_cpu_direct_act_bytes,
     .scratch_bytes = hsdr_cpu_direct_scratch_bytes, .prologue = hsdr_cpu_direct_prologue,
     .prologue_part = hsdr_cpu_direct_prologue_part,
     .rows = hsdr_cpu_q1516_rows, .stage = hsdr_cpu_q1516_stage},
    /* cpu.stateset and cpu.tile64 share the converted weights, the LNS8 prologue, the tile analysis, scale and merge
     * of kernels/cpu/stateset_avx2.c (their depths: kernels/cpu/stateset_avx2.h). */
    {.name = "cpu.stateset", .backend = "cpu", .family = "stateset",
     .summary = "AVX2 128-lane state sets: scatter-free build of the occupied states (phase x octave masks) every "
                "R rows; per row and state one pshufb popcount of [S|S]&[Wp|Wn] + psadbw, shift-add fold to A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A | HSDR_OUT_C,
     .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 32,
     .unavailable = hsdr_cpu_ss_unavailable, .matvec = hsdr_cpu_stateset_matvec, .uses_R = true,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 64, D(REDUCE) = 56, D(SCALE) = 7},
     .prepare = hsdr_cpu_ss_prepare, .release = hsdr_cpu_ss_release, .act_bytes = hsdr_cpu_ss_act_bytes,
     .scratch_bytes = hsdr_cpu_stateset_scratch_bytes, .prologue = hsdr_cpu_ss_prologue,
     .prologue_part = hsdr_cpu_ss_prologue_part,
     .rows = hsdr_cpu_stateset_rows, .stage = hsdr_cpu_stateset_stage},
    {.name = "cpu.tile64", .backend = "cpu", .family = "tile64",
     .summary = "64-lane state sets (two tiles per group, one uint64 per state), same build; per row and state "
                "two ANDN + two scalar POPCNT, shift-add fold to A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A | HSDR_OUT_C,
     .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE), .precision = 32,
     .unavailable = hsdr_cpu_ss_unavailable, .matvec = hsdr_cpu_tile64_matvec, .uses_R = true,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE) | ST(SCALE) | ST(MERGE),
     .depth = {D(ENCODE) = 10, D(ROUTE) = 46, D(REDUCE) = 39, D(SCALE) = 7},
     .prepare = hsdr_cpu_ss_prepare, .release = hsdr_cpu_ss_release, .act_bytes = hsdr_cpu_ss_act_bytes,
     .scratch_bytes = hsdr_cpu_tile64_scratch_bytes, .prologue = hsdr_cpu_ss_prologue,
     .prologue_part = hsdr_cpu_ss_prologue_part,
     .rows = hsdr_cpu_tile64_rows, .stage = hsdr_cpu_tile64_stage},
#endif
    /* ---- CUDA (kernels/cuda/): timed by the device's clock (CUDA events) through their device ops ---- */
    {.name = "cuda.production", .backend = "cuda", .family = "production",
     .summary = "the fork's one-column PTQ1_0 mat-vec as dispatched on sm_89+ (docs/cuda-production.md): Q8_1 "
                "activations in the SOA_ISUM layout (encode), then mul_mat_vec_q's geometry (reduce): a warp per row "
                "below K = 16384, else a 128-thread CTA per row; raw digits in dp4a, exact sums subtracted, fmaf chain",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_production_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_soa_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_production_ops},
    {.name = "cuda.production_pt", .backend = "cuda", .family = "baseline",
     .summary = "the fork's planar PT one-column PTQ1_0 mat-vec (what it dispatches on sm_75..sm_87; a baseline "
                "elsewhere): Q8_1 activations in 16-byte planes (encode), then 128-thread CTAs over (row group, "
                "K-block) items, every block rounded alone into shared memory, one thread per row adds them in four "
                "interleaved accumulators",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_pt_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .device = &hsdr_cuda_production_pt_ops},
    {.name = "cuda.planar2", .backend = "cuda", .family = "baseline",
     .summary = "predecoded 2-bit form converted on the device (32 code bytes per block: digits of weights b + 32 j in "
                "bit pairs, then the fp16 scales), cuda.production's SOA_ISUM design on it: shift+and digits, dp4a, "
                "exact sums subtracted, the fork's fp32 steps (y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(CONVERT) | ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_soa_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_planar2_ops},
    {.name = "cuda.planar2_tma", .backend = "cuda", .family = "baseline",
     .summary = "the predecoded 2-bit form (per row: code halves, then scales; converted on the device) streamed: "
                "passes of rows bulk-copied into shared memory 4 ahead, after the dependency wait on the encode (its "
                "own kernel, launched dependent too); a thread per (row, K-block) with its activations in "
                "registers; the fork's row order redone per warp (y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(CONVERT) | ST(ENCODE) | ST(REDUCE), .precision = 32,
     .needs_x = true, .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec,
     .q8_1_order = hsdr_cuda_soa_order, .ablatable = ST(ENCODE) | ST(REDUCE),
     .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_planar2_tma_ops},
    {.name = "cuda.ptq1_0_tma", .backend = "cuda", .family = "baseline",
     .summary = "PTQ1_0 as stored, streamed as cuda.planar2_tma (passes bulk-copied into shared memory ahead, "
                "activations in registers), the fork's x3 digit steps per 28-byte block (y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_soa_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_ptq1_0_tma_ops},
    {.name = "cuda.planar2_tma_fused", .backend = "cuda", .family = "baseline",
     .summary = "cuda.planar2_tma with the encode inside the mat-vec: one launch, its first CTAs quantizing a "
                "K-block of x each (a warp per K-block), the grid waiting on a counter for all of them, then "
                "streaming its weights (y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(CONVERT) | ST(ENCODE) | ST(REDUCE), .precision = 32,
     .needs_x = true, .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec,
     .q8_1_order = hsdr_cuda_soa_order, .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_planar2_tma_fused_ops},
    {.name = "cuda.ptq1_0_tma_fused", .backend = "cuda", .family = "baseline",
     .summary = "cuda.ptq1_0_tma with the encode inside the mat-vec, shared by the grid as in "
                "cuda.planar2_tma_fused (PTQ1_0 as stored; y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_soa_order,
     .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_ptq1_0_tma_fused_ops},
    {.name = "cuda.planar2_wr", .backend = "cuda", .family = "baseline",
     .summary = "cuda.planar2_tma's passes through a warp-rows consumer: each warp reduces whole rows of a pass (its "
                "(row, K-block) items dealt over its lanes, activations in shared memory), a producer warp refills "
                "a stage once every warp has released it: no CTA barrier per pass (y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(CONVERT) | ST(ENCODE) | ST(REDUCE), .precision = 32,
     .needs_x = true, .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec,
     .q8_1_order = hsdr_cuda_soa_order, .ablatable = ST(ENCODE) | ST(REDUCE),
     .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_planar2_wr_ops},
    {.name = "cuda.planar2_ring", .backend = "cuda", .family = "baseline",
     .summary = "cuda.planar2_tma_fused as one persistent kernel per token: a grid that stays resident walks every "
                "GEMV's passes, its ring of bulk copies refilled across GEMV boundaries, a counter per GEMV for the "
                "decoder's dependency (one GEMV per launch here; y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(CONVERT) | ST(ENCODE) | ST(REDUCE), .precision = 32,
     .needs_x = true, .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec,
     .q8_1_order = hsdr_cuda_soa_order, .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_planar2_ring_ops},
    {.name = "cuda.ptq1_0_ring", .backend = "cuda", .family = "baseline",
     .summary = "cuda.ptq1_0_tma_fused as one persistent kernel per token, as cuda.planar2_ring (PTQ1_0 as stored; "
                "y equals cuda.production's)",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_tma_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_soa_order,
     .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_ptq1_0_ring_ops},
    {.name = "cuda.lanes8", .backend = "cuda", .family = "baseline",
     .summary = "our one-column mat-vec: activations staged in shared memory once per CTA, 8 lanes per row (4 rows per "
                "warp), the fork's per-block fmaf chain",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_lanes8_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5},
     .merge_is_tree = true, .device = &hsdr_cuda_lanes8_ops},
    {.name = "cuda.cols", .backend = "cuda", .family = "baseline",
     .summary = "our 1..8-column mat-vec (the cols axis): floor-form digits, activations of every column staged per "
                "CTA, 8/16/32 lanes per row by the row count, launched programmatically dependent on the encode",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec, .q8_1_order = hsdr_cuda_cols_order,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 12, D(DECODE) = 6, D(REDUCE) = 12, D(SCALE) = 5},
     .max_cols = 8, .merge_is_tree = true, .device = &hsdr_cuda_cols_ops},
    {.name = "cuda.direct", .backend = "cuda", .family = "direct",
     .summary = "warp direct 8-phase: LNS8 encode + automatic pre-scale on the device (encode), then one kernel "
                "(reduce, with decode, phase routing, scale and merge fused): lane j owns lanes 4j..4j+3 of every "
                "group, eight int32 phase partials, reduce-scatter butterfly to exact A[8], fp64 group sums",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 14, D(DECODE) = 6, D(ROUTE) = 8, D(REDUCE) = 9,
                                                     D(SCALE) = 4},
     .device = &hsdr_cuda_direct_ops},
    {.name = "cuda.direct_mma", .backend = "cuda", .family = "direct",
     .summary = "direct 8-phase on int8 tensor cores: A[p] = sum_h 16^h (t . V)[4p + h] with V (128 x 32, entries "
                "s 2^(q & 3) by phase and octave group) built once per matvec (route); mma.m16n8k32 on raw digits, "
                "column sums subtracted; exact A[8], fp64 group sums",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(ENCODE) | ST(ROUTE) | ST(REDUCE), .precision = 32,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .depth = {D(ENCODE) = 14, D(ROUTE) = 4, D(DECODE) = 6, D(REDUCE) = 8, D(SCALE) = 4},
     .device = &hsdr_cuda_direct_mma_ops},
    {.name = "cuda.direct_mma_p2", .backend = "cuda", .family = "direct",
     .summary = "cuda.direct_mma on the 2-bit layout of cuda.planar2_tma (converted once on the device), split K: "
                "each warp keeps one group's V fragments in registers and streams that group's 4-trit units (one "
                "8-byte load, a shift and a mask each) over the CTA's rows; exact A[8], fp64 group and slice sums in "
                "a fixed order",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .precision = 32, .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .depth = {D(ENCODE) = 14, D(ROUTE) = 4, D(DECODE) = 2, D(REDUCE) = 8, D(SCALE) = 4},
     .device = &hsdr_cuda_direct_mma_p2_ops},
    {.name = "cuda.stateset", .backend = "cuda", .family = "stateset",
     .summary = "ballot state sets: per group and tile of R rows (R <= 32) the occupied codes and their lane masks "
                "built once with __ballot_sync, per row trit masks by ballot, lanes split the states (popc of the "
                "positive and negative products), reduce-scatter fold to exact A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec, .uses_R = true,
     .ablatable = ST(ENCODE) | ST(REDUCE), .depth = {D(ENCODE) = 14, D(ROUTE) = 170, D(DECODE) = 6, D(REDUCE) = 20,
                                                     D(SCALE) = 4},
     .device = &hsdr_cuda_stateset_ops},
    {.name = "cuda.q1516", .backend = "cuda", .family = "q1516",
     .summary = "Q15.16 hybrid on cuda.direct_mma's exact A[8]: S = sum A[p] C31[p] (int64), Q_g materialized per "
                "group in the kernel, int64 merge over the groups (exact, any order)",
     .outputs = HSDR_OUT_A | HSDR_OUT_Q1516, .stages = ST(ENCODE) | ST(ROUTE) | ST(REDUCE), .precision = 32,
     .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .depth = {D(ENCODE) = 14, D(ROUTE) = 4, D(DECODE) = 6, D(REDUCE) = 8, D(SCALE) = 4, D(MATERIALIZE) = 3},
     .device = &hsdr_cuda_q1516_ops},
    {.name = "cuda.q1516_p2", .backend = "cuda", .family = "q1516",
     .summary = "cuda.q1516 on the 2-bit layout (cuda.direct_mma_p2's split kernel and A[8]), the same int64 Q15.16 "
                "end",
     .outputs = HSDR_OUT_A | HSDR_OUT_Q1516, .stages = ST(CONVERT) | ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .precision = 32, .unavailable = hsdr_cuda_unavailable, .matvec = hsdr_cuda_matvec,
     .ablatable = ST(ENCODE) | ST(ROUTE) | ST(REDUCE),
     .depth = {D(ENCODE) = 14, D(ROUTE) = 4, D(DECODE) = 2, D(REDUCE) = 8, D(SCALE) = 4, D(MATERIALIZE) = 3},
     .device = &hsdr_cuda_q1516_p2_ops},
    /* ---- Vulkan (kernels/vulkan/): activations encoded on the host, the dispatches timed by timestamps ---- */
    {.name = "vulkan.production", .backend = "vulkan", .family = "production",
     .summary = "the fork's one-column PTQ1_0 mat-vec as it dispatches on NVIDIA (5a398c96; "
                "docs/vulkan-production.md): vulkan.mmvq's q8_1 integer-dot kernel for K > 4096, vulkan.dmmv's fp32 "
                "dequantizing one up to it; y bit-identical to the C sequence of the kernel it runs",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_int_dot_unavailable, .matvec = hsdr_vulkan_matvec,
     .q8_1_order = hsdr_vulkan_production_order,
     .depth = {D(ENCODE) = 12, D(DECODE) = 6, D(REDUCE) = 12, D(SCALE) = 8}, .device = &hsdr_vulkan_production_ops},
    {.name = "vulkan.q8_0", .backend = "vulkan", .family = "baseline",
     .summary = "PTQ1_0 x Q8_0 as a compute shader (until issue 19 step 3 the Vulkan production row): the blocks' "
                "exact integer sums and fused scale chains in parallel into shared memory, then one invocation per "
                "row chains the blocks in order; y bit-identical to the CPU production path",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_unavailable, .matvec = hsdr_vulkan_matvec,
     .depth = {D(DECODE) = 10, D(REDUCE) = 11, D(SCALE) = 5}, .device = &hsdr_vulkan_q8_0_ops},
    {.name = "vulkan.q8_0_dot", .backend = "vulkan", .family = "baseline",
     .summary = "vulkan.q8_0's design and bits with each 32-block's exact integer sum four weights at a time: "
                "the trits packed as signed bytes against a word of Q8_0 values by the SPIR-V integer dot product "
                "(OpSDot through GL_EXT_spirv_intrinsics); needs shaderIntegerDotProduct",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_int_dot_unavailable, .matvec = hsdr_vulkan_matvec,
     .depth = {D(DECODE) = 8, D(REDUCE) = 9, D(SCALE) = 5}, .device = &hsdr_vulkan_q8_0_dot_ops},
    {.name = "vulkan.mmvq", .backend = "vulkan", .family = "baseline",
     .summary = "the fork's Vulkan PTQ1_0 mat-vec for K > 4096 on NVIDIA (mul_mat_vecq_ptq1_0.comp at 5a398c96), at "
                "every K: x quantized to q8_1 on the device, two invocations per block, digits two bytes at a time "
                "by x3 steps against pre-masked activation words with OpSDot, the -1 folded into the blocks' s; "
                "fmas fused and a fixed butterfly where the fork leaves them to the device: y bit-identical to its "
                "C sequence",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_int_dot_unavailable, .matvec = hsdr_vulkan_matvec,
     .q8_1_order = hsdr_vulkan_mmvq_order, .depth = {D(ENCODE) = 12, D(DECODE) = 6, D(REDUCE) = 12, D(SCALE) = 8},
     .device = &hsdr_vulkan_mmvq_ops},
    {.name = "vulkan.planar2", .backend = "vulkan", .family = "baseline",
     .summary = "vulkan.mmvq's design on the digits predecoded once on the host into 2-bit fields (34 bytes per 128 "
                "weights, converted at create, not timed): a shift and a mask per four digits against the q8_1 "
                "words as they are, the same integer sums and so the same y bits as vulkan.mmvq (as cuda.planar2 "
                "is to cuda.production); HSDR_VULKAN_PLANAR2_SHAPE=LOCAL,RPW tries another workgroup",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(ENCODE) | ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_int_dot_unavailable, .matvec = hsdr_vulkan_matvec,
     .q8_1_order = hsdr_vulkan_planar2_order, .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 12, D(SCALE) = 8},
     .device = &hsdr_vulkan_planar2_ops},
    {.name = "vulkan.planar2_fused", .backend = "vulkan", .family = "baseline",
     .summary = "vulkan.planar2 with the encode inside the mat-vec: each workgroup quantizes x to q8_1 itself into "
                "shared memory (the words of the encode dispatch), so a GEMV is one dispatch and a token has one "
                "barrier a GEMV; y bit-identical to vulkan.planar2's",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_int_dot8_unavailable, .matvec = hsdr_vulkan_matvec,
     .q8_1_order = hsdr_vulkan_planar2_order, .depth = {D(ENCODE) = 12, D(DECODE) = 2, D(REDUCE) = 12, D(SCALE) = 8},
     .device = &hsdr_vulkan_planar2_fused_ops},
    {.name = "vulkan.dmmv", .backend = "vulkan", .family = "baseline",
     .summary = "the fork's Vulkan PTQ1_0 mat-vec for K <= 4096 on NVIDIA (mul_mat_vec.comp's fp32 dequantizing "
                "path at 5a398c96), at every K: x as fp32, 8 weights an invocation and iteration, two 4-wide dots, "
                "times d, 2 rows a workgroup; the dots' order, the fma and a butterfly pinned where the fork leaves "
                "them to the device: y bit-identical to its C sequence",
     .outputs = HSDR_OUT_Y_Q8_1, .stages = ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_vulkan_unavailable, .matvec = hsdr_vulkan_matvec, .q8_1_order = hsdr_vulkan_dmmv_order,
     .depth = {D(DECODE) = 8, D(REDUCE) = 10, D(SCALE) = 4}, .device = &hsdr_vulkan_dmmv_ops},
    {.name = "vulkan.direct", .backend = "vulkan", .family = "direct",
     .summary = "direct 8-phase: a subgroup per row, each lane a word of four lanes of every group at a time, eight "
                "phase partials in registers, a reduce-scatter butterfly to one exact A[p] a lane; each phase summed "
                "over the groups in fp64, the phases added once (subgroups of 8 or more)",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_vulkan_subgroup8_unavailable, .matvec = hsdr_vulkan_matvec,
     .depth = {D(DECODE) = 6, D(ROUTE) = 8, D(REDUCE) = 9, D(SCALE) = 4}, .device = &hsdr_vulkan_direct_ops},
    {.name = "vulkan.stateset", .backend = "vulkan", .family = "stateset",
     .summary = "ballot state sets: per group and tile of R rows the occupied codes' 128-lane masks by "
                "subgroupBallot(code == k), built once; per row trit masks by ballot, bitCount of the positive and "
                "negative products per state, folded to one exact A[p] a lane by a reduce-scatter butterfly "
                "(subgroups of 8 or more)",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_vulkan_subgroup8_unavailable, .matvec = hsdr_vulkan_matvec, .uses_R = true,
     .depth = {D(ROUTE) = 170, D(DECODE) = 6, D(REDUCE) = 20, D(SCALE) = 4}, .device = &hsdr_vulkan_stateset_ops},
    {.name = "vulkan.q1516", .backend = "vulkan", .family = "q1516",
     .summary = "Q15.16 hybrid on vulkan.direct's exact A[8]: S = sum A[p] C31[p] in 64 bits as two 32-bit words (no "
                "shaderInt64) over the butterfly, Q_g materialized in fp64 per group, exact 64-bit merge over the "
                "groups",
     .outputs = HSDR_OUT_A | HSDR_OUT_Q1516, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_vulkan_subgroup8_unavailable, .matvec = hsdr_vulkan_matvec,
     .depth = {D(DECODE) = 6, D(ROUTE) = 8, D(REDUCE) = 9, D(SCALE) = 4, D(MATERIALIZE) = 3},
     .device = &hsdr_vulkan_q1516_ops},
    /* ---- Metal (kernels/metal/): on Apple the Metal GPU, timed by the command buffers' GPU times; elsewhere the
     * same .metal sources run under the CPU shim, checked against the vectors and never timed ---- */
#ifdef HSDR_METAL_HOST
#define METAL_WHERE "Metal GPU"
#else
#define METAL_WHERE "validated under the CPU shim; not yet compiled or timed on Apple hardware here"
#endif
    {.name = "metal.production", .backend = "metal", .family = "production",
     .summary = "production Metal design (" METAL_WHERE "): a 32-lane simdgroup per row with 4 blocks in flight, 8 "
                "lanes a block, each lane owning whole bytes; float-pipeline floor-form decode with pre-combined "
                "activation coefficients; y bit-identical to the CPU production path",
     .outputs = HSDR_OUT_Y_Q8_0, .stages = ST(REDUCE), .precision = 32, .needs_x = true,
     .unavailable = hsdr_metal_unavailable, .matvec = hsdr_metal_matvec,
     .depth = {D(DECODE) = 8, D(REDUCE) = 11, D(SCALE) = 5}, .device = HSDR_METAL_OPS(production)},
    {.name = "metal.direct", .backend = "metal", .family = "direct",
     .summary = "simdgroup direct 8-phase (" METAL_WHERE "): lanes own lanes of every group, eight phase partials, "
                "simd_sum of each to the exact A[8]; fp32 group sums in a float-float row accumulator",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_metal_unavailable, .matvec = hsdr_metal_matvec,
     .depth = {D(DECODE) = 6, D(ROUTE) = 8, D(REDUCE) = 9, D(SCALE) = 4}, .device = HSDR_METAL_OPS(direct)},
    {.name = "metal.stateset", .backend = "metal", .family = "stateset",
     .summary = "simd_ballot state sets (" METAL_WHERE "): per group and tile of R rows the occupied codes' masks "
                "built once; per row popcount of the positive and negative products per state, simd_sum to A[8]",
     .outputs = HSDR_OUT_Y_LNS8 | HSDR_OUT_A, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_metal_unavailable, .matvec = hsdr_metal_matvec, .uses_R = true,
     .depth = {D(ROUTE) = 170, D(DECODE) = 6, D(REDUCE) = 20, D(SCALE) = 4}, .device = HSDR_METAL_OPS(stateset)},
    {.name = "metal.q1516", .backend = "metal", .family = "q1516",
     .summary = "Q15.16 hybrid (" METAL_WHERE "): the direct A[8], S in 64-bit integers, Q_g rounded exactly from "
                "|S| m_d 2^k with 128-bit integer arithmetic (no fp64 in Metal), 64-bit row sums",
     .outputs = HSDR_OUT_A | HSDR_OUT_Q1516, .stages = ST(REDUCE), .precision = 32,
     .unavailable = hsdr_metal_unavailable, .matvec = hsdr_metal_matvec,
     .depth = {D(DECODE) = 6, D(ROUTE) = 8, D(REDUCE) = 9, D(SCALE) = 4, D(MATERIALIZE) = 3},
     .device = HSDR_METAL_OPS(q1516)},
};

const size_t hsdr_registry_count = sizeof hsdr_registry / sizeof hsdr_registry[0];
#ifdef HSDR_CPU_KERNELS
const char *const hsdr_registry_not_built = NULL;
#else
const char *const hsdr_registry_not_built =
    "cpu.*: kernels/cpu/ is x86-64 only (SSSE3/AVX2 intrinsics); the scalar ref.* rows remain";
#endif

const hsdr_variant *hsdr_variant_find(const char *name)
{
    for (size_t i = 0; i < hsdr_registry_count; i++)
        if (strcmp(hsdr_registry[i].name, name) == 0)
            return &hsdr_registry[i];
    return NULL;
}

const hsdr_variant *hsdr_backend_production(const char *backend)
{
    /* the backend's production variant that runs here (a device may have the fork dispatch one of several), else
     * its first */
    const hsdr_variant *first = NULL;
    for (size_t i = 0; i < hsdr_registry_count; i++)
        if (strcmp(hsdr_registry[i].backend, backend) == 0 && strcmp(hsdr_registry[i].family, "production") == 0) {
            if (!hsdr_variant_unavailable(&hsdr_registry[i]))
                return &hsdr_registry[i];
            if (!first)
                first = &hsdr_registry[i];
        }
    return first;
}

const char *hsdr_variant_unavailable(const hsdr_variant *v)
{
    return v->unavailable ? v->unavailable() : NULL;
}
