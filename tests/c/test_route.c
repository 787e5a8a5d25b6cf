/* Routing (src/topo/route.c): deterministic shortest paths over the
 * adjacency views (spec topology-fabric-latency.md §3.3), the canonical
 * fabric paths of §3.6, reverse paths and the route cache. Over ~500 lines
 * as one suite: its cases read as the router's specification. */
#include "comp/comp.h"
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

/* A fixture per test: the registry and the default topology. */
typedef struct fixture {
    kb_registry *reg;
    kb_topo *t;
} fixture;

static int setup_default(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->reg = new_registry();
    char *err = NULL;
    f->t = kb_topo_load("topologies/default.yaml", NULL, 0, f->reg, &err);
    if (!f->t) {
        fprintf(stderr, "topologies/default.yaml: %s\n", err);
        free(err);
        kb_registry_free(f->reg);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kb_topo_free(f->t);
    kb_registry_free(f->reg);
    free(f);
    return 0;
}

static uint32_t find(const kb_topo *t, const char *id)
{
    int64_t i = kb_topo_find(t, id);
    if (i < 0)
        fail_msg("no node %s in topology %s", id, kb_topo_name(t));
    return (uint32_t)i;
}

static const char *id_of(const kb_topo *t, uint32_t i) { return kb_topo_node(t, i)->id; }

/* "a -> b -> c" into buf, for failure messages. */
static const char *path_text(const kb_topo *t, const kb_path *p, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < p->n && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " -> " : "", id_of(t, p->nodes[i]));
    return buf;
}

static const kb_path *route_ok(const kb_topo *t, kb_view v, const char *src, const char *dst)
{
    char *err = NULL;
    const kb_path *p = kb_route(t, v, find(t, src), find(t, dst), &err);
    if (!p)
        fail_msg("no %s-view route %s -> %s: %s", kb_view_name(v), src, dst, err);
    assert_null(err);
    return p;
}

static const kb_path *route_pe_ok(const kb_topo *t, const char *src, const char *dst)
{
    char *err = NULL;
    const kb_path *p = kb_route_pe(t, find(t, src), find(t, dst), &err);
    if (!p)
        fail_msg("no PE route %s -> %s: %s", src, dst, err);
    return p;
}

/* Structural checks every path must pass: it starts and ends where asked,
 * each edge joins consecutive nodes, belongs to the view, and the weight is
 * the sum of the edges' routing weights in micrometres. */
static void check_path(const kb_topo *t, const kb_path *p, kb_view v, uint32_t src, uint32_t dst)
{
    assert_true(p->n >= 1);
    assert_int_equal(p->nodes[0], src);
    assert_int_equal(p->nodes[p->n - 1], dst);
    int64_t w = 0;
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        const kb_edge *e = kb_topo_edge(t, p->edges[i]);
        assert_int_equal(e->src, p->nodes[i]);
        assert_int_equal(e->dst, p->nodes[i + 1]);
        if (!kb_view_has(v, e->kind))
            fail_msg("%s edge %s -> %s is not in the %s view", kb_edge_kind_name(e->kind),
                     id_of(t, e->src), id_of(t, e->dst), kb_view_name(v));
        w += llround(e->routing_mm * 1000.0);
    }
    assert_int_equal(p->weight_um, w);
}

static bool path_has(const kb_topo *t, const kb_path *p, const char *needle)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (strstr(id_of(t, p->nodes[i]), needle))
            return true;
    return false;
}

static int path_count(const kb_topo *t, const kb_path *p, const char *suffix)
{
    int n = 0;
    size_t sl = strlen(suffix);
    for (uint32_t i = 0; i < p->n; i++) {
        const char *id = id_of(t, p->nodes[i]);
        size_t l = strlen(id);
        n += l >= sl && strcmp(id + l - sl, suffix) == 0;
    }
    return n;
}

/* Index of node `id` in the path, or -1. */
static int path_index(const kb_topo *t, const kb_path *p, const char *id)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (strcmp(id_of(t, p->nodes[i]), id) == 0)
            return (int)i;
    return -1;
}

