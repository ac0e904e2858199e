/* `hsdr run [MATRIX] [--filter GLOB] [--out DIR] [--shard i/n] [--set AXIS=VALUES]... [--stages both|alone|ablation|none]
 *           [--dry-run] [--quiet]`: expand the matrix, then per case build inputs (seeded), validate against the
 * reference (a failing case is recorded and never timed), time hot or cold with per-stage attribution, and write
 * JSON Lines + CSV (docs/results-schema.md), a break-even fit and a summary table. */
#ifndef HSDR_RUN_H
#define HSDR_RUN_H

int hsdr_cmd_run(int argc, char **argv);

#endif
