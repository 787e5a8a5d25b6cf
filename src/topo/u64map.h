/* A small open-addressing hash map from nonzero 64-bit keys to pointers
 * (the route caches of route.c and route_tree.c). */
#ifndef KB_TOPO_U64MAP_H
#define KB_TOPO_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct kb_u64map_slot {
    uint64_t key; /* 0 = empty */
    void *val;
} kb_u64map_slot;

typedef struct kb_u64map {
    kb_u64map_slot *slots;
    size_t cap, n; /* cap is 0 or a power of two, at least 2n */
} kb_u64map;

/* The value of key (nonzero), or NULL. */
void *kb_u64map_get(const kb_u64map *m, uint64_t key);
/* Adds key (nonzero, not present) -> val. */
void kb_u64map_put(kb_u64map *m, uint64_t key, void *val);
/* Frees the slots (not the values); the map is empty afterwards. */
void kb_u64map_clear(kb_u64map *m);

#endif
