// q8-fastmath.cu: how often the fork's Q8_1 quantizer, built with -use_fast_math, stores different bits from this
// project's correctly rounded one (docs/cuda-production.md section 2). The fork writes d = amax / 127 and
// q = roundf(x / d); under -use_fast_math nvcc 13 emits div.approx.ftz.f32 for both divisions (checked in the PTX), so
// this program issues that instruction explicitly, beside __fdiv_rn, on the same 32-blocks, and counts the blocks
// whose fp16 d differs, the values whose q differs, and the blocks whose fp32 d differs (which reaches memory only
// through fp16 d and q). Inputs: Gaussian, Laplace and Student-t(3) activations at scales 2^-12 .. 2^12, drawn on the
// host from a fixed seed (xorshift64*, Box-Muller), 2^22 values per (distribution, scale).
// Build and run (a machine with an NVIDIA GPU):
//   nvcc -O2 -arch=sm_90 -o q8-fastmath scripts/q8-fastmath.cu && ./q8-fastmath
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __device__ __forceinline__ float div_approx_ftz(float a, float b)
{
    float r;
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

// One thread per value, 32 consecutive lanes per 32-block: counts into c[0] (fp16 d), c[1] (q), c[2] (fp32 d).
__global__ void compare(const float *x, size_t n, unsigned long long *c)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const float v = i < n ? x[i] : 0.0f;
    float amax = fabsf(v);
    for (int o = 16; o >= 1; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float d_rn = __fdiv_rn(amax, 127.0f), d_ap = div_approx_ftz(amax, 127.0f);
    const int q_rn = amax == 0.0f ? 0 : (int)roundf(__fdiv_rn(v, d_rn));
    const int q_ap = amax == 0.0f ? 0 : (int)roundf(div_approx_ftz(v, d_ap));
    if (q_rn != q_ap)
        atomicAdd(&c[1], 1ull);
    if (lane == 0) {
        if (__half_as_ushort(__float2half_rn(d_rn)) != __half_as_ushort(__float2half_rn(d_ap)))
            atomicAdd(&c[0], 1ull);
        if (__float_as_uint(d_rn) != __float_as_uint(d_ap))
            atomicAdd(&c[2], 1ull);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return ((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}
static double gauss(void)
{
    const double u = uniform(), w = uniform();
    return sqrt(-2.0 * log(u > 0 ? u : 0x1p-53)) * cos(6.283185307179586 * w);
}

int main(void)
{
    const size_t n = (size_t)1 << 22;
    float *h = (float *)malloc(sizeof(float) * n), *dx;
    unsigned long long *dc, tot[3] = {0, 0, 0}, c[3];
    if (!h || cudaMalloc(&dx, sizeof(float) * n) != cudaSuccess || cudaMalloc(&dc, sizeof c) != cudaSuccess) {
        fprintf(stderr, "q8-fastmath: out of memory\n");
        return 1;
    }
    const char *names[3] = {"gaussian", "laplace", "student-t3"};
    size_t values = 0;
    printf("%-11s %6s %14s %14s %14s\n", "dist", "scale", "fp16 d differs", "q differs", "fp32 d differs");
    for (int dist = 0; dist < 3; dist++)
        for (int s = -12; s <= 12; s += 4) {
            for (size_t i = 0; i < n; i++) {
                double v;
                if (dist == 0) {
                    v = gauss();
                } else if (dist == 1) {
                    const double u = uniform() - 0.5;
                    v = -copysign(log(1.0 - 2.0 * fabs(u)), u) / sqrt(2.0);
                } else {
                    const double g = gauss(), a = gauss(), b = gauss(), e = gauss();
                    v = g / sqrt((a * a + b * b + e * e) / 3.0);
                }
                h[i] = (float)ldexp(v, s);
            }
            cudaMemcpy(dx, h, sizeof(float) * n, cudaMemcpyHostToDevice);
            cudaMemset(dc, 0, sizeof c);
            compare<<<(unsigned)(n / 256), 256>>>(dx, n, dc);
            if (cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost) != cudaSuccess) {
                fprintf(stderr, "q8-fastmath: %s\n", cudaGetErrorString(cudaGetLastError()));
                return 1;
            }
            printf("%-11s %6d %14llu %14llu %14llu\n", names[dist], s, c[0], c[1], c[2]);
            for (int k = 0; k < 3; k++)
                tot[k] += c[k];
            values += n;
        }
    printf("total: %zu values in %zu 32-blocks: fp16 d differs in %llu blocks (%.3g), q in %llu values (%.3g), "
           "fp32 d in %llu blocks (%.3g)\n",
           values, values / 32, tot[0], (double)tot[0] / (values / 32), tot[1], (double)tot[1] / values, tot[2],
           (double)tot[2] / (values / 32));
    return 0;
}
