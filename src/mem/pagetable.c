/* A PE's page table (pagetable.h). */
#include "mem/pagetable.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_pt_label {
    size_t refs;
    char text[];
};

kb_pt_label *kb_pt_label_new(const char *text)
{
    size_t n = strlen(text) + 1;
    kb_pt_label *l = kb_xmalloc(sizeof *l + n);
    l->refs = 1;
    memcpy(l->text, text, n);
    return l;
}

void kb_pt_label_ref(kb_pt_label *l) { l->refs++; }

void kb_pt_label_unref(kb_pt_label *l)
{
    if (l && --l->refs == 0)
        free(l);
}

const char *kb_pt_label_text(const kb_pt_label *l) { return l ? l->text : NULL; }

static void drop(void *tag) { kb_pt_label_unref(tag); }

void kb_pt_init(kb_pagetable *pt) { kb_extmap_init(&pt->map); }

void kb_pt_free(kb_pagetable *pt) { kb_extmap_fini(&pt->map, drop); }

void kb_pt_map(kb_pagetable *pt, uint64_t va, uint64_t pa, uint64_t size, kb_pt_label *label)
{
    if (size == 0)
        return;
    if (size > UINT64_MAX - pa) {
        fprintf(stderr, "kernbench: kb_pt_map: physical range [0x%llx, +%llu) passes 2^64\n",
                (unsigned long long)pa, (unsigned long long)size);
        abort();
    }
    if (label)
        kb_pt_label_ref(label);
    kb_extmap_insert(&pt->map, va, size, pa, label);
}

void kb_pt_unmap(kb_pagetable *pt, uint64_t va, uint64_t size)
{
    if (size)
        kb_extmap_remove_inside(&pt->map, va, size, drop);
}

const kb_extent *kb_pt_lookup(const kb_pagetable *pt, uint64_t va) { return kb_extmap_find(&pt->map, va); }

bool kb_pt_translate(const kb_pagetable *pt, uint64_t va, uint64_t *pa)
{
    const kb_extent *e = kb_extmap_find(&pt->map, va);
    if (!e)
        return false;
    *pa = e->value + (va - e->start);
    return true;
}

size_t kb_pt_regions(const kb_pagetable *pt) { return kb_extmap_count(&pt->map); }
