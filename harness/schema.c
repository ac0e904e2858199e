/* The results schema (schema.h): the one table of the fields of a result row, the row check, the conversion of
 * older rows, and `hsdr schema`. */
#include "schema.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "util.h"

#define S HSDR_FT_STRING
#define I HSDR_FT_INTEGER
#define F HSDR_FT_NUMBER
#define B HSDR_FT_BOOLEAN
#define O HSDR_FT_OBJECT
#define A HSDR_FT_ARRAY
#define ALWAYS HSDR_PRESENT_ALWAYS
#define OK HSDR_PRESENT_OK
#define OPT HSDR_PRESENT_OPTIONAL
#define NUL HSDR_FIELD_NULLABLE
#define CSV HSDR_FIELD_CSV
#define OPEN HSDR_FIELD_OPEN
#define V2 HSDR_FIELD_SINCE_2

/* In the order of docs/results-schema.md and the CSV columns. A child's presence applies when its parent is
 * there. */
static const hsdr_field fields[] = {
    {"schema", S, "", ALWAYS, CSV, "\"" HSDR_RESULTS_SCHEMA "\""},
    {"key", S, "", ALWAYS, CSV, "the case's canonical key: filter key, display name and results key"},
    {"variant", S, "", ALWAYS, CSV, "registry name, \"<backend>.<idea>\" (hsdr list)"},
    {"backend", S, "", ALWAYS, CSV, "reference | cpu | cuda | vulkan | metal"},
    {"family", S, "", ALWAYS, CSV, "production | baseline | direct | stateset | tile64 | flns | q1516 | exact"},
    {"K", I, "", ALWAYS, CSV, "input width, a multiple of 128"},
    {"N", I, "", ALWAYS, CSV, "rows"},
    {"R", I, "", ALWAYS, CSV, "rows sharing one activation state set (state-set variants; 1 elsewhere)"},
    {"cols", I, "", ALWAYS, CSV | V2, "activation columns through one read of the weights (1 unless the variant "
                                      "takes several)"},
    {"threads", I, "", ALWAYS, CSV, "host threads (device rows: the host thread that launches)"},
    {"distribution", S, "", ALWAYS, CSV, "activation distribution (gaussian, laplace, student-t3, bonsai)"},
    {"mode", S, "", ALWAYS, CSV, "hot (weights re-read from cache where they fit) | cold (rotating copies larger "
                                "than 4x the last-level cache; devices: 3x the L2)"},
    {"bytes_cycled", I, "bytes", OPT, CSV | V2, "host rows: the bytes its timed launches rotate over, every copy of "
                                               "the form it reads (PTQ1_0 or its converted one); cold: more than 4x "
                                               "the last-level cache unless the memory that the setups in flight "
                                               "share limited them; hot: one copy"},
    {"flns_F", I, "", OPT, CSV, "fLNS fraction bits (variants that use them)"},
    {"flns_b", I, "", OPT, CSV, "fLNS table width (variants that use them)"},
    {"shape", S, "", ALWAYS, CSV, "\"model/tensor\" for model-shape cases, \"gguf:TENSOR\" for a tensor of the --gguf "
                                  "file, else \"\""},
    {"gguf_file", S, "", OPT, CSV | V2, "shape \"gguf:TENSOR\": base name of the model file (run --gguf) the weights "
                                       "come from"},
    {"gguf_data_hash", S, "", OPT, CSV | V2, "shape \"gguf:TENSOR\": the tensor's bytes as stored, FNV-1a 64 (hsdr "
                                            "inspect's data_hash, 16 hex digits)"},
    {"activations", S, "", OPT, CSV | V2, "shape \"gguf:TENSOR\" with run --activations: the activation directory (or "
                                         ".npy file) the case's x comes from (its distribution then unused)"},
    {"token", I, "", OPT, CSV | V2, "with activations: the token (row of the tensor's set) that is x"},
    {"seed", I, "", ALWAYS, CSV, "input seed (weights and activations; independent of variant and order)"},
    {"status", S, "", ALWAYS, CSV, "ok | failed (validation failed: never timed) | error (could not run)"},
    {"validation", O, "", OPT, 0, "the check against the reference before timing (absent when the inputs failed)"},
    {"validation.passed", B, "", ALWAYS, CSV, "every checked output matched"},
    {"validation.detail", S, "", ALWAYS, CSV, "what was compared, or the first mismatch"},
    {"error_message", S, "", OPT, CSV | V2, "status error: why the case could not run"},
    {"weight_bytes", I, "bytes", ALWAYS, CSV, "PTQ1_0 bytes of the matrix (N * K/128 * 28): the format floor"},
    {"device", S, "", OPT, 0, "device rows: the accelerator (their times are the device's own clock)"},
    {"ceiling_bytes_per_s", F, "bytes/s", OK, CSV | NUL, "read bandwidth of the ceiling (below), the roofline of "
                                                          "this row"},
    {"ceiling", O, "", OK, NUL | V2, "the read measurement behind ceiling_bytes_per_s, shared by every case of its "
                               "(backend, bytes, mode, threads) until re-measured"},
    {"ceiling.bytes", I, "bytes", ALWAYS, CSV, "working set read per launch: host hot, the weights' footprint "
                                               "rounded up to a power of two; host cold, 64 MiB from DRAM; "
                                               "device, the same bytes as the weights"},
    {"ceiling.rel_spread", F, "", ALWAYS, CSV, "(p75 - p25) / median of its samples"},
    {"ceiling.reps", I, "", ALWAYS, CSV, "its samples"},
    {"ceiling.age_s", F, "s", ALWAYS, CSV, "how long before this row's timing it was measured"},
    {"ceiling.samples_ns", A, "ns", ALWAYS, 0, "its samples: ns per read of ceiling.bytes"},
    {"bytes_floor_ns", F, "ns", OK, CSV | NUL, "weight_bytes / ceiling_bytes_per_s"},
    {"time_ns", O, "", OK, 0, "ns per launch over the samples (harness/timing.c)"},
    {"time_ns.median", F, "ns", ALWAYS, CSV, "median"},
    {"time_ns.p10", F, "ns", ALWAYS, CSV, "10th percentile"},
    {"time_ns.p25", F, "ns", ALWAYS, CSV | V2, "25th percentile"},
    {"time_ns.p75", F, "ns", ALWAYS, CSV | V2, "75th percentile"},
    {"time_ns.p90", F, "ns", ALWAYS, CSV, "90th percentile"},
    {"time_ns.min", F, "ns", ALWAYS, CSV, "fastest sample"},
    {"time_ns.mean", F, "ns", ALWAYS, CSV, "mean"},
    {"time_ns.rel_spread", F, "", ALWAYS, CSV, "(p75 - p25) / median"},
    {"time_ns.reps", I, "", ALWAYS, CSV, "samples (rounds)"},
    {"time_ns.stop", S, "", ALWAYS, CSV, "noise (every subject of the rounds met the noise target) | time_limit | "
                                         "max_reps"},
    {"time_ns.launches_per_sample", I, "", ALWAYS, CSV | V2, "launches averaged in one sample (1 for kernels)"},
    {"samples_ns", A, "ns", OK, 0, "every sample in round order: sample i of every row of one configuration comes "
                                  "from the same round"},
    {"rounds_per_visit", A, "", OK, V2, "rounds of each visit to the configuration, in order: samples_ns and the "
                                        "per-round ratios come in these blocks, and intervals resample whole "
                                        "visits (their rounds share the machine's state)"},
    {"gb_per_s", F, "GB/s", OK, CSV, "weight_bytes / time_ns.median, in 1e9 bytes per second"},
    {"pct_of_ceiling", F, "%", OK, CSV | NUL, "100 * bytes_floor_ns / time_ns.median"},
    {"ratio_to_production", F, "", OK, CSV | NUL, "median over rounds of time / the backend's production time "
                                                  "sampled right before it in the same round (> 1: slower than "
                                                  "production); null without a production variant that validated"},
    {"ratio_to_production_ci", A, "", OK, NUL | V2, "[lo, hi]: 95% bootstrap interval of that median (whole visits "
                                                    "resampled when there are several, else rounds)"},
    {"ratio_to_production_samples", A, "", OK, NUL | V2, "the per-round ratios (hsdr compare uses them)"},
    {"production_variant", S, "", OK, CSV | NUL, "the production variant the ratio is taken against (timed in the "
                                                 "same rounds, also when its own case was filtered out)"},
    {"stages", O, "", OPT, 0, "per declared stage (absent with --stages none)"},
    {"stages.*", O, "", ALWAYS, 0, "one canonical stage (hsdr_stage_name)"},
    {"stages.*.alone_ns", F, "ns", ALWAYS, CSV | NUL, "median time of the stage run by itself"},
    {"stages.*.ablation_ns", F, "ns", ALWAYS, CSV | NUL, "median over rounds of (full - full without the stage)"},
    {"stages.*.doubled_ns", F, "ns", ALWAYS, NUL | V2, "median over rounds of (full with the stage twice - full)"},
    {"dominant_stage", S, "", OK, CSV | NUL, "the largest alone time, else the largest ablation delta"},
    {"convert", O, "", OK, NUL, "the one-off weight conversion (null when the variant reads PTQ1_0 as stored)"},
    {"convert.time_ns", F, "ns", ALWAYS, CSV, "conversion time"},
    {"convert.footprint_bytes", I, "bytes", ALWAYS, CSV, "bytes of the converted weights"},
    {"convert.gb_per_s", F, "GB/s", ALWAYS, CSV, "footprint / time_ns.median: the bytes it streams"},
    {"convert.pct_of_ceiling", F, "%", ALWAYS, CSV | NUL, "on the converted footprint"},
    {"occupancy", O, "", OPT, 0, "occupied LNS8 states per 128-lane tile (LNS8 variants)"},
    {"occupancy.mean", F, "", ALWAYS, CSV, "mean"},
    {"occupancy.p5", F, "", ALWAYS, CSV, "5th percentile"},
    {"occupancy.p95", F, "", ALWAYS, CSV, "95th percentile"},
    {"critical_path_depth", I, "", OK, CSV, "dependent operations per output (kernel.h depth, merge over groups)"},
    {"error", O, "", OK, 0, "output error of the timed path against the fp64 exact result"},
    {"error.nmse", F, "", ALWAYS, CSV, "sum (y - exact)^2 / sum exact^2"},
    {"error.max_rel", F, "", ALWAYS, CSV, "max |y - exact| / max |exact|"},
    {"error.production_nmse", F, "", ALWAYS, CSV, "the same for production PTQ1_0 x Q8_0"},
    {"error.production_max_rel", F, "", ALWAYS, CSV, "the same for production PTQ1_0 x Q8_0"},
    {"converted_from", S, "", OPT, V2, "a row read from an older file: the schema it was written in (fields that "
                                       "writer did not write are missing)"},
    {"context", O, "", OPT, OPEN, "the run's context, identical for every row of one process"},
    {"context.hsdr_version", S, "", OPT, 0, "version of hsdr"},
    {"context.commit", S, "", OPT, CSV, "git commit the binary was built from"},
    {"context.dirty", B, "", OPT, 0, "built from sources with uncommitted changes"},
    {"context.compiler", S, "", OPT, 0, "compiler and version"},
    {"context.c_flags", S, "", OPT, 0, "C flags"},
    {"context.build_type", S, "", OPT, 0, "CMake build type"},
    {"context.cpu_model", S, "", OPT, CSV | NUL, "CPU model"},
    {"context.logical_cpus", I, "", OPT, 0, "logical CPUs"},
    {"context.cores", I, "", OPT, 0, "physical cores"},
    {"context.caches", O, "bytes", OPT, OPEN,
     "cache sizes by name (L1d, L2, L3; one instance each, hwloc; llc_override: HSDR_LLC_BYTES when set)"},
    {"context.governor", S, "", OPT, NUL, "CPU frequency governor"},
    {"context.hostname", S, "", OPT, NUL, "host name"},
    {"context.started", S, "", OPT, 0, "process start, UTC"},
    {"context.os", S, "", OPT, NUL, "kernel and machine"},
    {"context.matrix", S, "", OPT, 0, "the matrix file"},
    {"context.matrix_seed", I, "", OPT, 0, "settings.seed"},
    {"context.shard", S, "", OPT, 0, "i/n"},
    {"context.settings", O, "", OPT, OPEN, "what decides the timings besides the case: the matrix settings after "
                                          "--set, and --stages (--resume refuses rows of other settings)"},
    {"context.ceilings", A, "", OPT, 0, "every read measurement of the process: {backend, threads, bytes, mode, "
                                        "bytes_per_s, rel_spread, reps}"},
    {"context.pinning", S, "", OPT, 0, "how the 1-thread pool is pinned"},
    {"context.pinning_more", S, "", OPT, 0, "how the larger pools are pinned"},
    {"context.threads_pinned", B, "", OPT, 0, "every pool pinned"},
    {"partial", O, "", OPT, 0, "only in the rows of an interrupted run"},
    {"partial.done", I, "", ALWAYS, CSV, "cases done"},
    {"partial.total", I, "", ALWAYS, CSV, "cases of the run (after --filter and --shard)"},
    {"partial.interrupted_by", S, "", ALWAYS, CSV, "SIGINT | SIGTERM"},
};

