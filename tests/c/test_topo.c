/* Loading and compiling topologies (src/topo/topo.c, read.c,
 * build_system.c, read_system.c, build_graph.c, validate.c); physical
 * addresses on them are test_resolve.c's. Over ~500 lines as one suite:
 * its cases read as the specification of the topology file (names, counts,
 * edges, overrides, every malformed-file message).
 *
 * Counts are never written down per topology: they are derived from the
 * loaded topology's parameters (kb_topo_params_of), as the verification
 * plan asks, so the same checks run on every file under topologies/. */
#define _POSIX_C_SOURCE 200809L

#include "comp/comp.h"
#include "topo/topo.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "topo_fixture.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (UINT64_C(1) << 30)
#define BAD "tests/topologies/bad/"

static uint32_t find(const kb_topo *t, const char *id)
{
    int64_t i = kb_topo_find(t, id);
    if (i < 0)
        fail_msg("no node %s in topology %s", id, kb_topo_name(t));
    return (uint32_t)i;
}

static const kb_node *node(const kb_topo *t, const char *id) { return kb_topo_node(t, find(t, id)); }

/* ---- node census by name (spec §2.5) ---- */

static const char *const pe_parts[] = {"pe_cpu", "pe_scheduler", "pe_dma", "pe_fetch_store", "pe_gemm",
                                       "pe_math", "pe_tcm", "pe_mmu", "pe_ipcq"};
#define NPARTS (sizeof pe_parts / sizeof pe_parts[0])

typedef struct census {
    size_t sw, pcie_ep, io_noc, io_cpu, io_ucie, io_conn;
    size_t router, part[NPARTS], hbm, m_cpu, sram, ucie, ucie_conn;
    size_t classified;
    int routers_in[16][16]; /* [sip][cube] */
    int max_row, max_col;   /* over all routers */
    int conns_e0;           /* connections of sip0.cube0.ucie-E */
} census;

/* Whether `s` is exactly "<lit><int>" and nothing more; stores the int. */
static bool lit_int(const char *s, const char *lit, int *v)
{
    size_t n = strlen(lit);
    if (strncmp(s, lit, n) != 0)
        return false;
    s += n;
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    long x = strtol(s, &end, 10);
    *v = (int)x;
    return end != s;
}

/* Classifies one node id of the system form; false if it fits no pattern. */
static bool classify(census *c, const kb_node *n)
{
    const char *id = n->id;
    if (strcmp(id, "fabric.switch0") == 0)
        return ++c->sw;
    int s, cu, len = 0;
    if (sscanf(id, "sip%d.cube%d.%n", &s, &cu, &len) == 2 && len > 0) {
        const char *r = id + len;
        int a, b, k;
        char side[2];
        if (sscanf(r, "r%dc%d%n", &a, &b, &k) == 2 && r[k] == '\0') {
            c->router++;
            if (s >= 0 && s < 16 && cu >= 0 && cu < 16)
                c->routers_in[s][cu]++;
            if (a > c->max_row)
                c->max_row = a;
            if (b > c->max_col)
                c->max_col = b;
            return true;
        }
        if (sscanf(r, "pe%d.%n", &a, &k) == 1 && k > 0) {
            for (size_t i = 0; i < NPARTS; i++)
                if (strcmp(r + k, pe_parts[i]) == 0)
                    return ++c->part[i];
            return false;
        }
        if (lit_int(r, "hbm_ctrl.pe", &a))
            return ++c->hbm;
        if (strcmp(r, "m_cpu") == 0)
            return ++c->m_cpu;
        if (strcmp(r, "sram") == 0)
            return ++c->sram;
        if (sscanf(r, "ucie-%1[NESW]%n", side, &k) == 1 && k > 0) {
            if (r[k] == '\0')
                return ++c->ucie;
            if (lit_int(r + k, ".conn", &a)) {
                if (s == 0 && cu == 0 && side[0] == 'E')
                    c->conns_e0++;
                return ++c->ucie_conn;
            }
        }
        return false;
    }
    char io[32];
    if (sscanf(id, "sip%d.%31[^.].%n", &s, io, &len) == 2 && len > 0 && n->io >= 0) {
        const char *r = id + len;
        if (strcmp(r, "pcie_ep") == 0)
            return ++c->pcie_ep;
        if (strcmp(r, "io_noc") == 0)
            return ++c->io_noc;
        if (strcmp(r, "io_cpu") == 0)
            return ++c->io_cpu;
        if (strncmp(r, "io_ucie-", 8) == 0)
            return strstr(r, ".conn") ? ++c->io_conn : ++c->io_ucie;
    }
    return false;
}

static census take_census(const kb_topo *t)
{
    census c;
    memset(&c, 0, sizeof c);
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        const kb_node *n = kb_topo_node(t, i);
        if (!classify(&c, n))
            fail_msg("node %s of %s fits no naming pattern of spec §2.5", n->id, kb_topo_name(t));
        c.classified++;
    }
    return c;
}

/* Every count of a system-form topology follows from its parameters. */
static void check_counts(const kb_topo *t)
{
    const kb_topo_params *p = kb_topo_params_of(t);
    census c = take_census(t);
    size_t sips = (size_t)p->sips;
    size_t cubes = sips * (size_t)p->cubes_per_sip;
    size_t pes = cubes * (size_t)p->pes_per_cube;
    size_t ios = sips * (size_t)p->io_per_sip;
    assert_int_equal(p->cubes_per_sip, p->cube_w * p->cube_h);
    assert_int_equal(c.classified, kb_topo_node_count(t));
    assert_int_equal(c.sw, 1);
    for (size_t i = 0; i < NPARTS; i++)
        if (c.part[i] != pes)
            fail_msg("%s: %zu %s nodes, expected sips x cubes x pes = %zu", kb_topo_name(t), c.part[i],
                     pe_parts[i], pes);
    assert_int_equal(c.hbm, pes);
    assert_int_equal(c.m_cpu, cubes);
    assert_int_equal(c.sram, cubes);
    assert_int_equal(c.ucie, 4 * cubes);
    /* Every port has the same number of connections as sip0.cube0's E port. */
    assert_true(c.conns_e0 >= 1);
    assert_int_equal(c.ucie_conn, 4 * cubes * (size_t)c.conns_e0);
    /* Routers: the same grid in every cube, rows x cols minus the 2 x 2
     * HBM hole (rows, cols from the highest indices seen). */
    size_t per_cube = (size_t)((c.max_row + 1) * (c.max_col + 1) - 4);
    assert_int_equal(c.router, cubes * per_cube);
    for (int s = 0; s < p->sips && s < 16; s++)
        for (int cu = 0; cu < p->cubes_per_sip && cu < 16; cu++)
            assert_int_equal(c.routers_in[s][cu], per_cube);
    assert_int_equal(c.pcie_ep, ios);
    assert_int_equal(c.io_noc, ios);
    assert_int_equal(c.io_cpu, ios);
    assert_true(c.io_ucie >= ios);
    assert_true(c.io_conn >= c.io_ucie);
}

/* ---- (a) loading, naming, counts, edges ---- */

/* Every topology shipped under topologies/ loads; system-form ones pass
 * the census (names per §2.5, counts from their parameters). */
