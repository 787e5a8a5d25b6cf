/* The hierarchical topology form: system / sip / cube -> nodes and edges,
 * named as docs/topology.md describes. */
#include "topo/build_internal.h"

#include "core/util.h"
#include "topo/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIPS 16     /* 4-bit sip_id */
#define MAX_CUBES 16    /* die_id 0..15 */
#define MAX_IO 5        /* die_id 16..20 */
#define MAX_PORTS 16

static const char *const pe_parts[] = {"pe_cpu", "pe_scheduler", "pe_dma", "pe_fetch_store",
                                       "pe_gemm", "pe_math", "pe_tcm", "pe_mmu", "pe_ipcq"};
#define NPE_PARTS (sizeof pe_parts / sizeof pe_parts[0])
enum { P_CPU, P_SCHED, P_DMA, P_FS, P_GEMM, P_MATH, P_TCM, P_MMU, P_IPCQ };

/* PE-internal edges and their link keys (<key>_mm, <key>_bw_gbs). */
static const struct pe_link {
    int src, dst;
    const char *key;
    double bw;
} pe_links[] = {
    {P_CPU, P_SCHED, "cpu_to_scheduler", 0},          {P_SCHED, P_CPU, "scheduler_to_cpu", 0},
    {P_SCHED, P_DMA, "scheduler_to_dma", 0},          {P_DMA, P_SCHED, "dma_to_scheduler", 0},
    {P_SCHED, P_FS, "scheduler_to_fetch_store", 0},   {P_FS, P_SCHED, "fetch_store_to_scheduler", 0},
    {P_SCHED, P_GEMM, "scheduler_to_gemm", 0},        {P_GEMM, P_SCHED, "gemm_to_scheduler", 0},
    {P_SCHED, P_MATH, "scheduler_to_math", 0},        {P_MATH, P_SCHED, "math_to_scheduler", 0},
    {P_DMA, P_FS, "dma_to_fetch_store", 0},           {P_FS, P_DMA, "fetch_store_to_dma", 0},
    {P_FS, P_GEMM, "fetch_store_to_gemm", 0},         {P_GEMM, P_FS, "gemm_to_fetch_store", 0},
    {P_FS, P_MATH, "fetch_store_to_math", 0},         {P_MATH, P_FS, "math_to_fetch_store", 0},
    {P_GEMM, P_MATH, "gemm_to_math", 0},
    {P_FS, P_TCM, "fetch_store_to_tcm", 512.0},       {P_TCM, P_FS, "tcm_to_fetch_store", 512.0},
    {P_DMA, P_MMU, "dma_to_mmu", 0},                  {P_MMU, P_DMA, "mmu_to_dma", 0},
    {P_CPU, P_IPCQ, "cpu_to_ipcq", 0},                {P_IPCQ, P_CPU, "ipcq_to_cpu", 0},
    {P_IPCQ, P_DMA, "ipcq_to_dma", 0},                {P_DMA, P_IPCQ, "dma_to_ipcq", 0},
};
#define NPE_LINKS (sizeof pe_links / sizeof pe_links[0])

typedef struct link { double bw, mm; } link;

/* Reads <prefix>_bw_gbs (> 0) and <prefix>_mm (>= 0). */
static link rd_link(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm)
{
    char key[96];
    snprintf(key, sizeof key, "%s_bw_gbs", prefix);
    link l;
    l.bw = kb_rd_number(b, map, key, bw, 0, true, INFINITY);
    snprintf(key, sizeof key, "%s_mm", prefix);
    l.mm = kb_rd_number(b, map, key, mm, 0, false, INFINITY);
    return l;
}

typedef struct cube_cfg {
    kb_cube_geom geom;
    kb_cube_layout lay;
    kb_comp_spec *router, *ucie, *ucie_conn, *m_cpu, *sram, *hbm_ctrl;
    kb_comp_spec *pe[NPE_PARTS];
    link mesh, pe_router, hbm, sram_link, mcpu, router_conn, conn_port;
    link pe_internal[NPE_LINKS];
    double ucie_routing_mm;
} cube_cfg;

typedef struct port_cfg {
    int cube_x, cube_y, side;
    char *phy;
    double bw, mm;
} port_cfg;

typedef struct io_cfg {
    char *id;
    kb_comp_spec *pcie_ep, *io_noc, *io_cpu, *io_ucie, *io_ucie_conn;
    int nconn;
    link ep_noc, noc_cpu, conn;
    port_cfg ports[MAX_PORTS];
    int nports;
} io_cfg;

