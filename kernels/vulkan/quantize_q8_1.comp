#version 450
// The q8_1 activations of vulkan.mmvq (docs/vulkan-production.md section 3: the upstream quantizer the fork runs
// before its integer-dot mat-vec), with the rounding the fork leaves open pinned so that y can be held to a C
// reference bit for bit (hsdr_q8_1_quantize_recip): per 32 values d = amax / 127 and 1 / d each correctly rounded
// (through fp64: their exact values lie at least 2^-49 from an fp32 midpoint, and Vulkan's fp64 division errs by at
// most 2.5 ulp, 2^-51.7), q = round(x * (1 / d)) half away from zero, the integer sum of the q, and the block's
// (fp16 d, fp16 of d * sum) rounded to nearest even by integer code.
//
// A workgroup of 32 invocations fills one 144-byte block_q8_1_x4 (four 32-value blocks: their four (d, s) words,
// then 32 words of four int8): invocation i quantizes values 4 i .. 4 i + 3; eight invocations make a block, their
// amax and sum through shared memory (max and integer sums: any order gives the same).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(std430, binding = 2) writeonly buffer Q81Out { uint Q81W[]; }; // binding 2 (SCALE) as the q8_1 words

shared float s_amax[32];
shared int s_sum[32];

// fp32 -> fp16 bits, round to nearest even (hsdr_fp32_to_fp16; no NaN reaches here).
uint f16_bits(float f)
{
    const uint u = floatBitsToUint(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x477ff000u) // >= 65520 (and infinity): infinity
        return sign | 0x7c00u;
    if (a >= 0x38800000u) { // normal
        uint h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13);
        const uint rest = a & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u))
            h++; // a carry bumps the exponent
        return sign | h;
    }
    if (a < 0x33000000u) // below 2^-25 (2^-25 itself ties to the even 0)
        return sign;
    const uint shift = 126u - (a >> 23), mant = (a & 0x7fffffu) | 0x800000u; // subnormal: 14 <= shift <= 24
    uint h = mant >> shift;
    const uint rest = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u) != 0u))
        h++; // 1024 is the smallest normal's pattern
    return sign | h;
}

void main()
{
    const uint tid = gl_LocalInvocationID.x, blk = gl_WorkGroupID.x, base = 128u * blk + 4u * tid;
    vec4 v = vec4(0.0);
    for (uint j = 0u; j < 4u; j++)
        v[j] = base + j < PC.K ? uintBitsToFloat(ACT[base + j]) : 0.0;
    s_amax[tid] = max(max(abs(v.x), abs(v.y)), max(abs(v.z), abs(v.w)));
    barrier();
    const uint k = tid >> 3; // the 32-value block
    float amax = 0.0;
    for (uint i = 0u; i < 8u; i++)
        amax = max(amax, s_amax[8u * k + i]);
    const float d = float(double(amax) / 127.0LF);
    const float id = d != 0.0 ? float(1.0LF / double(d)) : 0.0;
    int sum = 0;
    uint word = 0u;
    for (uint j = 0u; j < 4u; j++) {
        precise float p = v[j] * id;
        precise float r = floor(abs(p) + 0.5); // half away from zero: exact below 2^23
        const int q = p < 0.0 ? -int(r) : int(r);
        sum += q;
        word |= (uint(q) & 0xffu) << (8u * j);
    }
    Q81W[36u * blk + 4u + tid] = word;
    s_sum[tid] = sum;
    barrier();
    if ((tid & 7u) == 0u) {
        int total = 0;
        for (uint i = 0u; i < 8u; i++)
            total += s_sum[tid + i];
        precise float s = float(total) * d;
        Q81W[36u * blk + k] = f16_bits(d) | (f16_bits(s) << 16);
    }
}
