/* Shortest-path trees for route.c, one per (view, root, scope), grown as
 * far as asked and kept.
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
 * tests/c/test_route_equiv.c compares both against a whole-tray Dijkstra.
 *
 * Trees grow on demand. A tree is one search that pauses once the node
 * asked for has settled and goes on from there when a node not yet settled
 * is asked for: the same search, step for step, as growing the whole tree
 * at once, so the same predecessors, and no source pays for more of its
 * tree than its routes reach. A small search that pauses lets its state
 * go and, asked for more, starts again (route_tree.c, SMALL_SEARCH). Scopes that are copies of one another
 * (route_scope.h) share their trees: a tree is kept per (view, local root,
 * class) and read through the scope's own edges. */
#ifndef KB_TOPO_ROUTE_TREE_H
#define KB_TOPO_ROUTE_TREE_H

#include "topo/route.h"
#include "topo/route_scope.h"

#define KB_ROUTE_NONE UINT32_MAX /* no edge: the root, or a node not reached */

typedef struct kb_route_trees kb_route_trees;
typedef struct kb_route_tree kb_route_tree;

kb_route_trees *kb_route_trees_new(const kb_topo *t);
void kb_route_trees_free(kb_route_trees *T);

/* The scopes the trees are over. */
kb_route_scopes *kb_route_trees_scopes(const kb_route_trees *T);

/* The tree from root over `scope` (which must hold root and `until`) in
 * view v, grown at least until `until` has settled. Owned by T. */
const kb_route_tree *kb_route_tree_get(kb_route_trees *T, kb_view v, uint32_t root, uint32_t scope, uint32_t until);
/* The tree edge into node (a settled node of `scope`, the scope the tree
 * was asked for), or KB_ROUTE_NONE (the root, or a node not reached). */
uint32_t kb_route_tree_prev(const kb_route_trees *T, const kb_route_tree *tr, uint32_t scope, uint32_t node);
/* Trees kept so far and the bytes they hold (statistics). */
size_t kb_route_trees_count(const kb_route_trees *T);
size_t kb_route_trees_bytes(const kb_route_trees *T);

#endif
