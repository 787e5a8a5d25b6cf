/* Shortest-path trees for route.c, one per (view, root, scope), computed
 * once and kept.
 *
 * Scopes. In the system form every SIP touches the rest of the tray only
 * through the switch: each edge joins two nodes of one SIP or has the
 * switch (the hub, the one node outside every SIP) at one end. A scope is
 * then one SIP plus the hub; a tree is a Dijkstra over one scope. A graph
 * where that does not hold (the `graph:` form) is one scope of all nodes,
 * with no hub.
 *
 * Why a scope's trees give exactly the whole-tray route (route.h's
 * tie-break: the heap pops (distance, id rank); a node's predecessor is
 * the lowest-rank one among the equal-length predecessors settled before
 * it; a settled node is never changed). Take a Dijkstra over the whole
 * tray from a root r in SIP a (or from the hub), and a scope S (SIP a
 * with the hub, or any SIP with the hub when r is the hub).
 *  1. The edges into a node of S other than the hub come from S. Nodes
 *     outside S are reached only through the hub, and once the hub is
 *     settled no later relaxation changes it.
 *  2. So the heap entries of S's nodes are pushed only by pops of S's
 *     nodes, and each pop of one of them is the least entry of the heap,
 *     hence the least of S's entries: S's nodes pop in the same order, and
 *     see the same relaxations in the same order, as in a Dijkstra run on
 *     S alone. The keys (distance, rank) are distinct, so the order does
 *     not depend on how the heap breaks ties internally.
 *  3. For a root outside S (r in SIP a, S = SIP b with the hub), every
 *     distance in S is the hub's distance D plus the distance from the hub
 *     inside S; adding D to every key keeps their order, so 2 holds for
 *     the tree rooted at the hub over S.
 * Hence the route r -> x with x in another SIP is the tree path r -> hub
 * over r's scope followed by the tree path hub -> x over x's scope: the
 * same nodes, edges and weight as the whole-tray search. An early-exit
 * search (today's per-pair Dijkstra) fixes each node's predecessor when it
 * settles, before the destination, so a full tree gives its path too.
 * tests/c/test_route_equiv.c compares both against a whole-tray Dijkstra. */
#ifndef KB_TOPO_ROUTE_TREE_H
#define KB_TOPO_ROUTE_TREE_H

#include "topo/route.h"

#define KB_ROUTE_NONE UINT32_MAX /* no edge: the root, or a node not reached */
#define KB_SCOPE_HUB UINT32_MAX  /* the scope of the hub: every scope holds it */

typedef struct kb_route_trees kb_route_trees;

typedef struct kb_route_tree {
    uint32_t root, scope;
    uint32_t prev_edge[]; /* by the node's index inside the scope */
} kb_route_tree;

kb_route_trees *kb_route_trees_new(const kb_topo *t);
void kb_route_trees_free(kb_route_trees *T);

/* The hub, or -1 when the graph is one scope. */
int64_t kb_route_trees_hub(const kb_route_trees *T);
/* The scope of a node: its SIP's, KB_SCOPE_HUB for the hub, 0 for all
 * nodes of a one-scope graph. */
uint32_t kb_route_trees_scope(const kb_route_trees *T, uint32_t node);
/* The routing weight of edge e in whole micrometres. */
int64_t kb_route_trees_weight(const kb_route_trees *T, uint32_t e);

/* The tree from root over `scope` (which must hold root and `until`) in
 * view v. The first request for it grows a scratch tree only until
 * `until` settles (today's early-exit search: a source that routes once
 * pays no more than that), valid until the next-but-one request; the
 * second computes the whole tree, kept. */
const kb_route_tree *kb_route_tree_get(kb_route_trees *T, kb_view v, uint32_t root, uint32_t scope, uint32_t until);
/* The tree edge into node (which must be in the tree's scope), or
 * KB_ROUTE_NONE. */
uint32_t kb_route_tree_prev(const kb_route_trees *T, const kb_route_tree *tr, uint32_t node);
/* Trees computed so far and the bytes they hold (statistics). */
size_t kb_route_trees_count(const kb_route_trees *T);
size_t kb_route_trees_bytes(const kb_route_trees *T);

#endif