#undef S
#undef I
#undef F
#undef B
#undef O
#undef A

const hsdr_field *hsdr_schema_fields(size_t *n)
{
    *n = sizeof fields / sizeof fields[0];
    return fields;
}

const char *hsdr_field_type_name(hsdr_field_type t)
{
    static const char *const names[] = {"string", "integer", "number", "boolean", "object", "array"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const char *hsdr_presence_name(hsdr_presence p)
{
    static const char *const names[] = {"always", "ok", "optional"};
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

void hsdr_schema_csv_name(const char *path, const char *stage, char *buf, size_t n)
{
    if (strncmp(path, "stages.*.", 9) == 0)
        snprintf(buf, n, "stage_%s_%s", stage, path + 9);
    else
        snprintf(buf, n, "%s", path);
}

/* ---- the CSV columns: the fields marked CSV, in the table's order, then for each canonical stage its stages.*.X
 * fields marked CSV ---- */

static hsdr_csv_column *columns;
static const char **column_names;
static size_t ncolumns;
static pthread_once_t columns_once = PTHREAD_ONCE_INIT;

static void add_column(const char *path, const char *stage)
{
    hsdr_csv_column *c = &columns[ncolumns];
    hsdr_schema_csv_name(path, stage, c->name, sizeof c->name);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && k < 3; t = strtok_r(NULL, ".", &save), k++) {
        snprintf(c->parts[k], sizeof c->parts[k], "%s", strcmp(t, "*") == 0 ? stage : t);
        c->path[k] = c->parts[k];
    }
    column_names[ncolumns++] = c->name;
}

static void columns_init(void)
{
    size_t cap = 0;
    const size_t nf = sizeof fields / sizeof fields[0];
    for (size_t i = 0; i < nf; i++)
        if (fields[i].flags & HSDR_FIELD_CSV)
            cap += strchr(fields[i].path, '*') ? HSDR_STAGE_COUNT : 1;
    columns = calloc(cap, sizeof *columns);
    column_names = calloc(cap, sizeof *column_names);
    if (!columns || !column_names)
        abort(); /* a few kilobytes at start-up */
    for (size_t i = 0; i < nf; i++)
        if ((fields[i].flags & HSDR_FIELD_CSV) && !strchr(fields[i].path, '*'))
            add_column(fields[i].path, "");
    for (int s = 0; s < HSDR_STAGE_COUNT; s++)
        for (size_t i = 0; i < nf; i++)
            if ((fields[i].flags & HSDR_FIELD_CSV) && strchr(fields[i].path, '*'))
                add_column(fields[i].path, hsdr_stage_name((hsdr_stage)s));
}

size_t hsdr_schema_csv_columns(const hsdr_csv_column **cols, const char ***names)
{
    pthread_once(&columns_once, columns_init);
    if (cols)
        *cols = columns;
    if (names)
        *names = column_names;
    return ncolumns;
}

/* ---- the row check ---- */

/* The field of a path ("stages.<stage>" spelled "stages.*"), or NULL. */
static const hsdr_field *find(const char *path)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].path, path) == 0)
            return &fields[i];
    return NULL;
}

