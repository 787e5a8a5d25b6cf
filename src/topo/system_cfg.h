/* Internal to the hierarchical topology form: what read_system.c reads from
 * the file (the SIP layout, one cube, the IO chiplets) and build_system.c
 * turns into nodes and edges. */
#ifndef KB_TOPO_SYSTEM_CFG_H
#define KB_TOPO_SYSTEM_CFG_H

#include "mem/addr.h"
#include "topo/build_internal.h"
#include "topo/layout.h"

#define MAX_SIPS KB_PA_SIPS /* sip_id 0..63 */
#define MAX_CUBES 16        /* die_id 0..15 */
#define MAX_IO 5            /* die_id 16..20 */
#define MAX_PORTS 16

/* The parts of a PE: their component keys, implementation and node names.
 * The tables' lengths are checked against NPE_* where they are defined. */
#define NPE_PARTS 9
extern const char *const kb_pe_parts[];
enum { P_CPU, P_SCHED, P_DMA, P_FS, P_GEMM, P_MATH, P_TCM, P_MMU, P_IPCQ };

/* PE-internal edges and their link keys (<key>_mm, <key>_bw_gbs). */
typedef struct kb_pe_link {
    int src, dst;
    const char *key;
    double bw;
} kb_pe_link;
#define NPE_LINKS 25
extern const kb_pe_link kb_pe_links[];

typedef struct kb_link_cfg { double bw, mm; } kb_link_cfg;

typedef struct kb_cube_cfg {
    kb_cube_geom geom;
    kb_cube_layout lay;
    kb_comp_spec *router, *ucie, *ucie_conn, *m_cpu, *sram, *hbm_ctrl;
    kb_comp_spec *pe[NPE_PARTS];
    kb_link_cfg mesh, pe_router, hbm, sram_link, mcpu, router_conn, conn_port;
    kb_link_cfg pe_internal[NPE_LINKS];
    double ucie_routing_mm;
} kb_cube_cfg;

typedef struct kb_port_cfg {
    int cube_x, cube_y, side;
    char *phy;
    double bw, mm;
} kb_port_cfg;

typedef struct kb_io_cfg {
    char *id;
    kb_comp_spec *pcie_ep, *io_noc, *io_cpu, *io_ucie, *io_ucie_conn;
    int nconn;
    kb_link_cfg ep_noc, noc_cpu, conn, conn_port; /* conn: io_noc <-> connection */
    kb_port_cfg ports[MAX_PORTS];
    int nports;
} kb_io_cfg;

/* Each reader sets b->err on the first problem, as those of read.c do. */

/* Reads <prefix>_bw_gbs (> 0) and <prefix>_mm (>= 0). */
kb_link_cfg kb_rd_link(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm);
/* Same, where bandwidth 0 (unpaced, no serialisation) is allowed. */
kb_link_cfg kb_rd_link_unpaced_ok(kb_builder *b, kb_ynode *map, const char *prefix, double bw, double mm);
/* system.sips: count, topology and grid into p. */
void kb_rd_sips(kb_builder *b, kb_ynode *system, kb_topo_params *p);
/* The `cube:` section: its layout and HBM figures also go into p. */
void kb_rd_cube(kb_builder *b, kb_ynode *cube, kb_cube_cfg *c, kb_topo_params *p);
/* One entry of sip.io_chiplets (index names it by default); its ports are
 * checked against the cube mesh of p. */
void kb_rd_io(kb_builder *b, kb_ynode *n, int index, kb_io_cfg *io, const kb_topo_params *p);

#endif
