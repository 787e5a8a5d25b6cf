/* Fixed-size object pool: allocation-free in the steady state.
 * Objects come from chunks owned by the pool; kb_pool_destroy frees all of
 * them at once, whether or not they were returned. */
#ifndef KB_CORE_POOL_H
#define KB_CORE_POOL_H

#include <stddef.h>

typedef struct kb_pool {
    size_t obj_size;
    size_t per_chunk;
    void *free_list;
    void **chunks;
    size_t nchunks, chunks_cap;
    size_t live; /* objects handed out and not yet returned */
} kb_pool;

void kb_pool_init(kb_pool *pool, size_t obj_size, size_t per_chunk);
void kb_pool_destroy(kb_pool *pool);
/* Adds a chunk to the free list (out of line: the rare path). */
void kb_pool_grow(kb_pool *pool);

/* Returns uninitialised memory, for objects the caller fills whole (the
 * per-flit hot path); aborts only if the system is out of memory. */
static inline void *kb_pool_take(kb_pool *pool)
{
    if (!pool->free_list)
        kb_pool_grow(pool);
    void **obj = pool->free_list;
    pool->free_list = *obj;
    pool->live++;
    return obj;
}

/* Returns zeroed memory; aborts only if the system is out of memory. */
void *kb_pool_alloc(kb_pool *pool);

static inline void kb_pool_free(kb_pool *pool, void *obj)
{
    void **o = obj;
    *o = pool->free_list;
    pool->free_list = o;
    pool->live--;
}

#endif
