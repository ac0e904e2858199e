/* cpu.production: PTQ1_0 x Q8_0 with the design of the fork's x86 kernel (spec/ptq1_0.md sections 4 and 7), the row
 * every other CPU variant is compared with; also the Q8_0 quantizer every CPU kernel on Q8_0 activations shares.
 *   Idea     per 128-weight block, eight 16-lane digit vectors by the SSSE3 compare form; (t - 1) q = maddubs(t, q) -
 *            maddubs(1, q), widened into four exact int32 sub-block sums; then the fused fp32 sequence
 *            sumi = fma(d8_k, isum_k, sumi) for k = 0..3, sumf = fma(d_w, sumi, sumf), one row at a time.
 *   Layout   weights: PTQ1_0 rows as stored (no conversion). Activations: Q8_0 blocks of the x86 production quantizer
 *            (AVX2 when present, as in the production AVX2 build), their fp16 scales widened to fp32 once per matvec.
 *   Stages   encode (quantize), decode (digit extraction), reduce (maddubs / madd / hadd), scale (sumi), merge (sumf).
 *   Time it  ./build/hsdr run matrix.yaml --filter 'variant=cpu.production *'
 *   Decode   qs[0..15] loaded once give five digit vectors (bytes XOR 0x80, signed compares against 85 and 170, then
 *            v = v + v + v); qs[16..23] and qh[0..1] are laid out as three more 16-lane vectors in natural weight
 *            order (decode_block). */
#include "production_ssse3.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../stages.h"
#include "../../reference/fp16.h"
#include "../../reference/matvec.h"
#include "../../reference/ptq1_0.h"
#include "../../reference/q8.h"
#include "cpu_features.h"

void hsdr_cpu_q8_0_sums(const hsdr_block_q8_0 *q, int n, int32_t *sums)
{
    for (int b = 0; b < n; b++) {
        int32_t s = 0;
        for (int j = 0; j < 32; j++)
            s += q[b].qs[j];
        sums[b] = s; /* vectorized by the compiler; exact (|s| <= 32 * 127) */
    }
}

#define TARGET __attribute__((target("ssse3,fma,f16c")))

const char *hsdr_cpu_production_unavailable(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("ssse3") || !__builtin_cpu_supports("fma") || !hsdr_cpu_has_f16c())
        return "needs SSSE3, FMA and F16C (the production x86 build with FMA fuses the two pinned updates)";
    return NULL;
}

/* Activations: K/32 Q8_0 blocks (padded to 64 bytes), then their K/32 scales as fp32. */
typedef struct {
    hsdr_block_q8_0 *q;
    float *d;
} q8_act;

static size_t q8_bytes(int K)
{
    return (sizeof(hsdr_block_q8_0) * (size_t)(K / 32) + 63) & ~(size_t)63;
}

static q8_act act_of(const hsdr_exec *e)
{
    return (q8_act){(hsdr_block_q8_0 *)e->act, (float *)((char *)e->act + q8_bytes(e->K))};
}

size_t hsdr_cpu_production_act_bytes(int K)
{
    return q8_bytes(K) + sizeof(float) * (size_t)(K / 32);
}

/* The x86 production Q8_0 quantizer with AVX2, as the production AVX2 build runs it: amax by max of |x|, d = amax /
 * 127 and id = 127 / amax in scalar fp32, q = round-to-nearest-even(x * id) with one fp32 rounding of the product.
 * Every operation is the reference's (hsdr_q8_0_quantize_x86), so the blocks are identical. */
