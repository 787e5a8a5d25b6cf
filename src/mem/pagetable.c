/* A PE's page table (pagetable.h). */
#include "mem/pagetable.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

void kb_pt_init(kb_pagetable *pt, uint64_t page_size)
{
    memset(pt, 0, sizeof *pt);
    pt->page_size = page_size;
}

void kb_pt_free(kb_pagetable *pt)
{
    for (size_t i = 0; i < pt->cap; i++)
        free(pt->pages[i].r);
    free(pt->pages);
    memset(pt, 0, sizeof *pt);
}

static size_t slot_of(uint64_t vpn, size_t cap)
{
    return (size_t)((vpn * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

static kb_pt_page *find(const kb_pagetable *pt, uint64_t vpn)
{
    if (!pt->cap)
        return NULL;
    for (size_t i = slot_of(vpn, pt->cap);; i = (i + 1) & (pt->cap - 1)) {
        kb_pt_page *p = &pt->pages[i];
        if (!p->used)
            return NULL;
        if (p->vpn == vpn)
            return p;
    }
}

static kb_pt_page *insert(kb_pagetable *pt, uint64_t vpn)
{
    if (2 * (pt->n + 1) > pt->cap) { /* grow: keep the load under one half */
        size_t cap = pt->cap ? 2 * pt->cap : 16;
        kb_pt_page *old = pt->pages;
        size_t oldcap = pt->cap;
        pt->pages = kb_xcalloc(cap, sizeof *pt->pages);
        pt->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].used) {
                size_t j = slot_of(old[i].vpn, cap);
                while (pt->pages[j].used)
                    j = (j + 1) & (cap - 1);
                pt->pages[j] = old[i];
            }
        free(old);
    }
    size_t j = slot_of(vpn, pt->cap);
    while (pt->pages[j].used)
        j = (j + 1) & (pt->cap - 1);
    kb_pt_page *p = &pt->pages[j];
    p->used = true;
    p->vpn = vpn;
    pt->n++;
    return p;
}

void kb_pt_map(kb_pagetable *pt, uint64_t va, uint64_t pa, uint64_t size)
{
    uint64_t ps = pt->page_size, pos = va, stop = va + size;
    while (pos < stop) {
        uint64_t vpn = pos / ps, page_end = (vpn + 1) * ps, e = stop < page_end ? stop : page_end;
        kb_pt_page *p = find(pt, vpn);
        if (!p)
            p = insert(pt, vpn);
        if (p->n == p->cap) {
            p->cap = p->cap ? 2 * p->cap : 4;
            p->r = kb_xrealloc(p->r, p->cap * sizeof *p->r);
        }
        p->r[p->n++] = (kb_pt_region){pos - vpn * ps, e - vpn * ps, pa + (pos - va)};
        pos = e;
    }
}

void kb_pt_unmap(kb_pagetable *pt, uint64_t va, uint64_t size)
{
    uint64_t ps = pt->page_size, pos = va, stop = va + size;
    while (pos < stop) {
        uint64_t vpn = pos / ps, base = vpn * ps;
        kb_pt_page *p = find(pt, vpn);
        if (p) {
            uint32_t k = 0;
            for (uint32_t i = 0; i < p->n; i++) /* keep the regions not fully inside, in order */
                if (!(base + p->r[i].start >= va && base + p->r[i].end <= stop))
                    p->r[k++] = p->r[i];
            p->n = k;
        }
        pos = base + ps;
    }
}

bool kb_pt_translate(const kb_pagetable *pt, uint64_t va, uint64_t *pa)
{
    uint64_t vpn = va / pt->page_size, off = va - vpn * pt->page_size;
    const kb_pt_page *p = find(pt, vpn);
    if (!p)
        return false;
    for (uint32_t i = p->n; i-- > 0;)
        if (off >= p->r[i].start && off < p->r[i].end) {
            *pa = p->r[i].pa + (off - p->r[i].start);
            return true;
        }
    return false;
}

size_t kb_pt_regions(const kb_pagetable *pt)
{
    size_t n = 0;
    for (size_t i = 0; i < pt->cap; i++)
        n += pt->pages[i].n;
    return n;
}
