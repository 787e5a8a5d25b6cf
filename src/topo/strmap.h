/* A string -> index hash table for the loader's lookups that would
 * otherwise scan a list (duplicate map keys, node ids, merged keys,
 * recorded key paths): O(1) expected per lookup, so a file with 100,000
 * keys or nodes loads in linear time. Keys are borrowed (the caller keeps
 * them alive and unchanged); iteration is never needed, so the table's
 * order cannot leak into any output. */
#ifndef KB_TOPO_STRMAP_H
#define KB_TOPO_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_strmap {
    const char **keys;
    uint64_t *hashes; /* of keys[i]: compared before the strings */
    uint32_t *vals;
    size_t n, cap; /* cap: 0 or a power of two */
} kb_strmap;

/* The index stored for key, or -1. */
int64_t kb_strmap_get(const kb_strmap *m, const char *key);
/* Stores key -> val unless key is present; returns the index already
 * stored (and stores nothing) or -1 when it stored. */
int64_t kb_strmap_put(kb_strmap *m, const char *key, uint32_t val);
void kb_strmap_free(kb_strmap *m);

/* The same for pairs of 32-bit numbers (graph links src -> dst). */
typedef struct kb_pairmap {
    uint64_t *keys; /* src << 32 | dst, plus one so that 0 marks a free slot */
    uint32_t *vals;
    size_t n, cap;
} kb_pairmap;

int64_t kb_pairmap_get(const kb_pairmap *m, uint32_t a, uint32_t b);
int64_t kb_pairmap_put(kb_pairmap *m, uint32_t a, uint32_t b, uint32_t val);
void kb_pairmap_free(kb_pairmap *m);

#endif
