/* Whether this process can run the CUDA kernels: one check, cached. */
#include <stdio.h>

#include "common.cuh"

extern "C" const char *hsdr_cuda_unavailable(void)
{
    static int checked;
    static char why[512];
    if (!checked) {
        checked = 1;
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        cudaDeviceProp p;
        if (e != cudaSuccess)
            snprintf(why, sizeof why, "no CUDA device (cudaGetDeviceCount: %s)", cudaGetErrorString(e));
        else if (n == 0)
            snprintf(why, sizeof why, "no CUDA device");
        else if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
            snprintf(why, sizeof why, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
        else if (p.major * 10 + p.minor < 61)
            snprintf(why, sizeof why, "%s is compute capability %d.%d; the kernels need 6.1 (dp4a)", p.name, p.major,
                     p.minor);
    }
    return why[0] ? why : NULL;
}