static int side_of(const char *s)
{
    for (int i = 0; i < KB_SIDES; i++)
        if (strcmp(s, kb_side_names[i]) == 0)
            return i;
    return -1;
}

static void read_pos(kb_builder *b, kb_ynode *placement, const char *key, double *x, double *y)
{
    kb_ynode *m = kb_rd_map(b, placement, key);
    if (!m || m->absent || b->err)
        return;
    kb_ynode *pos = kb_rd_seq(b, m, "pos_mm");
    if (!pos || b->err)
        return;
    if (pos->n != 2) {
        b->err = kb_yerr(pos, "expected [x, y] in mm");
        return;
    }
    if (kb_yas_number(pos->items[0].val, x, &b->err))
        kb_yas_number(pos->items[1].val, y, &b->err);
    kb_cfg_note(b, m, "pos_mm", pos, NULL);
}

static void read_cube(kb_builder *b, kb_ynode *cube, cube_cfg *c, kb_topo_params *p)
{
    kb_cube_geom *g = &c->geom;
    kb_ynode *geo = kb_rd_map(b, cube, "geometry");
    kb_ynode *mm = kb_rd_map(b, geo, "cube_mm");
    g->w_mm = kb_rd_number(b, mm, "w", 15.0, 0, true, 1000);
    g->h_mm = kb_rd_number(b, mm, "h", 14.0, 0, true, 1000);
    g->corner_inset_mm = kb_rd_number(b, geo, "corner_inset_mm", 1.5, 0, false, 1000);
    g->pe_pitch_mm = kb_rd_number(b, geo, "pe_pitch_mm", 2.5, 0, true, 1000);
    g->max_spacing_mm = kb_rd_number(b, geo, "max_router_spacing_mm", 3.0, 0, true, 1000);
    g->hbm_row_offset_mm = kb_rd_number(b, geo, "hbm_row_offset_mm", 1.5, 0, false, 1000);
    g->hbm_gap_mm = kb_rd_number(b, geo, "hbm_gap_mm", 1.5, 0, false, 1000);

    kb_ynode *pl = kb_rd_map(b, cube, "pe_layout");
    kb_ynode *corners = kb_rd_seq(b, pl, "corners");
    if (corners && !b->err) {
        if (corners->n < 1 || corners->n > 4)
            b->err = kb_yerr(corners, "expected 1 to 4 corners out of NW, NE, SW, SE");
        g->ncorners = 0;
        for (size_t i = 0; i < corners->n && !b->err; i++) {
            const char *s;
            if (!kb_yas_string(corners->items[i].val, &s, &b->err))
                break;
            int k = -1;
            for (int j = 0; j < 4; j++)
                if (strcmp(s, kb_corner_names[j]) == 0)
                    k = j;
            for (int j = 0; j < g->ncorners && k >= 0; j++)
                if (g->corners[j] == k)
                    b->err = kb_yerr(corners->items[i].val, "corner %s is listed twice", s);
            if (k < 0)
                b->err = kb_yerr(corners->items[i].val, "unknown corner '%s' (NW, NE, SW, SE)", s);
            else
                g->corners[g->ncorners++] = k;
        }
    } else {
        g->ncorners = 4;
        for (int j = 0; j < 4; j++)
            g->corners[j] = j;
    }
    kb_cfg_note(b, pl, "corners", corners, corners ? NULL : "[NW, NE, SW, SE]");
    g->pe_per_corner = kb_rd_int(b, pl, "pe_per_corner", 2, 1, 16);
    g->n_connections = kb_rd_int(b, kb_rd_map(b, cube, "ucie"), "n_connections", 4, 1,
                                 KB_LAYOUT_MAX_CONN);
    kb_ynode *place = kb_rd_map(b, cube, "placement");
    g->mcpu_x = 1.5, g->mcpu_y = 5.5, g->sram_x = 1.5, g->sram_y = 8.5;
    read_pos(b, place, "m_cpu", &g->mcpu_x, &g->mcpu_y);
    read_pos(b, place, "sram", &g->sram_x, &g->sram_y);
    if (b->err)
        return;
    char msg[256];
    if (!kb_cube_layout_make(g, &c->lay, msg, sizeof msg)) {
        b->err = kb_yerr(geo ? geo : cube, "%s", msg);
        return;
    }
    p->pes_per_cube = c->lay.npe;
    p->cube_w_mm = g->w_mm;
    p->cube_h_mm = g->h_mm;

    kb_ynode *mem = kb_rd_map(b, cube, "memory_map");
    const char *mode = kb_rd_string(b, mem, "hbm_mapping_mode", "n_to_one");
    if (!b->err && strcmp(mode, "n_to_one") != 0)
        b->err = kb_yerr(kb_ymap_get(mem, "hbm_mapping_mode"),
                         strcmp(mode, "one_to_one") == 0
                             ? "one_to_one HBM mapping is not modelled (only n_to_one is; see docs/decisions.md)"
                             : "unknown HBM mapping mode '%s' (n_to_one)", mode);
    int pcs = kb_rd_int(b, mem, "hbm_pseudo_channels", 64, 1, 1 << 16);
    p->hbm_channels_per_pe = kb_rd_int(b, mem, "hbm_channels_per_pe", 8, 1, 1 << 16);
    p->hbm_channel_bw_gbs = kb_rd_number(b, mem, "hbm_channel_bw_gbs", 32.0, 0, true, INFINITY);
    int slices = kb_rd_int(b, mem, "hbm_slices_per_cube", 8, 1, 16);
    p->hbm_total_gb_per_cube = kb_rd_number(b, mem, "hbm_total_gb_per_cube", 48, 0, true, 128);
    if (!b->err && slices != c->lay.npe)
        b->err = kb_yerr(kb_ymap_get(mem, "hbm_slices_per_cube") ? kb_ymap_get(mem, "hbm_slices_per_cube") : cube,
                         "%d HBM slices per cube, but the cube has %d PEs (one slice and one "
                         "controller per PE)", slices, c->lay.npe);
    if (!b->err && pcs != p->hbm_channels_per_pe * slices)
        b->err = kb_yerr(kb_ymap_get(mem, "hbm_pseudo_channels") ? kb_ymap_get(mem, "hbm_pseudo_channels") : mem,
                         "%d pseudo-channels per cube, but hbm_channels_per_pe x hbm_slices_per_cube "
                         "= %d x %d = %d", pcs, p->hbm_channels_per_pe, slices,
                         p->hbm_channels_per_pe * slices);
    if (!b->err && (p->hbm_channels_per_pe & (p->hbm_channels_per_pe - 1)))
        b->err = kb_yerr(kb_ymap_get(mem, "hbm_channels_per_pe"),
                         "%d channels per PE: must be a power of two (the PC index is address bits)",
                         p->hbm_channels_per_pe);
    p->hbm_slice_bytes = (uint64_t)llround(p->hbm_total_gb_per_cube * (double)(1ull << 30)) /
                         (uint64_t)slices;

    kb_ynode *comps = kb_rd_map(b, cube, "components");
    c->router = kb_rd_component(b, comps, "router", "noc_router", "builtin.forwarding");
    c->ucie = kb_rd_component(b, comps, "ucie", "ucie", "builtin.ucie");
    c->ucie_conn = kb_rd_component(b, comps, "ucie_conn", "ucie_conn", "builtin.forwarding");
    c->m_cpu = kb_rd_component(b, comps, "m_cpu", "m_cpu", "builtin.m_cpu");
    c->sram = kb_rd_component(b, comps, "sram", "sram", "builtin.sram");
    c->hbm_ctrl = kb_rd_component(b, comps, "hbm_ctrl", "hbm_ctrl", "builtin.hbm_ctrl");

    kb_ynode *links = kb_rd_map(b, cube, "links");
    c->mesh.bw = kb_rd_number(b, links, "router_link_bw_gbs", 256.0, 0, true, INFINITY);
    c->pe_router = rd_link(b, links, "pe_to_router", 256.0, 0.0);
    c->hbm.mm = kb_rd_number(b, links, "router_to_hbm_mm", 0.0, 0, false, INFINITY);
    c->sram_link = rd_link(b, links, "sram_to_router", 128.0, 0.0);
    c->mcpu = rd_link(b, links, "mcpu_to_router", 256.0, 0.0);
    c->router_conn = rd_link(b, links, "router_to_ucie_conn", 128.0, 0.0);
    c->conn_port = rd_link(b, links, "ucie_conn_to_port", 128.0, 0.0);
    c->ucie_routing_mm = kb_rd_number(b, links, "ucie_routing_weight_mm", g->w_mm + g->h_mm, 0,
                                      false, INFINITY);
    /* Effective HBM bandwidth: channels x channel bandwidth x efficiency. */
    double eff = c->hbm_ctrl ? kb_spec_attr(c->hbm_ctrl, "efficiency") : 1.0;
    c->hbm.bw = p->hbm_channels_per_pe * p->hbm_channel_bw_gbs * eff;

    kb_ynode *tpl = kb_rd_map(b, cube, "pe_template");
    kb_ynode *pcomps = kb_rd_map(b, tpl, "components");
    for (size_t i = 0; i < NPE_PARTS; i++) {
        char impl[64];
        snprintf(impl, sizeof impl, "builtin.%s", pe_parts[i]);
        c->pe[i] = kb_rd_component(b, pcomps, pe_parts[i], pe_parts[i], impl);
    }
    kb_ynode *plinks = kb_rd_map(b, tpl, "links");
    for (size_t i = 0; i < NPE_LINKS; i++) {
        char key[96];
        snprintf(key, sizeof key, "%s_mm", pe_links[i].key);
        c->pe_internal[i].mm = kb_rd_number(b, plinks, key, 0.0, 0, false, INFINITY);
        snprintf(key, sizeof key, "%s_bw_gbs", pe_links[i].key);
        c->pe_internal[i].bw = kb_rd_number(b, plinks, key, pe_links[i].bw, 0, false, INFINITY);
    }
}