/* The router PE (sip, cube, pe) attaches to (its pe_dma's pe_to_router edge). */
static uint32_t pe_router(const kb_topo *t, int sip, int cube, int pe)
{
    char id[96];
    snprintf(id, sizeof id, "sip%d.cube%d.pe%d.pe_dma", sip, cube, pe);
    const kb_node *d = kb_topo_node(t, find(t, id));
    for (uint32_t k = 0; k < d->nout; k++) {
        const kb_edge *e = kb_topo_edge(t, d->first_out + k);
        if (e->kind == KB_EK_PE_TO_ROUTER)
            return e->dst;
    }
    fail_msg("%s has no router", id);
    return 0;
}

/* ---- views ---- */

/* The route views (src/topo/route.h): data drops command edges; memory drops the PE pipeline
 * (pe_internal, pe_to_router); local drops command and every UCIe kind. */
static void test_views_exclude_the_edge_kinds_of_their_definition(void **state)
{
    (void)state;
    assert_string_equal(kb_view_name(KB_VIEW_ALL), "all");
    assert_string_equal(kb_view_name(KB_VIEW_DATA), "data");
    assert_string_equal(kb_view_name(KB_VIEW_MEMORY), "memory");
    assert_string_equal(kb_view_name(KB_VIEW_LOCAL), "local");
    static const kb_edge_kind ucie[] = {KB_EK_UCIE_INTERNAL,     KB_EK_UCIE_CONN_TO_ROUTER, KB_EK_ROUTER_TO_UCIE_CONN,
                                        KB_EK_UCIE_CONN_TO_NOC,  KB_EK_NOC_TO_UCIE_CONN,    KB_EK_UCIE_MESH,
                                        KB_EK_IO_TO_CUBE,        KB_EK_CUBE_TO_IO};
    for (int k = 0; k < KB_EK_COUNT; k++) {
        kb_edge_kind ek = (kb_edge_kind)k;
        bool is_ucie = false;
        for (size_t i = 0; i < sizeof ucie / sizeof ucie[0]; i++)
            is_ucie |= ucie[i] == ek;
        assert_true(kb_view_has(KB_VIEW_ALL, ek));
        assert_int_equal(kb_view_has(KB_VIEW_DATA, ek), ek != KB_EK_COMMAND);
        assert_int_equal(kb_view_has(KB_VIEW_MEMORY, ek), ek != KB_EK_PE_INTERNAL && ek != KB_EK_PE_TO_ROUTER);
        assert_int_equal(kb_view_has(KB_VIEW_LOCAL, ek), ek != KB_EK_COMMAND && !is_ucie);
    }
}

/* ---- determinism and the cache ---- */

static void test_same_request_returns_the_same_cached_path(void **state)
{
    fixture *f = *state;
    size_t before = kb_route_cached(f->t);
    const kb_path *a = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe7");
    assert_int_equal(kb_route_cached(f->t), before + 1);
    const kb_path *b = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe7");
    assert_ptr_equal(a, b);
    assert_int_equal(kb_route_cached(f->t), before + 1);
    /* The same pair in another view is another path. */
    route_ok(f->t, KB_VIEW_ALL, "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe7");
    assert_int_equal(kb_route_cached(f->t), before + 2);
}

/* Two separately loaded topologies answer every request with the same
 * node sequence: the path is a function of (topology, view, src, dst). */
static void test_paths_are_identical_across_separately_loaded_topologies(void **state)
{
    fixture *f = *state;
    kb_topo *t2 = load_ok(f->reg, "topologies/default.yaml", NULL, 0);
    static const struct {
        kb_view v;
        const char *src, *dst;
    } req[] = {
        {KB_VIEW_LOCAL, "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe7"},
        {KB_VIEW_DATA, "sip0.cube0.pe0.pe_dma", "sip0.cube15.hbm_ctrl.pe5"},
        {KB_VIEW_DATA, "sip1.cube6.pe3.pe_dma", "sip0.cube9.sram"},
        {KB_VIEW_MEMORY, "sip1.io0.pcie_ep", "sip1.cube10.hbm_ctrl.pe4"},
        {KB_VIEW_ALL, "sip0.io0.io_cpu", "sip0.cube12.pe6.pe_cpu"},
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        const kb_path *a = route_ok(f->t, req[i].v, req[i].src, req[i].dst);
        const kb_path *b = route_ok(t2, req[i].v, req[i].src, req[i].dst);
        assert_int_equal(a->n, b->n);
        assert_int_equal(a->weight_um, b->weight_um);
        for (uint32_t k = 0; k < a->n; k++)
            assert_string_equal(id_of(f->t, a->nodes[k]), id_of(t2, b->nodes[k]));
        check_path(f->t, a, req[i].v, find(f->t, req[i].src), find(f->t, req[i].dst));
    }
    kb_topo_free(t2);
}