static void test_every_shipped_topology_loads_with_counts_from_its_parameters(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    DIR *dir = opendir("topologies");
    assert_non_null(dir);
    int loaded = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "topologies/%s", de->d_name);
        kb_topo *t = load_ok(reg, path, NULL, 0);
        assert_true(kb_topo_node_count(t) > 0);
        if (kb_topo_params_of(t)->sips > 0)
            check_counts(t);
        kb_topo_free(t);
        loaded++;
    }
    closedir(dir);
    assert_true(loaded >= 8); /* default, chain, 3 small, 3 six-SIP files */
    kb_registry_free(reg);
}

/* The default's parameters are the spec's default system (§1.2); the
 * census then fixes its counts: 2 x 16 x 8 = 256 PEs and controllers. */
static void test_default_parameters_are_the_spec_default_system(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    const kb_topo_params *p = kb_topo_params_of(t);
    assert_string_equal(kb_topo_name(t), "default");
    assert_string_equal(kb_topo_path(t), "topologies/default.yaml");
    assert_int_equal(p->sips, 2);
    assert_string_equal(p->sip_topology, "ring_1d");
    assert_int_equal(p->sip_grid_w, 0);
    assert_int_equal(p->cube_w, 4);
    assert_int_equal(p->cube_h, 4);
    assert_int_equal(p->pes_per_cube, 8);
    assert_int_equal(p->io_per_sip, 1);
    assert_int_equal(p->hbm_channels_per_pe, 8);
    assert_float_equal(p->hbm_channel_bw_gbs, 32.0, 0);
    /* 48 GiB over 8 slices: 6 GiB per PE. */
    assert_int_equal(p->hbm_slice_bytes, 48 * GiB / 8);
    assert_int_equal(p->flit_bytes, 256);
    check_counts(t);
    census c = take_census(t);
    /* Default geometry: a 6 x 6 grid minus the 2 x 2 HBM hole = 32 per cube;
     * 4 connections per UCIe port. */
    assert_int_equal(c.max_row + 1, 6);
    assert_int_equal(c.max_col + 1, 6);
    assert_int_equal(c.router, (size_t)p->sips * (size_t)p->cubes_per_sip * 32);
    assert_int_equal(c.conns_e0, 4);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* Spec §2.5 spellings, each with its location fields. */
static void test_node_names_and_locations_follow_the_spec(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    const kb_node *n = node(t, "sip1.cube15.r5c5");
    assert_int_equal(n->sip, 1);
    assert_int_equal(n->cube, 15);
    assert_int_equal(n->pe, -1);
    assert_true(n->has_pos);
    n = node(t, "sip0.cube3.pe7.pe_dma");
    assert_int_equal(n->sip, 0);
    assert_int_equal(n->cube, 3);
    assert_int_equal(n->pe, 7);
    assert_int_equal(n->io, -1);
    n = node(t, "sip0.cube0.hbm_ctrl.pe7");
    assert_int_equal(n->pe, 7);
    n = node(t, "sip0.cube0.ucie-E.conn3");
    assert_int_equal(n->cube, 0);
    n = node(t, "sip0.io0.pcie_ep");
    assert_int_equal(n->sip, 0);
    assert_int_equal(n->io, 0);
    assert_int_equal(n->cube, -1);
    node(t, "sip0.io0.io_cpu");
    node(t, "sip0.io0.io_noc");
    node(t, "sip0.io0.io_ucie-P0");
    node(t, "sip0.io0.io_ucie-P1.conn3");
    node(t, "sip1.cube7.m_cpu");
    node(t, "sip1.cube7.sram");
    for (size_t i = 0; i < NPARTS; i++) {
        char id[64];
        snprintf(id, sizeof id, "sip1.cube2.pe4.%s", pe_parts[i]);
        node(t, id);
    }
    n = node(t, "fabric.switch0");
    assert_int_equal(n->sip, -1);
    /* The HBM hole and things past the default's counts do not exist. */
    assert_true(kb_topo_find(t, "sip0.cube0.r2c2") < 0);
    assert_true(kb_topo_find(t, "sip0.cube0.r3c3") < 0);
    assert_true(kb_topo_find(t, "sip0.cube16.r0c0") < 0);
    assert_true(kb_topo_find(t, "sip2.cube0.r0c0") < 0);
    assert_true(kb_topo_find(t, "sip0.cube0.pe8.pe_dma") < 0);
    assert_true(kb_topo_find(t, "sip0.cube0.ucie-E.conn4") < 0);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* Node lookup, id order (the routing tie-break) and its inverse agree. */
static void test_find_rank_and_by_rank_are_consistent_with_id_order(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    size_t nn = kb_topo_node_count(t);
    for (uint32_t i = 0; i < nn; i++) {
        assert_int_equal(kb_topo_find(t, kb_topo_node(t, i)->id), i);
        assert_int_equal(kb_topo_by_rank(t, kb_topo_rank(t, i)), i);
    }
    for (uint32_t r = 1; r < nn; r++)
        assert_true(strcmp(kb_topo_node(t, kb_topo_by_rank(t, r - 1))->id,
                           kb_topo_node(t, kb_topo_by_rank(t, r))->id) < 0);
    assert_int_equal(kb_topo_find(t, "sip0.cube0.nope"), -1);
    assert_int_equal(kb_topo_find(t, ""), -1);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* Kinds, implementations and attribute values come from default.yaml. */
static void test_node_kinds_and_implementations_match_the_file(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    static const struct {
        const char *id, *kind, *impl;
    } want[] = {
        {"sip0.cube0.r0c0", "noc_router", "builtin.forwarding"},
        {"sip0.cube0.pe0.pe_dma", "pe_dma", "builtin.pe_dma"},
        {"sip0.cube0.pe0.pe_tcm", "pe_tcm", "builtin.pe_tcm"},
        {"sip0.cube0.hbm_ctrl.pe0", "hbm_ctrl", "builtin.hbm_ctrl"},
        {"sip0.cube0.m_cpu", "m_cpu", "builtin.m_cpu"},
        {"sip0.cube0.sram", "sram", "builtin.sram"},
        {"sip0.cube0.ucie-N", "ucie", "builtin.ucie"},
        {"sip0.cube0.ucie-N.conn0", "ucie_conn", "builtin.forwarding"},
        {"sip0.io0.pcie_ep", "pcie_ep", "builtin.pcie_ep"},
        {"sip0.io0.io_noc", "io_noc", "builtin.forwarding"},
        {"sip0.io0.io_cpu", "io_cpu", "builtin.io_cpu"},
        {"sip0.io0.io_ucie-P0", "ucie", "builtin.ucie"},
        {"fabric.switch0", "switch", "builtin.switch"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const kb_node *n = node(t, want[i].id);
        assert_string_equal(n->spec->kind, want[i].kind);
        assert_string_equal(n->spec->impl->name, want[i].impl);
    }
    const kb_node *r = node(t, "sip1.cube9.r4c1");
    assert_string_equal(r->spec->role, "cube.components.router");
    assert_float_equal(kb_spec_attr(r->spec, "overhead_ns"), 2.0, 0);
    const kb_node *dma = node(t, "sip1.cube9.pe3.pe_dma");
    assert_string_equal(dma->spec->role, "cube.pe_template.components.pe_dma");
    assert_float_equal(kb_spec_attr(dma->spec, "rd_engines"), 1.0, 0);
    assert_float_equal(kb_spec_attr(node(t, "sip0.io0.io_cpu")->spec, "overhead_ns"), 10.0, 0);
    /* All routers of all cubes share one spec. */
    assert_ptr_equal(node(t, "sip0.cube0.r0c0")->spec, r->spec);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* The out-edges of node i are edges[first_out .. first_out + nout), all
 * with src i; and every edge except the one-way PE pipeline edges has an
 * edge back. */
static void test_edges_are_grouped_by_source_and_links_have_both_directions(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    size_t total = 0;
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        const kb_node *n = kb_topo_node(t, i);
        assert_int_equal(n->first_out, total);
        for (uint32_t k = 0; k < n->nout; k++) {
            const kb_edge *e = kb_topo_edge(t, n->first_out + k);
            assert_int_equal(e->src, i);
            assert_int_equal(kb_topo_edge_between(t, e->src, e->dst) >= 0, 1);
            if (e->kind != KB_EK_PE_INTERNAL && kb_topo_edge_between(t, e->dst, e->src) < 0)
                fail_msg("%s edge %s -> %s has no edge back", kb_edge_kind_name(e->kind), n->id,
                         kb_topo_node(t, e->dst)->id);
        }
        total += n->nout;
    }
    assert_int_equal(total, kb_topo_edge_count(t));
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* The router <-> hbm_ctrl edge carries the controller's effective
 * bandwidth: hbm_channels_per_pe x hbm_channel_bw_gbs x efficiency
 * (8 x 32 x 1.0 = 256 GB/s in the default), in both directions,
 * and each controller hangs off exactly its own PE's router (per-PE
 * exclusivity, spec §2.9). */
static void check_hbm_edges(const kb_topo *t, double efficiency)
{
    const kb_topo_params *p = kb_topo_params_of(t);
    double want = p->hbm_channels_per_pe * p->hbm_channel_bw_gbs * efficiency;
    int seen = 0;
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        const kb_node *h = kb_topo_node(t, i);
        if (strcmp(h->spec->kind, "hbm_ctrl") != 0)
            continue;
        seen++;
        assert_float_equal(kb_spec_attr(h->spec, "efficiency"), efficiency, 1e-12);
        assert_int_equal(h->nout, 1);
        const kb_edge *out = kb_topo_edge(t, h->first_out);
        assert_int_equal(out->kind, KB_EK_HBM_TO_ROUTER);
        assert_float_equal(out->bw_gbs, want, 1e-9);
        int64_t in = kb_topo_edge_between(t, out->dst, i);
        assert_true(in >= 0);
        assert_int_equal(kb_topo_edge(t, (uint32_t)in)->kind, KB_EK_ROUTER_TO_HBM);
        assert_float_equal(kb_topo_edge(t, (uint32_t)in)->bw_gbs, want, 1e-9);
        /* The router is the one PE h->pe's DMA attaches to. */
        char id[96];
        snprintf(id, sizeof id, "sip%d.cube%d.pe%d.pe_dma", h->sip, h->cube, h->pe);
        const kb_node *dma = node(t, id);
        int64_t pr = -1;
        for (uint32_t k = 0; k < dma->nout; k++)
            if (kb_topo_edge(t, dma->first_out + k)->kind == KB_EK_PE_TO_ROUTER)
                pr = kb_topo_edge(t, dma->first_out + k)->dst;
        assert_int_equal(pr, out->dst);
        /* No other node has an edge into this controller. */
        for (uint32_t k = 0; k < kb_topo_edge_count(t); k++) {
            const kb_edge *e = kb_topo_edge(t, k);
            if (e->dst == i && e->src != out->dst)
                fail_msg("%s reaches %s directly", kb_topo_node(t, e->src)->id, h->id);
        }
    }
    assert_int_equal(seen, p->sips * p->cubes_per_sip * p->pes_per_cube);
}

static void test_hbm_edge_bandwidth_is_channels_times_channel_bw_times_efficiency(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    check_hbm_edges(t, 1.0);
    kb_topo_free(t);
    /* efficiency 0.8: 8 x 32 x 0.8 = 204.8 GB/s. */
    const char *ov[] = {"cube.components.hbm_ctrl.attrs.efficiency=0.8"};
    t = load_ok(reg, "topologies/small_2x2.yaml", ov, 1);
    check_hbm_edges(t, 0.8);
    const kb_node *h = node(t, "sip0.cube1.hbm_ctrl.pe3");
    assert_float_equal(kb_topo_edge(t, h->first_out)->bw_gbs, 204.8, 1e-9);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* Link parameters of default.yaml land on the edges: mesh links at
 * router_link_bw_gbs (256) as long as the router distance; UCIe seams at
 * 512 GB/s, 1 mm; switch <-> pcie_ep at 64 GB/s, 100 mm; PE DMA <-> router
 * at 256 GB/s. Directed seam count per SIP: 2 x ((w-1) x h + w x (h-1)). */
static void test_edge_bandwidths_and_lengths_come_from_the_links_section(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    const kb_topo_params *p = kb_topo_params_of(t);
    size_t seams = 0, pcie = 0, mesh = 0;
    for (uint32_t k = 0; k < kb_topo_edge_count(t); k++) {
        const kb_edge *e = kb_topo_edge(t, k);
        const kb_node *a = kb_topo_node(t, e->src), *b = kb_topo_node(t, e->dst);
        switch (e->kind) {
        case KB_EK_ROUTER_MESH:
            mesh++;
            assert_float_equal(e->bw_gbs, 256.0, 0);
            assert_float_equal(e->mm, fabs(a->x_mm - b->x_mm) + fabs(a->y_mm - b->y_mm), 1e-9);
            assert_true(a->sip == b->sip && a->cube == b->cube);
            break;
        case KB_EK_UCIE_MESH:
            seams++;
            assert_float_equal(e->bw_gbs, 512.0, 0);
            assert_float_equal(e->mm, 1.0, 0);
            break;
        case KB_EK_PCIE:
            pcie++;
            assert_float_equal(e->bw_gbs, 64.0, 0);
            assert_float_equal(e->mm, 100.0, 0);
            break;
        case KB_EK_PE_TO_ROUTER:
        case KB_EK_ROUTER_TO_PE:
            assert_float_equal(e->bw_gbs, 256.0, 0);
            break;
        default:
            break;
        }
    }
    size_t w = (size_t)p->cube_w, h = (size_t)p->cube_h;
    assert_int_equal(seams, (size_t)p->sips * 2 * ((w - 1) * h + w * (h - 1)));
    assert_int_equal(pcie, 2 * (size_t)p->sips * (size_t)p->io_per_sip);
    assert_true(mesh > 0);
    /* Timing helpers: 2.5 mm at 0.01 ns/mm = 25 ps; 256 B at 256 GB/s
     * (256 B/ns) = 1 ns = 1000 ps. */
    int64_t e01 = kb_topo_edge_between(t, find(t, "sip0.cube0.r0c0"), find(t, "sip0.cube0.r0c1"));
    assert_true(e01 >= 0);
    assert_int_equal(kb_topo_edge_prop_ps(t, kb_topo_edge(t, (uint32_t)e01)), 25);
    assert_int_equal(kb_edge_serialize_ps(kb_topo_edge(t, (uint32_t)e01), 256), 1000);
    kb_topo_free(t);
    kb_registry_free(reg);
}

static void test_summary_names_the_topology_and_its_counts(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    char *s = kb_topo_summary(t);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
    assert_has(s, "topology small_2x2 (topologies/small_2x2.yaml)");
    char want[64];
    snprintf(want, sizeof want, "nodes: %zu, directed edges: %zu", kb_topo_node_count(t),
             kb_topo_edge_count(t));
    assert_has(s, want);
    snprintf(want, sizeof want, "hbm_ctrl=%d", kb_topo_params_of(t)->cubes_per_sip * kb_topo_params_of(t)->pes_per_cube);
    assert_has(s, want);
    free(s);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* The graph form: chain.yaml is 8 transit nodes n0..n7 in a line, linked
 * both ways (2 x 7 = 14 directed edges) at 256 GB/s and 1 mm. */
static void test_graph_form_chain_builds_a_line_of_nodes(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/chain.yaml", NULL, 0);
    assert_string_equal(kb_topo_params_of(t)->sip_topology, "none");
    assert_int_equal(kb_topo_params_of(t)->sips, 0);
    assert_int_equal(kb_topo_node_count(t), 8);
    assert_int_equal(kb_topo_edge_count(t), 2 * (8 - 1));
    for (int i = 0; i < 8; i++) {
        char id[8];
        snprintf(id, sizeof id, "n%d", i);
        assert_string_equal(node(t, id)->spec->kind, "transit");
    }
    const kb_edge *e = kb_topo_edge(t, (uint32_t)kb_topo_edge_between(t, find(t, "n3"), find(t, "n4")));
    assert_int_equal(e->kind, KB_EK_LINK);
    assert_float_equal(e->bw_gbs, 256.0, 0);
    assert_float_equal(e->mm, 1.0, 0);
    kb_topo_free(t);
    /* Overriding the count: --set graph.line.count=3. */
    const char *ov[] = {"graph.line.count=3"};
    t = load_ok(reg, "topologies/chain.yaml", ov, 1);
    assert_int_equal(kb_topo_node_count(t), 3);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* kb_topo_load_string: the name comes from the document or, failing
 * that, from the given file name without its extension. */
static void test_load_string_takes_name_from_document_or_file_name(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = NULL;
    kb_topo *t = kb_topo_load_string("graph:\n  nodes: [{id: a}, {id: b}]\n  links: [{src: a, dst: b}]\n",
                                     "dir/inline.yaml", NULL, 0, reg, &err);
    if (!t)
        fail_msg("%s", err);
    assert_string_equal(kb_topo_name(t), "inline");
    assert_int_equal(kb_topo_node_count(t), 2);
    assert_int_equal(kb_topo_edge_count(t), 2);
    kb_topo_free(t);
    t = kb_topo_load_string("name: named\ngraph:\n  line: {count: 2}\n", "x.yaml", NULL, 0, reg, &err);
    if (!t)
        fail_msg("%s", err);
    assert_string_equal(kb_topo_name(t), "named");
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* ---- (b) overrides ---- */

/* sip.cube_mesh={w: 2, h: 2} makes 4 cubes per SIP; every count follows. */
static void test_cube_mesh_override_changes_cubes_per_sip(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *base = load_ok(reg, "topologies/default.yaml", NULL, 0);
    const char *ov[] = {"sip.cube_mesh={w: 2, h: 2}"};
    kb_topo *t = load_ok(reg, "topologies/default.yaml", ov, 1);
    const kb_topo_params *p = kb_topo_params_of(t);
    assert_int_equal(p->cube_w, 2);
    assert_int_equal(p->cube_h, 2);
    assert_int_equal(p->cubes_per_sip, 4);
    assert_int_equal(p->sips, kb_topo_params_of(base)->sips);
    check_counts(t);
    assert_true(kb_topo_find(t, "sip0.cube3.r0c0") >= 0);
    assert_true(kb_topo_find(t, "sip0.cube4.r0c0") < 0);
    assert_true(kb_topo_node_count(t) < kb_topo_node_count(base));
    kb_topo_free(t);
    kb_topo_free(base);
    kb_registry_free(reg);
}

/* Several overrides at once: 3 SIPs; 2 PEs (corners NW and SE, 1 each)
 * with the memory map to match (2 slices, 8 x 2 = 16 pseudo-channels). */
static void test_several_overrides_apply_together(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *ov[] = {"system.sips.count=3", "cube.pe_layout={corners: [NW, SE], pe_per_corner: 1}",
                        "cube.memory_map.hbm_slices_per_cube=2", "cube.memory_map.hbm_pseudo_channels=16"};
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", ov, 4);
    const kb_topo_params *p = kb_topo_params_of(t);
    assert_int_equal(p->sips, 3);
    assert_int_equal(p->pes_per_cube, 2);
    /* 48 GiB over 2 slices. */
    assert_int_equal(p->hbm_slice_bytes, 48 * GiB / 2);
    check_counts(t);
    node(t, "sip2.cube3.pe1.pe_dma");
    assert_true(kb_topo_find(t, "sip0.cube0.pe2.pe_dma") < 0);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* An override is validated like the file, and its errors name it. */
static void test_override_errors_name_the_override(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *bad_bw[] = {"cube.links.router_link_bw_gbs=-1"};
    char *err = load_error(reg, "topologies/default.yaml", bad_bw, 1);
    assert_string_equal(err, "--set cube.links.router_link_bw_gbs=-1: cube.links.router_link_bw_gbs: "
                             "-1 is out of range (0.001 .. 256000 GB/s: at most flit_bytes x 1000, so that a "
                             "256-byte flit takes at least 1 ps)");
    free(err);
    const char *typo[] = {"cube.links.router_link_bw=128"};
    err = load_error(reg, "topologies/default.yaml", typo, 1);
    assert_prefix(err, "--set cube.links.router_link_bw=128: cube.links.router_link_bw: unknown key");
    free(err);
    const char *past[] = {"sip.io_chiplets.3.id=x"};
    err = load_error(reg, "topologies/default.yaml", past, 1);
    assert_string_equal(err, "--set sip.io_chiplets.3.id=x: '3' is not an index of sip.io_chiplets (a list of 1)");
    free(err);
    const char *mesh[] = {"sip.cube_mesh={w: 2, h: 0}"};
    err = load_error(reg, "topologies/default.yaml", mesh, 1);
    assert_prefix(err, "--set sip.cube_mesh={w: 2, h: 0}: sip.cube_mesh.h: 0 is out of range");
    free(err);
    kb_registry_free(reg);
}

/* A key path is names joined by single dots: an empty segment (".", "..",
 * a leading or trailing dot) is an error, not a key "" or a skipped dot. */
static void test_override_paths_with_empty_segments_are_rejected(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    static const struct { const char *set, *want; } cases[] = {
        {".=5", "--set .=5: key path '.' has an empty segment at its start; a key path is names joined by "
                "single dots (cube.links.router_link_bw_gbs, sip.io_chiplets.0.id)"},
        {"..=5", "--set ..=5: key path '..' has an empty segment at its start;"},
        {".name=x", "--set .name=x: key path '.name' has an empty segment at its start;"},
        {"name.=x", "--set name.=x: key path 'name.' has an empty segment at its end;"},
        {"cube..links.router_link_bw_gbs=1", "--set cube..links.router_link_bw_gbs=1: key path "
                                             "'cube..links.router_link_bw_gbs' has an empty segment;"},
        {"=5", "--set =5: expected key.path=value"},
        /* a tag in the value is refused like one in a file */
        {"name=!!str 5", "--set name=!!str 5:1:1: YAML tag '!!str' is not supported in topology files"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *ov[] = {cases[i].set};
        char *err = load_error(reg, "topologies/small_1cube_1pe.yaml", ov, 1);
        assert_prefix(err, cases[i].want);
        free(err);
    }
    kb_registry_free(reg);
}

/* Values given by --set are checked for meaning as the file's are, and the
 * error names the override and the key path (issue 39). */
static void test_override_values_are_checked_for_meaning(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    static const struct { const char *topo, *set, *want, *want2; } cases[] = {
        /* overflowed the layout's int (UBSan); a Release build made 20 routers */
        {"default", "cube.geometry.max_router_spacing_mm=1e-9",
         "--set cube.geometry.max_router_spacing_mm=1e-9: cube.geometry.max_router_spacing_mm: 1e-09 mm between "
         "routers needs more than 32 router columns", NULL},
        {"default", "cube.geometry.max_router_spacing_mm=1e-300", "1e-300 mm between routers needs more than 32", NULL},
        {"small_1cube_1pe", "name=\"my\\0topology\"",
         "--set name=\"my\\0topology\":1:1: name: the value \"my\\0topology\" contains a NUL character", NULL},
        {"small_1cube_1pe", "description=\"a\\x00b\"", "description: the value \"a\\0b\" contains a NUL", NULL},
        {"default", "sip.io_chiplets.0.id=\"\"",
         "--set sip.io_chiplets.0.id=\"\": sip.io_chiplets[0].id: IO chiplet id '' is not a valid id: it is empty",
         NULL},
        {"default", "sip.io_chiplets.0.id=a.b", "IO chiplet id 'a.b' is not a valid id: it contains '.'", NULL},
        {"default", "sip.io_chiplets.0.id=a b", "IO chiplet id 'a b' is not a valid id: it contains a character", NULL},
        {"default", "sip.io_chiplets.0.cube_ports.0.phy=\"\"", "phy '' is not a valid id: it is empty", NULL},
        {"chain", "graph.line.prefix=a..b", "graph.line.prefix: the line's first node id 'a..b0' is not a valid id",
         NULL},
        {"small_1cube_1pe", "name=\"\"", "name: a topology name must not be empty", NULL},
        {"default", "cube.components.sram.attrs.size_mb=1e-300",
         "--set cube.components.sram.attrs.size_mb=1e-300: cube.components.sram.attrs.size_mb: 1e-300 MiB is ",
         "less than one: a size is a whole number of bytes"},
        {"default", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb=2.7",
         "--set cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb=2.7: "
         "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb: 2.7 KiB is 2764.8 bytes, not a whole number",
         NULL},
        {"default", "cube.pe_template.components.pe_cpu.attrs.scratch_kb=1e-9", "1e-09 KiB is 1.024e-06 bytes", NULL},
        {"default", "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb=1e-300", "1e-300 KiB is ",
         NULL},
        {"default", "cube.memory_map.hbm_total_gb_per_cube=0.1", "0.1 GiB is 107374182.4 bytes, not a whole number",
         NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", cases[i].topo);
        const char *ov[] = {cases[i].set};
        char *err = load_error(reg, path, ov, 1);
        if (strncmp(cases[i].want, "--set ", 6) == 0)
            assert_prefix(err, cases[i].want);
        else
            assert_has(err, cases[i].want);
        if (cases[i].want2)
            assert_has(err, cases[i].want2);
        free(err);
    }
    /* The values the rules allow still load: whole bytes, 0 where 0 is "none",
     * dotted graph ids, the smallest spacing that fits. */
    static const struct { const char *topo, *set; } good[] = {
        {"default", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb=0"},
        {"default", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb=2.5"},
        {"default", "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb=0"},
        {"default", "cube.components.sram.attrs.size_mb=0.5"},
        {"default", "cube.memory_map.hbm_total_gb_per_cube=0.5"},
        {"default", "sip.io_chiplets.0.id=io_A-1"},
        {"chain", "graph.line.prefix=sw.n"},
        {"chain", "graph.line.prefix=\"\""},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", good[i].topo);
        const char *ov[] = {good[i].set};
        char *err = NULL;
        kb_topo *t = kb_topo_load(path, ov, 1, reg, &err);
        if (!t)
            fail_msg("--set %s: %s", good[i].set, err);
        kb_topo_free(t);
    }
    kb_registry_free(reg);
}

/* ---- (c) malformed topology files ---- */

typedef struct bad_case {
    const char *file;   /* under tests/topologies/bad/ */
    const char *where;  /* "line:col" in that file */
    const char *path;   /* key path named after the position, or NULL */
    const char *phrase; /* distinctive text of the message */
    const char *phrase2;
} bad_case;

static const bad_case bad_cases[] = {
    {"unknown_key.yaml", "4:11", "system.sips.cuont", "unknown key (known keys here: count, topology, w, h)", NULL},
    {"wrong_type.yaml", "5:25", "cube.links.router_link_bw_gbs", "expected a number, got 'fast'", NULL},
    {"missing_sip_count.yaml", "4:5", "system.sips.count", "missing: how many SIPs the tray holds", NULL},
    {"negative_bandwidth.yaml", "5:23", "sip.links.ucie_seam_bw_gbs", "-512 is out of range (0.001 .. 256000 GB/s", NULL},
    {"efficiency_out_of_range.yaml", "6:28", "cube.components.hbm_ctrl.attrs.efficiency",
     "1.5 is out of range (>= 0.01 .. 1)", NULL},
    {"sip_grid_mismatch.yaml", "4:9", "system.sips", "sip layout 2x2 != sips.count (6)", NULL},
    {"too_many_sips.yaml", "4:18", "system.sips.count", "65 is out of range (1 .. 64)", NULL},
    {"sip_grid_too_wide.yaml", "5:45", "system.sips.w", "128 is out of range (1 .. 64)", NULL},
    {"ring_with_grid.yaml", "4:43", "system.sips.w", "w/h give a SIP grid, which ring_1d does not use", NULL},
    {"unknown_impl.yaml", "5:21", "cube.components.router.impl",
     "unknown implementation 'builtin.rooter' (known: builtin.forwarding, ", "builtin.hbm_ctrl"},
    {"impl_wrong_kind.yaml", "5:21", "cube.components.router.impl",
     "builtin.hbm_ctrl cannot serve as a noc_router (it implements: hbm_ctrl)", NULL},
    {"unknown_attr.yaml", "6:16", "cube.components.m_cpu.attrs.overhed_ns",
     "unknown key (known keys here: overhead_ns)", "builtin.m_cpu has no such attribute"},
    {"burst_not_pow2.yaml", "6:29", "cube.components.hbm_ctrl.attrs.burst_bytes", "384 must be a power of two", NULL},
    {"slices_mismatch.yaml", "5:26", "cube.memory_map.hbm_slices_per_cube",
     "4 HBM slices per cube, but the cube has 8 PEs", NULL},
    {"pseudo_channels_mismatch.yaml", "5:26", "cube.memory_map.hbm_pseudo_channels",
     "32 pseudo-channels per cube, but hbm_channels_per_pe x hbm_slices_per_cube = 8 x 8 = 64", NULL},
    {"io_port_faces_cube.yaml", "7:38", "sip.io_chiplets[0].cube_ports[0].cube_side",
     "side E of cube [0, 0] faces cube [1, 0]; an IO port needs a free shoreline side", NULL},
    {"io_port_outside_mesh.yaml", "7:19", "sip.io_chiplets[0].cube_ports[0].cube",
     "cube [4, 0] is outside the 4x4 cube mesh", NULL},
    {"yaml_syntax.yaml", "5:4", NULL, "YAML syntax error: did not find expected ',' or '}'", NULL},
    {"duplicate_key.yaml", "5:1", NULL, "duplicate key 'name' (first at line 2)", NULL},
    {"graph_and_sip.yaml", "2:1", NULL,
     "a topology has either a `graph:` section or `sip:`/`cube:` sections, not both", NULL},
    {"cube_too_narrow.yaml", "6:5", "cube.geometry",
     "cube is 5 mm wide but the PEs of a west and an east corner span 4 mm each", NULL},
    {"no_io_chiplets.yaml", "4:16", "sip.io_chiplets", "a SIP needs at least one IO chiplet", NULL},
    {"io_chiplet_without_ports.yaml", "5:7", "sip.io_chiplets[0].cube_ports",
     "missing: an IO chiplet needs at least one cube port", NULL},
    {"one_to_one_mapping.yaml", "4:35", "cube.memory_map.hbm_mapping_mode",
     "one_to_one HBM mapping is not modelled", NULL},
    {"component_kind_mismatch.yaml", "5:19", "cube.components.sram.kind", "this component is a sram, not a switch",
     NULL},
    {"unknown_corner.yaml", "4:30", "cube.pe_layout.corners[1]", "unknown corner 'NX' (NW, NE, SW, SE)", NULL},
    {"duplicate_io_phy.yaml", "8:11", "sip.io_chiplets[0].cube_ports[1]", "phy P0 is used twice in IO chiplet io0",
     NULL},
    {"graph_link_unknown_node.yaml", "8:22", "graph.links[0].dst", "no node named 'c'", NULL},
    {"graph_line_without_count.yaml", "5:5", "graph.line.count", "missing: how many nodes the line has", NULL},
    {"missing_base.yaml", "2:7", "base", BAD "no_such_topology.yaml: cannot open topology file", NULL},
    {"base_cycle.yaml", "2:7", "base", "cycle of base files: " BAD "base_cycle.yaml -> " BAD "base_cycle.yaml", NULL},
    {"unknown_key_in_list.yaml", "7:41", "sip.io_chiplets[0].cube_ports[0].phyy",
     "unknown key (known keys here: cube, cube_side, phy, bw_gbs, distance_mm)", NULL},    /* Hostile or nonsensical input: each names the allowed range or set. */
    {"yaml_tag_core.yaml", "3:7", NULL,
     "YAML tag '!!str' is not supported in topology files (a value is typed by its key; quote a value to make it a", NULL},
    {"yaml_tag_local.yaml", "3:9", NULL,
     "YAML tag '!hardware' is not supported in topology files (a value is typed by its key; quote a value to make", NULL},
    {"too_deep.yaml", "3:77", NULL,
     "maps and lists nested more than 64 deep; a topology file may nest at most 64", NULL},
    {"nul_byte.yaml", "3:15", NULL,
     "NUL byte: a topology file is UTF-8 text", NULL},
    {"invalid_utf8.yaml", "3:17", NULL,
     "invalid UTF-8 (byte 0xe9): a topology file is UTF-8 text", NULL},
    {"graph_self_loop.yaml", "8:7", "graph.links[1]",
     "a link from node 'b' to itself; a link joins two different nodes", NULL},
    {"graph_duplicate_link.yaml", "8:7", "graph.links[1]",
     "link b -> a is already given by graph.links[0]", NULL},
    {"graph_duplicate_line_link.yaml", "5:7", "graph.links[0]",
     "link n0 -> n1 duplicates a link of graph.line", NULL},
    {"graph_empty_id.yaml", "5:13", "graph.nodes[1].id",
     "a node id must not be empty", NULL},
    {"graph_unknown_kind.yaml", "5:22", "graph.nodes[1].kind",
     "unknown node kind 'banana' (known: transit, switch, pcie_ep, io_noc, io_cpu, ucie, ucie_conn, noc_router,", NULL},
    {"graph_line_too_long.yaml", "3:18", "graph.line.count",
     "1000000 is out of range (1 .. 262144)", NULL},
    {"graph_link_length_overflow.yaml", "7:29", "graph.links[0].mm",
     "1e+19 is out of range (>= 0 .. 1000000 mm)", NULL},
    {"duration_overflow.yaml", "5:37", "cube.components.router.attrs.overhead_ns",
     "1e+300 is out of range (>= 0 .. 1000000000 ns)", NULL},
    {"length_overflow.yaml", "5:19", "sip.links.ucie_seam_mm",
     "1e+300 is out of range (>= 0 .. 1000000 mm)", NULL},
    {"routing_weight_overflow.yaml", "5:29", "cube.links.ucie_routing_weight_mm",
     "1e+300 is out of range (>= 0 .. 1000000 mm)", NULL},
    {"position_outside_cube.yaml", "5:22", "cube.placement.m_cpu.pos_mm",
     "[100, 5.5] is outside the 15 x 14 mm cube (x 0 .. 15, y 0 .. 14)", NULL},
    {"position_negative.yaml", "5:21", "cube.placement.sram.pos_mm",
     "[1.5, -2] is outside the 15 x 14 mm cube (x 0 .. 15, y 0 .. 14)", NULL},
    {"sram_beyond_window.yaml", "5:31", "cube.components.sram.attrs.size_mb",
     "64 is out of range (> 0 .. 32 MiB)", NULL},
    {"tcm_beyond_window.yaml", "6:35", "cube.pe_template.components.pe_tcm.attrs.size_mb",
     "4 is out of range (> 0 .. 2 MiB)", NULL},
    {"tcm_reserved_all.yaml", "6:61", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb",
     "scheduler_reserved_kb 1024 KiB leaves nothing of the 1024 KiB TCM (size_mb 1) to allocate; it must be below", NULL},
    {"hbm_slice_too_small.yaml", "5:28", "cube.memory_map.hbm_total_gb_per_cube",
     "9.53674e-07 GiB over 8 slices leaves 128 bytes per slice; each slice needs at least one flit (256 bytes", NULL},
    {"flit_bytes_1.yaml", "4:15", "system.flit_bytes",
     "1 is not allowed (a power of two, 8 .. 4096 bytes: no element is split across flits and an aligned flit never", NULL},
    {"flit_bytes_3.yaml", "4:15", "system.flit_bytes",
     "3 is not allowed (a power of two, 8 .. 4096 bytes: no element is split across flits and an aligned flit never", NULL},
    {"flit_bytes_huge.yaml", "4:15", "system.flit_bytes",
     "1048576 is not allowed (a power of two, 8 .. 4096 bytes: no element is split across flits and an aligned flit", NULL},
    {"hbm_bandwidth_huge.yaml", "5:25", "cube.memory_map.hbm_channel_bw_gbs",
     "1e+18 is out of range (0.001 .. 256000 GB/s: at most flit_bytes x 1000, so that a 256-byte flit takes at", NULL},
    {"hbm_burst_under_1ps.yaml", "5:25", "cube.memory_map.hbm_channel_bw_gbs",
     "20000 GB/s x efficiency 1 commits a 16-byte burst in less than 1 ps; at most burst_bytes x 1000 / efficiency", NULL},
    {"hbm_edge_bandwidth_huge.yaml", "5:25", "cube.memory_map.hbm_channel_bw_gbs",
     "64000 GB/s per channel gives the router <-> hbm_ctrl link hbm_channels_per_pe x hbm_channel_bw_gbs x", NULL},
    {"link_bandwidth_huge.yaml", "5:25", "cube.links.router_link_bw_gbs",
     "1e+18 is out of range (0.001 .. 256000 GB/s: at most flit_bytes x 1000, so that a 256-byte flit takes at", NULL},
    {"link_bandwidth_tiny.yaml", "6:49", "sip.io_chiplets[0].cube_ports[0].bw_gbs",
     "1e-300 is out of range (0.001 .. 256000 GB/s: at most flit_bytes x 1000, so that a 256-byte flit takes at", NULL},
    {"tcm_bandwidth_huge.yaml", "6:39", "cube.pe_template.components.pe_tcm.attrs.read_bw_gbs",
     "1e+18 is out of range (0.001 .. 256000 GB/s: at most flit_bytes x 1000, so that a 256-byte flit takes at", NULL},
    {"clock_huge.yaml", "6:38", "cube.pe_template.components.pe_gemm.attrs.clock_ghz",
     "1e+300 is out of range (>= 0.001 .. 1000 GHz)", NULL},
    {"clock_tiny.yaml", "6:37", "cube.pe_template.components.pe_cpu.attrs.clock_ghz",
     "1e-300 is out of range (>= 0.001 .. 1000 GHz)", NULL},
    {"efficiency_tiny.yaml", "5:38", "cube.components.hbm_ctrl.attrs.efficiency",
     "1e-300 is out of range (>= 0.01 .. 1)", NULL},
    {"slowdown_huge.yaml", "6:41", "cube.pe_template.components.pe_gemm.attrs.f32_slowdown",
     "1e+300 is out of range (>= 1 .. 1024)", NULL},
    {"transcendental_huge.yaml", "6:50", "cube.pe_template.components.pe_math.attrs.transcendental_cycles",
     "1e+300 is out of range (>= 1 .. 1000000 cycles)", NULL},
    {"register_file_huge.yaml", "6:52", "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb",
     "1e+300 is out of range (>= 0 .. 1048576 KiB)", NULL},
    {"scratch_beyond_tcm.yaml", "6:38", "cube.pe_template.components.pe_cpu.attrs.scratch_kb",
     "4096 is out of range (> 0 .. 2048 KiB)", NULL},
    {"hbm_channels_huge.yaml", "6:26", "cube.memory_map.hbm_pseudo_channels",
     "65536 is out of range (1 .. 4096)", NULL},
    {"host_outstanding_huge.yaml", "4:28", "system.host.max_outstanding",
     "1000000 is out of range (1 .. 65536)", NULL},
    /* Values checked for meaning, not only type (issue 39). */
    {"nul_escape_in_name.yaml", "2:7", "name",
     "the value \"my\\0topology\" contains a NUL character (an escape such as \\0 or \\x00); a topology string "
     "may not", NULL},
    {"nul_escape_in_key.yaml", "3:1", NULL, "the key \"name\\0junk\" contains a NUL character", NULL},
    {"nul_escape_in_phy.yaml", "7:46", "sip.io_chiplets[0].cube_ports[0].phy",
     "the value \"P\\00\" contains a NUL character", NULL},
    {"io_chiplet_id_empty.yaml", "5:11", "sip.io_chiplets[0].id",
     "IO chiplet id '' is not a valid id: it is empty (one segment of letters, digits, '_' and '-'; it becomes", NULL},
    {"io_chiplet_id_dot.yaml", "5:11", "sip.io_chiplets[0].id", "IO chiplet id 'io.x' is not a valid id: it contains '.'",
     NULL},
    {"io_chiplet_id_blank.yaml", "5:11", "sip.io_chiplets[0].id",
     "IO chiplet id 'io 0' is not a valid id: it contains a character other than A-Z, a-z, 0-9, '_' and '-'", NULL},
    {"graph_line_prefix_blank.yaml", "3:29", "graph.line.prefix",
     "the line's first node id 'a b0' is not a valid id: it contains a character other than", NULL},
    {"graph_node_id_empty_segment.yaml", "5:13", "graph.nodes[1].id",
     "node id 'a..b' is not a valid id: it has an empty segment between dots (segments of letters, digits, '_' and "
     "'-', joined by single dots", NULL},
    {"name_empty.yaml", "3:7", "name", "a topology name must not be empty", NULL},
    {"sram_size_tiny.yaml", "5:31", "cube.components.sram.attrs.size_mb",
     "1e-300 MiB is ", "bytes, less than one: a size is a whole number of bytes (the smallest above 0 is "
     "9.5367431640625e-07 MiB)"},
    {"tcm_reserved_fraction.yaml", "6:49", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb",
     "2.7 KiB is 2764.8 bytes, not a whole number: a size is a whole number of bytes (2.69921875 or 2.7001953125 KiB "
     "are the nearest)", NULL},
    {"tcm_reserved_unaligned.yaml", "6:49", "cube.pe_template.components.pe_tcm.attrs.scheduler_reserved_kb",
     "0.5009765625 KiB is 513 bytes, not a multiple of 16: the allocatable TCM after the reserved region starts on a "
     "16-byte granule", NULL},
    {"scratch_tiny.yaml", "6:38", "cube.pe_template.components.pe_cpu.attrs.scratch_kb",
     "1e-09 KiB is 1.024e-06 bytes, less than one", NULL},
    {"register_file_fraction.yaml", "6:52", "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb",
     "2.7 KiB is 2764.8 bytes, not a whole number", NULL},
    {"ipcq_window_fraction.yaml", "6:38", "cube.pe_template.components.pe_ipcq.attrs.window_kb",
     "2.7 KiB is 2764.8 bytes, not a whole number", NULL},
    {"hbm_total_fraction.yaml", "5:28", "cube.memory_map.hbm_total_gb_per_cube",
     "2.7 GiB is 2899102924.8 bytes, not a whole number", NULL},
    {"integer_leading_zero.yaml", "4:18", "system.sips.count",
     "'010' has a leading zero (octal or decimal?); write the number without it", NULL},
    {"router_spacing_tiny.yaml", "5:28", "cube.geometry.max_router_spacing_mm",
     "1e-09 mm between routers needs more than 32 router columns across the 15 mm cube (at most 32 are supported)",
     NULL},
};

/* Each malformed file is rejected with "FILE:LINE:COL: KEY.PATH: message"
 * (no path segment where the error is not about one key). All cases run;
 * the failure lists every mismatch. */
static void test_malformed_files_are_rejected_with_position_path_and_reason(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char report[32768] = "";
    size_t n = sizeof bad_cases / sizeof bad_cases[0];
    assert_true(n >= 12);
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &bad_cases[i];
        char path[256], prefix[512];
        snprintf(path, sizeof path, BAD "%s", c->file);
        if (c->path)
            snprintf(prefix, sizeof prefix, "%s:%s: %s: ", path, c->where, c->path);
        else
            snprintf(prefix, sizeof prefix, "%s:%s: ", path, c->where);
        char *err = NULL;
        kb_topo *t = kb_topo_load(path, NULL, 0, reg, &err);
        const char *why = NULL;
        if (t)
            why = "loaded";
        else if (!err)
            why = "no error message";
        else if (strncmp(err, prefix, strlen(prefix)) != 0)
            why = "wrong position or key path";
        else if (!strstr(err, c->phrase) || (c->phrase2 && !strstr(err, c->phrase2)))
            why = "wrong message";
        if (why) {
            size_t len = strlen(report);
            snprintf(report + len, sizeof report - len, "\n  %s: %s\n    got:  %s\n    want: %s... %s", c->file,
                     why, err ? err : "(none)", prefix, c->phrase);
        }
        free(err);
        kb_topo_free(t);
    }
    kb_registry_free(reg);
    if (report[0])
        fail_msg("malformed topologies not rejected as expected:%s", report);
}

/* Where the offending values were written in the including file over a
 * base, the error must point into that file (where the user wrote them),
 * not into the base, whose own values were fine: 5x4 cubes and a torus of
 * 6 SIPs without w/h are both written in the bad files (line 4). */
static void test_error_about_a_merged_map_points_into_the_overriding_file(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = load_error(reg, BAD "too_many_cubes.yaml", NULL, 0);
    assert_has(err, "sip.cube_mesh: 5x4 = 20 cubes per SIP; the address map has room for 16");
    char *err2 = load_error(reg, BAD "non_square_sips.yaml", NULL, 0);
    assert_has(err2, "system.sips: non-square sips.count (6) requires explicit sips.w/h");
    kb_registry_free(reg);
    bool ok1 = strncmp(err, BAD "too_many_cubes.yaml:4:", strlen(BAD "too_many_cubes.yaml:4:")) == 0;
    bool ok2 = strncmp(err2, BAD "non_square_sips.yaml:4:", strlen(BAD "non_square_sips.yaml:4:")) == 0;
    if (!ok1 || !ok2) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s%s%s", ok1 ? "" : err, !ok1 && !ok2 ? " | " : "", ok2 ? "" : err2);
        free(err);
        free(err2);
        fail_msg("error points into the base, not the file that wrote the values: %s", msg);
    }
    free(err);
    free(err2);
}

/* A PHY named "P0.conn0" would give its port the node name of connection 0
 * of PHY P0; the loader refuses a PHY name that is not one id segment. */
static void test_colliding_node_names_are_rejected(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = load_error(reg, BAD "phy_name_collision.yaml", NULL, 0);
    assert_prefix(err, BAD "phy_name_collision.yaml:8:46: sip.io_chiplets[0].cube_ports[1].phy: ");
    assert_has(err, "phy 'P0.conn0' is not a valid id: it contains '.' (one segment of letters, digits");
    free(err);
    kb_registry_free(reg);
}

/* A graph-form file in two pieces is refused, naming a pair that cannot
 * reach each other. */
static void test_disconnected_graph_is_rejected_naming_the_pair(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = load_error(reg, BAD "graph_disconnected.yaml", NULL, 0);
    assert_string_equal(err, BAD "graph_disconnected.yaml: topology is disconnected: a cannot reach c (all view)");
    free(err);
    /* A one-way link counts only in its direction. */
    err = load_error(reg, BAD "graph_oneway.yaml", NULL, 0);
    assert_has(err, "topology is disconnected: b cannot reach a");
    free(err);
    kb_registry_free(reg);
}

/* Connectivity validation (validate.c) cannot be reached from a system-form
 * file: the builder always links every PE, controller, SRAM, M_CPU and
 * UCIe port to the router grid (which the HBM hole never splits: >= 3
 * columns), every cube to its neighbours, and every IO chiplet (>= 1 cube
 * port, required) to a cube and to the switch. So every valid system-form
 * file must pass it: here a minimal self-contained file with one IO port on
 * the far corner cube, reached through the whole cube mesh. The graph form
 * is checked for being one connected piece (test_disconnected_graph_...). */
static void test_minimal_system_file_with_a_corner_io_port_passes_connectivity(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *err = NULL;
    kb_topo *t = kb_topo_load_string("system: { sips: { count: 1 } }\n"
                                     "sip:\n"
                                     "  cube_mesh: { w: 3, h: 2 }\n"
                                     "  io_chiplets:\n"
                                     "    - cube_ports: [ { cube: [2, 1], cube_side: S } ]\n",
                                     "minimal.yaml", NULL, 0, reg, &err);
    if (!t)
        fail_msg("%s", err);
    const kb_topo_params *p = kb_topo_params_of(t);
    assert_int_equal(p->cubes_per_sip, 6);
    assert_int_equal(p->io_per_sip, 1);
    check_counts(t);
    /* Defaults: io chiplet id io0, PHY P0, the cube at x 2, y 1 is cube 1 x 3 + 2 = 5. */
    const kb_node *port = node(t, "sip0.io0.io_ucie-P0");
    int64_t e = kb_topo_edge_between(t, find(t, "sip0.io0.io_ucie-P0"), find(t, "sip0.cube5.ucie-S"));
    assert_true(e >= 0);
    assert_int_equal(kb_topo_edge(t, (uint32_t)e)->kind, KB_EK_IO_TO_CUBE);
    assert_int_equal(port->io, 0);
    kb_topo_free(t);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_shipped_topology_loads_with_counts_from_its_parameters),
        cmocka_unit_test(test_default_parameters_are_the_spec_default_system),
        cmocka_unit_test(test_node_names_and_locations_follow_the_spec),
        cmocka_unit_test(test_find_rank_and_by_rank_are_consistent_with_id_order),
        cmocka_unit_test(test_node_kinds_and_implementations_match_the_file),
        cmocka_unit_test(test_edges_are_grouped_by_source_and_links_have_both_directions),
        cmocka_unit_test(test_hbm_edge_bandwidth_is_channels_times_channel_bw_times_efficiency),
        cmocka_unit_test(test_edge_bandwidths_and_lengths_come_from_the_links_section),
        cmocka_unit_test(test_summary_names_the_topology_and_its_counts),
        cmocka_unit_test(test_graph_form_chain_builds_a_line_of_nodes),
        cmocka_unit_test(test_load_string_takes_name_from_document_or_file_name),
        cmocka_unit_test(test_cube_mesh_override_changes_cubes_per_sip),
        cmocka_unit_test(test_several_overrides_apply_together),
        cmocka_unit_test(test_override_errors_name_the_override),
        cmocka_unit_test(test_override_paths_with_empty_segments_are_rejected),
        cmocka_unit_test(test_override_values_are_checked_for_meaning),
        cmocka_unit_test(test_malformed_files_are_rejected_with_position_path_and_reason),
        cmocka_unit_test(test_error_about_a_merged_map_points_into_the_overriding_file),
        cmocka_unit_test(test_colliding_node_names_are_rejected),
        cmocka_unit_test(test_disconnected_graph_is_rejected_naming_the_pair),
        cmocka_unit_test(test_minimal_system_file_with_a_corner_io_port_passes_connectivity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
