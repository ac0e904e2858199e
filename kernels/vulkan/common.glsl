// The interface every hsdr Vulkan shader shares with the host (kernels/vulkan/vk.c). GLSL 450, SPIR-V 1.5.
//
// Bindings (all std430 storage buffers; a variant ignores those it does not use):
//   0  W      PTQ1_0 weights as 32-bit words: block (row r, group g) is the 7 words at (r * G + g) * 7
//   1  ACT    activations, 4 bytes a word (byte i of the vector = bits 8 (i & 3) .. of word i >> 2): Q8_0 int8
//             values (production) or LNS8 codes (the HSDR variants), encoded by the host
//   2  SCALE  production: the fp32 value of each Q8_0 block's fp16 scale (K / 32 floats)
//   3  Y      y, N floats
//   4  AOUT   A[8] per (row, group): N * G * 8 ints, written when (PC.flags & FLAG_A) != 0
//   5  QG     Q15.16 per (row, group), N * G int64 as (low, high) word pairs (q1516 only, when PC.flags & FLAG_Q)
//   6  QR     Q15.16 per row, N int64 likewise (q1516 only, same flag)
// Push constants: K, N, G = K / 128, e (LNS8 pre-scale), flags, R (rows that share one built activation tile),
// row0 (first row of this dispatch).
// Specialization constants: 0 = local_size_x (a multiple of the subgroup size), 1 = rows per workgroup (RPW), 2 = the
// group count G of the pipeline (MAXG, for shared-memory sizes), 3 = FMA_FUSED (below).
#extension GL_KHR_shader_subgroup_basic : require
#ifdef HSDR_INT_DOT
#extension GL_EXT_spirv_intrinsics : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RPW = 1;
layout(constant_id = 2) const uint MAXG = 1; // the largest G the pipeline serves (sizes shared arrays)
layout(constant_id = 3) const bool FMA_FUSED = false; // this device's fma is fused (vk.c's probe): fma_f32 uses it

layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Activations { uint ACT[]; };
layout(std430, binding = 2) readonly buffer Scales { float SCALE[]; };
layout(std430, binding = 3) writeonly buffer Output { float Y[]; };
layout(std430, binding = 4) writeonly buffer Phases { int AOUT[]; };
layout(std430, binding = 5) writeonly buffer GroupQ { uvec2 QG[]; };
layout(std430, binding = 6) writeonly buffer RowQ { uvec2 QR[]; };

layout(push_constant) uniform Push {
    uint K, N, G;
    int e;
    uint flags, R, row0;
} PC;

const uint FLAG_A = 1u, FLAG_Q = 2u;

// Byte i (0..27) of the PTQ1_0 block whose first word is `base`.
uint ptq_byte(uint base, uint i)
{
    return (W[base + (i >> 2)] >> (8u * (i & 3u))) & 0xffu;
}

// The block's fp32 scale (its fp16 d, bytes 26..27).
float ptq_scale(uint base)
{
    return unpackHalf2x16(W[base + 6u] >> 16).x;
}

// 3^n for the digit positions n of a PTQ1_0 byte.
const uint PTQ_POW3[5] = uint[5](1u, 3u, 9u, 27u, 81u);

// The byte b (0..25) and digit position n of weight e (0..127) of a PTQ1_0 block (spec/ptq1_0.md section 1).
void ptq_locate(uint e, out uint b, out uint n)
{
    if (e < 80u) {
        b = e & 15u, n = e >> 4;
    } else if (e < 120u) {
        b = 16u + ((e - 80u) & 7u), n = (e - 80u) >> 3;
    } else {
        b = 24u + ((e - 120u) & 1u), n = (e - 120u) >> 1;
    }
}

// The ternary value (-1, 0, +1) of weight e (0..127) of the block at `base`: digit n of byte b is
// (3 ((b 3^n) mod 256)) >> 8.
int ptq_trit(uint base, uint e)
{
    uint b, n;
    ptq_locate(e, b, n);
    uint v = (ptq_byte(base, b) * PTQ_POW3[n]) & 0xffu;
    return int((3u * v) >> 8) - 1;
}

// The ternary values of weights e .. e + 3 (e a multiple of 4) of the block at `base`, as four signed bytes (byte j:
// weight e + j, -1 as 0xff): ptq_trit's digits, four at a time. Below weight 120 the four share one digit position
// of four consecutive bytes (one word); weights 120 .. 127 are digits 0 .. 3 of the two qh bytes, alternating.
uint ptq_trits4(uint base, uint e)
{
    uint b, n;
    ptq_locate(e, b, n);
    uvec4 v;
    if (e < 120u) {
        const uint word = W[base + (b >> 2)];
        v = (uvec4(word, word >> 8, word >> 16, word >> 24) & 0xffu) * PTQ_POW3[n];
    } else {
        const uint q0 = W[base + 6u] & 0xffu, q1 = (W[base + 6u] >> 8) & 0xffu;
        v = uvec4(q0 * PTQ_POW3[n], q1 * PTQ_POW3[n], q0 * PTQ_POW3[n + 1u], q1 * PTQ_POW3[n + 1u]);
    }
    const uvec4 t = (((3u * (v & 0xffu)) >> 8) + 255u) & 0xffu; // digit - 1 as a byte
    return t.x | (t.y << 8) | (t.z << 16) | (t.w << 24);
}

