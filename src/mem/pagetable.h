/* A PE's page table (the PE_MMU's, src/comp/pe/mmu.c): its mappings from
 * virtual to physical addresses, each a whole map entry [va, va + size)
 * with the label of what it holds (a tensor, as the runtime names it).
 * The spec's table (memory-addressing.md §2.4 D3, a simulator stopgap)
 * splits entries into regions per page; this one keeps them whole in an
 * extent map (extmap.h), so that a lookup, by bisection, also gives the
 * extent an access must stay inside (docs/decisions.md, "Kernel memory
 * safety"). D3's rules hold per entry: the newest mapping wins where
 * entries overlap, and unmap removes the entries lying entirely inside
 * its range. Pages play no part in translation: the page size is the VA
 * allocator's granule (the runtime's). */
#ifndef KB_MEM_PAGETABLE_H
#define KB_MEM_PAGETABLE_H

#include "mem/extmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a mapping holds, for error messages ("tensor 'w' [4, 4] f32"):
 * reference counted, shared by the entries of one map message. */
typedef struct kb_pt_label kb_pt_label;
kb_pt_label *kb_pt_label_new(const char *text); /* one reference; text copied */
void kb_pt_label_ref(kb_pt_label *l);
void kb_pt_label_unref(kb_pt_label *l);         /* NULL: nothing */
const char *kb_pt_label_text(const kb_pt_label *l); /* NULL for NULL */

typedef struct kb_pagetable {
    kb_extmap map; /* tags: kb_pt_label * (or NULL) */
} kb_pagetable;

void kb_pt_init(kb_pagetable *pt);
void kb_pt_free(kb_pagetable *pt);
/* Maps [va, va + size) to [pa, pa + size); label may be NULL (the table
 * takes its own reference). A size of 0 maps nothing. The caller checks
 * that va + size and pa + size do not pass 2^64 - 1 (the binding does,
 * src/lua/ldevice.c); a violation aborts. */
void kb_pt_map(kb_pagetable *pt, uint64_t va, uint64_t pa, uint64_t size, kb_pt_label *label);
void kb_pt_unmap(kb_pagetable *pt, uint64_t va, uint64_t size);
/* The mapping that translates va (extent start/size, value = its physical
 * address, tag = its label), or NULL if none covers it. */
const kb_extent *kb_pt_lookup(const kb_pagetable *pt, uint64_t va);
/* The physical address of va; false if no mapping covers it. */
bool kb_pt_translate(const kb_pagetable *pt, uint64_t va, uint64_t *pa);
/* Mappings held (for tests and reports). */
size_t kb_pt_regions(const kb_pagetable *pt);

#endif
