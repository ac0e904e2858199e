#include "breakeven.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "results.h"

/* Same configuration apart from the variant (and R, F, b). */
static int same_config(const cJSON *a, const cJSON *b)
{
    static const char *const numbers[] = {"K", "N", "threads"}, *const strings[] = {"distribution", "mode", "shape"};
    for (int i = 0; i < 3; i++)
        if (hsdr_row_num(a, numbers[i]) != hsdr_row_num(b, numbers[i]) ||
            strcmp(hsdr_row_str(a, strings[i]), hsdr_row_str(b, strings[i])) != 0)
            return 0;
    return 1;
}

/* least squares of t(R) = a + b / R over each state-set variant's R sweep */
cJSON *hsdr_breakeven_fit(cJSON *const *rows, size_t n)
{
    cJSON *out = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const cJSON *d = rows[i];
        if (strcmp(hsdr_row_str(d, "family"), "direct") != 0 || strcmp(hsdr_row_str(d, "status"), "ok") != 0)
            continue;
        double c = hsdr_row_median(d) / hsdr_row_num(d, "N");
        /* every state-set variant of the same backend and configuration */
        for (size_t j = 0; j < n; j++) {
            const cJSON *s0 = rows[j];
            const char *fam = hsdr_row_str(s0, "family");
            if ((strcmp(fam, "stateset") != 0 && strcmp(fam, "tile64") != 0) ||
                strcmp(hsdr_row_str(s0, "status"), "ok") != 0 || !same_config(s0, d) ||
                strcmp(hsdr_row_str(s0, "backend"), hsdr_row_str(d, "backend")) != 0)
                continue;
            /* only the first row of each state-set variant starts a fit */
            int first = 1;
            for (size_t k = 0; k < j; k++)
                if (strcmp(hsdr_row_str(rows[k], "variant"), hsdr_row_str(s0, "variant")) == 0 &&
                    same_config(rows[k], s0) &&
                    strcmp(hsdr_row_str(rows[k], "status"), "ok") == 0)
                    first = 0;
            if (!first)
                continue;
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            int m = 0;
            for (size_t k = 0; k < n; k++) {
                const cJSON *s = rows[k];
                if (strcmp(hsdr_row_str(s, "variant"), hsdr_row_str(s0, "variant")) != 0 || !same_config(s, s0) ||
                    strcmp(hsdr_row_str(s, "status"), "ok") != 0)
                    continue;
                double x = 1.0 / hsdr_row_num(s, "R"), y = hsdr_row_median(s) / hsdr_row_num(s, "N");
                sx += x, sy += y, sxx += x * x, sxy += x * y;
                m++;
            }
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "K", hsdr_row_num(d, "K"));
            cJSON_AddNumberToObject(o, "N", hsdr_row_num(d, "N"));
            cJSON_AddNumberToObject(o, "threads", hsdr_row_num(d, "threads"));
            cJSON_AddStringToObject(o, "distribution", hsdr_row_str(d, "distribution"));
            cJSON_AddStringToObject(o, "mode", hsdr_row_str(d, "mode"));
            cJSON_AddStringToObject(o, "shape", hsdr_row_str(d, "shape"));
            cJSON_AddStringToObject(o, "stateset", hsdr_row_str(s0, "variant"));
            cJSON_AddStringToObject(o, "direct", hsdr_row_str(d, "variant"));
            cJSON_AddNumberToObject(o, "r_values", m);
            double det = m * sxx - sx * sx;
            if (m < 2 || det <= 0) {
                cJSON_AddNullToObject(o, "break_even_R");
                cJSON_AddStringToObject(o, "note", "needs at least two R values");
            } else {
                double b = (m * sxy - sx * sy) / det, a = (sy - b * sx) / m;
                cJSON *fit = cJSON_AddObjectToObject(o, "fit");
                cJSON_AddNumberToObject(fit, "a_ns_per_row", a);
                cJSON_AddNumberToObject(fit, "b_ns_per_tile_row", b);
                cJSON_AddNumberToObject(fit, "direct_ns_per_row", c);
                if (a >= c) {
                    cJSON_AddNullToObject(o, "break_even_R");
                    cJSON_AddStringToObject(o, "note", "never: state sets cost more per row than direct even at "
                                                       "unlimited reuse");
                } else if (b <= 0) {
                    cJSON_AddNumberToObject(o, "break_even_R", 1);
                    cJSON_AddStringToObject(o, "note", "no measurable build cost: state sets win at every R");
                } else {
                    cJSON_AddNumberToObject(o, "break_even_R", b / (c - a));
                    cJSON_AddStringToObject(o, "note", "state sets are faster for R above this");
                }
            }
            cJSON_AddItemToArray(out, o);
        }
    }
    return out;
}

int hsdr_breakeven_write(const char *dir, const cJSON *fits, char *err, size_t errlen)
{
    cJSON *doc = cJSON_CreateObject();
    char *txt = NULL;
    if (doc) {
        cJSON_AddStringToObject(doc, "schema", "hsdr-breakeven/1");
        cJSON_AddItemReferenceToObject(doc, "rows", (cJSON *)fits);
        txt = cJSON_Print(doc);
    }
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/breakeven.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = txt ? fopen(tmp, "w") : NULL;
    int ok = f != NULL;
    if (f) {
        ok = fputs(txt, f) >= 0 && fputc('\n', f) != EOF;
        ok = fclose(f) == 0 && ok;
        ok = ok && rename(tmp, path) == 0;
        if (!ok)
            remove(tmp);
    }
    if (!ok)
        snprintf(err, errlen, "cannot write %s%s", path, txt ? "" : " (out of memory)");
    cJSON_free(txt);
    cJSON_Delete(doc);
    return ok ? 0 : -1;
}

int hsdr_breakeven_remove(const char *dir, char *err, size_t errlen)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/breakeven.json", dir);
    if (remove(path) == 0 || errno == ENOENT)
        return 0;
    snprintf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
    return -1;
}
