/* Dijkstra with a deterministic tie-break, and the path cache. */
#include "topo/route.h"

#include "core/util.h"
#include "topo/build_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *kb_view_name(kb_view v)
{
    static const char *const names[KB_VIEW_COUNT] = {"all", "data", "memory", "local"};
    return v < KB_VIEW_COUNT ? names[v] : "?";
}

static bool is_ucie_kind(kb_edge_kind k)
{
    switch (k) {
    case KB_EK_UCIE_INTERNAL:
    case KB_EK_UCIE_CONN_TO_ROUTER:
    case KB_EK_ROUTER_TO_UCIE_CONN:
    case KB_EK_UCIE_CONN_TO_NOC:
    case KB_EK_NOC_TO_UCIE_CONN:
    case KB_EK_UCIE_MESH:
    case KB_EK_IO_TO_CUBE:
    case KB_EK_CUBE_TO_IO:
        return true;
    default:
        return false;
    }
}

bool kb_view_has(kb_view v, kb_edge_kind k)
{
    switch (v) {
    case KB_VIEW_ALL: return true;
    case KB_VIEW_DATA: return k != KB_EK_COMMAND;
    case KB_VIEW_MEMORY: return k != KB_EK_PE_INTERNAL && k != KB_EK_PE_TO_ROUTER;
    case KB_VIEW_LOCAL: return k != KB_EK_COMMAND && !is_ucie_kind(k);
    default: return false;
    }
}

/* ---- cache ---- */

typedef struct slot {
    uint64_t key; /* 0 = empty */
    kb_path *path;
} slot;

struct kb_route_cache {
    slot *slots;
    size_t cap, n;
    /* Dijkstra scratch, reused between calls (stamp avoids clearing). */
    int64_t *dist;
    uint32_t *prev_edge;
    uint32_t *stamp, *done;
    uint32_t gen;
    uint64_t *heap; /* packed entries, see push() */
    size_t heap_n, heap_cap;
    int64_t *heap_d;
};

struct kb_route_cache *kb_route_cache_new(const kb_topo *t)
{
    struct kb_route_cache *c = kb_xcalloc(1, sizeof *c);
    size_t n = t->nnodes ? t->nnodes : 1;
    c->dist = kb_xmalloc(n * sizeof *c->dist);
    c->prev_edge = kb_xmalloc(n * sizeof *c->prev_edge);
    c->stamp = kb_xcalloc(n, sizeof *c->stamp);
    c->done = kb_xcalloc(n, sizeof *c->done);
    return c;
}

static void path_free(kb_path *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->edges);
    free(p);
}

void kb_route_cache_free(struct kb_route_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].key) {
            if (c->slots[i].path->rev && c->slots[i].path->rev->rev == c->slots[i].path)
                c->slots[i].path->rev->rev = NULL; /* the reverse is owned separately */
            path_free(c->slots[i].path->rev);
            path_free(c->slots[i].path);
        }
    free(c->slots);
    free(c->dist);
    free(c->prev_edge);
    free(c->stamp);
    free(c->done);
    free(c->heap);
    free(c->heap_d);
    free(c);
}

static uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static uint64_t key_of(kb_view v, uint32_t src, uint32_t dst)
{
    return ((uint64_t)(v + 1) << 60) | ((uint64_t)src << 30) | dst;
}