__attribute__((target("avx2,f16c"))) static void quantize_q8_0_avx2(const float *x, int K, hsdr_block_q8_0 *q,
                                                                   float *d)
{
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int b = 0; b < K / 32; b++, x += 32) {
        __m256 v[4], m = _mm256_setzero_ps();
        for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(x + 8 * j);
            m = _mm256_max_ps(m, _mm256_and_ps(v[j], abs_mask));
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        q[b].d = hsdr_fp32_to_fp16(amax / 127.0f);
        d[b] = _cvtsh_ss(q[b].d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i i32[4];
        for (int j = 0; j < 4; j++)
            i32[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[j], vid), _MM_FROUND_TO_NEAREST_INT |
                                                                                      _MM_FROUND_NO_EXC));
        /* pack 32 int32 to 32 int8 (values within +-127): packs work per 128-bit lane, permute restores order */
        __m256i i16a = _mm256_packs_epi32(i32[0], i32[1]), i16b = _mm256_packs_epi32(i32[2], i32[3]);
        __m256i i8 = _mm256_packs_epi16(i16a, i16b);
        i8 = _mm256_permutevar8x32_epi32(i8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)q[b].qs, i8);
    }
}

void hsdr_cpu_q8_0_quantize(const float *x, int K, hsdr_block_q8_0 *q, float *d)
{
    if (__builtin_cpu_supports("avx2")) {
        quantize_q8_0_avx2(x, K, q, d);
        return;
    }
    hsdr_q8_0_quantize_x86(x, (size_t)K, q);
    for (int b = 0; b < K / 32; b++)
        d[b] = hsdr_fp16_to_fp32(q[b].d);
}

static void encode_stage(const hsdr_exec *e)
{
    q8_act a = act_of(e);
    hsdr_cpu_q8_0_quantize(e->x, e->K, a.q, a.d);
}

void hsdr_cpu_production_prologue(const hsdr_exec *e)
{
    STAGE(e, ENCODE, encode_stage(e));
}

/* qh_powers[b]: bytes b, 3b, 9b, 27b (mod 256) at bits 0, 16, 32, 48 -- the four digit positions of a qh byte
 * (generated: for n in 0..3: v |= ((b * 3^n) mod 256) << 16 n). */
