/* The hierarchical topology form: system / sip / cube -> nodes and edges,
 * named as docs/topology.md describes. The file is read by read_system.c;
 * this builds the switch, the IO chiplets, the cubes and the links between
 * them. */
#include "topo/system_cfg.h"

#include "core/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A node id from fmt's text with %s and %d (nothing else) filled in:
 * printf's machinery was a sixth of loading a 6-SIP tray (13 000 ids).
 * An id longer than the buffer (IO chiplet ids and phys are the user's)
 * goes through printf. */
static char *id_of(const char *fmt, ...)
{
    char buf[256];
    size_t n = 0;
    bool fits = true;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    for (const char *f = fmt; *f && fits; f++) {
        char num[16], one[2] = {*f, 0};
        const char *piece = NULL;
        if (f[0] == '%' && f[1] == 's') {
            piece = va_arg(ap, const char *);
        } else if (f[0] == '%' && f[1] == 'd') {
            int v = va_arg(ap, int);
            unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
            char *q = num + sizeof num;
            *--q = 0;
            do
                *--q = (char)('0' + u % 10);
            while (u /= 10);
            if (v < 0)
                *--q = '-';
            piece = q;
        }
        if (piece)
            f++;
        else
            piece = one;
        for (; *piece && fits; piece++) {
            fits = n + 1 < sizeof buf;
            buf[n++] = *piece;
        }
    }
    va_end(ap);
    char *id = fits ? (buf[n] = 0, kb_xstrdup(buf)) : kb_vasprintf(fmt, again);
    va_end(again);
    return id;
}

static char *cube_prefix(int s, int c) { return id_of("sip%d.cube%d", s, c); }

typedef struct cube_nodes {
    uint32_t port[KB_SIDES];
} cube_nodes;

static void build_cube(kb_builder *b, const kb_cube_cfg *c, int s, int ci, cube_nodes *out)
{
    const kb_cube_layout *L = &c->lay;
    char *pre = cube_prefix(s, ci);
    uint32_t router[KB_LAYOUT_MAX_LINES][KB_LAYOUT_MAX_LINES];
    for (int r = 0; r < L->rows; r++)
        for (int col = 0; col < L->cols; col++) {
            if (!L->present[r][col])
                continue;
            uint32_t id = kb_add_node(b, id_of("%s.r%dc%d", pre, r, col), c->router, s, ci, -1, -1);
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
            part[k] = kb_add_node(b, id_of("%s.pe%d.%s", pre, p, kb_pe_parts[k]), c->pe[k], s, ci, p, -1);
            kb_node *n = &b->t->nodes[part[k]];
            n->x_mm = L->pe_x[p];
            n->y_mm = L->pe_y[p];
            n->has_pos = true;
        }
        for (size_t k = 0; k < NPE_LINKS; k++)
            kb_add_edge(b, part[kb_pe_links[k].src], part[kb_pe_links[k].dst], KB_EK_PE_INTERNAL,
                        c->pe_internal[k].bw, c->pe_internal[k].mm, -1);
        uint32_t rt = router[L->pe[p].row][L->pe[p].col];
        kb_add_link(b, part[P_DMA], rt, KB_EK_PE_TO_ROUTER, KB_EK_ROUTER_TO_PE, c->pe_router.bw,
                    c->pe_router.mm, -1);
        kb_add_link(b, rt, part[P_CPU], KB_EK_COMMAND, KB_EK_COMMAND, 0, 0, -1);
        uint32_t hbm = kb_add_node(b, id_of("%s.hbm_ctrl.pe%d", pre, p), c->hbm_ctrl, s, ci, p, -1);
        b->t->nodes[hbm].x_mm = L->pe_x[p];
        b->t->nodes[hbm].y_mm = L->pe_y[p];
        b->t->nodes[hbm].has_pos = true;
        kb_add_link(b, rt, hbm, KB_EK_ROUTER_TO_HBM, KB_EK_HBM_TO_ROUTER, c->hbm.bw, c->hbm.mm, -1);
    }
    uint32_t mcpu = kb_add_node(b, id_of("%s.m_cpu", pre), c->m_cpu, s, ci, -1, -1);
    b->t->nodes[mcpu].x_mm = c->geom.mcpu_x;
    b->t->nodes[mcpu].y_mm = c->geom.mcpu_y;
    b->t->nodes[mcpu].has_pos = true;
    kb_add_link(b, mcpu, router[L->m_cpu.row][L->m_cpu.col], KB_EK_COMMAND, KB_EK_COMMAND,
                c->mcpu.bw, c->mcpu.mm, -1);
    uint32_t sram = kb_add_node(b, id_of("%s.sram", pre), c->sram, s, ci, -1, -1);
    b->t->nodes[sram].x_mm = c->geom.sram_x;
    b->t->nodes[sram].y_mm = c->geom.sram_y;
    b->t->nodes[sram].has_pos = true;
    kb_add_link(b, router[L->sram.row][L->sram.col], sram, KB_EK_ROUTER_TO_SRAM, KB_EK_SRAM_TO_ROUTER,
                c->sram_link.bw, c->sram_link.mm, -1);
    for (int side = 0; side < KB_SIDES; side++) {
        uint32_t port = kb_add_node(b, id_of("%s.ucie-%s", pre, kb_side_names[side]), c->ucie,
                                    s, ci, -1, -1);
        out->port[side] = port;
        for (int k = 0; k < L->nconn; k++) {
            uint32_t conn = kb_add_node(b, id_of("%s.ucie-%s.conn%d", pre, kb_side_names[side], k),
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

/* IO chiplet i of SIP s: its PCIe endpoint (linked to the switch swn),
 * NoC, IO_CPU and cube ports with their connections (port[k] for port k,
 * linked to its cube by the caller). */
static void build_io(kb_builder *b, const kb_io_cfg *o, int s, int i, uint32_t swn, const kb_link_cfg *pcie,
                     double ucie_routing_mm, uint32_t *port)
{
    uint32_t ep = kb_add_node(b, id_of("sip%d.%s.pcie_ep", s, o->id), o->pcie_ep, s, -1, -1, i);
    uint32_t noc = kb_add_node(b, id_of("sip%d.%s.io_noc", s, o->id), o->io_noc, s, -1, -1, i);
    uint32_t cpu = kb_add_node(b, id_of("sip%d.%s.io_cpu", s, o->id), o->io_cpu, s, -1, -1, i);
    kb_add_link(b, ep, noc, KB_EK_IO_INTERNAL, KB_EK_IO_INTERNAL, o->ep_noc.bw, o->ep_noc.mm, -1);
    kb_add_link(b, noc, cpu, KB_EK_IO_INTERNAL, KB_EK_IO_INTERNAL, o->noc_cpu.bw, o->noc_cpu.mm, -1);
    for (int k = 0; k < o->nports; k++) {
        const char *phy = o->ports[k].phy;
        port[k] = kb_add_node(b, id_of("sip%d.%s.io_ucie-%s", s, o->id, phy), o->io_ucie, s, -1, -1, i);
        for (int q = 0; q < o->nconn; q++) {
            uint32_t conn = kb_add_node(b, id_of("sip%d.%s.io_ucie-%s.conn%d", s, o->id, phy, q),
                                        o->io_ucie_conn, s, -1, -1, i);
            kb_add_link(b, noc, conn, KB_EK_NOC_TO_UCIE_CONN, KB_EK_UCIE_CONN_TO_NOC, o->conn.bw, o->conn.mm, -1);
            kb_add_link(b, conn, port[k], KB_EK_UCIE_INTERNAL, KB_EK_UCIE_INTERNAL, o->conn_port.bw,
                        o->conn_port.mm, o->conn_port.mm + ucie_routing_mm);
        }
    }
    kb_add_link(b, swn, ep, KB_EK_PCIE, KB_EK_PCIE, pcie->bw, pcie->mm, -1);
}

/* The UCIe seams between neighbouring cubes of a SIP: E<->W and S<->N
 * (cube = row * w + col). */
static void link_cube_mesh(kb_builder *b, const kb_topo_params *p, const cube_nodes *cubes, const kb_link_cfg *seam)
{
    for (int y = 0; y < p->cube_h; y++)
        for (int x = 0; x < p->cube_w; x++) {
            int ci = y * p->cube_w + x;
            if (x + 1 < p->cube_w)
                kb_add_link(b, cubes[ci].port[KB_SIDE_E], cubes[ci + 1].port[KB_SIDE_W], KB_EK_UCIE_MESH,
                            KB_EK_UCIE_MESH, seam->bw, seam->mm, -1);
            if (y + 1 < p->cube_h)
                kb_add_link(b, cubes[ci].port[KB_SIDE_S], cubes[ci + p->cube_w].port[KB_SIDE_N], KB_EK_UCIE_MESH,
                            KB_EK_UCIE_MESH, seam->bw, seam->mm, -1);
        }
}

/* Port k of an IO chiplet (node port[k]) to the side of the cube it faces. */
static void link_io_ports(kb_builder *b, const kb_topo_params *p, const kb_io_cfg *o, const uint32_t *port,
                          const cube_nodes *cubes)
{
    for (int k = 0; k < o->nports; k++) {
        const kb_port_cfg *pc = &o->ports[k];
        int ci = pc->cube_y * p->cube_w + pc->cube_x;
        kb_add_link(b, port[k], cubes[ci].port[pc->side], KB_EK_IO_TO_CUBE, KB_EK_CUBE_TO_IO, pc->bw, pc->mm, -1);
    }
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
    p->flit_bytes = kb_rd_flit(b, system);
    p->host_max_outstanding = kb_rd_int(b, kb_rd_map(b, system, "host"), "max_outstanding", 16, 1, 1 << 16);
    kb_rd_sips(b, system, p);
    kb_comp_spec *sw = kb_rd_component(b, system, "switch", "switch", "builtin.switch");
    kb_ynode *slinks = kb_rd_map(b, system, "links");
    kb_link_cfg pcie = kb_rd_link_unpaced_ok(b, slinks, "io_ep_to_switch", 64.0, 100.0);

    kb_ynode *sip = kb_rd_map(b, root, "sip");
    kb_ynode *mesh = kb_rd_map(b, sip, "cube_mesh");
    p->cube_w = kb_rd_int(b, mesh, "w", 4, 1, MAX_CUBES);
    p->cube_h = kb_rd_int(b, mesh, "h", 4, 1, MAX_CUBES);
    p->cubes_per_sip = p->cube_w * p->cube_h;
    if (!b->err && p->cubes_per_sip > MAX_CUBES)
        b->err = kb_yerr(mesh, "%dx%d = %d cubes per SIP; the address map has room for %d (die_id 0..15)",
                         p->cube_w, p->cube_h, p->cubes_per_sip, MAX_CUBES);
    kb_link_cfg seam = kb_rd_link(b, kb_rd_map(b, sip, "links"), "ucie_seam", 512.0, 1.0);

    kb_cube_cfg *c = kb_xcalloc(1, sizeof *c);
    kb_rd_cube(b, kb_rd_map(b, root, "cube"), c, p);

    kb_ynode *ios = kb_rd_seq(b, sip, "io_chiplets");
    if (!b->err && (!ios || ios->n == 0))
        b->err = ios ? kb_yerr(ios, "a SIP needs at least one IO chiplet")
                     : kb_yerr_key(sip ? sip : root, "io_chiplets", "missing: a SIP needs at least one IO chiplet");
    if (!b->err && ios->n > MAX_IO)
        b->err = kb_yerr(ios, "%zu IO chiplets; the address map has room for %d (die_id 16..20)", ios->n, MAX_IO);
    kb_io_cfg io[MAX_IO];
    memset(io, 0, sizeof io);
    int nio = 0;
    for (size_t i = 0; !b->err && i < ios->n; i++) {
        kb_rd_io(b, ios->items[i].val, (int)i, &io[nio], p);
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
            uint32_t io_port[MAX_IO][MAX_PORTS];
            for (int i = 0; i < nio; i++)
                build_io(b, &io[i], s, i, swn, &pcie, c->ucie_routing_mm, io_port[i]);
            for (int ci = 0; ci < p->cubes_per_sip; ci++)
                build_cube(b, c, s, ci, &cubes[ci]);
            link_cube_mesh(b, p, cubes, &seam);
            for (int i = 0; i < nio; i++)
                link_io_ports(b, p, &io[i], io_port[i], cubes);
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
