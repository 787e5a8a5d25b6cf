/* Reading the hierarchical topology form (system / sip / cube): the SIP
 * count and layout, one cube's geometry, memory map, components and links,
 * and the IO chiplets with their cube ports, checked as they are read.
 * build_system.c turns what these return (system_cfg.h) into nodes and
 * edges. */
#include "topo/system_cfg.h"

#include "core/util.h"
#include "mem/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const kb_pe_parts[] = {"pe_cpu", "pe_scheduler", "pe_dma", "pe_fetch_store",
                                   "pe_gemm", "pe_math", "pe_tcm", "pe_mmu", "pe_ipcq"};

const kb_pe_link kb_pe_links[] = {
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
_Static_assert(sizeof kb_pe_parts / sizeof kb_pe_parts[0] == NPE_PARTS, "NPE_PARTS");
_Static_assert(sizeof kb_pe_links / sizeof kb_pe_links[0] == NPE_LINKS, "NPE_LINKS");

/* Reads <prefix>_bw_gbs (> 0, or >= 0 when zero_bw: no serialisation) and
 * <prefix>_mm (>= 0). */
static kb_link_cfg read_link(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm, bool zero_bw)
{
    char key[96];
    snprintf(key, sizeof key, "%s_bw_gbs", prefix);
    kb_link_cfg l;
    l.bw = kb_rd_bw(b, map, key, bw, zero_bw);
    snprintf(key, sizeof key, "%s_mm", prefix);
    l.mm = kb_rd_mm(b, map, key, mm);
    return l;
}

kb_link_cfg kb_rd_link(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm)
{
    return read_link(b, map, prefix, bw, mm, false);
}

/* A link the original left unpaced may have bandwidth 0 (no serialisation):
 * a UCIe connection <-> port bridge, the switch <-> PCIe endpoint link
 * (docs/fidelity.md). */
kb_link_cfg kb_rd_link_unpaced_ok(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm)
{
    return read_link(b, map, prefix, bw, mm, true);
}

static kb_link_cfg read_conn_port(kb_builder *b, kb_ynode *map, const char *prefix, kb_link_cfg dflt)
{
    return kb_rd_link_unpaced_ok(b, map, prefix, dflt.bw, dflt.mm);
}

/* A component a section may configure: its key, the node kind it serves,
 * its default implementation, and where the spec read goes. */
typedef struct comp_slot {
    const char *key, *kind, *impl;
    kb_comp_spec **spec;
} comp_slot;

static void read_components(kb_builder *b, kb_ynode *comps, const comp_slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *slots[i].spec = kb_rd_component(b, comps, slots[i].key, slots[i].kind, slots[i].impl);
}

static int side_of(const char *s)
{
    for (int i = 0; i < KB_SIDES; i++)
        if (strcmp(s, kb_side_names[i]) == 0)
            return i;
    return -1;
}

/* placement.<key>.pos_mm: a point inside the w x h mm cube. */
static void read_pos(kb_builder *b, kb_ynode *placement, const char *key, double w, double h, double *x, double *y)
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
    if (!b->err && (*x < 0 || *x > w || *y < 0 || *y > h))
        b->err = kb_yerr(pos, "[%g, %g] is outside the %g x %g mm cube (x 0 .. %g, y 0 .. %g)", *x, *y, w, h,
                         w, h);
}

/* The bandwidths HBM figures derive: the router <-> controller edge
 * (channels x channel bandwidth x efficiency) is a link like any other, and
 * one channel must take at least 1 ps per burst. */
static void check_hbm_bw(kb_builder *b, kb_ynode *mem, const kb_cube_cfg *c, const kb_topo_params *p, double eff)
{
    if (b->err)
        return;
    kb_ynode *at = kb_ymap_get(mem, "hbm_channel_bw_gbs");
    if (!at)
        at = mem;
    double burst = c->hbm_ctrl && kb_impl_attr_index(c->hbm_ctrl->impl, "burst_bytes") >= 0
                       ? kb_spec_attr(c->hbm_ctrl, "burst_bytes")
                       : 0;
    if (c->hbm.bw > kb_max_bw_gbs(b))
        b->err = kb_yerr(at, "%g GB/s per channel gives the router <-> hbm_ctrl link hbm_channels_per_pe x "
                             "hbm_channel_bw_gbs x efficiency = %d x %g x %g = %g GB/s, above the %.15g GB/s "
                             "a %d-byte flit allows (at least 1 ps per flit)",
                         p->hbm_channel_bw_gbs, p->hbm_channels_per_pe, p->hbm_channel_bw_gbs, eff, c->hbm.bw,
                         kb_max_bw_gbs(b), p->flit_bytes);
    else if (c->hbm.bw < KB_TOPO_MIN_BW_GBS)
        b->err = kb_yerr(at, "the router <-> hbm_ctrl link gets %g GB/s (%d x %g x efficiency %g); at least "
                             "%g GB/s is allowed", c->hbm.bw, p->hbm_channels_per_pe, p->hbm_channel_bw_gbs, eff,
                         KB_TOPO_MIN_BW_GBS);
    else if (burst > 0 && p->hbm_channel_bw_gbs * eff > burst * 1000.0)
        b->err = kb_yerr(at, "%g GB/s x efficiency %g commits a %g-byte burst in less than 1 ps; at most "
                             "burst_bytes x 1000 / efficiency = %.15g GB/s is allowed",
                         p->hbm_channel_bw_gbs, eff, burst, burst * 1000.0 / eff);
}