static int is_stage_name(const char *s)
{
    for (int i = 0; i < HSDR_STAGE_COUNT; i++)
        if (strcmp(hsdr_stage_name((hsdr_stage)i), s) == 0)
            return 1;
    return 0;
}

static int type_ok(const cJSON *v, hsdr_field_type t)
{
    switch (t) {
    case HSDR_FT_STRING: return cJSON_IsString(v);
    case HSDR_FT_INTEGER: return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    case HSDR_FT_NUMBER: return cJSON_IsNumber(v);
    case HSDR_FT_BOOLEAN: return cJSON_IsBool(v);
    case HSDR_FT_OBJECT: return cJSON_IsObject(v);
    case HSDR_FT_ARRAY: return cJSON_IsArray(v);
    }
    return 0;
}

/* Members of object o (at path prefix, "" at the top) against the table; then the fields it must have. */
static int check_object(const cJSON *o, const char *prefix, int status_ok, int converted, char *err, size_t errlen)
{
    char path[160];
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        const char *name = prefix[0] && strcmp(prefix, "stages") == 0 && is_stage_name(m->string) ? "*" : m->string;
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", name);
        const hsdr_field *f = find(path);
        if (!f)
            return hsdr_errorf(err, errlen, "field '%s%s%s': not in the schema " HSDR_RESULTS_SCHEMA, prefix,
                               prefix[0] ? "." : "", m->string);
        if (cJSON_IsNull(m)) {
            if (!(f->flags & HSDR_FIELD_NULLABLE))
                return hsdr_errorf(err, errlen, "field '%s': null, expected %s", path, hsdr_field_type_name(f->type));
            continue;
        }
        if (!type_ok(m, f->type))
            return hsdr_errorf(err, errlen, "field '%s': expected %s", path, hsdr_field_type_name(f->type));
        if (f->type == HSDR_FT_OBJECT && !(f->flags & HSDR_FIELD_OPEN)) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s%s%s", prefix, prefix[0] ? "." : "", m->string);
            if (check_object(m, strcmp(path, "stages.*") == 0 ? path : sub, status_ok, converted, err, errlen) != 0)
                return -1;
        }
    }
    /* required members of this object: direct children of prefix */
    const size_t plen = strlen(prefix);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const hsdr_field *f = &fields[i];
        const char *rest = f->path;
        if (plen) {
            if (strncmp(f->path, prefix, plen) != 0 || f->path[plen] != '.')
                continue;
            rest = f->path + plen + 1;
        }
        if (strchr(rest, '.') || strcmp(rest, "*") == 0)
            continue;
        /* a converted row is what an older writer made: only the fields it has are checked */
        const int required = (f->presence == HSDR_PRESENT_ALWAYS || (f->presence == HSDR_PRESENT_OK && status_ok)) &&
                             !converted;
        if (required && !cJSON_GetObjectItemCaseSensitive(o, rest))
            return hsdr_errorf(err, errlen, "field '%s': missing", f->path);
    }
    return 0;
}

