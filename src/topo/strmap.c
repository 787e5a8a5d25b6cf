/* Open-addressing hash tables (linear probing, load <= 1/2) for the
 * loader's lookups: see strmap.h. */
#include "topo/strmap.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

/* A finaliser: spreads every input bit over the low bits the table uses. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix(h);
}

int64_t kb_strmap_get(const kb_strmap *m, const char *key)
{
    if (!m->cap)
        return -1;
    uint64_t h = hash_str(key);
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    }
}

/* Stores key (hash h) in a free slot; the table has room. */
static void place(kb_strmap *m, const char *key, uint64_t h, uint32_t val)
{
    size_t i = h & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->hashes[i] = h;
    m->vals[i] = val;
    m->n++;
}

int64_t kb_strmap_put(kb_strmap *m, const char *key, uint32_t val)
{
    int64_t have = kb_strmap_get(m, key);
    if (have >= 0)
        return have;
    if (2 * (m->n + 1) > m->cap) {
        kb_strmap big = {.cap = m->cap ? 2 * m->cap : 16};
        big.keys = kb_xcalloc(big.cap, sizeof *big.keys);
        big.hashes = kb_xmalloc(big.cap * sizeof *big.hashes);
        big.vals = kb_xmalloc(big.cap * sizeof *big.vals);
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                place(&big, m->keys[i], m->hashes[i], m->vals[i]);
        kb_strmap_free(m);
        *m = big;
    }
    place(m, key, hash_str(key), val);
    return -1;
}

void kb_strmap_free(kb_strmap *m)
{
    free(m->keys);
    free(m->hashes);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static uint64_t pair_key(uint32_t a, uint32_t b) { return (((uint64_t)a << 32) | b) + 1; }

int64_t kb_pairmap_get(const kb_pairmap *m, uint32_t a, uint32_t b)
{
    if (!m->cap)
        return -1;
    uint64_t k = pair_key(a, b);
    for (size_t i = mix(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (m->keys[i] == k)
            return m->vals[i];
    }
}

static void pair_grow(kb_pairmap *m)
{
    kb_pairmap big = {.cap = m->cap ? 2 * m->cap : 16};
    big.keys = kb_xcalloc(big.cap, sizeof *big.keys);
    big.vals = kb_xcalloc(big.cap, sizeof *big.vals);
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            uint64_t k = m->keys[i] - 1;
            kb_pairmap_put(&big, (uint32_t)(k >> 32), (uint32_t)k, m->vals[i]);
        }
    kb_pairmap_free(m);
    *m = big;
}

int64_t kb_pairmap_put(kb_pairmap *m, uint32_t a, uint32_t b, uint32_t val)
{
    if (2 * (m->n + 1) > m->cap)
        pair_grow(m);
    uint64_t k = pair_key(a, b);
    size_t i = mix(k) & (m->cap - 1);
    for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == k)
            return m->vals[i];
    m->keys[i] = k;
    m->vals[i] = val;
    m->n++;
    return -1;
}

void kb_pairmap_free(kb_pairmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
