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

void kb_pool_grow(kb_pool *pool)
{
    if (pool->nchunks == pool->chunks_cap) {
        pool->chunks_cap = pool->chunks_cap ? pool->chunks_cap * 2 : 8;
        pool->chunks = kb_xrealloc(pool->chunks, pool->chunks_cap * sizeof *pool->chunks);
    }
    /* Zeroed, so kb_event_pool_destroy can tell never-used objects apart. */
    char *chunk = kb_xcalloc(pool->per_chunk, pool->obj_size);
    pool->chunks[pool->nchunks++] = chunk;
    for (size_t i = pool->per_chunk; i-- > 0;) {
        void **obj = (void **)(void *)(chunk + i * pool->obj_size);
        *obj = pool->free_list;
        pool->free_list = obj;
    }
}

void *kb_pool_alloc(kb_pool *pool)
{
    void *obj = kb_pool_take(pool);
    memset(obj, 0, pool->obj_size);
    return obj;
}
