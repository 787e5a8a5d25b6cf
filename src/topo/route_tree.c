/* Scopes and the Dijkstra of one tree (route_tree.h explains both). */
#include "topo/route_tree.h"

#include "core/util.h"
#include "topo/build_internal.h"
#include "topo/u64map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct kb_route_trees {
    const kb_topo *t;
    int64_t hub;
    uint32_t nscopes;
    uint32_t *scope_of;   /* per node */
    uint32_t *local;      /* per node: index inside its scope (the hub: the scope's size) */
    uint32_t *scope_size; /* per scope: nodes, not counting the hub */
    uint32_t max_size;    /* the largest scope with its hub */
    int64_t *weight;      /* per edge, whole micrometres */
    uint8_t *views;       /* per edge: bit v set when view v may use it */
    kb_u64map trees;
    size_t bytes;
    /* (view, root, scope) asked for once: the first request grows only a
     * scratch tree until its destination settles (kb_route_tree_get). */
    kb_u64map asked;
    kb_route_tree *scratch[2];
    unsigned scratch_next;
    /* Dijkstra scratch, by local index, reused between trees. */
    int64_t *dist;
    uint8_t *done;
    uint64_t *heap; /* (rank << 32) | node, see push() */
    int64_t *heap_d;
    size_t heap_n, heap_cap;
};

/* The switch when every edge stays inside a SIP or touches it; else -1. */
static int64_t find_hub(const kb_topo *t)
{
    int64_t hub = -1;
    for (size_t i = 0; i < t->nnodes; i++) {
        int sip = t->nodes[i].sip;
        if (sip >= 0 && sip < t->p.sips)
            continue;
        if (sip >= 0 || hub >= 0)
            return -1; /* outside the SIP range, or a second node outside every SIP */
        hub = (int64_t)i;
    }
    for (size_t i = 0; hub >= 0 && i < t->nedges; i++) {
        const kb_edge *e = &t->edges[i];
        if ((int64_t)e->src != hub && (int64_t)e->dst != hub && t->nodes[e->src].sip != t->nodes[e->dst].sip)
            return -1;
    }
    return hub;
}

kb_route_trees *kb_route_trees_new(const kb_topo *t)
{
    kb_route_trees *T = kb_xcalloc(1, sizeof *T);
    size_t nn = t->nnodes ? t->nnodes : 1, ne = t->nedges ? t->nedges : 1;
    T->t = t;
    T->hub = t->p.sips > 0 ? find_hub(t) : -1;
    T->nscopes = T->hub >= 0 ? (uint32_t)t->p.sips : 1;
    T->scope_of = kb_xmalloc(nn * sizeof *T->scope_of);
    T->local = kb_xmalloc(nn * sizeof *T->local);
    T->scope_size = kb_xcalloc(T->nscopes, sizeof *T->scope_size);
    for (size_t i = 0; i < t->nnodes; i++) {
        if ((int64_t)i == T->hub) {
            T->scope_of[i] = KB_SCOPE_HUB;
            continue;
        }
        uint32_t s = T->hub >= 0 ? (uint32_t)t->nodes[i].sip : 0;
        T->scope_of[i] = s;
        T->local[i] = T->scope_size[s]++;
    }
    for (uint32_t s = 0; s < T->nscopes; s++)
        if (T->scope_size[s] + 1 > T->max_size)
            T->max_size = T->scope_size[s] + 1;
    T->weight = kb_xmalloc(ne * sizeof *T->weight);
    T->views = kb_xcalloc(ne, sizeof *T->views);
    for (size_t i = 0; i < t->nedges; i++) {
        T->weight[i] = llround(t->edges[i].routing_mm * 1000.0);
        for (int v = 0; v < KB_VIEW_COUNT; v++)
            if (kb_view_has((kb_view)v, t->edges[i].kind))
                T->views[i] |= (uint8_t)(1u << v);
    }
    T->dist = kb_xmalloc(T->max_size * sizeof *T->dist);
    T->done = kb_xmalloc(T->max_size);
    for (int i = 0; i < 2; i++)
        T->scratch[i] = kb_xmalloc(sizeof *T->scratch[i] + T->max_size * sizeof T->scratch[i]->prev_edge[0]);
    return T;
}

void kb_route_trees_free(kb_route_trees *T)
{
    if (!T)
        return;
    for (size_t i = 0; i < T->trees.cap; i++)
        if (T->trees.slots[i].key)
            free(T->trees.slots[i].val);
    kb_u64map_clear(&T->trees);
    kb_u64map_clear(&T->asked);
    free(T->scratch[0]);
    free(T->scratch[1]);
    free(T->scope_of);
    free(T->local);
    free(T->scope_size);
    free(T->weight);
    free(T->views);
    free(T->dist);
    free(T->done);
    free(T->heap);
    free(T->heap_d);
    free(T);
}

int64_t kb_route_trees_hub(const kb_route_trees *T) { return T->hub; }
uint32_t kb_route_trees_scope(const kb_route_trees *T, uint32_t node) { return T->scope_of[node]; }
int64_t kb_route_trees_weight(const kb_route_trees *T, uint32_t e) { return T->weight[e]; }
size_t kb_route_trees_count(const kb_route_trees *T) { return T->trees.n; }
size_t kb_route_trees_bytes(const kb_route_trees *T) { return T->bytes; }

/* The index of node inside scope s (which holds it). */
static uint32_t local_of(const kb_route_trees *T, uint32_t s, uint32_t node)
{
    return T->scope_of[node] == KB_SCOPE_HUB ? T->scope_size[s] : T->local[node];
}