static void test_route_to_itself_is_a_single_node(void **state)
{
    fixture *f = *state;
    const kb_path *p = route_ok(f->t, KB_VIEW_DATA, "sip0.cube0.r0c0", "sip0.cube0.r0c0");
    assert_int_equal(p->n, 1);
    assert_int_equal(p->weight_um, 0);
}

/* ---- canonical paths of §3.6 ---- */

/* Spec §3.6 worked example: PE0.pe_dma -> r0c0 -> r0c1 -> r0c2 -> r0c3 ->
 * r0c4 -> r1c4 -> hbm_ctrl.pe2. (Every monotone route from r0c0 to r1c4 is
 * 12 mm; at r1c4 the tie between r0c4 and r1c3 goes to the lower id.) */
static void test_spec_example_path_from_pe0_to_hbm_ctrl_pe2(void **state)
{
    fixture *f = *state;
    const kb_path *p = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe2");
    static const char *const want[] = {"sip0.cube0.pe0.pe_dma", "sip0.cube0.r0c0", "sip0.cube0.r0c1",
                                       "sip0.cube0.r0c2",       "sip0.cube0.r0c3", "sip0.cube0.r0c4",
                                       "sip0.cube0.r1c4",       "sip0.cube0.hbm_ctrl.pe2"};
    char buf[1024];
    if (p->n != sizeof want / sizeof want[0])
        fail_msg("path has %u nodes: %s", p->n, path_text(f->t, p, buf, sizeof buf));
    for (uint32_t i = 0; i < p->n; i++)
        if (strcmp(id_of(f->t, p->nodes[i]), want[i]) != 0)
            fail_msg("node %u is %s, want %s: %s", i, id_of(f->t, p->nodes[i]), want[i],
                     path_text(f->t, p, buf, sizeof buf));
    check_path(f->t, p, KB_VIEW_LOCAL, p->nodes[0], p->nodes[p->n - 1]);
    /* Length: columns 1.5 -> 11.0 (9.5 mm) plus rows 1.5 -> 4.0 (2.5 mm);
     * the relay columns are 7/3 mm apart, each rounded to whole micrometres. */
    assert_true(llabs(p->weight_um - 12000) <= 2);
}

/* Local HBM (§3.6): PE_DMA -> its router -> its own controller, zero mesh
 * hops, for every PE of the cube. */
static void test_local_hbm_path_is_pe_dma_router_hbm_ctrl(void **state)
{
    fixture *f = *state;
    const kb_topo_params *p = kb_topo_params_of(f->t);
    for (int pe = 0; pe < p->pes_per_cube; pe++) {
        char src[64], dst[64];
        snprintf(src, sizeof src, "sip0.cube4.pe%d.pe_dma", pe);
        snprintf(dst, sizeof dst, "sip0.cube4.hbm_ctrl.pe%d", pe);
        const kb_path *path = route_pe_ok(f->t, src, dst);
        char buf[512];
        if (path->n != 3)
            fail_msg("local path is %s", path_text(f->t, path, buf, sizeof buf));
        assert_int_equal(path->nodes[1], pe_router(f->t, 0, 4, pe));
        assert_int_equal(kb_topo_edge(f->t, path->edges[0])->kind, KB_EK_PE_TO_ROUTER);
        assert_int_equal(kb_topo_edge(f->t, path->edges[1])->kind, KB_EK_ROUTER_TO_HBM);
    }
}

/* Cross-PE HBM (§3.6; §7 test_cross_pe_hbm_distance_increases_with_mesh_hops): from PE0
 * (r0c0) the path to PE1's controller (r0c1, 2.5 mm away) is shorter than to
 * PE4's (r4c0: y 10.0 - 1.5 = 8.5 mm away, down column 0 past M_CPU/SRAM
 * rows), which is longer than to PE0's own (0 mm). Each path is exactly
 * the Manhattan distance between the two routers (the attachment edges are
 * 0 mm in the default), give or take micrometre rounding of relay columns. */
