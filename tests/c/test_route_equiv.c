/* Routing at scale (src/topo/route_tree.h): the routes built from
 * per-scope shortest-path trees are exactly the routes of a whole-tray
 * Dijkstra with route.h's tie-break, kept here as the reference: the same
 * nodes, edges and weight, and the same unreachable pairs, in every view.
 *
 * Pairs compared: every (source, destination) among the nodes the
 * simulator routes between (PE DMA and PE_CPU engines, HBM controllers,
 * SRAM, M_CPU, IO_CPU, PCIe endpoints, the switch) plus a seeded sample of
 * the transit nodes (routers, UCIe ports and connections, IO NoCs), on
 * default.yaml and on a topology whose shortest paths inside a SIP cross
 * the switch; on the 6-SIP topologies a seeded sample of those sources to
 * every such destination. KB_ROUTE_EQUIV_ALL=1 makes every node a
 * destination, and a source where all sources are compared (minutes). */
#include "topo/route.h"
#include "topo/topo.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "topo_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference: today's Dijkstra over the whole tray ---- */

typedef struct ref {
    size_t n;
    int64_t *dist;
    uint32_t *prev_edge;
    uint8_t *seen, *done;
    struct ent { int64_t d; uint32_t rank, node; } *heap;
    size_t heap_n, heap_cap;
} ref;

static bool ent_less(const struct ent *a, const struct ent *b)
{
    return a->d != b->d ? a->d < b->d : a->rank < b->rank;
}

static void ref_push(ref *r, int64_t d, uint32_t rank, uint32_t node)
{
    if (r->heap_n == r->heap_cap) {
        r->heap_cap = r->heap_cap ? 2 * r->heap_cap : 1024;
        r->heap = realloc(r->heap, r->heap_cap * sizeof *r->heap);
        assert_non_null(r->heap);
    }
    size_t i = r->heap_n++;
    r->heap[i] = (struct ent){d, rank, node};
    for (; i && ent_less(&r->heap[i], &r->heap[(i - 1) / 2]); i = (i - 1) / 2) {
        struct ent x = r->heap[i];
        r->heap[i] = r->heap[(i - 1) / 2];
        r->heap[(i - 1) / 2] = x;
    }
}

static struct ent ref_pop(ref *r)
{
    struct ent top = r->heap[0];
    r->heap[0] = r->heap[--r->heap_n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->heap_n && ent_less(&r->heap[l], &r->heap[m]))
            m = l;
        if (l + 1 < r->heap_n && ent_less(&r->heap[l + 1], &r->heap[m]))
            m = l + 1;
        if (m == i)
            break;
        struct ent x = r->heap[i];
        r->heap[i] = r->heap[m];
        r->heap[m] = x;
        i = m;
    }
    return top;
}

/* Dijkstra from src in view v over every node, stopping once `stop` (a
 * node, or -1: none) settles. The heap pops (distance, id rank); an equal
 * length through a lower-rank node replaces the predecessor until the node
 * settles. */
static void ref_search(const kb_topo *t, ref *r, kb_view v, uint32_t src, int64_t stop)
{
    memset(r->seen, 0, r->n);
    memset(r->done, 0, r->n);
    r->heap_n = 0;
    r->seen[src] = 1;
    r->dist[src] = 0;
    ref_push(r, 0, kb_topo_rank(t, src), src);
    while (r->heap_n) {
        struct ent x = ref_pop(r);
        uint32_t u = x.node;
        if (r->done[u] || x.d != r->dist[u])
            continue;
        r->done[u] = 1;
        if ((int64_t)u == stop)
            return;
        const kb_node *n = kb_topo_node(t, u);
        for (uint32_t i = 0; i < n->nout; i++) {
            uint32_t ei = n->first_out + i;
            const kb_edge *e = kb_topo_edge(t, ei);
            if (!kb_view_has(v, e->kind) || r->done[e->dst])
                continue;
            int64_t nd = x.d + llround(e->routing_mm * 1000.0);
            if (!r->seen[e->dst] || nd < r->dist[e->dst]) {
                r->seen[e->dst] = 1;
                r->dist[e->dst] = nd;
                r->prev_edge[e->dst] = ei;
                ref_push(r, nd, kb_topo_rank(t, e->dst), e->dst);
            } else if (nd == r->dist[e->dst] &&
                       kb_topo_rank(t, u) < kb_topo_rank(t, kb_topo_edge(t, r->prev_edge[e->dst])->src)) {
                r->prev_edge[e->dst] = ei;
            }
        }
    }
}

static void ref_init(ref *r, size_t n)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->dist = calloc(n, sizeof *r->dist);
    r->prev_edge = calloc(n, sizeof *r->prev_edge);
    r->seen = calloc(n, 1);
    r->done = calloc(n, 1);
    assert_true(r->dist && r->prev_edge && r->seen && r->done);
}

static void ref_free(ref *r)
{
    free(r->dist);
    free(r->prev_edge);
    free(r->seen);
    free(r->done);
    free(r->heap);
}

