/* `hsdr run [MATRIX] [--filter GLOB] [--out DIR] [--shard i/n] [--set AXIS=VALUES]...
 *           [--stages both|alone|ablation|none] [--resume] [--dry-run] [--quiet]`: expand the matrix, then per case
 * build inputs (seeded), validate against the reference (a failing case is recorded and never timed), time hot or
 * cold with per-stage attribution, and write JSON Lines + CSV (docs/results-schema.md), a break-even fit and a summary
 * table. Every finished row also goes to DIR/results.partial.jsonl at once. SIGINT or SIGTERM stops the run at the
 * next case boundary: results.jsonl + .csv then hold the finished rows, each marked "partial", and the exit status is
 * 128 + the signal (130, 143); a second signal during a case ends the process at once. --resume reads the rows
 * finished in DIR (refusing rows of other cases, seeds or settings) and runs only the missing cases. */
#ifndef HSDR_RUN_H
#define HSDR_RUN_H

int hsdr_cmd_run(int argc, char **argv);

#endif
