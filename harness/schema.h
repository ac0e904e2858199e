/* The results schema hsdr-results/2, as one table: every field of a result row with its type, unit, presence and
 * meaning. Everything else derives from it: the row check every writer runs (hsdr_schema_check_row), the CSV columns
 * (hsdr_schema_csv_columns), `hsdr schema` (--json: read by plots/load.py through plots/results_schema.json;
 * --markdown: the field table of docs/results-schema.md), and the conversion of older rows
 * (hsdr_schema_upgrade_row). */
#ifndef HSDR_SCHEMA_H
#define HSDR_SCHEMA_H
#include <cjson/cJSON.h>
#include <stddef.h>

#define HSDR_RESULTS_SCHEMA "hsdr-results/2"
#define HSDR_RESULTS_SCHEMA_V1 "hsdr-results/1"

typedef enum {
    HSDR_FT_STRING,
    HSDR_FT_INTEGER,
    HSDR_FT_NUMBER,
    HSDR_FT_BOOLEAN,
    HSDR_FT_OBJECT,
    HSDR_FT_ARRAY
} hsdr_field_type;
typedef enum {
    HSDR_PRESENT_ALWAYS,   /* every row */
    HSDR_PRESENT_OK,       /* every row with status ok (timed) */
    HSDR_PRESENT_OPTIONAL, /* only where it applies (the meaning says when) */
} hsdr_presence;

enum {
    HSDR_FIELD_NULLABLE = 1u << 0, /* null allowed (not measurable, not applicable) */
    HSDR_FIELD_CSV = 1u << 1,      /* a column of the CSV mirror */
    HSDR_FIELD_OPEN = 1u << 2,     /* an object whose members are not all listed (context) */
    HSDR_FIELD_SINCE_2 = 1u << 3,  /* new in hsdr-results/2: absent from rows converted from /1 */
};

typedef struct {
    const char *path;    /* members joined by '.'; '*' stands for any canonical stage name (hsdr_stage_name) */
    hsdr_field_type type;
    const char *unit;    /* "ns", "bytes", "bytes/s", "s", "%", "" */
    hsdr_presence presence;
    unsigned flags;
    const char *meaning;
} hsdr_field;

const hsdr_field *hsdr_schema_fields(size_t *n);
const char *hsdr_field_type_name(hsdr_field_type t); /* string | integer | number | boolean | object | array */
const char *hsdr_presence_name(hsdr_presence p);     /* always | ok | optional */

/* Check one row against the table: every member listed (inside objects not marked open), of its type, and every field
 * its presence requires there (a converted row: only the fields it has). 0, or -1 with "field 'PATH': ..." in err. */
int hsdr_schema_check_row(const cJSON *row, char *err, size_t errlen);

/* Convert a row of an older schema in place (hsdr-results/1: the message of an error row moves from "error" to
 * "error_message", "cols" = 1, "converted_from" names the old schema, "schema" becomes the current one). 1 when
 * converted, 0 when already current, -1 when the schema is unknown (err says which). */
int hsdr_schema_upgrade_row(cJSON *row, char *err, size_t errlen);

/* The CSV columns: the fields marked CSV in the table's order, then for each canonical stage (hsdr_stage_name) its
 * stages.*.X fields marked CSV. Returns the count; *cols and *names (where not NULL) point to static lists. */
typedef struct {
    char name[64];       /* the header: the dotted path, stages.NAME.X as stage_NAME_X */
    const char *path[3]; /* object members to descend through, NULL-terminated */
    char parts[3][40];
} hsdr_csv_column;
size_t hsdr_schema_csv_columns(const hsdr_csv_column **cols, const char ***names);

/* The CSV column name of a scalar field: the path, except stages.NAME.FIELD -> stage_NAME_FIELD. */
void hsdr_schema_csv_name(const char *path, const char *stage, char *buf, size_t n);

/* `hsdr schema [--json | --markdown | --csv]` (harness/cmd/schema.c): HOW "--json": the table as JSON (schema
 * hsdr-schema/1), "--markdown": the Markdown table of docs/results-schema.md, "--csv": the CSV header, "": as text.
 * An exit status. */
int hsdr_schema_print(const char *how);

#endif
