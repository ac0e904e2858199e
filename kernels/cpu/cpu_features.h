/* CPU feature checks the kernels' `unavailable` hooks share beyond __builtin_cpu_supports (x86-64, as everything in
 * kernels/cpu/). */
#ifndef HSDR_CPU_FEATURES_H
#define HSDR_CPU_FEATURES_H
#include <cpuid.h>

/* F16C as GCC's __builtin_cpu_supports("f16c") reports it; clang (14, the fuzzing build) does not know that feature
 * name. The CPUID bit (leaf 1, ECX bit 29) counts only when the OS saves the AVX state, since F16C instructions are
 * VEX-encoded: __builtin_cpu_supports("avx") says so on both compilers. */
static inline int hsdr_cpu_has_f16c(void)
{
    unsigned eax, ebx, ecx, edx;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

#endif
