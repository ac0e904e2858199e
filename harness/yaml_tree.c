/* A YAML tree with positions (yaml_tree.h): libyaml's events of one document built into ynodes that keep their
 * line:column, with the syntax errors (libyaml's, duplicate keys, aliases, nesting) named by position and key path.
 * Depends on libyaml, util.h (hsdr_errorf) and xalloc.h. */
#include "yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"
#include "xalloc.h"

#define YAML_PATH_LEN 256 /* a key path in a message */

struct yanchor {
    char *name;
    ynode *node;
};

void ydoc_free(ydoc *d)
{
    for (ynode *n = d->all, *next; n; n = next) {
        next = n->next_alloc;
        free(n->text);
        free(n->kids);
        free(n);
    }
    for (size_t i = 0; i < d->nanchors; i++)
        free(d->anchors[i].name);
    free(d->anchors);
    memset(d, 0, sizeof *d);
}

static ynode *ynode_new(ydoc *d, yn_type type, yaml_mark_t mark)
{
    ynode *n = xrealloc(NULL, sizeof *n);
    memset(n, 0, sizeof *n);
    n->type = type;
    n->line = (int)mark.line + 1;
    n->col = (int)mark.column + 1;
    n->next_alloc = d->all;
    d->all = n;
    return n;
}

const char *ynode_type_name(const ynode *n)
{
    return n->type == YN_MAP ? "a mapping" : n->type == YN_SEQ ? "a list" : "a scalar";
}

bool ynode_is_null(const ynode *n)
{
    return n->type == YN_SCALAR && n->plain &&
           (n->text[0] == '\0' || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}

/* The key path of the node being parsed (for syntax errors): "axes.K[2]". */
static void stack_path(ynode *const *stack, int depth, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < depth && len < outlen; i++) {
        const ynode *c = stack[i];
        bool innermost = i == depth - 1;
        if (c->type == YN_MAP) {
            const ynode *key = NULL;
            if (!innermost && c->n >= 2)
                key = c->kids[c->n - 2];
            else if (innermost && c->n % 2 == 1)
                key = c->kids[c->n - 1];
            if (!key)
                break;
            len += (size_t)snprintf(out + len, outlen - len, "%s%s", len ? "." : "", key->text ? key->text : "?");
        } else {
            size_t index = innermost ? c->n : c->n - 1;
            len += (size_t)snprintf(out + len, outlen - len, "[%zu]", index);
        }
    }
}

static int yaml_fail(char *err, size_t errlen, const char *file, int line, int col, const char *path, const char *fmt,
                     ...) __attribute__((format(printf, 7, 8)));
static int yaml_fail(char *err, size_t errlen, const char *file, int line, int col, const char *path, const char *fmt,
                     ...)
{
    int len = path && path[0] ? snprintf(err, errlen, "%s:%d:%d: %s: ", file, line, col, path)
                              : snprintf(err, errlen, "%s:%d:%d: ", file, line, col);
    if (len >= 0 && (size_t)len < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + len, errlen - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int attach(ydoc *d, ynode **stack, int depth, ynode *node, const char *file, char *err, size_t errlen)
{
    if (depth == 0) {
        d->root = node;
        return 0;
    }
    ynode *parent = stack[depth - 1];
    if (parent->type == YN_MAP && parent->n % 2 == 0) {
        char path[YAML_PATH_LEN];
        stack_path(stack, depth, path, sizeof path);
        if (node->type != YN_SCALAR)
            return yaml_fail(err, errlen, file, node->line, node->col, path, "a mapping key must be a scalar, got %s",
                             ynode_type_name(node));
        size_t len = strlen(path);
        snprintf(path + len, sizeof path - len, "%s%s", len ? "." : "", node->text);
        for (size_t i = 0; i < parent->n; i += 2)
            if (strcmp(parent->kids[i]->text, node->text) == 0)
                return yaml_fail(err, errlen, file, node->line, node->col, path,
                                 "duplicate key '%s' (first at line %d)", node->text, parent->kids[i]->line);
    }
    *PUSH(parent->kids, parent->n, parent->cap) = node;
    return 0;
}

static void add_anchor(ydoc *d, const yaml_char_t *anchor, ynode *node)
{
    if (!anchor)
        return;
    yanchor *a = PUSH(d->anchors, d->nanchors, d->capanchors);
    a->name = xstrdup((const char *)anchor);
    a->node = node;
}

#define YAML_MAX_DEPTH 32

int ydoc_parse(ydoc *d, const char *file, const char *text, size_t len, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return hsdr_errorf(err, errlen, "%s: cannot initialize the YAML parser", file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    ynode *stack[YAML_MAX_DEPTH];
    int depth = 0, documents = 0, rc = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            char path[YAML_PATH_LEN];
            stack_path(stack, depth, path, sizeof path);
            char context[160] = "";
            if (parser.context)
                snprintf(context, sizeof context, " (%s at %d:%d)", parser.context,
                         (int)parser.context_mark.line + 1, (int)parser.context_mark.column + 1);
            rc = yaml_fail(err, errlen, file, (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
                           path, "malformed YAML: %s%s", parser.problem ? parser.problem : "parse error", context);
            break;
        }
        ynode *node = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                rc = yaml_fail(err, errlen, file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1, NULL,
                               "only one YAML document is allowed");
            break;
        case YAML_SCALAR_EVENT:
            node = ynode_new(d, YN_SCALAR, ev.start_mark);
            node->text = xstrdup((const char *)ev.data.scalar.value);
            node->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            add_anchor(d, ev.data.scalar.anchor, node);
            rc = attach(d, stack, depth, node, file, err, errlen);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            node = ynode_new(d, ev.type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP, ev.start_mark);
            node->open = true;
            add_anchor(d, ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                              : ev.data.mapping_start.anchor,
                       node);
            rc = attach(d, stack, depth, node, file, err, errlen);
            if (rc == 0 && depth == YAML_MAX_DEPTH)
                rc = yaml_fail(err, errlen, file, node->line, node->col, NULL, "nested deeper than %d levels",
                               YAML_MAX_DEPTH);
            if (rc == 0)
                stack[depth++] = node;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            stack[--depth]->open = false;
            break;
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            for (size_t i = d->nanchors; i-- > 0;)
                if (strcmp(d->anchors[i].name, name) == 0) {
                    node = d->anchors[i].node;
                    break;
                }
            char path[YAML_PATH_LEN];
            stack_path(stack, depth, path, sizeof path);
            if (!node || node->open)
                rc = yaml_fail(err, errlen, file, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1, path,
                               node ? "recursive alias '*%s'" : "unknown alias '*%s'", name);
            else
                rc = attach(d, stack, depth, node, file, err, errlen);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc)
        ydoc_free(d);
    return rc;
}

const ynode *ynode_get(const ynode *map, const char *key)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (strcmp(map->kids[i]->text, key) == 0)
            return map->kids[i + 1];
    return NULL;
}