static void test_remote_hbm_path_length_grows_with_mesh_distance(void **state)
{
    fixture *f = *state;
    const kb_topo_params *p = kb_topo_params_of(f->t);
    const kb_node *r0 = kb_topo_node(f->t, pe_router(f->t, 0, 0, 0));
    int64_t w[16];
    for (int pe = 0; pe < p->pes_per_cube && pe < 16; pe++) {
        char dst[64];
        snprintf(dst, sizeof dst, "sip0.cube0.hbm_ctrl.pe%d", pe);
        const kb_path *path = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", dst);
        const kb_node *r = kb_topo_node(f->t, pe_router(f->t, 0, 0, pe));
        double manhattan = fabs(r->x_mm - r0->x_mm) + fabs(r->y_mm - r0->y_mm);
        if (llabs(path->weight_um - llround(manhattan * 1000)) > 3)
            fail_msg("path to PE%d weighs %lld um, the routers are %.3f mm apart", pe,
                     (long long)path->weight_um, manhattan);
        w[pe] = path->weight_um;
    }
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 2500);
    assert_int_equal(w[4], 8500);
    assert_true(w[0] < w[1]);
    assert_true(w[1] < w[4]);
}

/* Same-cube PE DMA uses the local view: no UCIe node, for every PE to
 * every controller and the SRAM of its cube. */
static void test_same_cube_pe_dma_paths_contain_no_ucie_node(void **state)
{
    fixture *f = *state;
    const kb_topo_params *p = kb_topo_params_of(f->t);
    char buf[1024];
    for (int a = 0; a < p->pes_per_cube; a++)
        for (int b = 0; b <= p->pes_per_cube; b++) {
            char src[64], dst[64];
            snprintf(src, sizeof src, "sip1.cube6.pe%d.pe_dma", a);
            if (b < p->pes_per_cube)
                snprintf(dst, sizeof dst, "sip1.cube6.hbm_ctrl.pe%d", b);
            else
                snprintf(dst, sizeof dst, "sip1.cube6.sram");
            const kb_path *path = route_pe_ok(f->t, src, dst);
            check_path(f->t, path, KB_VIEW_LOCAL, find(f->t, src), find(f->t, dst));
            if (path_has(f->t, path, "ucie"))
                fail_msg("same-cube path uses UCIe: %s", path_text(f->t, path, buf, sizeof buf));
        }
}

/* Cross-cube HBM (§3.6): the path leaves through a UCIe port and enters
 * the next cube through the facing one. Cube c sits at (c mod w, c div w):
 * cube 1 is east of cube 0, so ucie-E of cube 0 is followed by ucie-W of
 * cube 1. Crossing from cube 0 to cube w*h-1 takes (w-1) + (h-1) seams, and
 * no port is entered and left through its own connections. */
static void test_cross_cube_pe_dma_paths_cross_ucie_ports(void **state)
{
    fixture *f = *state;
    const kb_topo_params *p = kb_topo_params_of(f->t);
    char buf[4096];
    const kb_path *path = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm_ctrl.pe0");
    check_path(f->t, path, KB_VIEW_DATA, path->nodes[0], path->nodes[path->n - 1]);
    int e = path_index(f->t, path, "sip0.cube0.ucie-E");
    int w = path_index(f->t, path, "sip0.cube1.ucie-W");
    if (e < 0 || w != e + 1)
        fail_msg("expected ucie-E of cube0 then ucie-W of cube1: %s", path_text(f->t, path, buf, sizeof buf));
    assert_int_equal(kb_topo_edge(f->t, path->edges[e])->kind, KB_EK_UCIE_MESH);

    char dst[64];
    snprintf(dst, sizeof dst, "sip0.cube%d.hbm_ctrl.pe%d", p->cubes_per_sip - 1, p->pes_per_cube - 1);
    path = route_pe_ok(f->t, "sip0.cube0.pe0.pe_dma", dst);
    int seams = 0;
    for (uint32_t i = 0; i + 1 < path->n; i++) {
        const kb_edge *ed = kb_topo_edge(f->t, path->edges[i]);
        seams += ed->kind == KB_EK_UCIE_MESH;
        if (ed->kind == KB_EK_UCIE_INTERNAL && i + 1 < path->n - 1) {
            const kb_edge *next = kb_topo_edge(f->t, path->edges[i + 1]);
            if (next->kind == KB_EK_UCIE_INTERNAL && next->dst != ed->src &&
                kb_topo_node(f->t, ed->dst)->cube == kb_topo_node(f->t, next->dst)->cube)
                fail_msg("path turns inside a port: %s", path_text(f->t, path, buf, sizeof buf));
        }
    }
    if (seams != (p->cube_w - 1) + (p->cube_h - 1))
        fail_msg("%d seams from cube 0 to the far corner: %s", seams, path_text(f->t, path, buf, sizeof buf));
    assert_true(path_has(f->t, path, "ucie"));
}

