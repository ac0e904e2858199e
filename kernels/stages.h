/* Stage control inside a staged timed pipeline (kernels/reference_timed.c, kernels/cpu/): one definition of how a
 * fused run honours ablation (hsdr_exec.skip / .twice) and how a stage runs alone. */
#ifndef HSDR_STAGES_H
#define HSDR_STAGES_H
#include "kernel.h"

#define BIT(s) HSDR_STAGE_BIT(HSDR_STAGE_##s)

/* Run stage S of a fused pipeline unless ablated away; twice when doubled. */
#define STAGE(e, S, call)                                                                                            \
    do {                                                                                                             \
        if (!((e)->skip & BIT(S)))                                                                                   \
            call;                                                                                                    \
        if ((e)->twice & BIT(S))                                                                                     \
            call;                                                                                                    \
    } while (0)

/* In a stage loop: `only` = 0 runs the fused sequence (with ablation), else only the stage whose bit it is. */
#define DO(e, only, S, call)                                                                                         \
    do {                                                                                                             \
        if ((only) == 0)                                                                                             \
            STAGE(e, S, call);                                                                                       \
        else if ((only) == BIT(S))                                                                                   \
            call;                                                                                                    \
    } while (0)

#endif
