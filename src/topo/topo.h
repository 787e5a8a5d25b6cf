/* A compiled topology: the immutable graph of nodes and directed edges that
 * every simulation built on it shares.
 *
 * kb_topo_load reads a YAML hardware description (see docs/topology.md),
 * applies overrides, validates everything and compiles the graph: node
 * naming, the cube NoC auto-layout, edges with kind, bandwidth and length,
 * and a connectivity check. After loading nothing changes except the route
 * cache (route.h), which only memoises answers. */
#ifndef KB_TOPO_TOPO_H
#define KB_TOPO_TOPO_H

#include "topo/registry.h"
#include "topo/ydoc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Edge kinds. Routing views (route.h) exclude some of them. */
typedef enum kb_edge_kind {
    KB_EK_PE_INTERNAL,
    KB_EK_PE_TO_ROUTER,
    KB_EK_ROUTER_TO_PE,
    KB_EK_ROUTER_MESH,
    KB_EK_ROUTER_TO_HBM,
    KB_EK_HBM_TO_ROUTER,
    KB_EK_ROUTER_TO_SRAM,
    KB_EK_SRAM_TO_ROUTER,
    KB_EK_COMMAND,
    KB_EK_ROUTER_TO_UCIE_CONN,
    KB_EK_UCIE_CONN_TO_ROUTER,
    KB_EK_UCIE_INTERNAL,
    KB_EK_UCIE_MESH,
    KB_EK_NOC_TO_UCIE_CONN,
    KB_EK_UCIE_CONN_TO_NOC,
    KB_EK_IO_INTERNAL,
    KB_EK_IO_TO_CUBE,
    KB_EK_CUBE_TO_IO,
    KB_EK_PCIE,
    KB_EK_LINK, /* explicit links of a `graph:` topology */
    KB_EK_COUNT
} kb_edge_kind;

const char *kb_edge_kind_name(kb_edge_kind k);

/* Resolved attributes of one component role (shared by all its nodes). */
typedef struct kb_comp_spec {
    char *role;            /* key path of its block, e.g. "cube.components.router" */
    char *kind;            /* node kind it serves, e.g. "noc_router" */
    const kb_impl *impl;
    double *vals;          /* one per impl->attrs entry */
    char *latency_model;   /* `latency_model: lua:MODULE`: the module, or NULL */
} kb_comp_spec;

/* Value of a named attribute (the implementation's default if the name is
 * not one of its attributes: callers use names from the impl's own table). */
double kb_spec_attr(const kb_comp_spec *spec, const char *name);

typedef struct kb_node {
    char *id;
    const kb_comp_spec *spec;
    int sip, cube, pe, io;  /* location; -1 where it does not apply */
    double x_mm, y_mm;      /* position inside its cube (routers, attachments) */
    bool has_pos;
    uint32_t first_out;     /* out-edges are edges[first_out .. first_out+nout) */
    uint32_t nout;
} kb_node;

typedef struct kb_edge {
    uint32_t src, dst;
    kb_edge_kind kind;
    double bw_gbs;          /* 0: not paced (PE-internal control edges) */
    double mm;              /* length */
    double routing_mm;      /* weight used by routing (defaults to mm) */
} kb_edge;

/* System-wide parameters the components and the address decoder need. */
typedef struct kb_topo_params {
    double ns_per_mm;
    int flit_bytes;
    int host_max_outstanding; /* host memory requests in flight per SIP (runtime) */
    int sips;
    const char *sip_topology;  /* ring_1d | torus_2d | mesh_2d_no_wrap | none */
    int sip_grid_w, sip_grid_h; /* 0,0 for ring_1d */
    int cube_w, cube_h;        /* cube mesh per SIP (0 for graph topologies) */
    int cubes_per_sip;
    int pes_per_cube;
    int io_per_sip;
    int hbm_channels_per_pe;
    double hbm_channel_bw_gbs;
    double hbm_total_gb_per_cube;
    uint64_t hbm_slice_bytes;  /* hbm_total_gb_per_cube GiB / slices */
    double cube_w_mm, cube_h_mm;
} kb_topo_params;

