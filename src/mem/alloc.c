/* First-fit allocator with coalescing and checked frees. */
#include "mem/alloc.h"

#include "core/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

bool kb_alloc_check_range(uint64_t base, uint64_t size, uint64_t granule, char **err)
{
    if (granule > 1 && !is_pow2(granule)) {
        *err = kb_asprintf("granule %" PRIu64 " is not a power of two", granule);
        return false;
    }
    if (granule > 1 && base % granule) {
        *err = kb_asprintf("base 0x%" PRIx64 " is not a multiple of the granule %" PRIu64, base, granule);
        return false;
    }
    if (size > UINT64_MAX - base) {
        *err = kb_asprintf("range [0x%" PRIx64 ", +%" PRIu64 ") ends past 2^64", base, size);
        return false;
    }
    return true;
}

void kb_alloc_init(kb_alloc *a, uint64_t base, uint64_t size, uint64_t granule)
{
    char *err = NULL;
    if (!kb_alloc_check_range(base, size, granule, &err)) {
        fprintf(stderr, "kernbench: kb_alloc_init: %s\n", err);
        abort();
    }
    memset(a, 0, sizeof *a);
    a->base = base;
    a->size = size;
    a->granule = granule ? granule : 1;
    kb_alloc_reset(a);
}

void kb_alloc_fini(kb_alloc *a)
{
    free(a->free);
    free(a->live);
    memset(a, 0, sizeof *a);
}

static void insert_at(kb_span **arr, size_t *n, size_t *cap, size_t i, kb_span s)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *arr = kb_xrealloc(*arr, *cap * sizeof **arr);
    }
    memmove(*arr + i + 1, *arr + i, (*n - i) * sizeof **arr);
    (*arr)[i] = s;
    (*n)++;
}

static void remove_at(kb_span *arr, size_t *n, size_t i)
{
    memmove(arr + i, arr + i + 1, (*n - i - 1) * sizeof *arr);
    (*n)--;
}

void kb_alloc_reset(kb_alloc *a)
{
    a->nfree = a->nlive = 0;
    a->used = 0;
    if (a->size)
        insert_at(&a->free, &a->nfree, &a->cap_free, 0, (kb_span){a->base, a->size});
}

