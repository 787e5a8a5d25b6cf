/* A PE's page table: per virtual page, a list of regions
 * (start and end within the page, and the physical address of the page
 * offset `start`). map() adds a region to every page the range touches;
 * translate() scans a page's regions from the newest (last write wins);
 * unmap() removes the regions lying entirely inside the range. Regions
 * smaller than a page let tensors share a page (docs/decisions.md, "MMU"). Lookups hash the page number (open addressing, no pointer
 * hashing: deterministic). */
#ifndef KB_MEM_PAGETABLE_H
#define KB_MEM_PAGETABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_pt_region {
    uint64_t start, end; /* offsets within the page, end exclusive */
    uint64_t pa;         /* physical address of offset `start` */
} kb_pt_region;

typedef struct kb_pt_page {
    uint64_t vpn;
    kb_pt_region *r;
    uint32_t n, cap;
    bool used;
} kb_pt_page;

typedef struct kb_pagetable {
    uint64_t page_size;
    kb_pt_page *pages; /* open addressing; a page, once made, stays */
    size_t cap, n;
} kb_pagetable;

void kb_pt_init(kb_pagetable *pt, uint64_t page_size);
void kb_pt_free(kb_pagetable *pt);
void kb_pt_map(kb_pagetable *pt, uint64_t va, uint64_t pa, uint64_t size);
void kb_pt_unmap(kb_pagetable *pt, uint64_t va, uint64_t size);
/* The physical address of va; false if no region covers it. */
bool kb_pt_translate(const kb_pagetable *pt, uint64_t va, uint64_t *pa);
/* Regions held (for tests and reports). */
size_t kb_pt_regions(const kb_pagetable *pt);

#endif