static const uint64_t qh_powers[256] = {
    0x0000000000000000ull, 0x001b000900030001ull, 0x0036001200060002ull, 0x0051001b00090003ull,
    0x006c0024000c0004ull, 0x0087002d000f0005ull, 0x00a2003600120006ull, 0x00bd003f00150007ull,
    0x00d8004800180008ull, 0x00f30051001b0009ull, 0x000e005a001e000aull, 0x002900630021000bull,
    0x0044006c0024000cull, 0x005f00750027000dull, 0x007a007e002a000eull, 0x00950087002d000full,
    0x00b0009000300010ull, 0x00cb009900330011ull, 0x00e600a200360012ull, 0x000100ab00390013ull,
    0x001c00b4003c0014ull, 0x003700bd003f0015ull, 0x005200c600420016ull, 0x006d00cf00450017ull,
    0x008800d800480018ull, 0x00a300e1004b0019ull, 0x00be00ea004e001aull, 0x00d900f30051001bull,
    0x00f400fc0054001cull, 0x000f00050057001dull, 0x002a000e005a001eull, 0x00450017005d001full,
    0x0060002000600020ull, 0x007b002900630021ull, 0x0096003200660022ull, 0x00b1003b00690023ull,
    0x00cc0044006c0024ull, 0x00e7004d006f0025ull, 0x0002005600720026ull, 0x001d005f00750027ull,
    0x0038006800780028ull, 0x00530071007b0029ull, 0x006e007a007e002aull, 0x008900830081002bull,
    0x00a4008c0084002cull, 0x00bf00950087002dull, 0x00da009e008a002eull, 0x00f500a7008d002full,
    0x001000b000900030ull, 0x002b00b900930031ull, 0x004600c200960032ull, 0x006100cb00990033ull,
    0x007c00d4009c0034ull, 0x009700dd009f0035ull, 0x00b200e600a20036ull, 0x00cd00ef00a50037ull,
    0x00e800f800a80038ull, 0x0003000100ab0039ull, 0x001e000a00ae003aull, 0x0039001300b1003bull,
    0x0054001c00b4003cull, 0x006f002500b7003dull, 0x008a002e00ba003eull, 0x00a5003700bd003full,
    0x00c0004000c00040ull, 0x00db004900c30041ull, 0x00f6005200c60042ull, 0x0011005b00c90043ull,
    0x002c006400cc0044ull, 0x0047006d00cf0045ull, 0x0062007600d20046ull, 0x007d007f00d50047ull,
    0x0098008800d80048ull, 0x00b3009100db0049ull, 0x00ce009a00de004aull, 0x00e900a300e1004bull,
    0x000400ac00e4004cull, 0x001f00b500e7004dull, 0x003a00be00ea004eull, 0x005500c700ed004full,
    0x007000d000f00050ull, 0x008b00d900f30051ull, 0x00a600e200f60052ull, 0x00c100eb00f90053ull,
    0x00dc00f400fc0054ull, 0x00f700fd00ff0055ull, 0x0012000600020056ull, 0x002d000f00050057ull,
    0x0048001800080058ull, 0x00630021000b0059ull, 0x007e002a000e005aull, 0x009900330011005bull,
    0x00b4003c0014005cull, 0x00cf00450017005dull, 0x00ea004e001a005eull, 0x00050057001d005full,
    0x0020006000200060ull, 0x003b006900230061ull, 0x0056007200260062ull, 0x0071007b00290063ull,
    0x008c0084002c0064ull, 0x00a7008d002f0065ull, 0x00c2009600320066ull, 0x00dd009f00350067ull,
    0x00f800a800380068ull, 0x001300b1003b0069ull, 0x002e00ba003e006aull, 0x004900c30041006bull,
    0x006400cc0044006cull, 0x007f00d50047006dull, 0x009a00de004a006eull, 0x00b500e7004d006full,
    0x00d000f000500070ull, 0x00eb00f900530071ull, 0x0006000200560072ull, 0x0021000b00590073ull,
    0x003c0014005c0074ull, 0x0057001d005f0075ull, 0x0072002600620076ull, 0x008d002f00650077ull,
    0x00a8003800680078ull, 0x00c30041006b0079ull, 0x00de004a006e007aull, 0x00f900530071007bull,
    0x0014005c0074007cull, 0x002f00650077007dull, 0x004a006e007a007eull, 0x00650077007d007full,
    0x0080008000800080ull, 0x009b008900830081ull, 0x00b6009200860082ull, 0x00d1009b00890083ull,
    0x00ec00a4008c0084ull, 0x000700ad008f0085ull, 0x002200b600920086ull, 0x003d00bf00950087ull,
    0x005800c800980088ull, 0x007300d1009b0089ull, 0x008e00da009e008aull, 0x00a900e300a1008bull,
    0x00c400ec00a4008cull, 0x00df00f500a7008dull, 0x00fa00fe00aa008eull, 0x0015000700ad008full,
    0x0030001000b00090ull, 0x004b001900b30091ull, 0x0066002200b60092ull, 0x0081002b00b90093ull,
    0x009c003400bc0094ull, 0x00b7003d00bf0095ull, 0x00d2004600c20096ull, 0x00ed004f00c50097ull,
    0x0008005800c80098ull, 0x0023006100cb0099ull, 0x003e006a00ce009aull, 0x0059007300d1009bull,
    0x0074007c00d4009cull, 0x008f008500d7009dull, 0x00aa008e00da009eull, 0x00c5009700dd009full,
    0x00e000a000e000a0ull, 0x00fb00a900e300a1ull, 0x001600b200e600a2ull, 0x003100bb00e900a3ull,
    0x004c00c400ec00a4ull, 0x006700cd00ef00a5ull, 0x008200d600f200a6ull, 0x009d00df00f500a7ull,
    0x00b800e800f800a8ull, 0x00d300f100fb00a9ull, 0x00ee00fa00fe00aaull, 0x00090003000100abull,
    0x0024000c000400acull, 0x003f0015000700adull, 0x005a001e000a00aeull, 0x00750027000d00afull,
    0x00900030001000b0ull, 0x00ab0039001300b1ull, 0x00c60042001600b2ull, 0x00e1004b001900b3ull,
    0x00fc0054001c00b4ull, 0x0017005d001f00b5ull, 0x00320066002200b6ull, 0x004d006f002500b7ull,
    0x00680078002800b8ull, 0x00830081002b00b9ull, 0x009e008a002e00baull, 0x00b90093003100bbull,
    0x00d4009c003400bcull, 0x00ef00a5003700bdull, 0x000a00ae003a00beull, 0x002500b7003d00bfull,
    0x004000c0004000c0ull, 0x005b00c9004300c1ull, 0x007600d2004600c2ull, 0x009100db004900c3ull,
    0x00ac00e4004c00c4ull, 0x00c700ed004f00c5ull, 0x00e200f6005200c6ull, 0x00fd00ff005500c7ull,
    0x00180008005800c8ull, 0x00330011005b00c9ull, 0x004e001a005e00caull, 0x00690023006100cbull,
    0x0084002c006400ccull, 0x009f0035006700cdull, 0x00ba003e006a00ceull, 0x00d50047006d00cfull,
    0x00f00050007000d0ull, 0x000b0059007300d1ull, 0x00260062007600d2ull, 0x0041006b007900d3ull,
    0x005c0074007c00d4ull, 0x0077007d007f00d5ull, 0x00920086008200d6ull, 0x00ad008f008500d7ull,
    0x00c80098008800d8ull, 0x00e300a1008b00d9ull, 0x00fe00aa008e00daull, 0x001900b3009100dbull,
    0x003400bc009400dcull, 0x004f00c5009700ddull, 0x006a00ce009a00deull, 0x008500d7009d00dfull,
    0x00a000e000a000e0ull, 0x00bb00e900a300e1ull, 0x00d600f200a600e2ull, 0x00f100fb00a900e3ull,
    0x000c000400ac00e4ull, 0x0027000d00af00e5ull, 0x0042001600b200e6ull, 0x005d001f00b500e7ull,
    0x0078002800b800e8ull, 0x0093003100bb00e9ull, 0x00ae003a00be00eaull, 0x00c9004300c100ebull,
    0x00e4004c00c400ecull, 0x00ff005500c700edull, 0x001a005e00ca00eeull, 0x0035006700cd00efull,
    0x0050007000d000f0ull, 0x006b007900d300f1ull, 0x0086008200d600f2ull, 0x00a1008b00d900f3ull,
    0x00bc009400dc00f4ull, 0x00d7009d00df00f5ull, 0x00f200a600e200f6ull, 0x000d00af00e500f7ull,
    0x002800b800e800f8ull, 0x004300c100eb00f9ull, 0x005e00ca00ee00faull, 0x007900d300f100fbull,
    0x009400dc00f400fcull, 0x00af00e500f700fdull, 0x00ca00ee00fa00feull, 0x00e500f700fd00ffull,
};