/* Whether the reference's path src -> dst (dst settled) is p. */
static void expect_same(const kb_topo *t, const ref *r, kb_view v, uint32_t src, uint32_t dst, const kb_path *p)
{
    const char *a = kb_topo_node(t, src)->id, *b = kb_topo_node(t, dst)->id;
    if (p->weight_um != r->dist[dst])
        fail_msg("%s -> %s (%s view): weight %lld um, the reference %lld", a, b, kb_view_name(v),
                 (long long)p->weight_um, (long long)r->dist[dst]);
    uint32_t x = dst, i = p->n - 1;
    for (; x != src && i > 0; i--) {
        uint32_t e = r->prev_edge[x];
        if (p->nodes[i] != x || p->edges[i - 1] != e)
            fail_msg("%s -> %s (%s view): hop %u is %s, the reference's %s", a, b, kb_view_name(v), i,
                     kb_topo_node(t, p->nodes[i])->id, kb_topo_node(t, x)->id);
        x = kb_topo_edge(t, e)->src;
    }
    if (x != src || i != 0 || p->nodes[0] != src)
        fail_msg("%s -> %s (%s view): %u nodes, not the reference's length", a, b, kb_view_name(v), p->n);
}

/* ---- the pairs ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *s >> 33;
}

static bool is_endpoint(const kb_node *n)
{
    static const char *const kinds[] = {"pe_dma", "pe_cpu", "hbm_ctrl", "sram", "m_cpu",
                                        "io_cpu", "pcie_ep", "switch", "transit"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(n->spec->kind, kinds[i]) == 0)
            return true;
    return false;
}

static bool compare_all(void) { return getenv("KB_ROUTE_EQUIV_ALL") && *getenv("KB_ROUTE_EQUIV_ALL") == '1'; }

/* The nodes compared: endpoints plus `others` transit nodes picked with
 * the seed (every node when KB_ROUTE_EQUIV_ALL=1). */
static uint32_t *pick_nodes(const kb_topo *t, size_t others, uint64_t seed, size_t *count)
{
    size_t nn = kb_topo_node_count(t), n = 0;
    uint8_t *in = calloc(nn, 1);
    assert_non_null(in);
    size_t transit = 0;
    for (size_t i = 0; i < nn; i++) {
        in[i] = compare_all() || is_endpoint(kb_topo_node(t, (uint32_t)i));
        transit += !in[i];
    }
    for (size_t k = 0; k < others && k < transit;) {
        size_t i = rng_next(&seed) % nn;
        if (!in[i]) {
            in[i] = 1;
            k++;
        }
    }
    uint32_t *out = malloc(nn * sizeof *out);
    assert_non_null(out);
    for (size_t i = 0; i < nn; i++)
        if (in[i])
            out[n++] = (uint32_t)i;
    free(in);
    *count = n;
    return out;
}

/* Routes every source of `srcs` to every node of `dsts` in every view on a
 * fresh load (reloaded every few sources so the path cache stays small)
 * and compares with the reference. Returns the pairs with a path. */
static size_t compare(const kb_registry *reg, const char *path, const char *const *ov, size_t nov,
                      const uint32_t *srcs, size_t nsrc, const uint32_t *dsts, size_t ndst)
{
    kb_topo *tref = load_ok(reg, path, ov, nov);
    ref r;
    ref_init(&r, kb_topo_node_count(tref));
    kb_topo *t = NULL;
    size_t routed = 0;
    for (size_t i = 0; i < nsrc; i++) {
        if (i % 32 == 0) {
            kb_topo_free(t);
            t = load_ok(reg, path, ov, nov);
        }
        for (int v = 0; v < KB_VIEW_COUNT; v++) {
            ref_search(tref, &r, (kb_view)v, srcs[i], -1);
            for (size_t j = 0; j < ndst; j++) {
                char *err = NULL;
                const kb_path *p = kb_route(t, (kb_view)v, srcs[i], dsts[j], &err);
                if (!r.done[dsts[j]]) {
                    if (p)
                        fail_msg("%s -> %s (%s view): routed, the reference finds no path",
                                 kb_topo_node(t, srcs[i])->id, kb_topo_node(t, dsts[j])->id, kb_view_name(v));
                    assert_non_null(strstr(err, "no path from"));
                    free(err);
                    continue;
                }
                if (!p)
                    fail_msg("%s", err);
                expect_same(t, &r, (kb_view)v, srcs[i], dsts[j], p);
                routed++;
            }
        }
    }
    kb_topo_free(t);
    kb_topo_free(tref);
    ref_free(&r);
    return routed;
}

/* Every pair of the picked nodes (sources: all of them, or `nsrc` of them
 * picked with the seed), on topology `path`. */
