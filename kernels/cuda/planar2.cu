/* cuda.planar2 (our baseline): PTQ1_0 converted once on the device (stage convert) into a predecoded 2-bit form,
 * then the fork's one-column SOA_ISUM design on it (soa.cuh: the same activations, geometry and fp32 steps), so y is
 * bit-identical to cuda.production's (hsdr_matvec_q8_1 in hsdr_cuda_soa_order): only the digit decode changes.
 *
 * layout  per (row, K-block), row-major: 32 bytes of codes; byte b holds the digits {0, 1, 2} of weights b, b + 32,
 *         b + 64, b + 96 in bit pairs 0, 2, 4, 6. Then, after all the codes, the blocks' fp16 scales in the same
 *         order. 34 bytes per 128 weights (2.125 bits per weight, 1.21x PTQ1_0's 28).
 * decode  word w (bytes 4w..4w+3) of a block, shifted right by 2j and masked with 0x03030303, is the four digits of
 *         weights 32 j + 4 w .. + 3: one shift and one and per four weights, against activation word 8 j + w of the
 *         SOA layout (the word of element e is e / 4). Two 16-byte loads per block; 32 dp4a into four exact sums.
 * convert one thread per (row, K-block): the base-3 digits of the PTQ1_0 block in natural order (spec/ptq1_0.md
 *         section 1), packed into the 32 code bytes, and the scale copied. */
#include "soa.cuh"

enum { CODE_BYTES = 32 };

static size_t layout_bytes(int K, int N)
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

__global__ void hsdr_cu_planar2_convert(const uint8_t *src, size_t blocks, uint8_t *codes, uint16_t *scales)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= blocks)
        return;
    const uint8_t *blk = src + i * HSDR_PTQ1_0_BLOCK;
    uint32_t out[CODE_BYTES / 4];
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
    uint4 *dst = (uint4 *)(codes + i * CODE_BYTES);
    dst[0] = make_uint4(out[0], out[1], out[2], out[3]);
    dst[1] = make_uint4(out[4], out[5], out[6], out[7]);
    scales[i] = (uint16_t)(blk[26] | blk[27] << 8);
}

static cudaError_t convert(hsdr_device_run *r, const uint8_t *src, uint8_t *dst)
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

static const hsdr_cu_kernels kernels = {1,    hsdr_soa_act_bytes, hsdr_soa_prepare<planar2_soa>, hsdr_soa_launch,
                                        NULL, layout_bytes,       convert};
extern "C" const hsdr_device_ops hsdr_cuda_planar2_ops = HSDR_CU_OPS(kernels);