/* Cross-SIP (§3.6): pcie_ep -> fabric.switch0 -> pcie_ep. A PE DMA from
 * SIP 0 to an HBM controller of SIP 1 (data view) passes both SIPs' PCIe
 * endpoints, with the switch between them. */
static void test_cross_sip_path_goes_through_the_switch_and_two_pcie_endpoints(void **state)
{
    fixture *f = *state;
    char buf[4096];
    const kb_path *p = route_pe_ok(f->t, "sip0.cube5.pe2.pe_dma", "sip1.cube5.hbm_ctrl.pe2");
    check_path(f->t, p, KB_VIEW_DATA, p->nodes[0], p->nodes[p->n - 1]);
    assert_int_equal(path_count(f->t, p, ".pcie_ep"), 2);
    int sw = path_index(f->t, p, "fabric.switch0");
    if (sw < 1 || strcmp(id_of(f->t, p->nodes[sw - 1]), "sip0.io0.pcie_ep") != 0 ||
        strcmp(id_of(f->t, p->nodes[sw + 1]), "sip1.io0.pcie_ep") != 0)
        fail_msg("expected sip0.io0.pcie_ep -> fabric.switch0 -> sip1.io0.pcie_ep: %s",
                 path_text(f->t, p, buf, sizeof buf));
    assert_int_equal(kb_topo_edge(f->t, p->edges[sw - 1])->kind, KB_EK_PCIE);
    assert_int_equal(kb_topo_edge(f->t, p->edges[sw])->kind, KB_EK_PCIE);
    /* The PE DMA helper chose the data view: same as asking for it. */
    const kb_path *q = route_ok(f->t, KB_VIEW_DATA, "sip0.cube5.pe2.pe_dma", "sip1.cube5.hbm_ctrl.pe2");
    assert_ptr_equal(p, q);
}

/* Host memory path (§3.6): pcie_ep -> io_noc -> ... -> router mesh ->
 * hbm_ctrl in the memory view, never through a PE pipeline node, the
 * IO_CPU or the M_CPU. */
static void test_memory_view_host_path_avoids_pe_nodes_io_cpu_and_m_cpu(void **state)
{
    fixture *f = *state;
    char buf[4096];
    const kb_path *p = route_ok(f->t, KB_VIEW_MEMORY, "sip0.io0.pcie_ep", "sip0.cube10.hbm_ctrl.pe3");
    check_path(f->t, p, KB_VIEW_MEMORY, p->nodes[0], p->nodes[p->n - 1]);
    assert_string_equal(id_of(f->t, p->nodes[1]), "sip0.io0.io_noc");
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        const kb_node *n = kb_topo_node(f->t, p->nodes[i]);
        if (n->pe >= 0 || strstr(n->id, "io_cpu") || strstr(n->id, "m_cpu"))
            fail_msg("memory path passes %s: %s", n->id, path_text(f->t, p, buf, sizeof buf));
    }
    assert_int_equal(p->nodes[p->n - 2], pe_router(f->t, 0, 10, 3));
}

/* ---- reverse paths ---- */