int hsdr_schema_check_row(const cJSON *row, char *err, size_t errlen)
{
    if (!cJSON_IsObject(row))
        return hsdr_errorf(err, errlen, "not a JSON object");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(row, "status");
    return check_object(row, "", cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0,
                        cJSON_GetObjectItemCaseSensitive(row, "converted_from") != NULL, err, errlen);
}

int hsdr_schema_upgrade_row(cJSON *row, char *err, size_t errlen)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(row, "schema");
    if (cJSON_IsString(schema) && strcmp(schema->valuestring, HSDR_RESULTS_SCHEMA) == 0)
        return 0;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, HSDR_RESULTS_SCHEMA_V1) != 0)
        return hsdr_errorf(err, errlen, "field 'schema': expected \"%s\" or \"%s\"", HSDR_RESULTS_SCHEMA,
                           HSDR_RESULTS_SCHEMA_V1);
    cJSON_ReplaceItemInObjectCaseSensitive(row, "schema", cJSON_CreateString(HSDR_RESULTS_SCHEMA));
    cJSON_AddStringToObject(row, "converted_from", HSDR_RESULTS_SCHEMA_V1);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(row, "error");
    if (cJSON_IsString(e)) { /* /1 put an error row's message where ok rows keep their error metrics */
        cJSON_AddItemToObject(row, "error_message", cJSON_DetachItemViaPointer(row, e));
    }
    if (!cJSON_GetObjectItemCaseSensitive(row, "cols"))
        cJSON_AddNumberToObject(row, "cols", 1);
    return 1;
}

