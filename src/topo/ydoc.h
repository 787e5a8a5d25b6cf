/* A YAML document as a tree that remembers where every value came from.
 *
 * The topology loader reads hardware descriptions through this tree so that
 * every error can name file:line:column and the key path (for example
 * "topologies/x.yaml:12:7: cube.links.pe_to_router_bw_gbs: must be > 0").
 * Overrides (`--set key.path=value`) are applied to the tree before it is
 * read, and carry their own source in place of a file position.
 *
 * Maps remember which keys a reader asked for and which it consumed, so a
 * reader can reject keys nobody asked for and list the ones it knows. */
#ifndef KB_TOPO_YDOC_H
#define KB_TOPO_YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kb_ytype { KB_Y_SCALAR, KB_Y_MAP, KB_Y_SEQ } kb_ytype;

/* Limits of one parsed document (a file, a base file or an override), so a
 * hostile or broken file is an error rather than a crash, a hang or
 * gigabytes of memory (docs/topology.md "Limits"). The largest shipped
 * topology is far below each: 6 levels deep, ~300 values, 5 KiB. */
#define KB_YDOC_MAX_FILE_BYTES (32u << 20) /* 32 MiB */
#define KB_YDOC_MAX_DEPTH 64               /* nested maps and lists */
#define KB_YDOC_MAX_NODES (1u << 20)       /* values: scalars, maps and lists */
#define KB_YDOC_MAX_SCALAR (64u << 10)     /* bytes of one key or value */

/* Where a value was written: a file position or an override. */
typedef struct kb_ymark {
    const char *src; /* file name or "--set key=value"; owned by the document */
    int line, col;   /* 1-based; 0 for overrides */
} kb_ymark;

typedef struct kb_ynode kb_ynode;

typedef struct kb_yentry {
    char *key;       /* NULL in sequences */
    kb_ymark key_mark;
    kb_ynode *val;
    bool used;       /* consumed by a reader */
} kb_yentry;

struct kb_ynode {
    kb_ytype type;
    kb_ymark mark;
    char *path;      /* key path from the root, e.g. "sip.cube_ports[1].phy" */
    char *text;      /* scalars: the text */
    bool plain;      /* scalars: unquoted (so it may be a number or bool) */
    bool absent;     /* a stand-in for a map the file does not write (kb_ynode_absent) */
    kb_yentry *items;
    size_t n, cap;
    char **asked;    /* maps: keys a reader looked up, for error messages */
    size_t nasked;
};

typedef struct kb_ydoc kb_ydoc;

/* Parses a file or a string (`name` is used in marks). On failure returns
 * NULL and sets *err to a newly allocated "src:line:col: message". A file
 * must be a regular file (a FIFO, device or directory is refused without
 * being read, so none can block or stream forever) of at most
 * KB_YDOC_MAX_FILE_BYTES; text must be UTF-8 without NUL bytes; YAML tags
 * and anchors are refused (a topology value is typed by its key). */
kb_ydoc *kb_ydoc_load_file(const char *path, char **err);
kb_ydoc *kb_ydoc_load_string(const char *text, const char *name, char **err);
void kb_ydoc_free(kb_ydoc *doc);

/* The root node; an empty document has an empty map as its root. */
kb_ynode *kb_ydoc_root(kb_ydoc *doc);

/* Applies `key.path=value`: the value is parsed as YAML (so `[1, 2]` and
 * `{w: 2, h: 3}` work); missing map keys along the path are created;
 * sequence elements are addressed by number (`cube_ports.0.phy`). Returns
 * false with *err set when the path runs into a scalar or past a sequence. */
bool kb_ydoc_set(kb_ydoc *doc, const char *assignment, char **err);

/* Lays `over` on top of `base`: maps merge key by key (recursively),
 * anything else in `over` replaces what base had. `over` is consumed;
 * values keep the file positions they were written at. */
void kb_ydoc_merge(kb_ydoc *base, kb_ydoc *over);
/* Lays the map `over`, a node of the document `owner`, over doc wherever
 * doc has those keys (src/topo/ydoc_overlay.c): maps merge key by key,
 * anything else replaces, a key `*` reaches every element of a list (and
 * nothing when the list is absent). The copies keep owner's file
 * positions. False with *err set when a `*` meets something not a list. */
bool kb_ydoc_overlay(kb_ydoc *doc, const kb_ynode *over, const kb_ydoc *owner, char **err);
/* Removes a top-level key, returning its value's text (newly allocated) if
 * it was a scalar, or NULL. */
char *kb_ydoc_take_scalar(kb_ydoc *doc, const char *key, kb_ymark *mark);

/* Looks up `key` in a map and marks it consumed; NULL if absent. Records
 * the key as known for kb_ymap_unknown's message. */
kb_ynode *kb_ymap_get(kb_ynode *map, const char *key);
/* Marks a key as known without reading it. */
void kb_ymap_know(kb_ynode *map, const char *key);
/* An error for the keys of `map` no reader consumed, one line each listing
 * the known ones, or NULL when every key was consumed. At most
 * KB_YDOC_MAX_REPORTED lines; a last line counts the rest. Newly allocated. */
#define KB_YDOC_MAX_REPORTED 20
char *kb_ymap_unknown(const kb_ynode *map);
/* Same, for every map in the tree, in document order. */
char *kb_ydoc_unknown(const kb_ydoc *doc);

/* Typed views of a node. Each returns false and sets a newly allocated *err
 * ("src:line:col: path: expected a number, got 'abc'") on a type mismatch. */
bool kb_yas_number(const kb_ynode *n, double *out, char **err);
bool kb_yas_int(const kb_ynode *n, int64_t *out, char **err);
bool kb_yas_bool(const kb_ynode *n, bool *out, char **err);
bool kb_yas_string(const kb_ynode *n, const char **out, char **err);
bool kb_yas_map(const kb_ynode *n, char **err);
bool kb_yas_seq(const kb_ynode *n, char **err);

/* "src:line:col: path: <message>" for a node (newly allocated). */
char *kb_yerr(const kb_ynode *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same for a missing key of a map: "src:line:col: path.key: <message>". */
char *kb_yerr_key(const kb_ynode *map, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "src:line:col" of a mark into buf. */
void kb_ymark_format(const kb_ymark *m, char *buf, size_t n);

/* An empty map standing for `key` of `parent` when the file does not write
 * it: readers then see no keys (defaults apply) but know the key path.
 * Not part of any document; free it with kb_ynode_free. */
kb_ynode *kb_ynode_absent(const kb_ynode *parent, const char *key);
void kb_ynode_free(kb_ynode *n);

#endif