static kb_edge_kind opposite(kb_edge_kind k)
{
    switch (k) {
    case KB_EK_PE_TO_ROUTER: return KB_EK_ROUTER_TO_PE;
    case KB_EK_ROUTER_TO_PE: return KB_EK_PE_TO_ROUTER;
    case KB_EK_ROUTER_TO_HBM: return KB_EK_HBM_TO_ROUTER;
    case KB_EK_HBM_TO_ROUTER: return KB_EK_ROUTER_TO_HBM;
    case KB_EK_ROUTER_TO_SRAM: return KB_EK_SRAM_TO_ROUTER;
    case KB_EK_SRAM_TO_ROUTER: return KB_EK_ROUTER_TO_SRAM;
    case KB_EK_ROUTER_TO_UCIE_CONN: return KB_EK_UCIE_CONN_TO_ROUTER;
    case KB_EK_UCIE_CONN_TO_ROUTER: return KB_EK_ROUTER_TO_UCIE_CONN;
    case KB_EK_NOC_TO_UCIE_CONN: return KB_EK_UCIE_CONN_TO_NOC;
    case KB_EK_UCIE_CONN_TO_NOC: return KB_EK_NOC_TO_UCIE_CONN;
    case KB_EK_IO_TO_CUBE: return KB_EK_CUBE_TO_IO;
    case KB_EK_CUBE_TO_IO: return KB_EK_IO_TO_CUBE;
    default: return k; /* symmetric kinds */
    }
}

/* The reverse of a cross-SIP path: the same nodes backwards, over the
 * opposite edge of each hop (same length and bandwidth), memoised. */
static void test_reverse_path_runs_backwards_over_opposite_edges(void **state)
{
    fixture *f = *state;
    const kb_path *p = route_pe_ok(f->t, "sip0.cube0.pe1.pe_dma", "sip1.cube3.hbm_ctrl.pe6");
    char *err = NULL;
    const kb_path *r = kb_path_reverse(f->t, p, &err);
    if (!r)
        fail_msg("no reverse: %s", err);
    assert_int_equal(r->n, p->n);
    assert_int_equal(r->weight_um, p->weight_um);
    for (uint32_t i = 0; i < p->n; i++)
        assert_int_equal(r->nodes[i], p->nodes[p->n - 1 - i]);
    for (uint32_t i = 0; i + 1 < r->n; i++) {
        const kb_edge *re = kb_topo_edge(f->t, r->edges[i]);
        const kb_edge *fe = kb_topo_edge(f->t, p->edges[p->n - 2 - i]);
        assert_int_equal(re->src, r->nodes[i]);
        assert_int_equal(re->dst, r->nodes[i + 1]);
        assert_int_equal(re->src, fe->dst);
        assert_int_equal(re->dst, fe->src);
        if (re->kind != opposite(fe->kind))
            fail_msg("hop %s -> %s: reverse kind %s is not the opposite of %s", id_of(f->t, re->src),
                     id_of(f->t, re->dst), kb_edge_kind_name(re->kind), kb_edge_kind_name(fe->kind));
        assert_float_equal(re->mm, fe->mm, 0);
        assert_float_equal(re->bw_gbs, fe->bw_gbs, 0);
    }
    assert_string_equal(id_of(f->t, r->nodes[0]), "sip1.cube3.hbm_ctrl.pe6");
    assert_string_equal(id_of(f->t, r->nodes[r->n - 1]), "sip0.cube0.pe1.pe_dma");
    assert_ptr_equal(kb_path_reverse(f->t, p, &err), r);
    assert_ptr_equal(kb_path_reverse(f->t, r, &err), p);
}

/* ---- unreachable ---- */

/* The M_CPU hangs off the NoC by command edges only: the data view cannot
 * reach it (and says so, naming both ends and the view); the all view can,
 * arriving over a command edge. Another cube is out of the local view. */