/* PE_TCM: the scheduler's reserved region must leave room to allocate. */
static void check_tcm(kb_builder *b, kb_ynode *pcomps, const kb_comp_spec *tcm)
{
    if (b->err || !tcm || kb_impl_attr_index(tcm->impl, "size_mb") < 0 ||
        kb_impl_attr_index(tcm->impl, "scheduler_reserved_kb") < 0)
        return;
    double size_kb = kb_spec_attr(tcm, "size_mb") * 1024.0, res = kb_spec_attr(tcm, "scheduler_reserved_kb");
    kb_ynode *blk = kb_ymap_get(pcomps, "pe_tcm");
    kb_ynode *attrs = blk ? kb_ymap_get(blk, "attrs") : NULL;
    kb_ynode *at = attrs ? kb_ymap_get(attrs, "scheduler_reserved_kb") : NULL;
    /* The allocatable TCM starts where the reserved region ends, on the
     * TCM allocator's granule (src/mem/alloc.h). */
    const uint64_t granule = ((kb_tcm_params)KB_TCM_PARAMS_DEFAULT).align;
    double res_bytes = res * 1024.0;
    if (at && fmod(res_bytes, (double)granule) != 0) {
        b->err = kb_yerr(at, "%.15g KiB is %.15g bytes, not a multiple of %llu: the allocatable TCM after the "
                             "reserved region starts on a %llu-byte granule", res, res_bytes,
                         (unsigned long long)granule, (unsigned long long)granule);
        return;
    }
    if (res < size_kb)
        return;
    if (!at)
        at = attrs ? kb_ymap_get(attrs, "size_mb") : NULL;
    b->err = kb_yerr(at ? at : pcomps, "scheduler_reserved_kb %g KiB leaves nothing of the %g KiB TCM (size_mb "
                                       "%g) to allocate; it must be below size_mb x 1024", res, size_kb,
                     size_kb / 1024.0);
}