typedef struct kb_topo kb_topo;

/* Loads and compiles a topology file. `overrides` are "key.path=value"
 * strings applied before reading (may be NULL). On failure returns NULL and
 * sets *err (newly allocated) to a message naming file:line:col and the key
 * path. */
kb_topo *kb_topo_load(const char *path, const char *const *overrides, size_t noverrides,
                      const kb_registry *reg, char **err);
/* Same, where a `base:` that is a bare name ("default", "small_2x2.yaml")
 * with no such file beside the including file names the topology of that
 * name in the directory `shipped` (the shipped topologies; NULL: none). */
kb_topo *kb_topo_load_from(const char *path, const char *shipped, const char *const *overrides,
                           size_t noverrides, const kb_registry *reg, char **err);
/* Same, from YAML text (`name` stands for the file in messages). */
kb_topo *kb_topo_load_string(const char *yaml, const char *name, const char *const *overrides,
                             size_t noverrides, const kb_registry *reg, char **err);
void kb_topo_free(kb_topo *t);

const char *kb_topo_name(const kb_topo *t);
/* The profile laid over it (`profile:`, docs/fidelity.md): "default" when none. */
const char *kb_topo_profile(const kb_topo *t);
const char *kb_topo_path(const kb_topo *t);
const kb_topo_params *kb_topo_params_of(const kb_topo *t);
size_t kb_topo_node_count(const kb_topo *t);
size_t kb_topo_edge_count(const kb_topo *t);
const kb_node *kb_topo_node(const kb_topo *t, uint32_t idx);
const kb_edge *kb_topo_edge(const kb_topo *t, uint32_t idx);
/* Node index by id; -1 if there is none. */
int64_t kb_topo_find(const kb_topo *t, const char *id);
/* Node index by place: the node of `kind` (a node kind such as "pe_dma",
 * "m_cpu", "hbm_ctrl") at (sip, cube, pe, io), -1 for a coordinate that
 * does not apply (a cube node has no pe and no io; an IO-chiplet node no
 * cube; an HBM controller's pe is its slice). KB_NODE_NONE if no node is
 * there, KB_NODE_AMBIGUOUS if several are (a cube's routers): those are
 * named by id. The way back is kb_topo_node(t, i): kind and coordinates. */
#define KB_NODE_NONE (-1)
#define KB_NODE_AMBIGUOUS (-2)
int64_t kb_topo_node_at(const kb_topo *t, const char *kind, int sip, int cube, int pe, int io);
/* The same for a PE's part, a cube's node and an IO chiplet's node. */
int64_t kb_topo_pe_node(const kb_topo *t, int sip, int cube, int pe, const char *kind);
int64_t kb_topo_cube_node(const kb_topo *t, int sip, int cube, const char *kind);
int64_t kb_topo_io_node(const kb_topo *t, int sip, int io, const char *kind);
/* Position of node idx in id order (the routing tie-break). */
uint32_t kb_topo_rank(const kb_topo *t, uint32_t idx);
/* Node index at position r of id order. */
uint32_t kb_topo_by_rank(const kb_topo *t, uint32_t r);
/* The edge src -> dst, or -1. */
int64_t kb_topo_edge_between(const kb_topo *t, uint32_t src, uint32_t dst);
/* A multi-line human summary (counts per kind, parameters); newly allocated. */
char *kb_topo_summary(const kb_topo *t);
/* The resolved configuration: every parameter the build used, with its
 * source (file:line:col, the --set override, or "default"), as a YAML
 * topology file that rebuilds the same topology. Newly allocated. */
char *kb_topo_config_yaml(const kb_topo *t);

/* Propagation delay of an edge in ps, and the time one `nbytes` flit
 * occupies it (0 for unpaced edges), both rounded to the picosecond. */
int64_t kb_topo_edge_prop_ps(const kb_topo *t, const kb_edge *e);
int64_t kb_edge_serialize_ps(const kb_edge *e, uint64_t nbytes);

/* Internal to src/topo: the route cache lives inside the topology. */
struct kb_route_cache;
struct kb_route_cache *kb_topo_route_cache(const kb_topo *t);

#endif