/* ---- hsdr schema ---- */

static void print_markdown(void)
{
    printf("| field | type | unit | present | meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const hsdr_field *f = &fields[i];
        char type[48];
        snprintf(type, sizeof type, "%s%s", hsdr_field_type_name(f->type), f->flags & NUL ? " or null" : "");
        printf("| `%s` | %s | %s | %s%s | ", f->path, type, f->unit[0] ? f->unit : "", hsdr_presence_name(f->presence),
               f->flags & V2 ? " (since /2)" : "");
        for (const char *c = f->meaning; *c; c++) /* a '|' would end the cell */
            fputs(*c == '|' ? "\\|" : (char[2]){*c, 0}, stdout);
        printf(" |\n");
    }
}

static int print_json(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "hsdr-schema/1");
    cJSON_AddStringToObject(doc, "results_schema", HSDR_RESULTS_SCHEMA);
    cJSON *stages = cJSON_AddArrayToObject(doc, "stages");
    for (int s = 0; s < HSDR_STAGE_COUNT; s++)
        cJSON_AddItemToArray(stages, cJSON_CreateString(hsdr_stage_name((hsdr_stage)s)));
    cJSON *list = cJSON_AddArrayToObject(doc, "fields");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const hsdr_field *f = &fields[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", f->path);
        cJSON_AddStringToObject(o, "type", hsdr_field_type_name(f->type));
        cJSON_AddStringToObject(o, "unit", f->unit);
        cJSON_AddStringToObject(o, "presence", hsdr_presence_name(f->presence));
        cJSON_AddBoolToObject(o, "nullable", (f->flags & NUL) != 0);
        cJSON_AddBoolToObject(o, "csv", (f->flags & CSV) != 0);
        cJSON_AddBoolToObject(o, "open", (f->flags & OPEN) != 0);
        cJSON_AddBoolToObject(o, "since_2", (f->flags & V2) != 0);
        cJSON_AddStringToObject(o, "meaning", f->meaning);
        cJSON_AddItemToArray(list, o);
    }
    char *txt = cJSON_Print(doc);
    int rc = txt && printf("%s\n", txt) > 0 ? HSDR_EXIT_OK : HSDR_EXIT_FAIL;
    cJSON_free(txt);
    cJSON_Delete(doc);
    return rc;
}

int hsdr_schema_print(const char *how)
{
    if (strcmp(how, "--json") == 0)
        return print_json();
    if (strcmp(how, "--markdown") == 0) {
        print_markdown();
        return HSDR_EXIT_OK;
    }
    if (strcmp(how, "--csv") == 0) {
        const char **names;
        size_t n = hsdr_schema_csv_columns(NULL, &names);
        for (size_t i = 0; i < n; i++)
            printf("%s%s", i ? "," : "", names[i]);
        printf("\n");
        return HSDR_EXIT_OK;
    }
    printf("schema %s: %zu fields ('*' = a stage name)\n", HSDR_RESULTS_SCHEMA, sizeof fields / sizeof fields[0]);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const hsdr_field *f = &fields[i];
        printf("  %-32s %-8s%-9s %-8s %s\n", f->path, hsdr_field_type_name(f->type), f->flags & NUL ? "/null" : "",
               hsdr_presence_name(f->presence), f->unit);
    }
    return HSDR_EXIT_OK;
}
