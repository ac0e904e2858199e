/* Which reference order (hsdr_matvec_q8_1, reference/matvec.h) the y of each CUDA Q8_1 kernel follows bit for bit:
 * the registry's q8_1_order of its row, and what the checker and test_q8_1_warp hold the kernel to. Plain C, built
 * with or without CUDA (cuda.h). */
#include "cuda.h"

#include "../../reference/ptq1_0.h"

hsdr_q8_1_order hsdr_cuda_soa_order(int K, int N)
{
    (void)N;
    return (hsdr_q8_1_order){HSDR_Q8_1_THREADS, 32, K / HSDR_QK < 128 ? 1 : 4};
}

hsdr_q8_1_order hsdr_cuda_pt_order(int K, int N)
{
    (void)K, (void)N;
    return (hsdr_q8_1_order){HSDR_Q8_1_PT4, 1, 1};
}

hsdr_q8_1_order hsdr_cuda_lanes8_order(int K, int N)
{
    (void)K, (void)N;
    return (hsdr_q8_1_order){HSDR_Q8_1_THREADS, 8, 1}; /* lanes8.cu's ROW_LANES */
}

hsdr_q8_1_order hsdr_cuda_cols_order(int K, int N)
{
    (void)K;
    return (hsdr_q8_1_order){HSDR_Q8_1_THREADS, N >= 16384 ? 8 : N >= 8192 ? 16 : 32, 1};
}