static void read_io(kb_builder *b, kb_ynode *n, int index, io_cfg *io, const kb_topo_params *p)
{
    if (!kb_yas_map(n, &b->err))
        return;
    char dflt[16];
    snprintf(dflt, sizeof dflt, "io%d", index);
    io->id = kb_xstrdup(kb_rd_string(b, n, "id", dflt));
    kb_ynode *comps = kb_rd_map(b, n, "components");
    io->pcie_ep = kb_rd_component(b, comps, "pcie_ep", "pcie_ep", "builtin.pcie_ep");
    io->io_noc = kb_rd_component(b, comps, "io_noc", "io_noc", "builtin.forwarding");
    io->io_cpu = kb_rd_component(b, comps, "io_cpu", "io_cpu", "builtin.io_cpu");
    io->io_ucie = kb_rd_component(b, comps, "io_ucie", "ucie", "builtin.ucie");
    io->io_ucie_conn = kb_rd_component(b, comps, "io_ucie_conn", "ucie_conn", "builtin.forwarding");
    io->nconn = kb_rd_int(b, kb_rd_map(b, n, "ucie"), "n_connections", 4, 1, KB_LAYOUT_MAX_CONN);
    kb_ynode *links = kb_rd_map(b, n, "links");
    io->ep_noc = rd_link(b, links, "pcie_ep_to_noc", 256.0, 0.0);
    io->noc_cpu = rd_link(b, links, "noc_to_io_cpu", 256.0, 0.0);
    io->conn = rd_link(b, links, "per_connection", 128.0, 0.0);
    kb_ynode *ports = kb_rd_seq(b, n, "cube_ports");
    if (b->err)
        return;
    if (!ports) {
        b->err = kb_yerr_key(n, "cube_ports", "missing: an IO chiplet needs at least one cube port");
        return;
    }
    if (ports->n > MAX_PORTS) {
        b->err = kb_yerr(ports, "at most %d cube ports per IO chiplet", MAX_PORTS);
        return;
    }
    for (size_t i = 0; i < ports->n && !b->err; i++) {
        kb_ynode *pm = ports->items[i].val;
        if (!kb_yas_map(pm, &b->err))
            return;
        port_cfg *pc = &io->ports[io->nports++];
        kb_ynode *xy = kb_rd_seq(b, pm, "cube");
        if (!b->err && !xy)
            b->err = kb_yerr_key(pm, "cube", "missing: the [x, y] of the cube this port attaches to");
        if (b->err)
            return;
        int64_t x = 0, y = 0;
        if (xy->n != 2)
            b->err = kb_yerr(xy, "expected [x, y]");
        else if (kb_yas_int(xy->items[0].val, &x, &b->err) && kb_yas_int(xy->items[1].val, &y, &b->err) &&
                 (x < 0 || y < 0 || x >= p->cube_w || y >= p->cube_h))
            b->err = kb_yerr(xy, "cube [%lld, %lld] is outside the %dx%d cube mesh", (long long)x,
                             (long long)y, p->cube_w, p->cube_h);
        pc->cube_x = (int)x;
        pc->cube_y = (int)y;
        kb_cfg_note(b, pm, "cube", xy, NULL);
        const char *side = kb_rd_string(b, pm, "cube_side", NULL);
        if (!b->err && !side)
            b->err = kb_yerr_key(pm, "cube_side", "missing: N, E, S or W");
        if (b->err)
            return;
        pc->side = side_of(side);
        if (pc->side < 0) {
            b->err = kb_yerr(kb_ymap_get(pm, "cube_side"), "unknown side '%s' (N, E, S, W)", side);
            return;
        }
        int nx = pc->cube_x + (pc->side == KB_SIDE_E) - (pc->side == KB_SIDE_W);
        int ny = pc->cube_y + (pc->side == KB_SIDE_S) - (pc->side == KB_SIDE_N);
        if (nx >= 0 && ny >= 0 && nx < p->cube_w && ny < p->cube_h) {
            b->err = kb_yerr(kb_ymap_get(pm, "cube_side"),
                             "side %s of cube [%d, %d] faces cube [%d, %d]; an IO port needs a free "
                             "shoreline side", side, pc->cube_x, pc->cube_y, nx, ny);
            return;
        }
        char dphy[32];
        snprintf(dphy, sizeof dphy, "P%zu", i);
        pc->phy = kb_xstrdup(kb_rd_string(b, pm, "phy", dphy));
        /* The PHY name becomes part of node ids: keep it one plain id segment. */
        if (!b->err && (!pc->phy[0] || strcspn(pc->phy, ". \t") != strlen(pc->phy)))
            b->err = kb_yerr(kb_ymap_get(pm, "phy"), "phy '%s': a PHY name must be non-empty "
                             "and contain no '.' or blanks (it becomes part of node ids)", pc->phy);
        pc->bw = kb_rd_number(b, pm, "bw_gbs", 512.0, 0, true, INFINITY);
        pc->mm = kb_rd_number(b, pm, "distance_mm", 2.0, 0, false, INFINITY);
        for (int j = 0; j + 1 < io->nports && !b->err; j++) {
            if (strcmp(io->ports[j].phy, pc->phy) == 0)
                b->err = kb_yerr(pm, "phy %s is used twice in IO chiplet %s", pc->phy, io->id);
            else if (io->ports[j].cube_x == pc->cube_x && io->ports[j].cube_y == pc->cube_y &&
                     io->ports[j].side == pc->side)
                b->err = kb_yerr(pm, "side %s of cube [%d, %d] already has an IO port", side,
                                 pc->cube_x, pc->cube_y);
        }
    }
}