// Byte i of the activation vector: a Q8_0 value (signed) or an LNS8 code (unsigned).
int act_q8(uint i)
{
    return bitfieldExtract(int(ACT[i >> 2]), int(8u * (i & 3u)), 8);
}
uint act_code(uint i)
{
    return (ACT[i >> 2] >> (8u * (i & 3u))) & 0xffu;
}

// LNS8 (spec/lns8.md section 1): c_p = 2^((p - 2) / 8) as doubles, and round(c_p 2^31) for Q15.16.
const double LNS8_CP[8] = double[8](0.84089641525371454303LF, 0.91700404320467123175LF, 1.0LF,
                                    1.09050773266525765921LF, 1.18920711500272106672LF, 1.29683955465100966593LF,
                                    1.41421356237309504880LF, 1.54221082540794082361LF);
const uint LNS8_C31[8] = uint[8](1805811301u, 1969251188u, 2147483648u, 2341847524u, 2553802834u, 2784941738u,
                                 3037000500u, 3311872529u);

// ---- 64-bit integers as (low, high) word pairs, two's complement: the Q15.16 path needs no shaderInt64 (and
// the H200's driver, 580.159.04, gave wrong Q from the same computation in int64_t while lavapipe was right) ----

uvec2 i64_add(uvec2 a, uvec2 b)
{
    uint carry;
    const uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}

// a (signed, |a| < 2^31) times c (unsigned)
uvec2 i64_mul(int a, uint c)
{
    uint hi, lo;
    umulExtended(uint(abs(a)), c, hi, lo);
    if (a < 0) { // negate: ~v + 1
        uint carry;
        lo = uaddCarry(~lo, 1u, carry);
        hi = ~hi + carry;
    }
    return uvec2(lo, hi);
}

// The nearest double to the integer v (one rounding, as an int64 -> fp64 conversion).
double i64_to_double(uvec2 v)
{
    precise double r = double(int(v.y)) * 4294967296.0LF + double(v.x);
    return r;
}

// An integer-valued double below 2^62 in magnitude as a word pair.
uvec2 i64_from_double(double r)
{
    const double hi = floor(r / 4294967296.0LF); // exact: division by a power of two, floor of a double
    return uvec2(uint(r - hi * 4294967296.0LF), uint(int(hi)));
}

// 2^k as a double, exactly (-1022 <= k <= 1023).
double pow2(int k)
{
    return packDouble2x32(uvec2(0u, uint(1023 + k) << 20));
}

// Round to the nearest integer, ties to even (|x| < 2^52 moves; larger values are integers already).
double round_even(double x)
{
    const double M = 6755399441055744.0LF; // 1.5 * 2^52
    precise double r = abs(x) < 4503599627370496.0LF ? (x + M) - M : x;
    return r;
}

// The signed contribution s t 2^q of a lane with code c and trit t to A[c & 7] (0 for k = 0 or t = 0: spec section 3).
int lns8_term(uint c, int t)
{
    uint k = c & 0x7fu;
    if (k == 0u || t == 0)
        return 0;
    int v = 1 << (k >> 3);
    return ((c >> 7) != 0u) != (t < 0) ? -v : v;
}

// fma(a, b, c) rounded once to fp32, on any device. GLSL's fma() is not required to be fused in Vulkan (its
// precision is that of a multiply then an add), so the production sequence uses it only where vk.c's probe found it
// giving the bits of the emulation below on every probed triple (FMA_FUSED); elsewhere it is emulated: the product
// is exact in fp64 (24 + 24 bits), the sum is rounded to odd in fp64 (round to nearest, then, if inexact and even,
// the neighbour toward the exact value, found by TwoSum), and fp64 -> fp32 rounds once more: with 53 >= 24 + 2 bits
// round-to-odd then round-to-nearest equals one rounding of the exact a b + c. Every step is `precise` (no
// contraction); fp64 add, multiply and conversion are correctly rounded in Vulkan.
float fma_f32(float a, float b, float c)
{
    if (FMA_FUSED) { // the device's own fma: one rounding, as vk.c's probe found on this device
        precise float r = fma(a, b, c);
        return r;
    }
    precise double p = double(a) * double(b);
    precise double s = p + double(c);
    precise double bb = s - p;
    precise double e = (p - (s - bb)) + (double(c) - bb);
    uvec2 u = unpackDouble2x32(s); // x: low word
    if (e != 0.0LF && (u.x & 1u) == 0u) {
        // one ulp in magnitude: up when the exact value is farther from zero than s
        const bool up = (e > 0.0LF) == (s > 0.0LF);
        const uint lo = up ? u.x + 1u : u.x - 1u;
        const uint hi = up ? (lo == 0u ? u.y + 1u : u.y) : (u.x == 0u ? u.y - 1u : u.y);
        s = packDouble2x32(uvec2(lo, hi));
    }
    return float(s);
}

#ifdef HSDR_INT_DOT
// The SPIR-V integer dot product of two words of four signed bytes (OpSDot, PackedVectorFormat4x8Bit:
// SPV_KHR_integer_dot_product, core in Vulkan 1.3), declared through GL_EXT_spirv_intrinsics: Debian 12's glslang
// (12.0) has no GL_EXT_integer_dot_product built-ins. Only shaders built with HSDR_INT_DOT declare the capability, and
// vk.c creates their pipelines only on a device with shaderIntegerDotProduct.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int hsdr_sdot_packed(uint a, uint b, spirv_literal int packed_format);
int sdot4(uint a, uint b)
{
    return hsdr_sdot_packed(a, b, 0); // 0: PackedVectorFormat4x8Bit
}
#endif
