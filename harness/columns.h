/* `hsdr columns [--model M] [--tensors LIST] [--cols LIST] [--mode hot|cold|both] [--reps N] [--seed S]
 *               [--json FILE]`:
 * the dedicated 1..8-column CUDA kernel (cuda.production_cols: several decode streams, or draft tokens, through one
 * read of the weights) on a model's GEMV shapes. Every column count is first validated bit for bit, column by column,
 * against hsdr_matvec_q8_1_lanes; only then timed per launch (encode + mat-vec, CUDA events, median of N). Each time
 * stands beside the bytes floor of its weights at the device's streaming read measured in the same run. */
#ifndef HSDR_COLUMNS_H
#define HSDR_COLUMNS_H

int hsdr_cmd_columns(int argc, char **argv);

#endif