static void test_unreachable_destination_names_both_nodes_and_the_view(void **state)
{
    fixture *f = *state;
    char *err = NULL;
    uint32_t dma = find(f->t, "sip0.cube0.pe0.pe_dma");
    assert_null(kb_route(f->t, KB_VIEW_DATA, dma, find(f->t, "sip0.cube0.m_cpu"), &err));
    assert_string_equal(err, "no path from sip0.cube0.pe0.pe_dma to sip0.cube0.m_cpu (data view)");
    free(err);
    err = NULL;
    const kb_path *p = route_ok(f->t, KB_VIEW_ALL, "sip0.cube0.pe0.pe_dma", "sip0.cube0.m_cpu");
    assert_int_equal(kb_topo_edge(f->t, p->edges[p->n - 2])->kind, KB_EK_COMMAND);
    assert_null(kb_route(f->t, KB_VIEW_LOCAL, dma, find(f->t, "sip0.cube1.hbm_ctrl.pe0"), &err));
    assert_string_equal(err, "no path from sip0.cube0.pe0.pe_dma to sip0.cube1.hbm_ctrl.pe0 (local view)");
    free(err);
}

/* ---- graph form ---- */

/* chain.yaml: n0 .. n7 in a line, 1 mm per link: the path runs n0, n1, ...
 * n7 and weighs 7 x 1 mm = 7000 um. */
static void test_graph_chain_path_runs_n0_to_n7(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/chain.yaml", NULL, 0);
    int last = (int)kb_topo_node_count(t) - 1;
    char dst[16];
    snprintf(dst, sizeof dst, "n%d", last);
    const kb_path *p = route_ok(t, KB_VIEW_DATA, "n0", dst);
    assert_int_equal(p->n, (uint32_t)last + 1);
    for (int i = 0; i <= last; i++) {
        char id[16];
        snprintf(id, sizeof id, "n%d", i);
        assert_string_equal(id_of(t, p->nodes[i]), id);
    }
    assert_int_equal(p->weight_um, (int64_t)last * 1000);
    char *err = NULL;
    const kb_path *r = kb_path_reverse(t, p, &err);
    assert_non_null(r);
    assert_string_equal(id_of(t, r->nodes[0]), dst);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* A graph-form file must be connected at load (test_topo), but one-way
 * links are allowed: on a one-way ring a -> b -> c -> a the route from a
 * to c goes round the ring, and a path has no reverse path. */
static void test_graph_one_way_ring_routes_forward_and_has_no_reverse(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = NULL;
    kb_topo *t = kb_topo_load_string("graph:\n"
                                     "  nodes: [{id: a}, {id: b}, {id: c}]\n"
                                     "  links:\n"
                                     "    - {src: a, dst: b, bidir: false}\n"
                                     "    - {src: b, dst: c, bidir: false}\n"
                                     "    - {src: c, dst: a, bidir: false}\n",
                                     "ring.yaml", NULL, 0, reg, &err);
    if (!t)
        fail_msg("%s", err);
    const kb_path *p = route_ok(t, KB_VIEW_DATA, "a", "c");
    assert_int_equal(p->n, 3);
    assert_int_equal(p->nodes[1], find(t, "b"));
    p = route_ok(t, KB_VIEW_ALL, "c", "b");
    assert_int_equal(p->n, 3);
    assert_int_equal(p->nodes[1], find(t, "a"));
    assert_null(kb_path_reverse(t, p, &err));
    assert_string_equal(err, "no edge b -> a for the reverse path");
    free(err);
    kb_topo_free(t);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_exclude_the_edge_kinds_of_their_definition),
        cmocka_unit_test_setup_teardown(test_same_request_returns_the_same_cached_path, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_paths_are_identical_across_separately_loaded_topologies, setup_default,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_route_to_itself_is_a_single_node, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_spec_example_path_from_pe0_to_hbm_ctrl_pe2, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_local_hbm_path_is_pe_dma_router_hbm_ctrl, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_remote_hbm_path_length_grows_with_mesh_distance, setup_default,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_same_cube_pe_dma_paths_contain_no_ucie_node, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_cross_cube_pe_dma_paths_cross_ucie_ports, setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_cross_sip_path_goes_through_the_switch_and_two_pcie_endpoints,
                                        setup_default, teardown),
        cmocka_unit_test_setup_teardown(test_memory_view_host_path_avoids_pe_nodes_io_cpu_and_m_cpu, setup_default,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reverse_path_runs_backwards_over_opposite_edges, setup_default,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_destination_names_both_nodes_and_the_view, setup_default,
                                        teardown),
        cmocka_unit_test(test_graph_chain_path_runs_n0_to_n7),
        cmocka_unit_test(test_graph_one_way_ring_routes_forward_and_has_no_reverse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