static void read_sips(kb_builder *b, kb_ynode *system, kb_topo_params *p)
{
    kb_ynode *sips = kb_rd_map(b, system, "sips");
    if (!b->err && (!sips || sips->absent)) {
        b->err = kb_yerr_key(system, "sips", "missing: the SIP count and layout");
        return;
    }
    if (!b->err && !kb_ymap_get(sips, "count")) {
        b->err = kb_yerr_key(sips, "count", "missing: how many SIPs the tray holds");
        return;
    }
    p->sips = kb_rd_int(b, sips, "count", 1, 1, MAX_SIPS);
    const char *topo = kb_rd_string(b, sips, "topology", "ring_1d");
    kb_ynode *tn = kb_ymap_get(sips, "topology");
    kb_ynode *wn = kb_ymap_get(sips, "w"), *hn = kb_ymap_get(sips, "h");
    int w = kb_rd_int(b, sips, "w", 0, 1, MAX_SIPS);
    int h = kb_rd_int(b, sips, "h", 0, 1, MAX_SIPS);
    if (b->err)
        return;
    b->t->sip_topology = kb_xstrdup(topo);
    p->sip_topology = b->t->sip_topology;
    if (strcmp(topo, "ring_1d") == 0) {
        if (wn || hn)
            b->err = kb_yerr(wn ? wn : hn, "w/h give a SIP grid, which ring_1d does not use "
                                           "(use torus_2d or mesh_2d_no_wrap)");
        return;
    }
    if (strcmp(topo, "torus_2d") != 0 && strcmp(topo, "mesh_2d_no_wrap") != 0) {
        b->err = kb_yerr(tn, "unknown SIP topology '%s' (ring_1d, torus_2d, mesh_2d_no_wrap)", topo);
        return;
    }
    if (!wn != !hn) {
        b->err = kb_yerr(sips, "give both w and h, or neither");
        return;
    }
    if (wn) {
        if (w * h != p->sips) {
            b->err = kb_yerr(sips, "sip layout %dx%d != sips.count (%d)", w, h, p->sips);
            return;
        }
    } else {
        int side = (int)lround(sqrt((double)p->sips));
        if (side * side != p->sips) {
            b->err = kb_yerr(sips, "non-square sips.count (%d) requires explicit sips.w/h", p->sips);
            return;
        }
        w = h = side;
    }
    p->sip_grid_w = w;
    p->sip_grid_h = h;
}

