/* Shortest-path trees grown on demand over a scope's class graph
 * (route_tree.h explains the trees, route_scope.h the classes). */
#include "topo/route_tree.h"

#include "core/util.h"
#include "topo/u64map.h"

#include <stdlib.h>
#include <string.h>

/* A heap entry: the search pops the least (distance, rank inside the scope). */
typedef struct hent {
    int64_t d;
    uint32_t r, u;
} hent;

/* A search still going on: what it needs to go on, freed when it ends. */
typedef struct growth {
    int64_t *dist; /* valid where the node is seen */
    hent *heap;
    size_t n, cap;
} growth;

/* Per local node: not reached yet, reached (a tentative distance), settled. */
enum { UNSEEN, SEEN, SETTLED };

/* prev and dist are written only where the search reaches: a search that
 * stops near its root touches the pages of the nodes it saw, not whole
 * arrays (a scope has thousands of nodes; most trees settle a few dozen). */
struct kb_route_tree {
    uint32_t cls, n, root;
    uint32_t settled; /* nodes settled so far */
    uint8_t bit;      /* the view's bit in kb_scope_graph.views */
    bool complete;    /* every reachable node has settled */
    growth *g;        /* the search, to go on with (NULL: complete, or let go while small) */
    uint8_t *state;   /* per local node (NULL: a small search let go) */
    uint32_t *prev;   /* per local node seen: the local edge into it (KB_ROUTE_NONE: the root) */
};

struct kb_route_trees {
    kb_route_scopes *S;
    kb_u64map trees;
    size_t bytes;
    /* The two small paused searches used last, older first: a third one's
     * use lets the older's arrays go (a route between SIPs reads two trees
     * at once). */
    kb_route_tree *recent[2];
};

kb_route_trees *kb_route_trees_new(const kb_topo *t)
{
    kb_route_trees *T = kb_xcalloc(1, sizeof *T);
    T->S = kb_route_scopes_new(t);
    return T;
}

static void growth_free(growth *g)
{
    if (!g)
        return;
    free(g->dist);
    free(g->heap);
    free(g);
}

void kb_route_trees_free(kb_route_trees *T)
{
    if (!T)
        return;
    for (size_t i = 0; i < T->trees.cap; i++)
        if (T->trees.slots[i].key) {
            kb_route_tree *tr = T->trees.slots[i].val;
            growth_free(tr->g);
            free(tr->state);
            free(tr->prev);
            free(tr);
        }
    kb_u64map_clear(&T->trees);
    kb_route_scopes_free(T->S);
    free(T);
}

kb_route_scopes *kb_route_trees_scopes(const kb_route_trees *T) { return T->S; }
size_t kb_route_trees_count(const kb_route_trees *T) { return T->trees.n; }
size_t kb_route_trees_bytes(const kb_route_trees *T) { return T->bytes; }

/* ---- the heap ---- */

static inline bool less(const hent *a, const hent *b) { return a->d != b->d ? a->d < b->d : a->r < b->r; }

static void push(growth *g, int64_t d, uint32_t r, uint32_t u)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->heap = kb_xrealloc(g->heap, g->cap * sizeof *g->heap);
    }
    hent x = {d, r, u};
    size_t i = g->n++;
    for (; i && less(&x, &g->heap[(i - 1) / 2]); i = (i - 1) / 2)
        g->heap[i] = g->heap[(i - 1) / 2];
    g->heap[i] = x;
}

static hent pop(growth *g)
{
    hent top = g->heap[0], x = g->heap[--g->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= g->n)
            break;
        if (l + 1 < g->n && less(&g->heap[l + 1], &g->heap[l]))
            m = l + 1;
        if (!less(&g->heap[m], &x))
            break;
        g->heap[i] = g->heap[m];
        i = m;
    }
    if (g->n)
        g->heap[i] = x;
    return top;
}

/* ---- one tree ---- */

/* Goes on with tr's Dijkstra until local node `until` settles, or to the
 * end. An edge of equal length from a lower-rank node replaces the
 * predecessor until the node settles (route.h). */
static void grow(const kb_scope_graph *G, kb_route_tree *tr, uint32_t until)
{
    growth *g = tr->g;
    uint8_t *state = tr->state;
    while (g->n) {
        hent x = pop(g);
        uint32_t u = x.u;
        if (state[u] == SETTLED || x.d != g->dist[u])
            continue;
        state[u] = SETTLED;
        tr->settled++;
        for (uint32_t le = G->first[u]; le < G->first[u + 1]; le++) {
            uint32_t w = G->dst[le];
            if (!(G->views[le] & tr->bit) || state[w] == SETTLED)
                continue;
            int64_t nd = x.d + G->w[le];
            if (state[w] == UNSEEN || nd < g->dist[w]) {
                state[w] = SEEN;
                g->dist[w] = nd;
                tr->prev[w] = le;
                push(g, nd, G->lrank[w], w);
            } else if (nd == g->dist[w] && G->lrank[u] < G->lrank[G->src[tr->prev[w]]]) {
                tr->prev[w] = le;
            }
        }
        if (u == until)
            return;
    }
    growth_free(g); /* every node it reaches has settled */
    tr->g = NULL;
    tr->complete = true;
}