static void check_topology(const char *path, const char *const *ov, size_t nov, size_t others, size_t nsrc)
{
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, path, ov, nov);
    size_t n;
    uint32_t *nodes = pick_nodes(t, others, 24, &n);
    uint32_t *srcs = malloc(n * sizeof *srcs);
    assert_non_null(srcs);
    size_t ns = 0;
    uint64_t seed = 2024;
    for (size_t i = 0; i < n; i++) /* every source, or about nsrc of them */
        if (!nsrc || rng_next(&seed) % n < nsrc ||
            strcmp(kb_topo_node(t, nodes[i])->spec->kind, "switch") == 0)
            srcs[ns++] = nodes[i];
    size_t routed = compare(reg, path, ov, nov, srcs, ns, nodes, n);
    printf("# %s: %zu sources x %zu destinations x %d views: %zu paths identical\n", kb_topo_name(t), ns, n,
           KB_VIEW_COUNT, routed);
    assert_true(routed > ns * n); /* most pairs have a path in some views */
    kb_topo_free(t);
    free(srcs);
    free(nodes);
    kb_registry_free(reg);
}

static void test_default_every_endpoint_pair(void **state)
{
    (void)state;
    check_topology("topologies/default.yaml", NULL, 0, 64, 0);
}

static void test_ring_6sip_sampled_sources_to_every_endpoint(void **state)
{
    (void)state;
    check_topology("topologies/ring_1d_6sip.yaml", NULL, 0, 64, 64);
}

static void test_torus_6sip_sampled_sources_to_every_endpoint(void **state)
{
    (void)state;
    check_topology("topologies/torus_2d_6sip_2x3.yaml", NULL, 0, 32, 16);
}

/* Three SIPs of 2x2 cubes with two IO chiplets each, no switch length and
 * long seams: the shortest path between two cubes of one SIP leaves it
 * through one chiplet and comes back through the other by the switch, and
 * UCIe ports cost nothing to cross, so many paths tie. */
static const char *const shortcut[] = {
    "system.sips.count=3",
    "system.links.io_ep_to_switch_mm=0",
    "sip.links.ucie_seam_mm=200",
    "cube.links.ucie_routing_weight_mm=0",
    "sip.io_chiplets=[{id: io0, cube_ports: [{cube: [0, 0], cube_side: N, distance_mm: 0}]},"
    " {id: io1, cube_ports: [{cube: [1, 1], cube_side: S, distance_mm: 0}]}]",
};

static void test_paths_inside_a_sip_through_the_switch(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", shortcut, sizeof shortcut / sizeof *shortcut);
    char *err = NULL;
    const kb_path *p = kb_route(t, KB_VIEW_DATA, (uint32_t)kb_topo_find(t, "sip1.cube0.pe0.pe_dma"),
                                (uint32_t)kb_topo_find(t, "sip1.cube3.hbm_ctrl.pe0"), &err);
    assert_non_null(p);
    bool via_switch = false;
    for (uint32_t i = 0; i < p->n; i++)
        via_switch |= strcmp(kb_topo_node(t, p->nodes[i])->id, "fabric.switch0") == 0;
    assert_true(via_switch); /* the case this topology is for */
    kb_topo_free(t);
    kb_registry_free(reg);
    check_topology("topologies/small_2x2.yaml", shortcut, sizeof shortcut / sizeof *shortcut, 128, 0);
}

/* A `graph:` topology has no SIPs: one scope of every node. */
static void test_graph_topology_every_pair(void **state)
{
    (void)state;
    check_topology("topologies/chain.yaml", NULL, 0, 1000, 0);
}

/* The reference's full tree gives the path its early-exit search (the
 * router before trees) finds, on seeded pairs of the 6-SIP tray. */
static void test_full_tree_matches_early_exit_search(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/ring_1d_6sip.yaml", NULL, 0);
    size_t nn = kb_topo_node_count(t);
    ref full, early;
    ref_init(&full, nn);
    ref_init(&early, nn);
    uint64_t seed = 7;
    size_t compared = 0;
    for (int k = 0; k < 40; k++) {
        uint32_t src = (uint32_t)(rng_next(&seed) % nn);
        kb_view v = (kb_view)(k % KB_VIEW_COUNT);
        ref_search(t, &full, v, src, -1);
        for (int j = 0; j < 25; j++) {
            uint32_t dst = (uint32_t)(rng_next(&seed) % nn);
            ref_search(t, &early, v, src, dst);
            assert_int_equal(full.done[dst], early.done[dst]);
            if (!full.done[dst])
                continue;
            assert_int_equal(full.dist[dst], early.dist[dst]);
            for (uint32_t x = dst; x != src; x = kb_topo_edge(t, full.prev_edge[x])->src)
                assert_int_equal(full.prev_edge[x], early.prev_edge[x]);
            compared++;
        }
    }
    assert_true(compared > 100);
    ref_free(&full);
    ref_free(&early);
    kb_topo_free(t);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_every_endpoint_pair),
        cmocka_unit_test(test_ring_6sip_sampled_sources_to_every_endpoint),
        cmocka_unit_test(test_torus_6sip_sampled_sources_to_every_endpoint),
        cmocka_unit_test(test_paths_inside_a_sip_through_the_switch),
        cmocka_unit_test(test_graph_topology_every_pair),
        cmocka_unit_test(test_full_tree_matches_early_exit_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
