/* Connectivity validation after build: every PE reaches its local HBM
 * controller, the SRAM, the M_CPU and the UCIe ports of its cube; every
 * cube reaches and is reached by its SIP's IO chiplets; every SIP reaches
 * the switch; a graph-form file is one connected piece. A failure names
 * the unreachable pair. */
#include "topo/build_internal.h"

#include "core/util.h"
#include "topo/layout.h"
#include "topo/route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bfs {
    uint32_t *mark, gen;
    uint32_t *queue;
} bfs;

/* Marks every node reachable from src in view v, staying inside `sip`
 * (and `cube` when >= 0; -1 = anywhere). */
static void reach(const kb_topo *t, bfs *s, kb_view v, uint32_t src, int sip, int cube)
{
    bool in_view[KB_EK_COUNT]; /* kb_view_has once per kind, not per edge */
    for (int k = 0; k < KB_EK_COUNT; k++)
        in_view[k] = kb_view_has(v, (kb_edge_kind)k);
    s->gen++;
    size_t head = 0, tail = 0;
    s->queue[tail++] = src;
    s->mark[src] = s->gen;
    while (head < tail) {
        const kb_node *n = &t->nodes[s->queue[head++]];
        for (uint32_t i = 0; i < n->nout; i++) {
            const kb_edge *e = &t->edges[n->first_out + i];
            const kb_node *d = &t->nodes[e->dst];
            if (!in_view[e->kind] || s->mark[e->dst] == s->gen)
                continue;
            if (sip >= 0 && d->sip != sip && d->sip >= 0)
                continue;
            if (cube >= 0 && d->cube != cube)
                continue;
            s->mark[e->dst] = s->gen;
            s->queue[tail++] = e->dst;
        }
    }
}

/* Whether the last reach() from `from` marked `to`; if not, the error. */
static bool reached(kb_builder *b, const bfs *s, uint32_t from, uint32_t to, kb_view v)
{
    const kb_topo *t = b->t;
    if (s->mark[to] == s->gen)
        return true;
    b->err = kb_asprintf("%s: topology is disconnected: %s cannot reach %s (%s view)", t->path, t->nodes[from].id,
                         t->nodes[to].id, kb_view_name(v));
    return false;
}

/* The same for the node of `kind` at a place; the place must hold one. */
static bool reached_at(kb_builder *b, const bfs *s, uint32_t from, const char *kind, int sip, int cube, int pe,
                       kb_view v)
{
    const kb_topo *t = b->t;
    int64_t to = kb_topo_node_at(t, kind, sip, cube, pe, -1);
    if (to >= 0)
        return reached(b, s, from, (uint32_t)to, v);
    char where[64] = "system level"; /* the switch's place */
    if (pe >= 0)
        snprintf(where, sizeof where, "sip%d.cube%d pe %d", sip, cube, pe);
    else if (sip >= 0)
        snprintf(where, sizeof where, "sip%d.cube%d", sip, cube);
    b->err = to == KB_NODE_AMBIGUOUS
                 ? kb_asprintf("%s: topology is ambiguous: several %s nodes at %s", t->path, kind, where)
                 : kb_asprintf("%s: topology is incomplete: no %s node at %s", t->path, kind, where);
    return false;
}

/* A cube's UCIe ports share its place (one per side): they are found by
 * id, once per cube (the PEs of a cube come one after another). */
typedef struct ucie_ports {
    int sip, cube;
    int64_t node[KB_SIDES];
} ucie_ports;

static bool reached_ucie(kb_builder *b, const bfs *s, ucie_ports *up, uint32_t from, int sip, int cube, int side)
{
    char id[64];
    if (up->sip != sip || up->cube != cube) {
        *up = (ucie_ports){sip, cube, {-2, -2, -2, -2}};
        _Static_assert(KB_SIDES == 4, "one entry per side above");
    }
    if (up->node[side] == -2) {
        snprintf(id, sizeof id, "sip%d.cube%d.ucie-%s", sip, cube, kb_side_names[side]);
        up->node[side] = kb_topo_find(b->t, id);
    }
    int64_t to = up->node[side];
    if (to >= 0)
        return reached(b, s, from, (uint32_t)to, KB_VIEW_DATA);
    snprintf(id, sizeof id, "sip%d.cube%d.ucie-%s", sip, cube, kb_side_names[side]);
    b->err = kb_asprintf("%s: topology is incomplete: node %s is missing", b->t->path, id);
    return false;
}

