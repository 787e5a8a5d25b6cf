/* Node lookup by place: (kind, sip, cube, pe, io) -> node (topo.h).
 *
 * Built once when a topology is compiled: the nodes sorted by their place,
 * so a lookup is a binary search. Places held by several nodes (the routers
 * of a cube, its UCIe ports) are marked ambiguous: those nodes are named by
 * id, not by place. */
#include "topo/build_internal.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

#define AMBIGUOUS UINT32_MAX

typedef struct kb_place_entry {
    const char *kind;
    int sip, cube, pe, io;
    uint32_t node; /* AMBIGUOUS when several nodes share the place */
} kb_place_entry;

static int cmp_int(int a, int b) { return (a > b) - (a < b); }

static int cmp_place(const kb_place_entry *a, const kb_place_entry *b)
{
    int c = strcmp(a->kind, b->kind);
    if (!c)
        c = cmp_int(a->sip, b->sip);
    if (!c)
        c = cmp_int(a->cube, b->cube);
    if (!c)
        c = cmp_int(a->pe, b->pe);
    if (!c)
        c = cmp_int(a->io, b->io);
    return c;
}

static int cmp_entry(const void *a, const void *b)
{
    int c = cmp_place(a, b);
    if (c)
        return c;
    const kb_place_entry *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

void kb_places_build(kb_topo *t)
{
    size_t n = t->nnodes, k = 0;
    kb_place_entry *e = kb_xmalloc((n ? n : 1) * sizeof *e);
    for (size_t i = 0; i < n; i++) {
        const kb_node *nd = &t->nodes[i];
        e[i] = (kb_place_entry){nd->spec->kind, nd->sip, nd->cube, nd->pe, nd->io, (uint32_t)i};
    }
    qsort(e, n, sizeof *e, cmp_entry);
    for (size_t i = 0; i < n; i++) { /* one entry per place */
        if (k > 0 && cmp_place(&e[k - 1], &e[i]) == 0) {
            e[k - 1].node = AMBIGUOUS;
            continue;
        }
        e[k++] = e[i];
    }
    t->places = e;
    t->nplaces = k;
}

void kb_places_free(kb_topo *t)
{
    free(t->places);
    t->places = NULL;
    t->nplaces = 0;
}

int64_t kb_topo_node_at(const kb_topo *t, const char *kind, int sip, int cube, int pe, int io)
{
    kb_place_entry key = {kind, sip, cube, pe, io, 0};
    const kb_place_entry *e = bsearch(&key, t->places, t->nplaces, sizeof key,
                                      (int (*)(const void *, const void *))cmp_place);
    if (!e)
        return KB_NODE_NONE;
    return e->node == AMBIGUOUS ? KB_NODE_AMBIGUOUS : (int64_t)e->node;
}

int64_t kb_topo_pe_node(const kb_topo *t, int sip, int cube, int pe, const char *kind)
{
    return kb_topo_node_at(t, kind, sip, cube, pe, -1);
}

int64_t kb_topo_cube_node(const kb_topo *t, int sip, int cube, const char *kind)
{
    return kb_topo_node_at(t, kind, sip, cube, -1, -1);
}

int64_t kb_topo_io_node(const kb_topo *t, int sip, int io, const char *kind)
{
    return kb_topo_node_at(t, kind, sip, -1, -1, io);
}
