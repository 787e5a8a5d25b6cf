/* Component implementations by name ("builtin.forwarding", ...).
 *
 * Every node of a topology names an implementation. The registry maps that
 * name to the attributes the implementation accepts (names, defaults,
 * ranges) and to its behaviour, which the topology layer keeps opaque: the
 * component layer (src/comp) registers builtins with their behaviour, and
 * Lua-written implementations can be added to the same registry later.
 * A registry is an object, not global state: each host owns one. */
#ifndef KB_TOPO_REGISTRY_H
#define KB_TOPO_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

typedef enum kb_attr_type { KB_ATTR_NUMBER, KB_ATTR_INT, KB_ATTR_BOOL } kb_attr_type;

/* One attribute an implementation accepts. Values are kept as doubles. */
typedef struct kb_attr_def {
    const char *name;
    kb_attr_type type;
    double dflt;
    double min, max;  /* inclusive bounds */
    bool min_open;    /* min is exclusive (e.g. bandwidth > 0) */
    bool pow2;        /* integers only: must be a power of two */
    const char *unit; /* for messages and docs, e.g. "ns" */
    const char *doc;
} kb_attr_def;

typedef struct kb_impl {
    const char *name;        /* "builtin.forwarding" */
    const char *kinds;       /* comma-separated node kinds it can serve; NULL = any */
    const kb_attr_def *attrs;
    size_t nattrs;
    const void *ops;         /* behaviour, interpreted by the component layer */
    const char *doc;
    /* What a Lua latency model replacing its timing formula receives
     * (`latency_model: lua:MODULE` in a topology); NULL: it has none. */
    const char *latency;
} kb_impl;

typedef struct kb_registry kb_registry;

kb_registry *kb_registry_new(void);
void kb_registry_free(kb_registry *reg);
/* Adds an implementation; the registry keeps the pointer (impl must outlive
 * it). Returns false if the name is taken. */
bool kb_registry_add(kb_registry *reg, const kb_impl *impl);
const kb_impl *kb_registry_find(const kb_registry *reg, const char *name);

/* A source of implementations not registered in advance (Lua components:
 * `impl: lua:MODULE`): called by kb_registry_lookup for an unknown name;
 * returns the implementation (which it registers and keeps alive) or NULL,
 * with *err if the name was its to resolve but failed (a module that does
 * not load), without *err if it does not know the name. */
typedef const kb_impl *(*kb_impl_resolver)(void *ctx, const char *name, char **err);
void kb_registry_set_resolver(kb_registry *reg, kb_impl_resolver fn, void *ctx);
/* kb_registry_find, then the resolver. */
const kb_impl *kb_registry_lookup(const kb_registry *reg, const char *name, char **err);
/* "builtin.a, builtin.b, ..." in name order, newly allocated. */
char *kb_registry_names(const kb_registry *reg);
size_t kb_registry_count(const kb_registry *reg);
const kb_impl *kb_registry_at(const kb_registry *reg, size_t i); /* name order */

/* Index of an attribute in impl->attrs, or -1. */
int kb_impl_attr_index(const kb_impl *impl, const char *name);
/* Whether impl may serve a node of `kind`. */
bool kb_impl_serves(const kb_impl *impl, const char *kind);

#endif