void kb_validate_connectivity(kb_builder *b)
{
    const kb_topo *t = b->t;
    const kb_topo_params *p = &t->p;
    bfs s = {.mark = kb_xcalloc(t->nnodes, sizeof(uint32_t)),
             .queue = kb_xmalloc(t->nnodes * sizeof(uint32_t))};
    ucie_ports up = {-1, -1, {0}};
    /* Each PE's DMA engine reaches its cube's memories, UCIe ports and M_CPU. */
    for (size_t i = 0; i < t->nnodes && !b->err; i++) {
        const kb_node *n = &t->nodes[i];
        if (strcmp(n->spec->kind, "pe_dma") != 0)
            continue;
        uint32_t src = (uint32_t)i;
        reach(t, &s, KB_VIEW_LOCAL, src, n->sip, n->cube);
        if (!reached_at(b, &s, src, "hbm_ctrl", n->sip, n->cube, n->pe, KB_VIEW_LOCAL) ||
            !reached_at(b, &s, src, "sram", n->sip, n->cube, -1, KB_VIEW_LOCAL))
            break;
        reach(t, &s, KB_VIEW_DATA, src, n->sip, n->cube);
        for (int side = 0; side < KB_SIDES && !b->err; side++)
            reached_ucie(b, &s, &up, src, n->sip, n->cube, side);
        reach(t, &s, KB_VIEW_ALL, src, n->sip, n->cube);
        if (!b->err)
            reached_at(b, &s, src, "m_cpu", n->sip, n->cube, -1, KB_VIEW_ALL);
    }
    /* IO chiplets <-> cubes, within each SIP; IO chiplets <-> switch. */
    for (size_t i = 0; i < t->nnodes && !b->err; i++) {
        const kb_node *n = &t->nodes[i];
        if (n->io < 0 || strcmp(n->spec->kind, "pcie_ep") != 0)
            continue;
        uint32_t ep = (uint32_t)i;
        reach(t, &s, KB_VIEW_MEMORY, ep, n->sip, -1);
        for (int c = 0; c < p->cubes_per_sip && !b->err; c++)
            for (int pe = 0; pe < p->pes_per_cube && !b->err; pe++)
                reached_at(b, &s, ep, "hbm_ctrl", n->sip, c, pe, KB_VIEW_MEMORY);
        for (int c = 0; c < p->cubes_per_sip && !b->err; c++) {
            int64_t h = kb_topo_node_at(t, "hbm_ctrl", n->sip, c, 0, -1);
            if (h < 0)
                continue;
            reach(t, &s, KB_VIEW_MEMORY, (uint32_t)h, n->sip, -1);
            reached(b, &s, (uint32_t)h, ep, KB_VIEW_MEMORY);
        }
        /* Inside the SIP and the system level only (SIPs meet only at the
         * switch): a search of the whole tray per SIP would make loading
         * quadratic in the SIP count. */
        reach(t, &s, KB_VIEW_ALL, ep, n->sip, -1);
        if (!b->err)
            reached_at(b, &s, ep, "switch", -1, -1, -1, KB_VIEW_ALL);
    }
    free(s.mark);
    free(s.queue);
}

/* A graph-form topology must be one connected piece: every node reaches
 * every other over the links it declares (a one-way link counts only in
 * its own direction). That holds when node 0 reaches every node and every
 * node reaches node 0: one search forward and one over the reversed edges,
 * O(N + E) (a search from every node would be quadratic). */
void kb_validate_graph(kb_builder *b)
{
    const kb_topo *t = b->t;
    size_t nn = t->nnodes, ne = t->nedges;
    if (nn == 0)
        return;
    bfs s = {.mark = kb_xcalloc(nn, sizeof(uint32_t)), .queue = kb_xmalloc(nn * sizeof(uint32_t))};
    reach(t, &s, KB_VIEW_ALL, 0, -1, -1);
    for (size_t j = 0; j < nn && !b->err; j++)
        if (s.mark[j] != s.gen)
            b->err = kb_asprintf("%s: topology is disconnected: %s cannot reach %s (%s view)", t->path,
                                 t->nodes[0].id, t->nodes[j].id, kb_view_name(KB_VIEW_ALL));
    if (!b->err) {
        /* Reversed adjacency: in-edges grouped by destination. */
        uint32_t *first = kb_xcalloc(nn + 1, sizeof *first), *from = kb_xmalloc((ne ? ne : 1) * sizeof *from);
        for (size_t i = 0; i < ne; i++)
            if (kb_view_has(KB_VIEW_ALL, t->edges[i].kind))
                first[t->edges[i].dst + 1]++;
        for (size_t i = 0; i < nn; i++)
            first[i + 1] += first[i];
        uint32_t *fill = kb_xmalloc(nn * sizeof *fill);
        memcpy(fill, first, nn * sizeof *fill);
        for (size_t i = 0; i < ne; i++)
            if (kb_view_has(KB_VIEW_ALL, t->edges[i].kind))
                from[fill[t->edges[i].dst]++] = t->edges[i].src;
        free(fill);
        s.gen++;
        size_t head = 0, tail = 0;
        s.queue[tail++] = 0;
        s.mark[0] = s.gen;
        while (head < tail) {
            uint32_t v = s.queue[head++];
            for (uint32_t k = first[v]; k < first[v + 1]; k++)
                if (s.mark[from[k]] != s.gen) {
                    s.mark[from[k]] = s.gen;
                    s.queue[tail++] = from[k];
                }
        }
        for (size_t j = 0; j < nn && !b->err; j++)
            if (s.mark[j] != s.gen)
                b->err = kb_asprintf("%s: topology is disconnected: %s cannot reach %s (%s view)", t->path,
                                     t->nodes[j].id, t->nodes[0].id, kb_view_name(KB_VIEW_ALL));
        free(first);
        free(from);
    }
    free(s.mark);
    free(s.queue);
}
