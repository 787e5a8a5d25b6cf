/* First-fit allocators with coalescing (memory-addressing.md §4.2-4.4):
 * the free list is sorted by address; allocation carves the front of the
 * first block that fits (after alignment); freeing coalesces with both
 * neighbours. Unlike the original, frees are checked: freeing an address
 * that is not the start of a live allocation (never allocated, interior,
 * or already freed) is an error naming it, and leaves the state unchanged.
 *
 * The same mechanism serves an HBM slice (base 0, the slice's size), a TCM
 * (the allocatable part only: the scheduler-reserved region is outside the
 * range by construction) and the device-wide VA space (sizes rounded up to
 * whole pages, page-aligned). */
#ifndef KB_MEM_ALLOC_H
#define KB_MEM_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_span {
    uint64_t start, size;
} kb_span;

typedef struct kb_alloc {
    uint64_t base, size;
    uint64_t granule;   /* sizes round up to a multiple of this (1, or the page size) */
    kb_span *free;      /* sorted by start, non-adjacent */
    size_t nfree, cap_free;
    kb_span *live;      /* sorted by start */
    size_t nlive, cap_live;
    uint64_t used;
} kb_alloc;

/* A range [base, base + size). granule: 1 for byte allocators, the page
 * size for a VA allocator (a power of two; base must be a multiple). */
void kb_alloc_init(kb_alloc *a, uint64_t base, uint64_t size, uint64_t granule);
void kb_alloc_fini(kb_alloc *a);
/* Back to the initial state (everything free). */
void kb_alloc_reset(kb_alloc *a);

/* nbytes (> 0) aligned to `align` (a power of two; 0 or 1: none). On
 * failure returns false with a message: the requested size, the largest
 * free block and the free total ("out of memory: ..."). err is malloc'd. */
bool kb_alloc_alloc(kb_alloc *a, uint64_t nbytes, uint64_t align, uint64_t *out, char **err);
/* Frees the allocation that starts at addr. */
bool kb_alloc_free(kb_alloc *a, uint64_t addr, char **err);

uint64_t kb_alloc_largest_free(const kb_alloc *a);
uint64_t kb_alloc_free_bytes(const kb_alloc *a);
bool kb_alloc_is_pristine(const kb_alloc *a);

#endif
