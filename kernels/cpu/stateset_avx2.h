/* Registry hook: HSDR_CPU_STATESET_VARIANTS expands, inside the one table of kernels/registry.c (where ST() and D()
 * are defined), to this file's variant entries, each followed by a comma. */
#ifndef HSDR_CPU_STATESET_AVX2_H
#define HSDR_CPU_STATESET_AVX2_H
#include "../kernel.h"

#define HSDR_CPU_STATESET_VARIANTS

#endif
