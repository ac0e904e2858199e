/* The Metal variants' kernels (metal.h), shared by the Apple host and the CPU shim. */
#include <string.h>

#include "metal.h"

#include "hsdr_metal_common.h"

const hsdr_metal_kernel hsdr_metal_production = {"hsdr_production", 0, 0};
const hsdr_metal_kernel hsdr_metal_direct = {"hsdr_direct", 1, HSDR_METAL_FLAG_A};
const hsdr_metal_kernel hsdr_metal_stateset = {"hsdr_stateset", 1, HSDR_METAL_FLAG_A};
const hsdr_metal_kernel hsdr_metal_q1516 = {"hsdr_q1516", 1, HSDR_METAL_FLAG_A | HSDR_METAL_FLAG_Q};

const hsdr_metal_kernel *hsdr_metal_kernel_for(const hsdr_variant *v)
{
    static const struct {
        const char *name;
        const hsdr_metal_kernel *k;
    } map[] = {{"metal.production", &hsdr_metal_production}, {"metal.direct", &hsdr_metal_direct},
               {"metal.stateset", &hsdr_metal_stateset}, {"metal.q1516", &hsdr_metal_q1516}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(v->name, map[i].name) == 0)
            return map[i].k;
    return NULL;
}

unsigned hsdr_metal_threads(const hsdr_metal_kernel *k)
{
    return k == &hsdr_metal_stateset ? HSDR_METAL_THREADS_STATESET : HSDR_METAL_THREADS_ROWS;
}

unsigned hsdr_metal_rows(const hsdr_metal_kernel *k, int R)
{
    return k == &hsdr_metal_stateset ? (unsigned)(R > 0 ? R : 1) : HSDR_METAL_THREADS_ROWS / HSDR_METAL_SIMD;
}
