/* An address space's map of extents: which mapping holds an address,
 * answered by bisection in O(log n) (the PE_MMU's table, pagetable.h, keeps
 * one per PE). A mapping is [start, start + size) with the owner's value
 * (a physical address) and tag (a label).
 *
 * Mappings may overlap. Where they do, the newest shows (last write wins,
 * as the spec's page table, memory-addressing.md §2.4 D3), and an older
 * one shows again where a newer one is removed. Removal takes every
 * mapping that lies entirely inside a range (D3's unmap; a mapping only
 * partly inside stays).
 *
 * What shows is kept as disjoint pieces sorted by address, each naming its
 * mapping, so a lookup is one bisection. Inserting costs O(log n) plus the
 * pieces it covers (and a memmove); removing the same plus, only when some
 * remaining mapping was ever overlapped by a newer one, a scan of the
 * mappings to find what shows again. Nothing depends on hash or pointer
 * order: the same calls give the same map. */
#ifndef KB_MEM_EXTMAP_H
#define KB_MEM_EXTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_extent {
    uint64_t start, size; /* [start, start + size), size >= 1 */
    uint64_t value;       /* the owner's (a page table: the physical address of start) */
    void *tag;            /* the owner's (a page table: the mapping's label) */
    uint64_t seq;         /* insertion order: the newer shows */
    bool shadowed;        /* a newer mapping has overlapped it (stays set) */
} kb_extent;

typedef struct kb_extmap_piece {
    uint64_t lo, hi;      /* [lo, hi) */
    kb_extent *e;
} kb_extmap_piece;

/* Fields are readable (tests check invariants); change them only through
 * the functions below. */
typedef struct kb_extmap {
    kb_extent **all;      /* every mapping, sorted by start, then insertion */
    size_t n, cap;
    kb_extmap_piece *vis; /* what shows: disjoint, sorted, each its newest mapping */
    size_t nvis, capvis;
    uint64_t seq;
    size_t nshadowed;     /* mappings with `shadowed` set */
} kb_extmap;

/* What a removed mapping's tag becomes (NULL: nothing to do). */
typedef void (*kb_extmap_drop_fn)(void *tag);

void kb_extmap_init(kb_extmap *m);
/* Frees every mapping, calling drop on each tag. */
void kb_extmap_fini(kb_extmap *m, kb_extmap_drop_fn drop);
/* Adds [start, start + size) -> (value, tag), newest of all. size >= 1 and
 * start + size <= UINT64_MAX (the caller checks untrusted values; a
 * violation is a programming error and aborts). */
void kb_extmap_insert(kb_extmap *m, uint64_t start, uint64_t size, uint64_t value, void *tag);
/* Removes the mappings lying entirely inside [start, start + size) (a size
 * reaching past 2^64 means "to the end"), calling drop on their tags;
 * returns how many. */
size_t kb_extmap_remove_inside(kb_extmap *m, uint64_t start, uint64_t size, kb_extmap_drop_fn drop);
/* The mapping that shows at addr, or NULL. */
const kb_extent *kb_extmap_find(const kb_extmap *m, uint64_t addr);
size_t kb_extmap_count(const kb_extmap *m);

#endif
