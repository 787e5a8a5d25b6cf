/* Routing: deterministic shortest paths over adjacency views (all, data,
 * memory, local: which edge kinds each may use), with a cache.
 *
 * Weights are edge lengths (`routing_mm`, which defaults to `mm`) counted
 * in whole micrometres so equal paths tie exactly; ties are broken by node
 * id order (the heap pops (distance, id rank) and a settled node is never
 * revisited), so a path is a pure function of (topology, view, src, dst).
 * Paths are read off shortest-path trees kept per SIP and composed at the
 * switch (route_tree.h), which gives exactly the whole-tray search's path. */
#ifndef KB_TOPO_ROUTE_H
#define KB_TOPO_ROUTE_H

#include "topo/topo.h"

typedef enum kb_view {
    KB_VIEW_ALL,    /* every edge (IO_CPU / M_CPU command routing) */
    KB_VIEW_DATA,   /* no command edges (PE DMA, general data) */
    KB_VIEW_MEMORY, /* no PE pipeline edges (host memory path, M_CPU DMA) */
    KB_VIEW_LOCAL,  /* data minus UCIe kinds (same-cube PE DMA) */
    KB_VIEW_COUNT
} kb_view;

const char *kb_view_name(kb_view v);
bool kb_view_has(kb_view v, kb_edge_kind k);

typedef struct kb_path {
    uint32_t n;         /* nodes */
    uint32_t *nodes;    /* n node indices, source first */
    uint32_t *edges;    /* n - 1 edge indices */
    int64_t weight_um;  /* routing weight */
    struct kb_path *rev; /* reverse path, memoised by kb_path_reverse */
} kb_path;

/* The shortest path src -> dst in view v, or NULL with *err set ("no path
 * from A to B (data view)"). Owned by the topology's cache. */
const kb_path *kb_route(const kb_topo *t, kb_view v, uint32_t src, uint32_t dst, char **err);
/* The same nodes backwards over the opposite edges (responses travel it);
 * NULL with *err if an edge has no opposite. */
const kb_path *kb_path_reverse(const kb_topo *t, const kb_path *p, char **err);

/* PE DMA routing: the local view inside one cube, the data view across cubes. */
const kb_path *kb_route_pe(const kb_topo *t, uint32_t pe_dma, uint32_t dst, char **err);

/* The path formula (what the launch barrier and the probe predict): every node's
 * overhead_ns (both endpoints included), every edge's propagation, and
 * nbytes at the path's narrowest bandwidth: the latency of a message alone
 * on an idle fabric. In ps. */
int64_t kb_path_latency_ps(const kb_topo *t, const kb_path *p, uint64_t nbytes);

/* nbytes at the path's narrowest bandwidth alone (its drain), in ps; 0
 * when no edge is paced. */
int64_t kb_path_drain_ps(const kb_topo *t, const kb_path *p, uint64_t nbytes);

/* Paths computed so far (for tests and statistics). */
size_t kb_route_cached(const kb_topo *t);

#endif
