/* `hsdr profile --model M [--tokens T] [--layers L] [--variants LIST] [--threads N|cores]
 *               [--no-head] [--dist D] [--seed S] [--json FILE]`:
 * every GEMV of decode tokens on a real model's shapes (shapes.h), fresh activations per token (encoding counted,
 * per GEMV), per variant: ms/token, GEMV-only tokens/s, per-tensor breakdown, weight conversion cost. L layers are
 * run (the model's own layer pattern) and the full model is extrapolated from the mean time per layer kind; the
 * output says which numbers are measured and which extrapolated. GEMV-only: no attention, recurrence or sampling. */
#ifndef HSDR_PROFILE_H
#define HSDR_PROFILE_H

int hsdr_cmd_profile(int argc, char **argv);

#endif
