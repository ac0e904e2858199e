/* cuda.planar2 and its streamed kin cuda.planar2_tma, _tma_fused, _ring and _wr (our baselines): PTQ1_0 converted
 * once on the device (stage convert) into a predecoded 2-bit form, then a design whose y is bit-identical to
 * cuda.production's (hsdr_matvec_q8_1 in hsdr_cuda_soa_order): only the digit decode changes.
 *   Idea     the digits {0, 1, 2} predecoded into bit pairs, so that a shift and a mask per four digits replace the
 *            x3 steps of PTQ1_0; the same dp4a sums, exact sums subtracted, the fork's fp32 steps: cuda.production's
 *            design (soa.cuh), or the streamed one (tma.cuh, warp_rows.cuh), on fewer instructions per weight.
 *   Layout   planar2.cuh: 32 code bytes + the fp16 scale per (row, K-block), 2.125 bits per weight; cuda.planar2 in
 *            blocks (row-major codes, then the scales), the streamed variants in rows. Activations: those of the
 *            design they run (soa.cuh's SOA_ISUM words, or tma.cuh's q[K], d8, isum).
 *   Stages   convert (on the device, once), encode, reduce (the mat-vec: decode, dot, scale and merge fused); the
 *            _fused and _ring variants encode inside the mat-vec (no encode launch).
 *   Time it  ./build/hsdr run matrix.yaml --set variants=backend:cuda --filter 'variant=cuda.planar2 *'
 *            (likewise cuda.planar2_tma, cuda.planar2_tma_fused, cuda.planar2_ring, cuda.planar2_wr)
 *
 * codes   32 bytes per (row, K-block): byte b holds the digits {0, 1, 2} of weights b, b + 32, b + 64, b + 96 in bit
 *         pairs 0, 2, 4, 6, so word w (bytes 4w..4w+3), shifted right by 2j and masked with 0x03030303, is the four
 *         digits of weights 32 j + 4 w .. + 3: against activation word 8 j + w. 34 bytes per 128 weights with the
 *         fp16 scale (2.125 bits per weight, 1.21x PTQ1_0's 28).
 * convert one thread per (row, K-block): the base-3 digits of the PTQ1_0 block in natural order (spec/ptq1_0.md
 *         section 1), packed into the 32 code bytes, and the scale copied.
 *
 * cuda.planar2      the codes of every block row-major, then all the blocks' scales in the same order;
 *                   cuda.production's SOA_ISUM design on it (soa.cuh: the same activations, geometry and fp32
 *                   steps); two 16-byte loads per block, shift + and per digit word, 32 dp4a into four exact sums.
 * cuda.planar2_tma  per row: bytes 0..15 of its blocks' codes, then bytes 16..31, then its scales, padded to 16 bytes
 *                   (a pass of rows is one span; thread t's two 16-byte reads are conflict-free); tma.cuh's streamed
 *                   design on it; digit word j taken by one and with 0x03030303 << 2j, the unsigned-by-signed dp4a
 *                   summing 4^j times the digits, the exact sum shifted back. _tma_fused, _ring and _wr: the same
 *                   layout through tma.cuh's fused encode, its ring, and warp_rows.cuh. */
#include "planar2.cuh"
#include "soa.cuh"
#include "tma.cuh"
#include "warp_rows.cuh"

enum { CODE_BYTES = 32 };

size_t hsdr_planar2_blocks_layout_bytes(int K, int N)
{
    return (size_t)N * (K / 128) * (CODE_BYTES + 2);
}

/* The digit {0, 1, 2} of weight e (0..127) of a PTQ1_0 block: its byte and digit position (spec/ptq1_0.md section 1),
 * then n steps of the x3 recurrence. */
static __device__ int ptq1_0_digit(const uint8_t *blk, int e)
{
    int byte, n;
    if (e < 80)
        byte = blk[e & 15], n = e >> 4;
    else if (e < 120)
        byte = blk[16 + ((e - 80) & 7)], n = (e - 80) >> 3;
    else
        byte = blk[24 + ((e - 120) & 1)], n = (e - 120) >> 1;
    uint32_t v = (uint32_t)byte;
    for (int i = 0; i < n; i++)
        v = (v * 3u) & 0xffu;
    return (int)((v * 3u) >> 8);
}