static char *cube_prefix(int s, int c) { return kb_asprintf("sip%d.cube%d", s, c); }

typedef struct cube_nodes {
    uint32_t port[KB_SIDES];
} cube_nodes;

static void build_cube(kb_builder *b, const cube_cfg *c, int s, int ci, cube_nodes *out)
{
    const kb_cube_layout *L = &c->lay;
    char *pre = cube_prefix(s, ci);
    uint32_t router[KB_LAYOUT_MAX_LINES][KB_LAYOUT_MAX_LINES];
    for (int r = 0; r < L->rows; r++)
        for (int col = 0; col < L->cols; col++) {
            if (!L->present[r][col])
                continue;
            uint32_t id = kb_add_node(b, kb_asprintf("%s.r%dc%d", pre, r, col), c->router, s, ci, -1, -1);
            kb_node *n = &b->t->nodes[id];
            n->x_mm = L->col_x[col];
            n->y_mm = L->row_y[r];
            n->has_pos = true;
            router[r][col] = id;
        }
    /* XY mesh links between neighbouring routers (the HBM zone leaves a hole). */
    for (int r = 0; r < L->rows; r++)
        for (int col = 0; col < L->cols; col++) {
            if (!L->present[r][col])
                continue;
            if (col + 1 < L->cols && L->present[r][col + 1])
                kb_add_link(b, router[r][col], router[r][col + 1], KB_EK_ROUTER_MESH,
                            KB_EK_ROUTER_MESH, c->mesh.bw, L->col_x[col + 1] - L->col_x[col], -1);
            if (r + 1 < L->rows && L->present[r + 1][col])
                kb_add_link(b, router[r][col], router[r + 1][col], KB_EK_ROUTER_MESH,
                            KB_EK_ROUTER_MESH, c->mesh.bw, L->row_y[r + 1] - L->row_y[r], -1);
        }
    for (int p = 0; p < L->npe; p++) {
        uint32_t part[NPE_PARTS];
        for (size_t k = 0; k < NPE_PARTS; k++) {
            part[k] = kb_add_node(b, kb_asprintf("%s.pe%d.%s", pre, p, pe_parts[k]), c->pe[k], s, ci, p, -1);
            kb_node *n = &b->t->nodes[part[k]];
            n->x_mm = L->pe_x[p];
            n->y_mm = L->pe_y[p];
            n->has_pos = true;
        }
        for (size_t k = 0; k < NPE_LINKS; k++)
            kb_add_edge(b, part[pe_links[k].src], part[pe_links[k].dst], KB_EK_PE_INTERNAL,
                        c->pe_internal[k].bw, c->pe_internal[k].mm, -1);
        uint32_t rt = router[L->pe[p].row][L->pe[p].col];
        kb_add_link(b, part[P_DMA], rt, KB_EK_PE_TO_ROUTER, KB_EK_ROUTER_TO_PE, c->pe_router.bw,
                    c->pe_router.mm, -1);
        kb_add_link(b, rt, part[P_CPU], KB_EK_COMMAND, KB_EK_COMMAND, 0, 0, -1);
        uint32_t hbm = kb_add_node(b, kb_asprintf("%s.hbm_ctrl.pe%d", pre, p), c->hbm_ctrl, s, ci, p, -1);
        b->t->nodes[hbm].x_mm = L->pe_x[p];
        b->t->nodes[hbm].y_mm = L->pe_y[p];
        b->t->nodes[hbm].has_pos = true;
        kb_add_link(b, rt, hbm, KB_EK_ROUTER_TO_HBM, KB_EK_HBM_TO_ROUTER, c->hbm.bw, c->hbm.mm, -1);
    }
    uint32_t mcpu = kb_add_node(b, kb_asprintf("%s.m_cpu", pre), c->m_cpu, s, ci, -1, -1);
    b->t->nodes[mcpu].x_mm = c->geom.mcpu_x;
    b->t->nodes[mcpu].y_mm = c->geom.mcpu_y;
    b->t->nodes[mcpu].has_pos = true;
    kb_add_link(b, mcpu, router[L->m_cpu.row][L->m_cpu.col], KB_EK_COMMAND, KB_EK_COMMAND,
                c->mcpu.bw, c->mcpu.mm, -1);
    uint32_t sram = kb_add_node(b, kb_asprintf("%s.sram", pre), c->sram, s, ci, -1, -1);
    b->t->nodes[sram].x_mm = c->geom.sram_x;
    b->t->nodes[sram].y_mm = c->geom.sram_y;
    b->t->nodes[sram].has_pos = true;
    kb_add_link(b, router[L->sram.row][L->sram.col], sram, KB_EK_ROUTER_TO_SRAM, KB_EK_SRAM_TO_ROUTER,
                c->sram_link.bw, c->sram_link.mm, -1);
    for (int side = 0; side < KB_SIDES; side++) {
        uint32_t port = kb_add_node(b, kb_asprintf("%s.ucie-%s", pre, kb_side_names[side]), c->ucie,
                                    s, ci, -1, -1);
        out->port[side] = port;
        for (int k = 0; k < L->nconn; k++) {
            uint32_t conn = kb_add_node(b, kb_asprintf("%s.ucie-%s.conn%d", pre, kb_side_names[side], k),
                                        c->ucie_conn, s, ci, -1, -1);
            kb_rc rc = L->ucie[side][k];
            kb_add_link(b, router[rc.row][rc.col], conn, KB_EK_ROUTER_TO_UCIE_CONN,
                        KB_EK_UCIE_CONN_TO_ROUTER, c->router_conn.bw, c->router_conn.mm, -1);
            kb_add_link(b, conn, port, KB_EK_UCIE_INTERNAL, KB_EK_UCIE_INTERNAL, c->conn_port.bw,
                        c->conn_port.mm, c->conn_port.mm + c->ucie_routing_mm);
        }
    }
    free(pre);
}

