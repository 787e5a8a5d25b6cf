/* Routes: the path cache, paths composed from shortest-path trees
 * (route_tree.h), reverse paths and the path formulas. */
#include "topo/route.h"

#include "core/util.h"
#include "topo/build_internal.h"
#include "topo/route_tree.h"
#include "topo/u64map.h"

#include <math.h>
#include <stdlib.h>

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

/* ---- the path cache: one path per (view, src, dst) asked for ---- */

struct kb_route_cache {
    kb_u64map paths;
    kb_route_trees *trees;
};

struct kb_route_cache *kb_route_cache_new(const kb_topo *t)
{
    struct kb_route_cache *c = kb_xcalloc(1, sizeof *c);
    c->trees = kb_route_trees_new(t);
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
    for (size_t i = 0; i < c->paths.cap; i++) {
        kb_path *p = c->paths.slots[i].val;
        if (!c->paths.slots[i].key)
            continue;
        if (p->rev && p->rev->rev == p)
            p->rev->rev = NULL; /* the reverse is owned separately */
        path_free(p->rev);
        path_free(p);
    }
    kb_u64map_clear(&c->paths);
    kb_route_trees_free(c->trees);
    free(c);
}

static uint64_t key_of(kb_view v, uint32_t src, uint32_t dst)
{
    return ((uint64_t)(v + 1) << 60) | ((uint64_t)src << 30) | dst;
}

size_t kb_route_cached(const kb_topo *t) { return t->routes->paths.n; }

/* ---- paths from trees (route_tree.h argues they are the whole-tray
 * Dijkstra's) ---- */

/* A tree as one scope reads it: route_tree.h's shared trees through the
 * scope's own edges, from the root it was asked for. */
typedef struct scoped_tree {
    const kb_route_tree *tr;
    uint32_t scope, root;
} scoped_tree;

static scoped_tree tree_of(kb_route_trees *T, kb_view v, uint32_t root, uint32_t scope, uint32_t until)
{
    return (scoped_tree){kb_route_tree_get(T, v, root, scope, until), scope, root};
}

/* Nodes on the tree path root -> x, x included; 0 if x is not reached. */
static uint32_t tree_len(const kb_topo *t, const kb_route_trees *T, scoped_tree st, uint32_t x)
{
    uint32_t len = 1;
    for (; x != st.root; len++) {
        uint32_t e = kb_route_tree_prev(T, st.tr, st.scope, x);
        if (e == KB_ROUTE_NONE)
            return 0;
        x = t->edges[e].src;
    }
    return len;
}

/* Writes the tree path root -> x into p from node index `at` (x's slot)
 * backwards, adding the edge weights. */
static void tree_fill(const kb_topo *t, const kb_route_trees *T, scoped_tree st, uint32_t x, kb_path *p,
                      uint32_t at)
{
    p->nodes[at] = x;
    for (; x != st.root; at--) {
        uint32_t e = kb_route_tree_prev(T, st.tr, st.scope, x);
        p->edges[at - 1] = e;
        p->weight_um += kb_route_weight_um(&t->edges[e]);
        x = t->edges[e].src;
        p->nodes[at - 1] = x;
    }
}

static kb_path *path_new(uint32_t len)
{
    kb_path *p = kb_xcalloc(1, sizeof *p);
    p->n = len;
    p->nodes = kb_xmalloc(len * sizeof *p->nodes);
    p->edges = kb_xmalloc((len > 1 ? len - 1 : 1) * sizeof *p->edges);
    return p;
}

/* src -> dst: inside one scope a tree from src; between SIPs src's tree
 * to the hub, then the hub's tree over dst's SIP. NULL if unreachable. */
static kb_path *route_new(const kb_topo *t, kb_view v, uint32_t src, uint32_t dst)
{
    kb_route_trees *T = t->routes->trees;
    const kb_route_scopes *S = kb_route_trees_scopes(T);
    uint32_t ss = kb_route_scopes_of(S, src), sd = kb_route_scopes_of(S, dst);
    if (ss == KB_SCOPE_HUB || sd == KB_SCOPE_HUB || ss == sd) {
        uint32_t scope = ss != KB_SCOPE_HUB ? ss : sd != KB_SCOPE_HUB ? sd : 0;
        scoped_tree tr = tree_of(T, v, src, scope, dst);
        uint32_t len = tree_len(t, T, tr, dst);
        if (!len)
            return NULL;
        kb_path *p = path_new(len);
        tree_fill(t, T, tr, dst, p, len - 1);
        return p;
    }
    uint32_t hub = (uint32_t)kb_route_scopes_hub(S);
    scoped_tree up = tree_of(T, v, src, ss, hub);
    uint32_t len_up = tree_len(t, T, up, hub);
    if (!len_up)
        return NULL;
    scoped_tree down = tree_of(T, v, hub, sd, dst);
    uint32_t len_down = tree_len(t, T, down, dst);
    if (!len_down)
        return NULL;
    kb_path *p = path_new(len_up + len_down - 1);
    tree_fill(t, T, up, hub, p, len_up - 1);
    tree_fill(t, T, down, dst, p, p->n - 1);
    return p;
}

const kb_path *kb_route(const kb_topo *t, kb_view v, uint32_t src, uint32_t dst, char **err)
{
    struct kb_route_cache *c = t->routes;
    uint64_t key = key_of(v, src, dst);
    kb_path *p = kb_u64map_get(&c->paths, key);
    if (p)
        return p;
    p = route_new(t, v, src, dst);
    if (!p) {
        *err = kb_asprintf("no path from %s to %s (%s view)", t->nodes[src].id, t->nodes[dst].id,
                           kb_view_name(v));
        return NULL;
    }
    kb_u64map_put(&c->paths, key, p);
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
