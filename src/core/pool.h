/* Fixed-size object pool: allocation-free in the steady state.
 * Objects come from chunks owned by the pool; kb_pool_destroy frees all of
 * them at once, whether or not they were returned. */
#ifndef KB_CORE_POOL_H
#define KB_CORE_POOL_H

#include <stddef.h>

typedef struct kb_pool {
    size_t obj_size;
    size_t per_chunk;
    void *free_list; /* objects returned */
    /* The newest chunk's objects never handed out yet: [fresh, fresh_end).
     * They are handed out in order, so a chunk's pages are touched only as
     * its objects are first used (a pool that serves a few objects costs a
     * few pages, not its whole first chunk). */
    char *fresh, *fresh_end;
    void **chunks;
    size_t nchunks, chunks_cap;
    size_t live; /* objects handed out and not yet returned */
} kb_pool;

void kb_pool_init(kb_pool *pool, size_t obj_size, size_t per_chunk);
void kb_pool_destroy(kb_pool *pool);
/* An object never handed out, from a new chunk if needed (out of line:
 * the rare path). */
void *kb_pool_take_fresh(kb_pool *pool);
/* How many objects of chunk c were ever handed out (the others are still
 * zero, as the chunk was allocated). */
size_t kb_pool_chunk_used(const kb_pool *pool, size_t c);

/* Returns uninitialised memory, for objects the caller fills whole (the
 * per-flit hot path); aborts only if the system is out of memory. */
static inline void *kb_pool_take(kb_pool *pool)
{
    if (__builtin_expect(!pool->free_list, 0))
        return kb_pool_take_fresh(pool);
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