/* (Re)starts tr's search from its root. A restarted search is the same
 * search: it settles the same nodes in the same order again. */
static void start(const kb_scope_graph *G, kb_route_tree *tr)
{
    if (!tr->state) {
        tr->state = kb_xmalloc(G->n ? G->n : 1);
        tr->prev = kb_xmalloc((G->n ? G->n : 1) * sizeof *tr->prev);
    }
    memset(tr->state, UNSEEN, G->n);
    tr->settled = 0;
    growth *g = tr->g = kb_xcalloc(1, sizeof *g);
    g->dist = kb_xmalloc((G->n ? G->n : 1) * sizeof *g->dist);
    tr->state[tr->root] = SEEN;
    tr->prev[tr->root] = KB_ROUTE_NONE;
    g->dist[tr->root] = 0;
    push(g, 0, G->lrank[tr->root], tr->root);
}

/* A search paused after settling at most this many nodes lets its state
 * go (its distances and heap at once; its per-node arrays once two more
 * small searches have paused) and starts again if asked for more: most
 * sources route near themselves (a PE to its HBM slice, its M_CPU), and
 * keeping every such search ready to go on cost 20-30 KiB a source. */
#define SMALL_SEARCH 256

static kb_route_tree *tree_new(kb_route_trees *T, const kb_scope_graph *G, kb_view v, uint32_t cls, uint32_t root)
{
    kb_route_tree *tr = kb_xcalloc(1, sizeof *tr);
    tr->cls = cls;
    tr->n = G->n;
    tr->root = root;
    tr->bit = (uint8_t)(1u << v);
    T->bytes += sizeof *tr + G->n * (1 + sizeof *tr->prev);
    return tr;
}

/* A small paused search's arrays go: a later route from its root searches
 * again from the start (what it settled is settled again, the same way). */
static void let_go(kb_route_tree *tr)
{
    if (!tr || tr->g || tr->complete || tr->settled > SMALL_SEARCH)
        return; /* it went on since, or grew past small: kept */
    free(tr->state);
    free(tr->prev);
    tr->state = NULL;
    tr->prev = NULL;
    tr->settled = 0;
}

/* tr (a small paused search) becomes the one used last. */
static void use_small(kb_route_trees *T, kb_route_tree *tr)
{
    if (T->recent[1] == tr)
        return;
    if (T->recent[0] != tr)
        let_go(T->recent[0]);
    T->recent[0] = T->recent[1];
    T->recent[1] = tr;
}

static uint64_t tree_key(kb_view v, uint32_t root, uint32_t cls)
{
    return ((uint64_t)(v + 1) << 60) | ((uint64_t)root << 30) | cls;
}

const kb_route_tree *kb_route_tree_get(kb_route_trees *T, kb_view v, uint32_t root, uint32_t scope, uint32_t until)
{
    uint32_t cls = kb_route_scopes_class(T->S, scope);
    const kb_scope_graph *G = kb_route_scopes_graph(T->S, cls);
    uint32_t lroot = kb_route_scopes_local(T->S, scope, root);
    uint64_t key = tree_key(v, lroot, cls);
    kb_route_tree *tr = kb_u64map_get(&T->trees, key);
    if (!tr) {
        tr = tree_new(T, G, v, cls, lroot);
        kb_u64map_put(&T->trees, key, tr);
    }
    uint32_t lu = kb_route_scopes_local(T->S, scope, until);
    if (!tr->complete && !(tr->state && tr->state[lu] == SETTLED)) { /* settled: its path is final */
        if (!tr->g)
            start(G, tr);
        grow(G, tr, lu);
        if (tr->g && tr->settled <= SMALL_SEARCH) {
            growth_free(tr->g);
            tr->g = NULL;
        }
    }
    if (!tr->g && !tr->complete) /* small and paused: used last */
        use_small(T, tr);
    return tr;
}

uint32_t kb_route_tree_prev(const kb_route_trees *T, const kb_route_tree *tr, uint32_t scope, uint32_t node)
{
    uint32_t l = kb_route_scopes_local(T->S, scope, node);
    if (tr->state[l] != SETTLED) /* not reached (a settled node's predecessors are settled) */
        return KB_ROUTE_NONE;
    uint32_t le = tr->prev[l];
    return le == KB_ROUTE_NONE ? KB_ROUTE_NONE : kb_route_scopes_edge(T->S, scope, le);
}