uint32_t kb_route_tree_prev(const kb_route_trees *T, const kb_route_tree *tr, uint32_t node)
{
    return tr->prev_edge[local_of(T, tr->scope, node)];
}

/* ---- the heap: entries order by (distance, rank of node); the rank is
 * packed above the node index so one comparison settles ties ---- */

static bool heap_less(const kb_route_trees *T, size_t a, size_t b)
{
    if (T->heap_d[a] != T->heap_d[b])
        return T->heap_d[a] < T->heap_d[b];
    return T->heap[a] < T->heap[b];
}

static void heap_swap(kb_route_trees *T, size_t a, size_t b)
{
    uint64_t h = T->heap[a];
    T->heap[a] = T->heap[b];
    T->heap[b] = h;
    int64_t d = T->heap_d[a];
    T->heap_d[a] = T->heap_d[b];
    T->heap_d[b] = d;
}

static void push(kb_route_trees *T, int64_t d, uint32_t node)
{
    if (T->heap_n == T->heap_cap) {
        T->heap_cap = T->heap_cap ? 2 * T->heap_cap : 256;
        T->heap = kb_xrealloc(T->heap, T->heap_cap * sizeof *T->heap);
        T->heap_d = kb_xrealloc(T->heap_d, T->heap_cap * sizeof *T->heap_d);
    }
    size_t i = T->heap_n++;
    T->heap[i] = ((uint64_t)T->t->rank[node] << 32) | node;
    T->heap_d[i] = d;
    while (i && heap_less(T, i, (i - 1) / 2)) {
        heap_swap(T, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void pop(kb_route_trees *T, int64_t *d, uint32_t *node)
{
    *d = T->heap_d[0];
    *node = (uint32_t)(T->heap[0] & 0xffffffffu);
    if (--T->heap_n == 0)
        return;
    T->heap[0] = T->heap[T->heap_n];
    T->heap_d[0] = T->heap_d[T->heap_n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < T->heap_n && heap_less(T, l, m))
            m = l;
        if (r < T->heap_n && heap_less(T, r, m))
            m = r;
        if (m == i)
            break;
        heap_swap(T, i, m);
        i = m;
    }
}

/* ---- one tree ---- */

/* Dijkstra from tr->root over tr->scope in view v, to every node, or
 * until the node of local index `stop` settles (then the predecessors of
 * the settled nodes are final). An edge of equal length from a lower-rank
 * node replaces the predecessor until the node settles (route.h). */
static void grow(kb_route_trees *T, kb_route_tree *tr, kb_view v, uint32_t size, uint32_t stop)
{
    const kb_topo *t = T->t;
    uint32_t s = tr->scope;
    uint8_t bit = (uint8_t)(1u << v);
    for (uint32_t i = 0; i < size; i++) {
        T->dist[i] = INT64_MAX;
        T->done[i] = 0;
        tr->prev_edge[i] = KB_ROUTE_NONE;
    }
    T->heap_n = 0;
    T->dist[local_of(T, s, tr->root)] = 0;
    push(T, 0, tr->root);
    while (T->heap_n) {
        int64_t d;
        uint32_t u;
        pop(T, &d, &u);
        uint32_t lu = local_of(T, s, u);
        if (T->done[lu] || d != T->dist[lu])
            continue;
        T->done[lu] = 1;
        if (lu == stop)
            return;
        const kb_node *n = &t->nodes[u];
        for (uint32_t ei = n->first_out; ei < n->first_out + n->nout; ei++) {
            uint32_t w = t->edges[ei].dst, sw = T->scope_of[w];
            if (!(T->views[ei] & bit) || (sw != s && sw != KB_SCOPE_HUB))
                continue;
            uint32_t lw = sw == KB_SCOPE_HUB ? T->scope_size[s] : T->local[w];
            if (T->done[lw])
                continue;
            int64_t nd = d + T->weight[ei];
            if (nd < T->dist[lw]) {
                T->dist[lw] = nd;
                tr->prev_edge[lw] = ei;
                push(T, nd, w);
            } else if (nd == T->dist[lw] && t->rank[u] < t->rank[t->edges[tr->prev_edge[lw]].src]) {
                tr->prev_edge[lw] = ei;
            }
        }
    }
}

static uint64_t tree_key(kb_view v, uint32_t root, uint32_t scope)
{
    return ((uint64_t)(v + 1) << 60) | ((uint64_t)root << 30) | scope;
}

const kb_route_tree *kb_route_tree_get(kb_route_trees *T, kb_view v, uint32_t root, uint32_t scope, uint32_t until)
{
    uint64_t key = tree_key(v, root, scope);
    kb_route_tree *tr = kb_u64map_get(&T->trees, key);
    if (tr)
        return tr;
    uint32_t size = T->scope_size[scope] + (T->hub >= 0 ? 1 : 0);
    if (!kb_u64map_get(&T->asked, key)) { /* the first request: an early-exit search */
        kb_u64map_put(&T->asked, key, T);
        tr = T->scratch[T->scratch_next ^= 1];
        tr->root = root;
        tr->scope = scope;
        grow(T, tr, v, size, local_of(T, scope, until));
        return tr;
    }
    size_t bytes = sizeof *tr + size * sizeof tr->prev_edge[0];
    tr = kb_xmalloc(bytes);
    tr->root = root;
    tr->scope = scope;
    grow(T, tr, v, size, UINT32_MAX);
    kb_u64map_put(&T->trees, key, tr);
    T->bytes += bytes;
    return tr;
}