static kb_path *cache_get(struct kb_route_cache *c, uint64_t key)
{
    if (!c->cap)
        return NULL;
    for (size_t i = hash64(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (c->slots[i].key == key)
            return c->slots[i].path;
        if (!c->slots[i].key)
            return NULL;
    }
}

static void cache_put(struct kb_route_cache *c, uint64_t key, kb_path *p)
{
    if ((c->n + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        slot *ns = kb_xcalloc(ncap, sizeof *ns);
        for (size_t i = 0; i < c->cap; i++)
            if (c->slots[i].key) {
                size_t j = hash64(c->slots[i].key) & (ncap - 1);
                while (ns[j].key)
                    j = (j + 1) & (ncap - 1);
                ns[j] = c->slots[i];
            }
        free(c->slots);
        c->slots = ns;
        c->cap = ncap;
    }
    size_t i = hash64(key) & (c->cap - 1);
    while (c->slots[i].key)
        i = (i + 1) & (c->cap - 1);
    c->slots[i] = (slot){key, p};
    c->n++;
}

size_t kb_route_cached(const kb_topo *t) { return t->routes->n; }

/* ---- Dijkstra ---- */

/* Heap entries order by (distance, rank of node); the rank fits in 32 bits
 * and is packed with the node index so one comparison settles ties. */
static bool heap_less(const struct kb_route_cache *c, size_t a, size_t b)
{
    if (c->heap_d[a] != c->heap_d[b])
        return c->heap_d[a] < c->heap_d[b];
    return c->heap[a] < c->heap[b];
}

static void heap_swap(struct kb_route_cache *c, size_t a, size_t b)
{
    uint64_t h = c->heap[a];
    c->heap[a] = c->heap[b];
    c->heap[b] = h;
    int64_t d = c->heap_d[a];
    c->heap_d[a] = c->heap_d[b];
    c->heap_d[b] = d;
}

static void push(struct kb_route_cache *c, int64_t d, uint32_t rank, uint32_t node)
{
    if (c->heap_n == c->heap_cap) {
        c->heap_cap = c->heap_cap ? 2 * c->heap_cap : 256;
        c->heap = kb_xrealloc(c->heap, c->heap_cap * sizeof *c->heap);
        c->heap_d = kb_xrealloc(c->heap_d, c->heap_cap * sizeof *c->heap_d);
    }
    size_t i = c->heap_n++;
    c->heap[i] = ((uint64_t)rank << 32) | node;
    c->heap_d[i] = d;
    while (i && heap_less(c, i, (i - 1) / 2)) {
        heap_swap(c, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void pop(struct kb_route_cache *c, int64_t *d, uint32_t *node)
{
    *d = c->heap_d[0];
    *node = (uint32_t)(c->heap[0] & 0xffffffffu);
    c->heap_n--;
    if (c->heap_n) {
        c->heap[0] = c->heap[c->heap_n];
        c->heap_d[0] = c->heap_d[c->heap_n];
        size_t i = 0;
        for (;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < c->heap_n && heap_less(c, l, m))
                m = l;
            if (r < c->heap_n && heap_less(c, r, m))
                m = r;
            if (m == i)
                break;
            heap_swap(c, i, m);
            i = m;
        }
    }
}

static int64_t weight_um(const kb_edge *e) { return llround(e->routing_mm * 1000.0); }

static kb_path *dijkstra(const kb_topo *t, kb_view v, uint32_t src, uint32_t dst)
{
    struct kb_route_cache *c = t->routes;
    if (++c->gen == 0) { /* wrapped: clear stamps */
        memset(c->stamp, 0, t->nnodes * sizeof *c->stamp);
        memset(c->done, 0, t->nnodes * sizeof *c->done);
        c->gen = 1;
    }
    uint32_t gen = c->gen;
    c->heap_n = 0;
    c->stamp[src] = gen;
    c->dist[src] = 0;
    push(c, 0, t->rank[src], src);
    bool found = false;
    while (c->heap_n) {
        int64_t d;
        uint32_t u;
        pop(c, &d, &u);
        if (c->done[u] == gen || d != c->dist[u])
            continue;
        c->done[u] = gen;
        if (u == dst) {
            found = true;
            break;
        }
        const kb_node *n = &t->nodes[u];
        for (uint32_t i = 0; i < n->nout; i++) {
            uint32_t ei = n->first_out + i;
            const kb_edge *e = &t->edges[ei];
            if (!kb_view_has(v, e->kind) || c->done[e->dst] == gen)
                continue;
            int64_t nd = d + weight_um(e);
            if (c->stamp[e->dst] != gen || nd < c->dist[e->dst]) {
                c->stamp[e->dst] = gen;
                c->dist[e->dst] = nd;
                c->prev_edge[e->dst] = ei;
                push(c, nd, t->rank[e->dst], e->dst);
            } else if (nd == c->dist[e->dst] &&
                       t->rank[u] < t->rank[t->edges[c->prev_edge[e->dst]].src]) {
                c->prev_edge[e->dst] = ei; /* equal length: the lower-id predecessor wins */
            }
        }
    }
    if (!found && src != dst)
        return NULL;
    uint32_t len = 1;
    for (uint32_t x = dst; x != src; x = t->edges[c->prev_edge[x]].src)
        len++;
    kb_path *p = kb_xcalloc(1, sizeof *p);
    p->n = len;
    p->nodes = kb_xmalloc(len * sizeof *p->nodes);
    p->edges = kb_xmalloc((len > 1 ? len - 1 : 1) * sizeof *p->edges);
    p->weight_um = c->dist[dst];
    uint32_t i = len - 1;
    for (uint32_t x = dst;; x = t->edges[c->prev_edge[x]].src) {
        p->nodes[i] = x;
        if (x == src)
            break;
        p->edges[i - 1] = c->prev_edge[x];
        i--;
    }
    return p;
}

const kb_path *kb_route(const kb_topo *t, kb_view v, uint32_t src, uint32_t dst, char **err)
{
    struct kb_route_cache *c = t->routes;
    uint64_t key = key_of(v, src, dst);
    kb_path *p = cache_get(c, key);
    if (p)
        return p;
    p = dijkstra(t, v, src, dst);
    if (!p) {
        *err = kb_asprintf("no path from %s to %s (%s view)", t->nodes[src].id, t->nodes[dst].id,
                           kb_view_name(v));
        return NULL;
    }
    cache_put(c, key, p);
    return p;
}

const kb_path *kb_path_reverse(const kb_topo *t, const kb_path *cp, char **err)
{
    kb_path *p = (kb_path *)cp; /* only the memo field is written */
    if (p->rev)
        return p->rev;
    kb_path *r = kb_xcalloc(1, sizeof *r);
    r->n = p->n;
    r->nodes = kb_xmalloc(p->n * sizeof *r->nodes);
    r->edges = kb_xmalloc((p->n > 1 ? p->n - 1 : 1) * sizeof *r->edges);
    r->weight_um = p->weight_um;
    for (uint32_t i = 0; i < p->n; i++)
        r->nodes[i] = p->nodes[p->n - 1 - i];
    for (uint32_t i = 0; i + 1 < r->n; i++) {
        int64_t e = kb_topo_edge_between(t, r->nodes[i], r->nodes[i + 1]);
        if (e < 0) {
            *err = kb_asprintf("no edge %s -> %s for the reverse path", t->nodes[r->nodes[i]].id,
                               t->nodes[r->nodes[i + 1]].id);
            path_free(r);
            return NULL;
        }
        r->edges[i] = (uint32_t)e;
    }
    r->rev = p;
    p->rev = r;
    return r;
}

const kb_path *kb_route_pe(const kb_topo *t, uint32_t pe_dma, uint32_t dst, char **err)
{
    const kb_node *a = &t->nodes[pe_dma], *b = &t->nodes[dst];
    bool same_cube = a->sip >= 0 && a->sip == b->sip && a->cube >= 0 && a->cube == b->cube;
    return kb_route(t, same_cube ? KB_VIEW_LOCAL : KB_VIEW_DATA, pe_dma, dst, err);
}

int64_t kb_path_drain_ps(const kb_topo *t, const kb_path *p, uint64_t nbytes)
{
    const kb_edge *narrow = NULL;
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        const kb_edge *e = kb_topo_edge(t, p->edges[i]);
        if (e->bw_gbs > 0 && (!narrow || e->bw_gbs < narrow->bw_gbs))
            narrow = e;
    }
    return narrow ? kb_edge_serialize_ps(narrow, nbytes) : 0;
}

int64_t kb_path_latency_ps(const kb_topo *t, const kb_path *p, uint64_t nbytes)
{
    int64_t ps = 0;
    const kb_edge *narrow = NULL;
    for (uint32_t i = 0; i < p->n; i++)
        ps += llround(kb_spec_attr(kb_topo_node(t, p->nodes[i])->spec, "overhead_ns") * 1000.0);
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        const kb_edge *e = kb_topo_edge(t, p->edges[i]);
        ps += kb_topo_edge_prop_ps(t, e);
        if (e->bw_gbs > 0 && (!narrow || e->bw_gbs < narrow->bw_gbs))
            narrow = e;
    }
    return ps + (narrow ? kb_edge_serialize_ps(narrow, nbytes) : 0);
}
