/* Routing scopes in local indices and their classes (route_scope.h). */
#include "topo/route_scope.h"

#include "core/util.h"
#include "topo/build_internal.h"
#include "topo/route.h"

#include <stdlib.h>
#include <string.h>

#define NO_CLASS UINT32_MAX

struct kb_route_scopes {
    const kb_topo *t;
    int64_t hub;
    uint32_t nscopes;
    uint32_t *scope_of;  /* per node */
    uint32_t *local;     /* per node: index inside its scope (not the hub's) */
    uint32_t *lrank;     /* per node: position in id order inside its scope (not the hub's) */
    uint32_t *hub_lrank; /* per scope: the hub's position in id order inside it */
    uint32_t *size;      /* per scope: nodes, not counting the hub */
    uint32_t *start;     /* per scope: its first entry in members */
    uint32_t *members;   /* the nodes grouped by scope, in node-index order */
    uint32_t *cls;       /* per scope: its class, NO_CLASS before its first route */
    uint32_t **edge_of;  /* per scope with a class: local edge -> global edge */
    kb_scope_graph **graphs;
    uint32_t nclasses;
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

kb_route_scopes *kb_route_scopes_new(const kb_topo *t)
{
    kb_route_scopes *S = kb_xcalloc(1, sizeof *S);
    size_t nn = t->nnodes ? t->nnodes : 1;
    S->t = t;
    S->hub = t->p.sips > 0 ? find_hub(t) : -1;
    S->nscopes = S->hub >= 0 ? (uint32_t)t->p.sips : 1;
    S->scope_of = kb_xmalloc(nn * sizeof *S->scope_of);
    S->local = kb_xmalloc(nn * sizeof *S->local);
    S->lrank = kb_xmalloc(nn * sizeof *S->lrank);
    S->members = kb_xmalloc(nn * sizeof *S->members);
    S->hub_lrank = kb_xcalloc(S->nscopes, sizeof *S->hub_lrank);
    S->size = kb_xcalloc(S->nscopes, sizeof *S->size);
    S->start = kb_xcalloc(S->nscopes, sizeof *S->start);
    S->cls = kb_xmalloc(S->nscopes * sizeof *S->cls);
    S->edge_of = kb_xcalloc(S->nscopes, sizeof *S->edge_of);
    for (size_t i = 0; i < t->nnodes; i++) {
        if ((int64_t)i == S->hub) {
            S->scope_of[i] = KB_SCOPE_HUB;
            continue;
        }
        uint32_t s = S->hub >= 0 ? (uint32_t)t->nodes[i].sip : 0;
        S->scope_of[i] = s;
        S->local[i] = S->size[s]++;
    }
    for (uint32_t s = 1; s < S->nscopes; s++)
        S->start[s] = S->start[s - 1] + S->size[s - 1];
    for (size_t i = 0; i < t->nnodes; i++)
        if ((int64_t)i != S->hub)
            S->members[S->start[S->scope_of[i]] + S->local[i]] = (uint32_t)i;
    /* ranks inside each scope: one pass over id order (the hub is in every scope) */
    uint32_t *next = kb_xcalloc(S->nscopes, sizeof *next);
    for (size_t r = 0; r < t->nnodes; r++) {
        uint32_t i = t->by_name[r];
        if ((int64_t)i == S->hub)
            for (uint32_t s = 0; s < S->nscopes; s++)
                S->hub_lrank[s] = next[s]++;
        else
            S->lrank[i] = next[S->scope_of[i]]++;
    }
    free(next);
    for (uint32_t s = 0; s < S->nscopes; s++)
        S->cls[s] = NO_CLASS;
    return S;
}

static void graph_free(kb_scope_graph *G)
{
    if (!G)
        return;
    free(G->first);
    free(G->src);
    free(G->dst);
    free(G->w);
    free(G->views);
    free(G->lrank);
    free(G);
}

void kb_route_scopes_free(kb_route_scopes *S)
{
    if (!S)
        return;
    for (uint32_t k = 0; k < S->nclasses; k++)
        graph_free(S->graphs[k]);
    for (uint32_t s = 0; s < S->nscopes; s++)
        free(S->edge_of[s]);
    free(S->graphs);
    free(S->edge_of);
    free(S->cls);
    free(S->start);
    free(S->size);
    free(S->hub_lrank);
    free(S->members);
    free(S->lrank);
    free(S->local);
    free(S->scope_of);
    free(S);
}

int64_t kb_route_scopes_hub(const kb_route_scopes *S) { return S->hub; }
uint32_t kb_route_scopes_of(const kb_route_scopes *S, uint32_t node) { return S->scope_of[node]; }

uint32_t kb_route_scopes_local(const kb_route_scopes *S, uint32_t s, uint32_t node)
{
    return S->scope_of[node] == KB_SCOPE_HUB ? S->size[s] : S->local[node];
}

const kb_scope_graph *kb_route_scopes_graph(const kb_route_scopes *S, uint32_t cls) { return S->graphs[cls]; }

uint32_t kb_route_scopes_edge(const kb_route_scopes *S, uint32_t s, uint32_t le) { return S->edge_of[s][le]; }

/* ---- a scope's graph ---- */

static uint32_t node_at(const kb_route_scopes *S, uint32_t s, uint32_t i)
{
    return i == S->size[s] ? (uint32_t)S->hub : S->members[S->start[s] + i];
}

/* Whether edge u -> d stays in scope s (u in s): the hub's edges into s,
 * the others' edges to s or to the hub. */
static bool in_scope(const kb_route_scopes *S, uint32_t s, uint32_t u, uint32_t d)
{
    uint32_t sd = S->scope_of[d];
    return (int64_t)u == S->hub ? sd == s : sd == s || sd == KB_SCOPE_HUB;
}

static kb_scope_graph *graph_build(const kb_route_scopes *S, uint32_t s, uint32_t **edge_of)
{
    const kb_topo *t = S->t;
    kb_scope_graph *G = kb_xcalloc(1, sizeof *G);
    G->n = S->size[s] + (S->hub >= 0 ? 1 : 0);
    for (uint32_t i = 0; i < G->n; i++) {
        const kb_node *u = &t->nodes[node_at(S, s, i)];
        for (uint32_t ei = u->first_out; ei < u->first_out + u->nout; ei++)
            G->ne += in_scope(S, s, node_at(S, s, i), t->edges[ei].dst);
    }
    size_t ne = G->ne ? G->ne : 1;
    G->first = kb_xmalloc((G->n + 1) * sizeof *G->first);
    G->src = kb_xmalloc(ne * sizeof *G->src);
    G->dst = kb_xmalloc(ne * sizeof *G->dst);
    G->w = kb_xmalloc(ne * sizeof *G->w);
    G->views = kb_xcalloc(ne, sizeof *G->views);
    G->lrank = kb_xmalloc((G->n ? G->n : 1) * sizeof *G->lrank);
    *edge_of = kb_xmalloc(ne * sizeof **edge_of);
    uint32_t k = 0;
    for (uint32_t i = 0; i < G->n; i++) {
        uint32_t g = node_at(S, s, i);
        const kb_node *u = &t->nodes[g];
        G->first[i] = k;
        G->lrank[i] = (int64_t)g == S->hub ? S->hub_lrank[s] : S->lrank[g];
        for (uint32_t ei = u->first_out; ei < u->first_out + u->nout; ei++) {
            const kb_edge *e = &t->edges[ei];
            if (!in_scope(S, s, g, e->dst))
                continue;
            G->src[k] = i;
            G->dst[k] = kb_route_scopes_local(S, s, e->dst);
            G->w[k] = kb_route_weight_um(e);
            for (int v = 0; v < KB_VIEW_COUNT; v++)
                if (kb_view_has((kb_view)v, e->kind))
                    G->views[k] |= (uint8_t)(1u << v);
            (*edge_of)[k++] = ei;
        }
    }
    G->first[G->n] = k;
    return G;
}

static bool graph_equal(const kb_scope_graph *a, const kb_scope_graph *b)
{
    return a->n == b->n && a->ne == b->ne && memcmp(a->first, b->first, (a->n + 1) * sizeof *a->first) == 0 &&
           memcmp(a->dst, b->dst, a->ne * sizeof *a->dst) == 0 && memcmp(a->w, b->w, a->ne * sizeof *a->w) == 0 &&
           memcmp(a->views, b->views, a->ne) == 0 && memcmp(a->lrank, b->lrank, a->n * sizeof *a->lrank) == 0;
}

uint32_t kb_route_scopes_class(kb_route_scopes *S, uint32_t s)
{
    if (S->cls[s] != NO_CLASS)
        return S->cls[s];
    kb_scope_graph *G = graph_build(S, s, &S->edge_of[s]);
    for (uint32_t k = 0; k < S->nclasses; k++)
        if (graph_equal(G, S->graphs[k])) {
            graph_free(G);
            return S->cls[s] = k;
        }
    S->graphs = kb_xrealloc(S->graphs, (S->nclasses + 1) * sizeof *S->graphs);
    S->graphs[S->nclasses] = G;
    return S->cls[s] = S->nclasses++;
}
