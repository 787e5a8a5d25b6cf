/* Internal to the YAML tree: the document and the node helpers its files
 * share. ydoc.c parses, merges and frees the tree; ydoc_file.c reads its
 * files; ydoc_set.c applies `--set key.path=value` overrides to it;
 * ydoc_read.c is what readers use (lookups that record the keys asked for,
 * errors that name file:line:col, unknown keys, typed views). */
#ifndef KB_TOPO_YDOC_INTERNAL_H
#define KB_TOPO_YDOC_INTERNAL_H

#include "topo/ydoc.h"

struct kb_ydoc {
    kb_ynode *root;
    char **sources; /* file name and override texts, referenced by marks */
    size_t nsources;
};

/* Keeps a copy of `src` for the document's lifetime and returns it (marks
 * point at it). */
const char *kb_ydoc_add_source(kb_ydoc *doc, const char *src);
/* Parses YAML text into a detached node (an empty map for empty text);
 * NULL with *err set on failure. Key paths are not set; `at` (NULL or "":
 * the root) is the key path the text will sit at, for errors found while
 * parsing (an override's value). */
kb_ynode *kb_ydoc_parse_text(const char *text, size_t len, const char *src, const char *at, char **err);

/* The text of a topology file (NUL-terminated, its length in *len), or
 * NULL with *err set: not a regular file, over the size limit, unreadable
 * (ydoc_file.c). */
char *kb_ydoc_read_file(const char *path, size_t *len, char **err);

kb_ynode *kb_ynode_new(kb_ytype type, kb_ymark mark);
/* A zeroed entry appended to a map or sequence. */
kb_yentry *kb_ynode_append(kb_ynode *n);
/* Sets the key path of n and, recursively, of its children. */
void kb_ynode_set_paths(kb_ynode *n, const char *path);

#endif