void kb_rd_cube(kb_builder *b, kb_ynode *cube, kb_cube_cfg *c, kb_topo_params *p)
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
    read_pos(b, place, "m_cpu", g->w_mm, g->h_mm, &g->mcpu_x, &g->mcpu_y);
    read_pos(b, place, "sram", g->w_mm, g->h_mm, &g->sram_x, &g->sram_y);
    if (b->err)
        return;
    char msg[256];
    if (!kb_cube_layout_make(g, &c->lay, msg, sizeof msg)) {
        kb_ynode *at = c->lay.bad_key ? kb_ymap_get(geo, c->lay.bad_key) : NULL;
        b->err = kb_yerr(at ? at : geo ? geo : cube, "%s", msg);
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
    /* Each controller keeps state per channel: bounded like real stacks
     * (an HBM3 stack has 32 pseudo-channels). */
    int pcs = kb_rd_int(b, mem, "hbm_pseudo_channels", 64, 1, 16 * 256);
    p->hbm_channels_per_pe = kb_rd_int(b, mem, "hbm_channels_per_pe", 8, 1, 256);
    p->hbm_channel_bw_gbs = kb_rd_bw(b, mem, "hbm_channel_bw_gbs", 32.0, false);
    int slices = kb_rd_int(b, mem, "hbm_slices_per_cube", 8, 1, 16);
    p->hbm_total_gb_per_cube = kb_rd_number(b, mem, "hbm_total_gb_per_cube", 48, 0, true, 128);
    if (!b->err && kb_ymap_get(mem, "hbm_total_gb_per_cube"))
        kb_size_check(b, kb_ymap_get(mem, "hbm_total_gb_per_cube"), p->hbm_total_gb_per_cube, "GiB");
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
    if (!b->err && p->hbm_slice_bytes < (uint64_t)p->flit_bytes)
        b->err = kb_yerr(kb_ymap_get(mem, "hbm_total_gb_per_cube"),
                         "%g GiB over %d slices leaves %llu bytes per slice; each slice needs at least "
                         "one flit (%d bytes; so at least %.9g GiB here, at most 128: the HBM window of "
                         "the physical address)", p->hbm_total_gb_per_cube, slices,
                         (unsigned long long)p->hbm_slice_bytes, p->flit_bytes,
                         (double)slices * p->flit_bytes / (double)(1u << 30));

    const comp_slot comps[] = {
        {"router", "noc_router", "builtin.forwarding", &c->router},
        {"ucie", "ucie", "builtin.ucie", &c->ucie},
        {"ucie_conn", "ucie_conn", "builtin.forwarding", &c->ucie_conn},
        {"m_cpu", "m_cpu", "builtin.m_cpu", &c->m_cpu},
        {"sram", "sram", "builtin.sram", &c->sram},
        {"hbm_ctrl", "hbm_ctrl", "builtin.hbm_ctrl", &c->hbm_ctrl},
    };
    read_components(b, kb_rd_map(b, cube, "components"), comps, sizeof comps / sizeof comps[0]);

    kb_ynode *links = kb_rd_map(b, cube, "links");
    c->mesh.bw = kb_rd_bw(b, links, "router_link_bw_gbs", 256.0, false);
    c->pe_router = kb_rd_link(b, links, "pe_to_router", 256.0, 0.0);
    c->hbm.mm = kb_rd_mm(b, links, "router_to_hbm_mm", 0.0);
    c->sram_link = kb_rd_link(b, links, "sram_to_router", 128.0, 0.0);
    c->mcpu = kb_rd_link(b, links, "mcpu_to_router", 256.0, 0.0);
    c->router_conn = kb_rd_link(b, links, "router_to_ucie_conn", 128.0, 0.0);
    c->conn_port = read_conn_port(b, links, "ucie_conn_to_port", (kb_link_cfg){.bw = 128.0, .mm = 0.0});
    c->ucie_routing_mm = kb_rd_mm(b, links, "ucie_routing_weight_mm", g->w_mm + g->h_mm);
    /* Effective HBM bandwidth: channels x channel bandwidth x efficiency. */
    bool builtin_hbm = c->hbm_ctrl && kb_impl_attr_index(c->hbm_ctrl->impl, "efficiency") >= 0;
    double eff = builtin_hbm ? kb_spec_attr(c->hbm_ctrl, "efficiency") : 1.0;
    c->hbm.bw = p->hbm_channels_per_pe * p->hbm_channel_bw_gbs * eff;
    check_hbm_bw(b, mem, c, p, eff);

    kb_ynode *tpl = kb_rd_map(b, cube, "pe_template");
    kb_ynode *pcomps = kb_rd_map(b, tpl, "components");
    for (size_t i = 0; i < NPE_PARTS; i++) {
        char impl[64];
        snprintf(impl, sizeof impl, "builtin.%s", kb_pe_parts[i]);
        c->pe[i] = kb_rd_component(b, pcomps, kb_pe_parts[i], kb_pe_parts[i], impl);
    }
    kb_ynode *plinks = kb_rd_map(b, tpl, "links");
    for (size_t i = 0; i < NPE_LINKS; i++)
        c->pe_internal[i] = read_link(b, plinks, kb_pe_links[i].key, kb_pe_links[i].bw, 0.0, true);
    check_tcm(b, pcomps, c->pe[P_TCM]);
}

void kb_rd_io(kb_builder *b, kb_ynode *n, int index, kb_io_cfg *io, const kb_topo_params *p)
{
    if (!kb_yas_map(n, &b->err))
        return;
    char dflt[16];
    snprintf(dflt, sizeof dflt, "io%d", index);
    io->id = kb_xstrdup(kb_rd_id(b, n, "id", dflt, "IO chiplet id", false));
    const comp_slot comps[] = {
        {"pcie_ep", "pcie_ep", "builtin.pcie_ep", &io->pcie_ep},
        {"io_noc", "io_noc", "builtin.forwarding", &io->io_noc},
        {"io_cpu", "io_cpu", "builtin.io_cpu", &io->io_cpu},
        {"io_ucie", "ucie", "builtin.ucie", &io->io_ucie},
        {"io_ucie_conn", "ucie_conn", "builtin.forwarding", &io->io_ucie_conn},
    };
    read_components(b, kb_rd_map(b, n, "components"), comps, sizeof comps / sizeof comps[0]);
    io->nconn = kb_rd_int(b, kb_rd_map(b, n, "ucie"), "n_connections", 4, 1, KB_LAYOUT_MAX_CONN);
    kb_ynode *links = kb_rd_map(b, n, "links");
    io->ep_noc = kb_rd_link(b, links, "pcie_ep_to_noc", 256.0, 0.0);
    io->noc_cpu = kb_rd_link(b, links, "noc_to_io_cpu", 256.0, 0.0);
    io->conn = kb_rd_link(b, links, "per_connection", 128.0, 0.0);
    io->conn_port = read_conn_port(b, links, "conn_to_port", io->conn);
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
        kb_port_cfg *pc = &io->ports[io->nports++];
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
        /* The PHY name becomes part of node ids: one id segment. */
        pc->phy = kb_xstrdup(kb_rd_id(b, pm, "phy", dphy, "phy", false));
        pc->bw = kb_rd_bw(b, pm, "bw_gbs", 512.0, false);
        pc->mm = kb_rd_mm(b, pm, "distance_mm", 2.0);
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

void kb_rd_sips(kb_builder *b, kb_ynode *system, kb_topo_params *p)
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