/* The 32 code bytes of one PTQ1_0 block, as eight words. */
static __device__ void planar2_codes(const uint8_t *blk, uint32_t out[CODE_BYTES / 4])
{
    for (int w = 0; w < CODE_BYTES / 4; w++) {
        uint32_t word = 0;
        for (int by = 0; by < 4; by++) {
            const int b = 4 * w + by;
            uint32_t v = 0;
            for (int j = 0; j < 4; j++)
                v |= (uint32_t)ptq1_0_digit(blk, b + 32 * j) << (2 * j);
            word |= v << (8 * by);
        }
        out[w] = word;
    }
}

__global__ void hsdr_cu_planar2_convert(const uint8_t *src, size_t blocks, uint8_t *codes, uint16_t *scales)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= blocks)
        return;
    const uint8_t *blk = src + i * HSDR_PTQ1_0_BLOCK;
    uint32_t out[CODE_BYTES / 4];
    planar2_codes(blk, out);
    uint4 *dst = (uint4 *)(codes + i * CODE_BYTES);
    dst[0] = make_uint4(out[0], out[1], out[2], out[3]);
    dst[1] = make_uint4(out[4], out[5], out[6], out[7]);
    scales[i] = (uint16_t)(blk[26] | blk[27] << 8);
}

cudaError_t hsdr_planar2_blocks_convert(hsdr_device_run *r, const uint8_t *src, uint8_t *dst)
{
    const size_t blocks = (size_t)r->N * (r->K / 128);
    hsdr_cu_planar2_convert<<<(unsigned)((blocks + 255) / 256), 256, 0, r->stream>>>(
        src, blocks, dst, (uint16_t *)(dst + blocks * CODE_BYTES));
    return cudaGetLastError();
}

/* The predecoded block of a row against the K-block's activation words. */
struct planar2_soa {
    static __device__ __forceinline__ const uint8_t *prefetch(const uint8_t *w, int N, int G, int row, int kb)
    {
        (void)N;
        return w + ((size_t)row * G + kb) * CODE_BYTES;
    }
    static __device__ __forceinline__ float dot(const uint8_t *w, int N, int G, int row, int kb, const int32_t *ya,
                                               float p)
    {
        const size_t i = (size_t)row * G + kb;
        const uint4 *c = (const uint4 *)(w + i * CODE_BYTES);
        const uint4 a = c[0], b = c[1];
        const uint32_t wd[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        int sumi[4] = {0, 0, 0, 0};
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int q = 0; q < 8; q++)
                sumi[j] = __dp4a((int)((wd[q] >> (2 * j)) & 0x03030303u), ya[(8 * j + q) * HSDR_SOA_GROUP_KB], sumi[j]);
        const __half d = *(const __half *)(w + (size_t)N * G * CODE_BYTES + 2 * i);
        return hsdr_soa_finish(sumi, ya, __half2float(d), p);
    }
};

static const hsdr_cu_kernels kernels = {1,
                                        hsdr_soa_act_bytes,
                                        hsdr_soa_prepare<planar2_soa>,
                                        hsdr_soa_launch,
                                        NULL,
                                        hsdr_planar2_blocks_layout_bytes,
                                        hsdr_planar2_blocks_convert,
                                        NULL};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_ops = HSDR_CU_OPS(kernels);

/* ---- cuda.planar2_tma ---- */

size_t hsdr_planar2_layout_bytes(int K, int N)
{
    return (size_t)N * hsdr_planar2_row_bytes(K / 128);
}

