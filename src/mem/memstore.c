/* Sparse paged byte store. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "mem/memstore.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct slot {
    uint64_t domain, page; /* page number within the domain */
    unsigned char *data;   /* NULL: empty slot */
} slot;

/* Pages come from arenas the system zeroes page by page as they are first
 * touched: a write of a few bytes costs one system page, not a cleared
 * 64 KiB (a small run writes a few bytes into many store pages). Pages
 * are never freed one by one, only with the store. */
#define ARENA_PAGES 1024 /* 64 MiB of address space each */

typedef struct arena {
    struct arena *next;
    unsigned char *base;
    size_t used; /* pages handed out */
} arena;

struct kb_memstore {
    slot *slots;
    size_t cap, n; /* cap is a power of two */
    arena *arenas; /* the newest first */
};

static unsigned char *page_new(kb_memstore *m)
{
    arena *a = m->arenas;
    if (!a || a->used == ARENA_PAGES) {
        void *base = mmap(NULL, (size_t)ARENA_PAGES * KB_MEMSTORE_PAGE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
            return kb_xcalloc(1, KB_MEMSTORE_PAGE); /* no address space: a cleared page of the heap's */
        a = kb_xcalloc(1, sizeof *a);
        a->base = base;
        a->next = m->arenas;
        m->arenas = a;
    }
    return a->base + a->used++ * (size_t)KB_MEMSTORE_PAGE;
}

/* Whether p is one of the arenas' pages (else the heap's). */
static bool in_arena(const kb_memstore *m, const unsigned char *p)
{
    for (const arena *a = m->arenas; a; a = a->next)
        if (p >= a->base && p < a->base + (size_t)ARENA_PAGES * KB_MEMSTORE_PAGE)
            return true;
    return false;
}

static uint64_t mix(uint64_t domain, uint64_t page)
{
    uint64_t x = domain * 0x9e3779b97f4a7c15ull ^ (page + 0x632be59bd9b4e019ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return x;
}

kb_memstore *kb_memstore_new(void)
{
    kb_memstore *m = kb_xcalloc(1, sizeof *m);
    m->cap = 64;
    m->slots = kb_xcalloc(m->cap, sizeof *m->slots);
    return m;
}

void kb_memstore_free(kb_memstore *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].data && !in_arena(m, m->slots[i].data))
            free(m->slots[i].data);
    while (m->arenas) {
        arena *a = m->arenas;
        m->arenas = a->next;
        munmap(a->base, (size_t)ARENA_PAGES * KB_MEMSTORE_PAGE);
        free(a);
    }
    free(m->slots);
    free(m);
}

static slot *find(const kb_memstore *m, uint64_t domain, uint64_t page)
{
    size_t mask = m->cap - 1;
    for (size_t i = mix(domain, page) & mask;; i = (i + 1) & mask) {
        slot *s = &m->slots[i];
        if (!s->data || (s->domain == domain && s->page == page))
            return s;
    }
}

static void grow(kb_memstore *m)
{
    slot *old = m->slots;
    size_t oldcap = m->cap;
    m->cap *= 2;
    m->slots = kb_xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].data)
            *find(m, old[i].domain, old[i].page) = old[i];
    free(old);
}

static unsigned char *page_for_write(kb_memstore *m, uint64_t domain, uint64_t page)
{
    slot *s = find(m, domain, page);
    if (s->data)
        return s->data;
    if (2 * (m->n + 1) > m->cap) { /* keep the load factor at most 1/2 */
        grow(m);
        s = find(m, domain, page);
    }
    s->domain = domain;
    s->page = page;
    s->data = page_new(m);
    m->n++;
    return s->data;
}

void kb_memstore_write(kb_memstore *m, uint64_t domain, uint64_t addr, const void *src, size_t n)
{
    const unsigned char *p = src;
    while (n) {
        uint64_t page = addr / KB_MEMSTORE_PAGE, off = addr % KB_MEMSTORE_PAGE;
        size_t k = KB_MEMSTORE_PAGE - off < n ? (size_t)(KB_MEMSTORE_PAGE - off) : n;
        memcpy(page_for_write(m, domain, page) + off, p, k);
        p += k;
        addr += k;
        n -= k;
    }
}

void kb_memstore_read(const kb_memstore *m, uint64_t domain, uint64_t addr, void *dst, size_t n)
{
    unsigned char *p = dst;
    while (n) {
        uint64_t page = addr / KB_MEMSTORE_PAGE, off = addr % KB_MEMSTORE_PAGE;
        size_t k = KB_MEMSTORE_PAGE - off < n ? (size_t)(KB_MEMSTORE_PAGE - off) : n;
        const slot *s = find(m, domain, page);
        if (s->data)
            memcpy(p, s->data + off, k);
        else
            memset(p, 0, k);
        p += k;
        addr += k;
        n -= k;
    }
}

size_t kb_memstore_resident(const kb_memstore *m) { return m->n * (size_t)KB_MEMSTORE_PAGE; }

/* Converted in stack-sized batches: no allocation, pages touched in order. */
#define ELEM_BATCH 4096

void kb_memstore_write_elems(kb_memstore *m, uint64_t domain, uint64_t addr, kb_dtype t, const double *vals,
                             size_t count)
{
    unsigned char buf[ELEM_BATCH];
    size_t es = kb_dtype_size(t), per = es ? ELEM_BATCH / es : 0;
    for (size_t i = 0; per && i < count; i += per) {
        size_t k = count - i < per ? count - i : per;
        for (size_t j = 0; j < k; j++)
            kb_dtype_store(t, buf + j * es, vals[i + j]);
        kb_memstore_write(m, domain, addr + i * es, buf, k * es);
    }
}

void kb_memstore_read_elems(const kb_memstore *m, uint64_t domain, uint64_t addr, kb_dtype t, double *vals,
                            size_t count)
{
    unsigned char buf[ELEM_BATCH];
    size_t es = kb_dtype_size(t), per = es ? ELEM_BATCH / es : 0;
    for (size_t i = 0; per && i < count; i += per) {
        size_t k = count - i < per ? count - i : per;
        kb_memstore_read(m, domain, addr + i * es, buf, k * es);
        for (size_t j = 0; j < k; j++)
            vals[i + j] = kb_dtype_load(t, buf + j * es);
    }
}