/* One compare-form digit step on 16 bytes: digits [v >= 86] + [v >= 171] (0..2), then v = 3 v mod 256. */
TARGET static inline __m128i digit_step(__m128i *v)
{
    const __m128i s = _mm_xor_si128(*v, _mm_set1_epi8((char)0x80));
    const __m128i c1 = _mm_cmpgt_epi8(s, _mm_set1_epi8((char)(85 ^ 0x80)));
    const __m128i c2 = _mm_cmpgt_epi8(s, _mm_set1_epi8((char)(170 ^ 0x80)));
    *v = _mm_add_epi8(_mm_add_epi8(*v, *v), *v);
    return _mm_sub_epi8(_mm_setzero_si128(), _mm_add_epi8(c1, c2));
}

/* The eight 16-lane digit vectors of a block, in natural weight order (weights 16 j .. 16 j + 15 in D[j]). */
TARGET static inline void decode_block(const uint8_t *blk, __m128i D[8])
{
    __m128i v = _mm_loadu_si128((const __m128i *)blk); /* qs[0..15]: digit n of byte m is weight 16 n + m */
    for (int n = 0; n < 5; n++)
        D[n] = digit_step(&v);
    /* qs[16..23]: digit n of byte m is weight 80 + 8 n + m. Lanes [b, 3b] give weights 80..95, [9b, 27b] 96..111. */
    __m128i b = _mm_loadl_epi64((const __m128i *)(blk + 16));
    __m128i b3 = _mm_add_epi8(_mm_add_epi8(b, b), b);
    __m128i w = _mm_unpacklo_epi64(b, b3);
    D[5] = digit_step(&w); /* w becomes [3b, 9b] */
    w = _mm_add_epi8(_mm_add_epi8(w, w), w); /* [9b, 27b] */
    D[6] = digit_step(&w);                   /* w becomes [27b, 81b] */
    /* weights 112..119 from 81b; 120..127 from qh: lanes q0, q1, 3q0, 3q1, 9q0, 9q1, 27q0, 27q1 (weight
     * 120 + 2n + h) */
    uint64_t qh = qh_powers[blk[24]] | qh_powers[blk[25]] << 8;
    __m128i t = _mm_unpacklo_epi64(_mm_unpackhi_epi64(w, w), _mm_cvtsi64_si128((long long)qh));
    D[7] = digit_step(&t);
}