__global__ void hsdr_cu_planar2_split_convert(const uint8_t *src, int G, size_t blocks, uint8_t *dst)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= blocks)
        return;
    const uint8_t *blk = src + i * HSDR_PTQ1_0_BLOCK;
    const size_t row = i / G;
    const int b = (int)(i % G);
    uint8_t *r = dst + row * hsdr_planar2_row_bytes(G);
    uint32_t out[CODE_BYTES / 4];
    planar2_codes(blk, out);
    ((uint4 *)r)[b] = make_uint4(out[0], out[1], out[2], out[3]);
    ((uint4 *)r)[G + b] = make_uint4(out[4], out[5], out[6], out[7]);
    ((uint16_t *)(r + (size_t)G * CODE_BYTES))[b] = (uint16_t)(blk[26] | blk[27] << 8);
    if (b == 0) /* the row's padding, so that every byte of the layout is defined */
        for (unsigned p = (unsigned)G * (CODE_BYTES + 2); p < hsdr_planar2_row_bytes(G); p++)
            r[p] = 0;
}

cudaError_t hsdr_planar2_convert(hsdr_device_run *r, const uint8_t *src, uint8_t *dst)
{
    const size_t blocks = (size_t)r->N * (r->K / 128);
    hsdr_cu_planar2_split_convert<<<(unsigned)((blocks + 255) / 256), 256, 0, r->stream>>>(src, r->K / 128, blocks,
                                                                                            dst);
    return cudaGetLastError();
}

struct planar2_tma {
    static unsigned row_bytes(int G)
    {
        return hsdr_planar2_row_bytes(G);
    }
    static __device__ __forceinline__ float sums(const uint8_t *row, int G, int b, const int32_t act[32], int sumi[4])
    {
        const uint4 lo = ((const uint4 *)row)[b], hi = ((const uint4 *)row)[G + b];
        const uint32_t wd[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        int s4[4] = {0, 0, 0, 0};
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int q = 0; q < 8; q++)
                s4[j] = hsdr_cu_dp4a_us(wd[q] & (0x03030303u << (2 * j)), act[8 * j + q], s4[j]);
#pragma unroll
        for (int j = 0; j < 4; j++)
            sumi[j] = s4[j] >> (2 * j); /* exact: every term is a multiple of 4^j */
        return __half2float(((const __half *)(row + (size_t)G * CODE_BYTES))[b]);
    }
};

static const hsdr_cu_kernels tma_kernels = {1,    hsdr_tma_act_bytes, hsdr_tma_prepare<planar2_tma, false>,
                                            hsdr_tma_launch<planar2_tma, false>, NULL, hsdr_planar2_layout_bytes,
                                            hsdr_planar2_convert, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_tma_ops = HSDR_CU_OPS(tma_kernels);

/* cuda.planar2_tma_fused: the same, the encode inside the mat-vec (the grid shares it: tma.cuh). */
static const hsdr_cu_kernels tma_fused_kernels = {1,    hsdr_tma_act_bytes, hsdr_tma_prepare<planar2_tma, true>,
                                               hsdr_tma_launch<planar2_tma, true>, NULL, hsdr_planar2_layout_bytes,
                                               hsdr_planar2_convert, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_tma_fused_ops = HSDR_CU_OPS(tma_fused_kernels);

/* cuda.planar2_ring: the fused kernel as one persistent kernel per token (tma.cuh's ring). */
static const hsdr_cu_kernels ring_kernels = {1,
                                             hsdr_tma_ring_act_bytes,
                                             hsdr_tma_ring_prepare<planar2_tma>,
                                             hsdr_tma_ring_launch<planar2_tma>,
                                             NULL,
                                             hsdr_planar2_layout_bytes,
                                             hsdr_planar2_convert,
                                             hsdr_tma_ring_token<planar2_tma>};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_ring_ops = HSDR_CU_OPS(ring_kernels);

/* cuda.planar2_wr: the same layout through the warp-rows consumer (warp_rows.cuh: no CTA barrier per pass). */
static const hsdr_cu_kernels wr_kernels = {1,    hsdr_tma_act_bytes, hsdr_wr_prepare<planar2_tma>,
                                           hsdr_wr_launch<planar2_tma>, NULL, hsdr_planar2_layout_bytes,
                                           hsdr_planar2_convert, NULL};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_wr_ops = HSDR_CU_OPS(wr_kernels);
