// The q8_1 quantizer's arithmetic (docs/vulkan-production.md section 3, with the roundings pinned as
// hsdr_q8_1_quantize_recip): per 32 values d = amax / 127 and 1 / d each correctly rounded (through fp64: their exact
// values lie at least 2^-49 from an fp32 midpoint, and Vulkan's fp64 division errs by at most 2.5 ulp, 2^-51.7),
// q = round(x * (1 / d)) half away from zero, the integer sum of the q, and the block's (fp16 d, fp16 of d * sum)
// rounded to nearest even by integer code. Shared by quantize_q8_1.comp (its own dispatch) and planar2.comp built
// with FUSED_ENCODE (each workgroup quantizing x itself), so both give the same words. Included after common.glsl.

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

// d and 1 / d of a 32-value block from its amax.
void q8_1_scale(float amax, out float d, out float id)
{
    d = float(double(amax) / 127.0LF);
    id = d != 0.0 ? float(1.0LF / double(d)) : 0.0;
}

// Four values as four int8 q in one word (value j in byte j), and the sum of their q.
uint q8_1_word(vec4 v, float id, out int sum)
{
    sum = 0;
    uint word = 0u;
    for (uint j = 0u; j < 4u; j++) {
        precise float p = v[j] * id;
        precise float r = floor(abs(p) + 0.5); // half away from zero: exact below 2^23
        const int q = p < 0.0 ? -int(r) : int(r);
        sum += q;
        word |= (uint(q) & 0xffu) << (8u * j);
    }
    return word;
}

// The (d, s) word of a block: fp16 d, then fp16 of d * (its integer sum).
uint q8_1_ds(float d, int total)
{
    precise float s = float(total) * d;
    return f16_bits(d) | (f16_bits(s) << 16);
}
