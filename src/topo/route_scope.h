/* Routing scopes in local indices, and the scopes that are copies of one
 * another (internal to src/topo: route_tree.c's input).
 *
 * A scope (route_tree.h) is one SIP plus the hub, or the whole graph when
 * there is no hub. Its graph is rewritten in local indices: the scope's
 * nodes in node-index order, the hub last; the out-edges each node has
 * inside the scope, in edge order; per edge its weight and the views that
 * may use it; per node its position in id order among the scope's nodes
 * (the tie-break's rank, which is all a Dijkstra compares).
 *
 * Two scopes whose local graphs are equal in all of that (the SIPs of a
 * tray are built alike) have equal trees in local indices, so one class
 * graph serves both and a tree computed in one holds for the other: only
 * the scope's maps from local to global edges differ. The comparison is
 * made, not assumed: a scope that differs in anything gets a class of its
 * own. A scope's graph is built on its first route. */
#ifndef KB_TOPO_ROUTE_SCOPE_H
#define KB_TOPO_ROUTE_SCOPE_H

#include "topo/topo.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define KB_SCOPE_HUB UINT32_MAX /* the scope of the hub: every scope holds it */

/* A scope's graph in local indices (a class, shared by equal scopes). */
typedef struct kb_scope_graph {
    uint32_t n, ne;   /* local nodes (the hub last, when there is one), local edges */
    uint32_t *first;  /* n + 1: node u's edges are first[u] .. first[u + 1] */
    uint32_t *src;    /* per local edge */
    uint32_t *dst;    /* per local edge */
    int64_t *w;       /* per local edge, whole micrometres */
    uint8_t *views;   /* per local edge: bit v when view v may use it */
    uint32_t *lrank;  /* per local node: its position in id order inside the scope */
} kb_scope_graph;

typedef struct kb_route_scopes kb_route_scopes;

kb_route_scopes *kb_route_scopes_new(const kb_topo *t);
void kb_route_scopes_free(kb_route_scopes *S);

/* The hub, or -1 when the graph is one scope. */
int64_t kb_route_scopes_hub(const kb_route_scopes *S);
/* A node's scope: its SIP's, KB_SCOPE_HUB for the hub, 0 for every node
 * of a one-scope graph. */
uint32_t kb_route_scopes_of(const kb_route_scopes *S, uint32_t node);
/* Node's index inside scope s (which holds it). */
uint32_t kb_route_scopes_local(const kb_route_scopes *S, uint32_t s, uint32_t node);
/* Scope s's class (its graph built and compared on the first call) and
 * the class's graph. */
uint32_t kb_route_scopes_class(kb_route_scopes *S, uint32_t s);
const kb_scope_graph *kb_route_scopes_graph(const kb_route_scopes *S, uint32_t cls);
/* The global edge of scope s's local edge le (s's class built). */
uint32_t kb_route_scopes_edge(const kb_route_scopes *S, uint32_t s, uint32_t le);

/* An edge's routing weight in whole micrometres (route.h: ties are exact). */
static inline int64_t kb_route_weight_um(const kb_edge *e)
{
    return llround(e->routing_mm * 1000.0);
}

#endif