/* (t - 1) . q over 16 lanes, as four int32 partial sums. */
TARGET static inline __m128i dot16(__m128i d, __m128i q)
{
    const __m128i ones8 = _mm_set1_epi8(1), ones16 = _mm_set1_epi16(1);
    return _mm_madd_epi16(_mm_sub_epi16(_mm_maddubs_epi16(d, q), _mm_maddubs_epi16(ones8, q)), ones16);
}

/* isum[k] = exact int32 sum of sub-block k (32 weights). */
TARGET static inline __m128i reduce_block(const __m128i D[8], const hsdr_block_q8_0 *y)
{
    __m128i acc[4];
    for (int k = 0; k < 4; k++) {
        __m128i q0 = _mm_loadu_si128((const __m128i *)y[k].qs), q1 = _mm_loadu_si128((const __m128i *)(y[k].qs + 16));
        acc[k] = _mm_add_epi32(dot16(D[2 * k], q0), dot16(D[2 * k + 1], q1));
    }
    return _mm_hadd_epi32(_mm_hadd_epi32(acc[0], acc[1]), _mm_hadd_epi32(acc[2], acc[3]));
}

/* sumi = fma chain over the four sub-blocks, starting at +0 (spec section 7, step 3). */
TARGET static inline float scale_block(__m128i isum, const float *d8)
{
    int32_t s[4];
    _mm_storeu_si128((__m128i *)s, isum);
    float sumi = 0.0f;
    for (int k = 0; k < 4; k++)
        sumi = fmaf(d8[k], (float)s[k], sumi);
    return sumi;
}

TARGET static float row_dot(const uint8_t *row, int G, const q8_act *a)
{
    float sumf = 0.0f;
    for (int g = 0; g < G; g++) {
        const uint8_t *blk = row + (size_t)g * HSDR_PTQ1_0_BYTES;
        __m128i D[8];
        decode_block(blk, D);
        float sumi = scale_block(reduce_block(D, a->q + 4 * g), a->d + 4 * g);
        sumf = fmaf(_cvtsh_ss(hsdr_ptq1_0_d_bits(blk)), sumi, sumf); /* step 4 (F16C: exact, as the reference) */
    }
    return sumf;
}

void hsdr_cpu_production_rows(const hsdr_exec *e, int r0, int r1, void *scratch)
{
    (void)scratch;
    const int G = e->K / HSDR_QK;
    const q8_act a = act_of(e);
    for (int r = r0; r < r1; r++)
        e->y[r] = row_dot((const uint8_t *)e->weights + (size_t)r * G * HSDR_PTQ1_0_BYTES, G, &a);
}