/* First index whose start is >= addr. */
static size_t lower_bound(const kb_span *arr, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (arr[mid].start < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t kb_alloc_largest_free(const kb_alloc *a)
{
    uint64_t best = 0;
    for (size_t i = 0; i < a->nfree; i++)
        if (a->free[i].size > best)
            best = a->free[i].size;
    return best;
}

uint64_t kb_alloc_free_bytes(const kb_alloc *a) { return a->size - a->used; }
uint64_t kb_alloc_used_bytes(const kb_alloc *a) { return a->used; }
size_t kb_alloc_live_count(const kb_alloc *a) { return a->nlive; }

uint64_t kb_alloc_live_size(const kb_alloc *a, uint64_t addr)
{
    size_t i = lower_bound(a->live, a->nlive, addr);
    return i < a->nlive && a->live[i].start == addr ? a->live[i].size : 0;
}

/* The last live allocation starting at or before addr, if it holds addr. */
bool kb_alloc_find(const kb_alloc *a, uint64_t addr, kb_span *out)
{
    size_t i = lower_bound(a->live, a->nlive, addr);
    if (i < a->nlive && a->live[i].start == addr) {
        *out = a->live[i];
        return true;
    }
    if (i == 0 || addr - a->live[i - 1].start >= a->live[i - 1].size)
        return false;
    *out = a->live[i - 1];
    return true;
}

bool kb_alloc_is_pristine(const kb_alloc *a)
{
    return a->nlive == 0 && a->used == 0 &&
           (a->size == 0 || (a->nfree == 1 && a->free[0].start == a->base && a->free[0].size == a->size));
}

bool kb_alloc_alloc(kb_alloc *a, uint64_t nbytes, uint64_t align, uint64_t *out, char **err)
{
    if (align == 0)
        align = 1;
    if (!is_pow2(align)) {
        *err = kb_asprintf("alignment %" PRIu64 " is not a power of two", align);
        return false;
    }
    if (nbytes == 0) {
        *err = kb_asprintf("a 0-byte allocation (give at least 1 byte)");
        return false;
    }
    if (align < a->granule)
        align = a->granule;
    /* The charged size: nbytes rounded up to the granule. A request whose
     * charged size exceeds the whole range skips the search (and the
     * rounding, which could overflow). */
    uint64_t up = (a->granule - nbytes % a->granule) % a->granule;
    bool can_fit = nbytes <= a->size && a->size - nbytes >= up;
    uint64_t size = can_fit ? nbytes + up : nbytes;
    for (size_t i = 0; can_fit && i < a->nfree; i++) {
        kb_span f = a->free[i];
        uint64_t pad = (align - f.start % align) % align; /* start = f.start + pad, no overflow */
        if (pad > f.size || f.size - pad < size)
            continue;
        /* carve [start, start+size) out of f: a front pad stays free */
        uint64_t start = f.start + pad, rest = f.size - pad - size;
        remove_at(a->free, &a->nfree, i);
        size_t at = i;
        if (pad)
            insert_at(&a->free, &a->nfree, &a->cap_free, at++, (kb_span){f.start, pad});
        if (rest)
            insert_at(&a->free, &a->nfree, &a->cap_free, at, (kb_span){start + size, rest});
        insert_at(&a->live, &a->nlive, &a->cap_live, lower_bound(a->live, a->nlive, start),
                  (kb_span){start, size});
        a->used += size;
        *out = start;
        return true;
    }
    char rounded[96] = "";
    if (size != nbytes)
        snprintf(rounded, sizeof rounded, "%" PRIu64 " in %" PRIu64 "-byte granules, ", size, a->granule);
    *err = kb_asprintf("out of memory: %" PRIu64 " bytes requested (%salignment %" PRIu64
                       "), largest free block %" PRIu64 " bytes, %" PRIu64 " of %" PRIu64
                       " bytes free",
                       nbytes, rounded, align, kb_alloc_largest_free(a), a->size - a->used, a->size);
    return false;
}

bool kb_alloc_free(kb_alloc *a, uint64_t addr, char **err)
{
    size_t i = lower_bound(a->live, a->nlive, addr);
    if (i == a->nlive || a->live[i].start != addr) {
        kb_span in;
        if (kb_alloc_find(a, addr, &in))
            *err = kb_asprintf("free of 0x%" PRIx64 ": inside the allocation at 0x%" PRIx64 " (free its start)",
                               addr, in.start);
        else if (addr < a->base || addr - a->base >= a->size)
            *err = kb_asprintf("free of 0x%" PRIx64 ": outside the allocator's range [0x%" PRIx64
                               ", 0x%" PRIx64 ")", addr, a->base, a->base + a->size);
        else
            *err = kb_asprintf("free of 0x%" PRIx64 ": no allocation starts there (never "
                               "allocated, or freed already)", addr);
        return false;
    }
    kb_span s = a->live[i];
    remove_at(a->live, &a->nlive, i);
    a->used -= s.size;
    size_t j = lower_bound(a->free, a->nfree, s.start);
    if (j > 0 && a->free[j - 1].start + a->free[j - 1].size == s.start) { /* merge with previous */
        j--;
        s.start = a->free[j].start;
        s.size += a->free[j].size;
        remove_at(a->free, &a->nfree, j);
    }
    if (j < a->nfree && s.start + s.size == a->free[j].start) { /* merge with next */
        s.size += a->free[j].size;
        remove_at(a->free, &a->nfree, j);
    }
    insert_at(&a->free, &a->nfree, &a->cap_free, j, s);
    return true;
}
