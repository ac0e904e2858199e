/* `hsdr list`: its option (getopt_long, cli.h), then the registry (kernel.h) as a table or JSON Lines. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "kernel.h"
#include "util.h"

static void outputs_string(unsigned o, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{HSDR_OUT_CODEC, "codec"},   {HSDR_OUT_Y_EXACT, "y_exact"}, {HSDR_OUT_Y_Q8_0, "y_q8_0"},
                 {HSDR_OUT_Y_Q8_1, "y_q8_1"},  {HSDR_OUT_Y_LNS8, "y_lns8"},   {HSDR_OUT_A, "A"},
                 {HSDR_OUT_C, "C"},
                 {HSDR_OUT_Q1516, "q15_16"}, {HSDR_OUT_FLNS, "flns"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (o & names[i].bit) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? "," : "", names[i].name);
        }
}

static void stages_string(unsigned s, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < HSDR_STAGE_COUNT; i++)
        if (s & HSDR_STAGE_BIT(i)) {
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? "," : "", hsdr_stage_name((hsdr_stage)i));
        }
}

int hsdr_cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'}, HSDR_OPTION_HELP, {NULL, 0, NULL, 0}};
    int json = 0;
    optind = 0;
    for (int c; (c = hsdr_getopt("list", argc, argv, ":h", longopts)) != -1;) {
        if (c == 'j')
            json = 1;
        else
            return hsdr_getopt_exit(c);
    }
    if (optind < argc) {
        fprintf(stderr, "hsdr list: unexpected argument '%s'\n", argv[optind]);
        return HSDR_EXIT_USAGE;
    }
    char outs[128], stages[160];
    int w = (int)strlen("variant"); /* the name column fits the longest name */
    for (size_t i = 0; i < hsdr_registry_count; i++)
        if ((int)strlen(hsdr_registry[i].name) > w)
            w = (int)strlen(hsdr_registry[i].name);
    if (!json)
        printf("%-*s %-9s %-10s %-4s %-30s %s\n", w, "variant", "backend", "family", "prec", "outputs",
               "status / idea");
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        const char *why = hsdr_variant_unavailable(v);
        outputs_string(v->outputs, outs, sizeof outs);
        stages_string(v->stages, stages, sizeof stages);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", v->name);
            cJSON_AddStringToObject(o, "backend", v->backend);
            cJSON_AddStringToObject(o, "family", v->family);
            cJSON_AddStringToObject(o, "summary", v->summary);
            cJSON_AddStringToObject(o, "outputs", outs);
            cJSON_AddStringToObject(o, "stages", stages);
            cJSON_AddNumberToObject(o, "precision", v->precision);
            cJSON_AddBoolToObject(o, "available", why == NULL);
            if (why)
                cJSON_AddStringToObject(o, "unavailable_because", why);
            char *txt = cJSON_PrintUnformatted(o);
            printf("%s\n", txt ? txt : "{}");
            cJSON_free(txt);
            cJSON_Delete(o);
        } else {
            printf("%-*s %-9s %-10s fp%-2d %-30s %s%s\n", w, v->name, v->backend, v->family, v->precision, outs,
                   why ? "UNAVAILABLE: " : "", why ? why : v->summary);
            printf("%-*s   stages: %s\n", w, "", stages);
        }
    }
    if (hsdr_registry_not_built) /* JSON Lines hold variants only: the note goes to stderr there */
        fprintf(json ? stderr : stdout, "not built: %s\n", hsdr_registry_not_built);
    return HSDR_EXIT_OK;
}