/* ---- stages alone: each reads what the previous stage of the fused kernel would hand it, kept in scratch ---- */

typedef struct {
    unsigned ready;   /* HSDR_STAGE_BIT of the stages whose outputs below are valid */
    __m128i sink;     /* keeps decode-alone work observable */
} stage_head;

size_t hsdr_cpu_production_scratch_bytes(int K, int R)
{
    (void)R;
    size_t G = (size_t)K / HSDR_QK;
    return sizeof(stage_head) + 8 * 16 * G + 16 * G + 4 * G; /* digits, isums, sumi of one row */
}

TARGET static void stage_alone(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    const int G = e->K / HSDR_QK;
    const q8_act a = act_of(e);
    stage_head *h = scratch;
    __m128i *digits = (__m128i *)(h + 1);
    __m128i *isum = digits + 8 * G;
    float *sumi = (float *)(isum + G);
    const uint8_t *W = e->weights;
    if (s == HSDR_STAGE_ENCODE) {
        if (r0 == 0)
            encode_stage(e);
        return;
    }
    if (r0 >= r1)
        return;
    /* inputs of the later stages, produced once from row r0 (scratch starts zeroed: nothing ready) */
    const int need_digits = s == HSDR_STAGE_REDUCE || s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE;
    const int need_isum = s == HSDR_STAGE_SCALE || s == HSDR_STAGE_MERGE, need_sumi = s == HSDR_STAGE_MERGE;
    if (need_digits && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_DECODE))) {
        for (int g = 0; g < G; g++)
            decode_block(W + ((size_t)r0 * G + g) * HSDR_PTQ1_0_BYTES, digits + 8 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_DECODE);
    }
    if (need_isum && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_REDUCE))) {
        for (int g = 0; g < G; g++)
            isum[g] = reduce_block(digits + 8 * g, a.q + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_REDUCE);
    }
    if (need_sumi && !(h->ready & HSDR_STAGE_BIT(HSDR_STAGE_SCALE))) {
        for (int g = 0; g < G; g++)
            sumi[g] = scale_block(isum[g], a.d + 4 * g);
        h->ready |= HSDR_STAGE_BIT(HSDR_STAGE_SCALE);
    }
    for (int r = r0; r < r1; r++) {
        const uint8_t *row = W + (size_t)r * G * HSDR_PTQ1_0_BYTES;
        switch (s) {
        case HSDR_STAGE_DECODE: {
            __m128i acc = _mm_setzero_si128();
            for (int g = 0; g < G; g++) {
                __m128i D[8];
                decode_block(row + (size_t)g * HSDR_PTQ1_0_BYTES, D);
                for (int j = 0; j < 8; j++)
                    acc = _mm_xor_si128(acc, D[j]);
            }
            h->sink = _mm_xor_si128(h->sink, acc);
            break;
        }
        case HSDR_STAGE_REDUCE:
            for (int g = 0; g < G; g++)
                isum[g] = reduce_block(digits + 8 * g, a.q + 4 * g);
            break;
        case HSDR_STAGE_SCALE:
            for (int g = 0; g < G; g++)
                sumi[g] = scale_block(isum[g], a.d + 4 * g);
            break;
        case HSDR_STAGE_MERGE: {
            float sumf = 0.0f;
            for (int g = 0; g < G; g++)
                sumf = fmaf(_cvtsh_ss(hsdr_ptq1_0_d_bits(row + (size_t)g * HSDR_PTQ1_0_BYTES)), sumi[g], sumf);
            e->y[r] = sumf;
            break;
        }
        default:
            return;
        }
    }
}

void hsdr_cpu_production_stage(const hsdr_exec *e, hsdr_stage s, int r0, int r1, void *scratch)
{
    stage_alone(e, s, r0, r1, scratch);
}
