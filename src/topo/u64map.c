/* Linear probing with a 64-bit mix; the table doubles at half full. */
#include "topo/u64map.h"

#include "core/util.h"

#include <stdlib.h>

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

void *kb_u64map_get(const kb_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key)
            return m->slots[i].val;
        if (!m->slots[i].key)
            return NULL;
    }
}

static void insert(kb_u64map_slot *slots, size_t cap, uint64_t key, void *val)
{
    size_t i = mix64(key) & (cap - 1);
    while (slots[i].key)
        i = (i + 1) & (cap - 1);
    slots[i] = (kb_u64map_slot){key, val};
}

void kb_u64map_put(kb_u64map *m, uint64_t key, void *val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 256;
        kb_u64map_slot *ns = kb_xcalloc(ncap, sizeof *ns);
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key)
                insert(ns, ncap, m->slots[i].key, m->slots[i].val);
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    insert(m->slots, m->cap, key, val);
    m->n++;
}

void kb_u64map_clear(kb_u64map *m)
{
    free(m->slots);
    *m = (kb_u64map){0};
}
