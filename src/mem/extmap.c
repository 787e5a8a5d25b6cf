/* An address space's map of extents (extmap.h). */
#include "mem/extmap.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb_extmap_init(kb_extmap *m) { memset(m, 0, sizeof *m); }

void kb_extmap_fini(kb_extmap *m, kb_extmap_drop_fn drop)
{
    for (size_t i = 0; i < m->n; i++) {
        if (drop)
            drop(m->all[i]->tag);
        free(m->all[i]);
    }
    free(m->all);
    free(m->vis);
    memset(m, 0, sizeof *m);
}

size_t kb_extmap_count(const kb_extmap *m) { return m->n; }

static uint64_t end_of(const kb_extent *e) { return e->start + e->size; }

/* The first piece that ends after addr (pieces are disjoint and sorted, so
 * their ends are sorted too). */
static size_t piece_after(const kb_extmap *m, uint64_t addr)
{
    size_t lo = 0, hi = m->nvis;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->vis[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first mapping that starts at or after addr (after addr when `after`). */
static size_t mapping_index(const kb_extmap *m, uint64_t addr, bool after)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t s = m->all[mid]->start;
        if (s < addr || (after && s == addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Replaces pieces [i, j) by the k pieces of `with`. */
static void splice(kb_extmap *m, size_t i, size_t j, const kb_extmap_piece *with, size_t k)
{
    size_t n = m->nvis - (j - i) + k;
    if (n > m->capvis) {
        m->capvis = m->capvis * 2 > n ? m->capvis * 2 : n + 16;
        m->vis = kb_xrealloc(m->vis, m->capvis * sizeof *m->vis);
    }
    memmove(m->vis + i + k, m->vis + j, (m->nvis - j) * sizeof *m->vis);
    memcpy(m->vis + i, with, k * sizeof *with);
    m->nvis = n;
}

static void shadow(kb_extmap *m, kb_extent *e)
{
    if (!e->shadowed) {
        e->shadowed = true;
        m->nshadowed++;
    }
}

void kb_extmap_insert(kb_extmap *m, uint64_t start, uint64_t size, uint64_t value, void *tag)
{
    if (size == 0 || size > UINT64_MAX - start) {
        fprintf(stderr, "kernbench: kb_extmap_insert: bad range [0x%llx, +%llu)\n", (unsigned long long)start,
                (unsigned long long)size);
        abort();
    }
    kb_extent *e = kb_xmalloc(sizeof *e);
    *e = (kb_extent){start, size, value, tag, ++m->seq, false};
    size_t at = mapping_index(m, start, true); /* after every mapping starting at or before it: older first */
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->all = kb_xrealloc(m->all, m->cap * sizeof *m->all);
    }
    memmove(m->all + at + 1, m->all + at, (m->n - at) * sizeof *m->all);
    m->all[at] = e;
    m->n++;
    /* It shows over all of its range: the pieces it overlaps keep only
     * what lies outside (a left and a right remainder at most). */
    uint64_t lo = start, hi = start + size;
    size_t i = piece_after(m, lo), j = i;
    while (j < m->nvis && m->vis[j].lo < hi)
        shadow(m, m->vis[j++].e);
    kb_extmap_piece with[3];
    size_t k = 0;
    if (i < j && m->vis[i].lo < lo)
        with[k++] = (kb_extmap_piece){m->vis[i].lo, lo, m->vis[i].e};
    with[k++] = (kb_extmap_piece){lo, hi, e};
    if (i < j && m->vis[j - 1].hi > hi)
        with[k++] = (kb_extmap_piece){hi, m->vis[j - 1].hi, m->vis[j - 1].e};
    splice(m, i, j, with, k);
}

const kb_extent *kb_extmap_find(const kb_extmap *m, uint64_t addr)
{
    size_t i = piece_after(m, addr);
    return i < m->nvis && m->vis[i].lo <= addr ? m->vis[i].e : NULL;
}

typedef struct span {
    uint64_t lo, hi;
} span;

typedef struct spans {
    span *s;
    size_t n, cap;
} spans;

static void spans_push(spans *v, uint64_t lo, uint64_t hi)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->s = kb_xrealloc(v->s, v->cap * sizeof *v->s);
    }
    v->s[v->n++] = (span){lo, hi};
}

static int newest_first(const void *a, const void *b)
{
    const kb_extent *x = *(kb_extent *const *)a, *y = *(kb_extent *const *)b;
    return (x->seq < y->seq) - (x->seq > y->seq);
}

/* What shows again in hole [a, b) (nothing shows there now): for each
 * address, the newest mapping left that covers it. */
static void refill(kb_extmap *m, uint64_t a, uint64_t b)
{
    size_t stop = mapping_index(m, b - 1, true), nc = 0;
    kb_extent **cand = kb_xmalloc((stop ? stop : 1) * sizeof *cand);
    for (size_t i = 0; i < stop; i++)
        if (end_of(m->all[i]) > a)
            cand[nc++] = m->all[i];
    qsort(cand, nc, sizeof *cand, newest_first);
    spans open = {0}, next = {0};
    spans_push(&open, a, b);
    for (size_t c = 0; c < nc && open.n; c++) {
        uint64_t lo = cand[c]->start, hi = end_of(cand[c]);
        next.n = 0;
        for (size_t u = 0; u < open.n; u++) {
            span s = open.s[u];
            uint64_t x = s.lo > lo ? s.lo : lo, y = s.hi < hi ? s.hi : hi;
            if (x >= y) {
                spans_push(&next, s.lo, s.hi);
                continue;
            }
            kb_extmap_piece p = {x, y, cand[c]};
            splice(m, piece_after(m, x), piece_after(m, x), &p, 1);
            if (s.lo < x)
                spans_push(&next, s.lo, x);
            if (y < s.hi)
                spans_push(&next, y, s.hi);
        }
        spans t = open;
        open = next;
        next = t;
    }
    free(open.s);
    free(next.s);
    free(cand);
}

size_t kb_extmap_remove_inside(kb_extmap *m, uint64_t start, uint64_t size, kb_extmap_drop_fn drop)
{
    uint64_t end = size > UINT64_MAX - start ? UINT64_MAX : start + size;
    /* The mappings inside start in [start, end): take them out of `all`,
     * marked dead (seq 0; live ones count from 1). */
    size_t i = mapping_index(m, start, false), r = i, k = i, ndead = 0;
    kb_extent **dead = NULL;
    for (; r < m->n && m->all[r]->start < end; r++) {
        kb_extent *e = m->all[r];
        if (e->size <= end - e->start) {
            dead = kb_xrealloc(dead, (ndead + 1) * sizeof *dead);
            dead[ndead++] = e;
            if (e->shadowed)
                m->nshadowed--;
            e->seq = 0;
            continue;
        }
        m->all[k++] = e;
    }
    if (!ndead)
        return 0;
    memmove(m->all + k, m->all + r, (m->n - r) * sizeof *m->all);
    m->n -= r - k;
    /* Their pieces lie inside [start, end): drop them, noting the holes. */
    spans holes = {0};
    size_t q = piece_after(m, start), w = q;
    for (; q < m->nvis && m->vis[q].lo < end; q++) {
        kb_extmap_piece pc = m->vis[q];
        if (pc.e->seq != 0) {
            m->vis[w++] = pc;
            continue;
        }
        if (holes.n && holes.s[holes.n - 1].hi == pc.lo)
            holes.s[holes.n - 1].hi = pc.hi;
        else
            spans_push(&holes, pc.lo, pc.hi);
    }
    memmove(m->vis + w, m->vis + q, (m->nvis - q) * sizeof *m->vis);
    m->nvis -= q - w;
    /* An older mapping can show again only if one was ever overlapped. */
    for (size_t h = 0; m->nshadowed && h < holes.n; h++)
        refill(m, holes.s[h].lo, holes.s[h].hi);
    free(holes.s);
    for (size_t d = 0; d < ndead; d++) {
        if (drop)
            drop(dead[d]->tag);
        free(dead[d]);
    }
    free(dead);
    return ndead;
}
