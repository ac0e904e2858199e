/* A YAML tree with positions: one YAML document (libyaml's event API) as a small tree of scalars, lists and mappings
 * in which every node keeps its line:column, so that whoever reads the tree can point an error at its input. Mapping
 * keys are scalars and unique; an alias is the node of its anchor (shared, not copied; a recursive one is refused).
 * Knows nothing of what the document means (the experiment matrix reads it: matrix_load.c, matrix_spec.c). */
#ifndef HSDR_YAML_TREE_H
#define HSDR_YAML_TREE_H
#include <stdbool.h>
#include <stddef.h>

typedef enum { YN_SCALAR, YN_SEQ, YN_MAP } yn_type;

typedef struct ynode ynode;
struct ynode {
    yn_type type;
    int line, col; /* 1-based */
    char *text;    /* scalars */
    bool plain;    /* unquoted scalar (an empty plain scalar, ~ or null is "nothing") */
    ynode **kids;  /* sequence items; mapping: key, value, key, value, ... */
    size_t n, cap;
    bool open;     /* container still being parsed (a recursive alias would point into it) */
    ynode *next_alloc;
};

typedef struct yanchor yanchor; /* yaml_tree.c */

typedef struct {
    ynode *all, *root; /* every node (by next_alloc), and the document's (NULL: an empty document) */
    yanchor *anchors;
    size_t nanchors, capanchors;
} ydoc;

/* Parse one YAML document (file names the input in messages) into d. 0, or -1 with "file:line:col: path: message"
 * (path: the key path of the node being parsed, "axes.K[2]") and nothing allocated. */
int ydoc_parse(ydoc *d, const char *file, const char *text, size_t len, char *err, size_t errlen);
void ydoc_free(ydoc *d);

/* The value of key in a mapping, or NULL. */
const ynode *ynode_get(const ynode *map, const char *key);
/* "a mapping", "a list" or "a scalar", for messages. */
const char *ynode_type_name(const ynode *n);
/* An empty plain scalar, ~ or null: "nothing". */
bool ynode_is_null(const ynode *n);

#endif
