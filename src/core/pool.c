#include "core/pool.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

void kb_pool_init(kb_pool *pool, size_t obj_size, size_t per_chunk)
{
    memset(pool, 0, sizeof *pool);
    /* Every object must be able to hold the free-list link, aligned. */
    size_t align = sizeof(void *) > 8 ? sizeof(void *) : 8;
    if (obj_size < sizeof(void *))
        obj_size = sizeof(void *);
    pool->obj_size = (obj_size + align - 1) / align * align;
    pool->per_chunk = per_chunk ? per_chunk : 64;
}

void kb_pool_destroy(kb_pool *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++)
        free(pool->chunks[i]);
    free(pool->chunks);
    memset(pool, 0, sizeof *pool);
}

void *kb_pool_take_fresh(kb_pool *pool)
{
    if (pool->fresh == pool->fresh_end) {
        if (pool->nchunks == pool->chunks_cap) {
            pool->chunks_cap = pool->chunks_cap ? pool->chunks_cap * 2 : 8;
            pool->chunks = kb_xrealloc(pool->chunks, pool->chunks_cap * sizeof *pool->chunks);
        }
        /* Zeroed, so kb_event_pool_destroy can tell never-used objects apart. */
        char *chunk = kb_xcalloc(pool->per_chunk, pool->obj_size);
        pool->chunks[pool->nchunks++] = chunk;
        pool->fresh = chunk;
        pool->fresh_end = chunk + pool->per_chunk * pool->obj_size;
    }
    void *obj = pool->fresh;
    pool->fresh += pool->obj_size;
    pool->live++;
    return obj;
}

size_t kb_pool_chunk_used(const kb_pool *pool, size_t c)
{
    if (c + 1 < pool->nchunks)
        return pool->per_chunk;
    return pool->per_chunk - (size_t)(pool->fresh_end - pool->fresh) / pool->obj_size;
}

void *kb_pool_alloc(kb_pool *pool)
{
    void *obj = kb_pool_take(pool);
    memset(obj, 0, pool->obj_size);
    return obj;
}
