/* Internal to src/topo: the topology object and the builder's helpers. */
#ifndef KB_TOPO_BUILD_INTERNAL_H
#define KB_TOPO_BUILD_INTERNAL_H

#include "topo/strmap.h"
#include "topo/topo.h"

/* One parameter the build used: for --dump-config. */
typedef struct kb_cfgrec {
    char *path;   /* key path, e.g. "cube.links.router_link_bw_gbs", "sip.io_chiplets[0].id" */
    char *value;  /* YAML text of the value */
    char *source; /* "file:line:col", the "--set ..." override, or "default" */
} kb_cfgrec;

struct kb_topo {
    char *name, *profile, *path;
    kb_cfgrec *cfg;
    size_t ncfg, cap_cfg;
    kb_strmap cfg_index; /* path -> index into cfg */
    char **overrides;
    size_t noverrides;
    kb_topo_params p;
    char *sip_topology;
    kb_node *nodes;
    size_t nnodes;
    kb_edge *edges; /* sorted by source node, then creation order */
    size_t nedges;
    uint32_t *by_name; /* node indices in id order */
    uint32_t *rank;    /* rank[node] = its position in by_name */
    kb_comp_spec **specs;
    size_t nspecs;
    struct kb_route_cache *routes;
    struct kb_place_entry *places; /* nodes by place (place.c) */
    size_t nplaces;
};

/* Builder state: growing node and edge arrays, and the first error. */
typedef struct kb_builder {
    kb_topo *t;
    const kb_registry *reg;
    char *err;
    size_t cap_nodes, cap_edges, cap_specs;
    kb_ynode **absent; /* stand-ins for maps the file does not write */
    size_t nabsent;
} kb_builder;

/* config.c: records what the readers resolved (config_dump.c writes them).
 * n is the node read (NULL: absent, so `dflt` applies; a NULL dflt records
 * nothing). */
void kb_cfg_note(kb_builder *b, const kb_ynode *map, const char *key, const kb_ynode *n,
                 const char *dflt);
/* Records a default that is a string (not YAML text): quoted if it could
 * not stand as a plain scalar. */
void kb_cfg_note_default_string(kb_builder *b, const kb_ynode *map, const char *key, const char *s);
/* A number as the shortest text that reads back the same. */
void kb_cfg_num_text(double v, char *buf, size_t n);
void kb_cfg_free(kb_topo *t);

/* read.c: each reader returns the value (or the default) and sets b->err on
 * the first problem; once b->err is set they do nothing. */
double kb_rd_number(kb_builder *b, kb_ynode *map, const char *key, double dflt, double lo,
                    bool lo_open, double hi);

/* Limits every file shares (docs/topology.md "Limits"): no length, time or
 * bandwidth can make a picosecond count overflow or round to nothing. A
 * length is at most 1 km (at the largest ns_per_mm, 1000, that is 1 s of
 * wire); a bandwidth at least 1 MB/s (a flit of the largest size then takes
 * 4.1 ms) and at most flit_bytes x 1000 GB/s (a flit takes at least 1 ps). */
#define KB_TOPO_MAX_MM 1e6
#define KB_TOPO_MIN_BW_GBS 0.001
#define KB_TOPO_MIN_FLIT 8      /* the largest element (f64, i64) is never split */
#define KB_TOPO_MAX_FLIT 4096   /* the smallest page: an aligned flit never spans two */
#define KB_TOPO_MAX_GRAPH_NODES (1 << 18)
/* The largest bandwidth the file's flit size allows, in GB/s. */
double kb_max_bw_gbs(const kb_builder *b);
/* A bandwidth in KB_TOPO_MIN_BW_GBS .. kb_max_bw_gbs (or 0 when zero_ok: an
 * unpaced edge). */
double kb_rd_bw(kb_builder *b, kb_ynode *map, const char *key, double dflt, bool zero_ok);
/* A length in 0 .. KB_TOPO_MAX_MM. */
double kb_rd_mm(kb_builder *b, kb_ynode *map, const char *key, double dflt);
/* Sizes (docs/topology.md "Sizes"): v in `unit` ("bytes", "KiB", "MiB",
 * "GiB"; any other unit is not a size and passes) must be a whole number
 * of bytes; otherwise the error is set at `at`, naming the nearest whole
 * values. A size that would round to 0 bytes is refused this way. */
bool kb_size_check(kb_builder *b, const kb_ynode *at, double v, const char *unit);
/* system.flit_bytes: a power of two in KB_TOPO_MIN_FLIT .. KB_TOPO_MAX_FLIT. */
int kb_rd_flit(kb_builder *b, kb_ynode *system);
int kb_rd_int(kb_builder *b, kb_ynode *map, const char *key, int dflt, int lo, int hi);
const char *kb_rd_string(kb_builder *b, kb_ynode *map, const char *key, const char *dflt);
/* Ids that become part of node ids (docs/topology.md "Ids"): one segment
 * of ASCII letters, digits, '_' and '-', or (dotted) such segments joined
 * by single dots. kb_id_check sets the error at `at`, naming `what` ("IO
 * chiplet id", "phy") and the rule; kb_rd_id reads a string and checks it. */
bool kb_id_check(kb_builder *b, const kb_ynode *at, const char *what, const char *id, bool dotted);
const char *kb_rd_id(kb_builder *b, kb_ynode *map, const char *key, const char *dflt, const char *what,
                     bool dotted);
/* A sub-map: a stand-in with no keys (node->absent) when the file does not
 * write it; NULL only on error. */
kb_ynode *kb_rd_map(kb_builder *b, kb_ynode *map, const char *key);
kb_ynode *kb_rd_seq(kb_builder *b, kb_ynode *map, const char *key);
/* Reads a component block `{ kind, impl, attrs }` under map.key. */
kb_comp_spec *kb_rd_component(kb_builder *b, kb_ynode *map, const char *key, const char *kind,
                              const char *default_impl);

/* Same for a block already in hand (graph nodes); parent locates errors. */
kb_comp_spec *kb_rd_component_block(kb_builder *b, kb_ynode *blk, kb_ynode *parent,
                                    const char *role, const char *kind, const char *default_impl);

/* topo.c: graph construction. */
uint32_t kb_add_node(kb_builder *b, char *id, const kb_comp_spec *spec, int sip, int cube, int pe,
                     int io);
void kb_add_edge(kb_builder *b, uint32_t src, uint32_t dst, kb_edge_kind kind, double bw, double mm,
                 double routing_mm);
/* Both directions. */
void kb_add_link(kb_builder *b, uint32_t a, uint32_t z, kb_edge_kind ab, kb_edge_kind za, double bw,
                 double mm, double routing_mm);

/* build_system.c: the hierarchical form (system / sip / cube). */
void kb_build_system(kb_builder *b, kb_ynode *root);
/* build_graph.c: the explicit form (graph: nodes / links / line). */
void kb_build_graph(kb_builder *b, kb_ynode *root);
/* validate.c: connectivity checks of the hierarchical form. */
void kb_validate_connectivity(kb_builder *b);
void kb_validate_graph(kb_builder *b);

/* place.c: the place index, built once the nodes are final. */
void kb_places_build(kb_topo *t);
void kb_places_free(kb_topo *t);

/* route.c */
struct kb_route_cache *kb_route_cache_new(const kb_topo *t);
void kb_route_cache_free(struct kb_route_cache *c);

/* Whether path names something other than a directory (topo.c): a base
 * or profile file to read (the reader refuses FIFOs and devices itself). */
bool kb_topo_is_file(const char *path);

#endif
