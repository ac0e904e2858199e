/* `hsdr merge OUT_DIR IN.jsonl... [--base results]`: the union of the rows of several result files (for example the
 * shards of one matrix run on several machines), sorted by key, written as OUT_DIR/BASE.jsonl + OUT_DIR/BASE.csv
 * (hsdr_results_write: temporary names, then rename). A key that appears twice is an error unless both rows are
 * identical (byte-identical hsdr_results_print: cJSON_PrintUnformatted with exact numbers); identical
 * repeats are kept once. */
#ifndef HSDR_MERGE_H
#define HSDR_MERGE_H

/* Merge inputs[0..ninputs) into OUT_DIR/BASE.* (and breakeven.json when BASE is "results"); harness/cmd/merge.c
 * reads the options. Exit 0, or 2 on an unreadable or malformed input, a conflicting key (the message names both
 * files:lines and the key) or a failed write. */
int hsdr_merge(const char *out_dir, const char *base, char *const *inputs, int ninputs);

#endif