void kb_build_system(kb_builder *b, kb_ynode *root)
{
    kb_topo_params *p = &b->t->p;
    kb_ynode *system = kb_rd_map(b, root, "system");
    if (!b->err && !system) {
        b->err = kb_yerr_key(root, "system", "missing: the system section (SIP count and layout)");
        return;
    }
    p->ns_per_mm = kb_rd_number(b, system, "ns_per_mm", 0.01, 0, false, 1000);
    p->flit_bytes = kb_rd_int(b, system, "flit_bytes", 256, 1, 1 << 20);
    p->host_max_outstanding = kb_rd_int(b, kb_rd_map(b, system, "host"), "max_outstanding", 16, 1, 1 << 20);
    read_sips(b, system, p);
    kb_comp_spec *sw = kb_rd_component(b, system, "switch", "switch", "builtin.switch");
    kb_ynode *slinks = kb_rd_map(b, system, "links");
    link pcie = rd_link(b, slinks, "io_ep_to_switch", 64.0, 100.0);

    kb_ynode *sip = kb_rd_map(b, root, "sip");
    kb_ynode *mesh = kb_rd_map(b, sip, "cube_mesh");
    p->cube_w = kb_rd_int(b, mesh, "w", 4, 1, MAX_CUBES);
    p->cube_h = kb_rd_int(b, mesh, "h", 4, 1, MAX_CUBES);
    p->cubes_per_sip = p->cube_w * p->cube_h;
    if (!b->err && p->cubes_per_sip > MAX_CUBES)
        b->err = kb_yerr(mesh, "%dx%d = %d cubes per SIP; the address map has room for %d (die_id 0..15)",
                         p->cube_w, p->cube_h, p->cubes_per_sip, MAX_CUBES);
    link seam = rd_link(b, kb_rd_map(b, sip, "links"), "ucie_seam", 512.0, 1.0);

    cube_cfg *c = kb_xcalloc(1, sizeof *c);
    read_cube(b, kb_rd_map(b, root, "cube"), c, p);

    kb_ynode *ios = kb_rd_seq(b, sip, "io_chiplets");
    if (!b->err && (!ios || ios->n == 0))
        b->err = ios ? kb_yerr(ios, "a SIP needs at least one IO chiplet")
                     : kb_yerr_key(sip ? sip : root, "io_chiplets", "missing: a SIP needs at least one IO chiplet");
    if (!b->err && ios->n > MAX_IO)
        b->err = kb_yerr(ios, "%zu IO chiplets; the address map has room for %d (die_id 16..20)", ios->n, MAX_IO);
    io_cfg io[MAX_IO];
    memset(io, 0, sizeof io);
    int nio = 0;
    for (size_t i = 0; !b->err && i < ios->n; i++) {
        read_io(b, ios->items[i].val, (int)i, &io[nio], p);
        nio++;
        for (int j = 0; j + 1 < nio && !b->err; j++)
            if (strcmp(io[j].id, io[nio - 1].id) == 0)
                b->err = kb_yerr(ios->items[i].val, "IO chiplet id '%s' is used twice", io[j].id);
        for (int k = 0; k < io[nio - 1].nports && !b->err; k++)
            for (int j = 0; j + 1 < nio && !b->err; j++)
                for (int q = 0; q < io[j].nports; q++)
                    if (io[j].ports[q].cube_x == io[nio - 1].ports[k].cube_x &&
                        io[j].ports[q].cube_y == io[nio - 1].ports[k].cube_y &&
                        io[j].ports[q].side == io[nio - 1].ports[k].side)
                        b->err = kb_yerr(ios->items[i].val,
                                         "side %s of cube [%d, %d] is already used by IO chiplet %s",
                                         kb_side_names[io[j].ports[q].side], io[j].ports[q].cube_x,
                                         io[j].ports[q].cube_y, io[j].id);
    }
    p->io_per_sip = nio;

    if (!b->err) {
        uint32_t swn = kb_add_node(b, kb_xstrdup("fabric.switch0"), sw, -1, -1, -1, -1);
        cube_nodes *cubes = kb_xcalloc((size_t)p->cubes_per_sip, sizeof *cubes);
        for (int s = 0; s < p->sips; s++) {
            uint32_t pcie_ep[MAX_IO], io_port[MAX_IO][MAX_PORTS];
            for (int i = 0; i < nio; i++) {
                const io_cfg *o = &io[i];
                pcie_ep[i] = kb_add_node(b, kb_asprintf("sip%d.%s.pcie_ep", s, o->id), o->pcie_ep, s, -1, -1, i);
                uint32_t noc = kb_add_node(b, kb_asprintf("sip%d.%s.io_noc", s, o->id), o->io_noc, s, -1, -1, i);
                uint32_t cpu = kb_add_node(b, kb_asprintf("sip%d.%s.io_cpu", s, o->id), o->io_cpu, s, -1, -1, i);
                kb_add_link(b, pcie_ep[i], noc, KB_EK_IO_INTERNAL, KB_EK_IO_INTERNAL, o->ep_noc.bw, o->ep_noc.mm, -1);
                kb_add_link(b, noc, cpu, KB_EK_IO_INTERNAL, KB_EK_IO_INTERNAL, o->noc_cpu.bw, o->noc_cpu.mm, -1);
                for (int k = 0; k < o->nports; k++) {
                    uint32_t port = kb_add_node(b, kb_asprintf("sip%d.%s.io_ucie-%s", s, o->id, o->ports[k].phy),
                                                o->io_ucie, s, -1, -1, i);
                    io_port[i][k] = port;
                    for (int q = 0; q < o->nconn; q++) {
                        uint32_t conn = kb_add_node(b, kb_asprintf("sip%d.%s.io_ucie-%s.conn%d", s, o->id, o->ports[k].phy, q),
                                                    o->io_ucie_conn, s, -1, -1, i);
                        kb_add_link(b, noc, conn, KB_EK_NOC_TO_UCIE_CONN, KB_EK_UCIE_CONN_TO_NOC, o->conn.bw, o->conn.mm, -1);
                        kb_add_link(b, conn, port, KB_EK_UCIE_INTERNAL, KB_EK_UCIE_INTERNAL, o->conn.bw, o->conn.mm,
                                    o->conn.mm + c->ucie_routing_mm);
                    }
                }
                kb_add_link(b, swn, pcie_ep[i], KB_EK_PCIE, KB_EK_PCIE, pcie.bw, pcie.mm, -1);
            }
            for (int ci = 0; ci < p->cubes_per_sip; ci++)
                build_cube(b, c, s, ci, &cubes[ci]);
            /* Inter-cube UCIe seams: E<->W and S<->N (cube = row * w + col). */
            for (int y = 0; y < p->cube_h; y++)
                for (int x = 0; x < p->cube_w; x++) {
                    int ci = y * p->cube_w + x;
                    if (x + 1 < p->cube_w)
                        kb_add_link(b, cubes[ci].port[KB_SIDE_E], cubes[ci + 1].port[KB_SIDE_W],
                                    KB_EK_UCIE_MESH, KB_EK_UCIE_MESH, seam.bw, seam.mm, -1);
                    if (y + 1 < p->cube_h)
                        kb_add_link(b, cubes[ci].port[KB_SIDE_S], cubes[ci + p->cube_w].port[KB_SIDE_N],
                                    KB_EK_UCIE_MESH, KB_EK_UCIE_MESH, seam.bw, seam.mm, -1);
                }
            for (int i = 0; i < nio; i++)
                for (int k = 0; k < io[i].nports; k++) {
                    const port_cfg *pc = &io[i].ports[k];
                    int ci = pc->cube_y * p->cube_w + pc->cube_x;
                    kb_add_link(b, io_port[i][k], cubes[ci].port[pc->side], KB_EK_IO_TO_CUBE,
                                KB_EK_CUBE_TO_IO, pc->bw, pc->mm, -1);
                }
        }
        free(cubes);
    }
    for (int i = 0; i < MAX_IO; i++) {
        free(io[i].id);
        for (int k = 0; k < io[i].nports; k++)
            free(io[i].ports[k].phy);
    }
    free(c);
}
