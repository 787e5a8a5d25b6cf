/* The explicit topology form: `graph:` with a `line` of nodes and/or
 * explicit `nodes` and `links`. Used for chains, wire tests and models
 * that are not a SIP/cube system. */
#include "topo/system_cfg.h"

#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The node kinds a graph node may have: the system form's, and transit. */
static const char *const graph_kinds[] = {"transit", "switch", "pcie_ep", "io_noc", "io_cpu", "ucie",
                                          "ucie_conn", "noc_router", "m_cpu", "sram", "hbm_ctrl"};
#define NGRAPH_KINDS (sizeof graph_kinds / sizeof graph_kinds[0])

static bool known_kind(const char *k)
{
    for (size_t i = 0; i < NGRAPH_KINDS; i++)
        if (strcmp(graph_kinds[i], k) == 0)
            return true;
    for (size_t i = 0; i < NPE_PARTS; i++)
        if (strcmp(kb_pe_parts[i], k) == 0)
            return true;
    return false;
}

static char *kind_list(void)
{
    kb_buf b = {0};
    for (size_t i = 0; i < NGRAPH_KINDS; i++)
        kb_buf_printf(&b, "%s%s", i ? ", " : "", graph_kinds[i]);
    for (size_t i = 0; i < NPE_PARTS; i++)
        kb_buf_printf(&b, ", %s", kb_pe_parts[i]);
    return kb_buf_take(&b);
}

/* Graph state: node ids and the directed links so far, by hash. */
typedef struct graph {
    kb_strmap ids;    /* id -> node index */
    kb_pairmap links; /* (src, dst) -> the link entry that made it */
} graph;

/* Adds a node unless its id is taken; false with the error set at `at`. */
static bool add_node(kb_builder *b, graph *g, char *id, const kb_comp_spec *spec, const kb_ynode *at)
{
    if (b->t->nnodes >= KB_TOPO_MAX_GRAPH_NODES) {
        b->err = kb_yerr(at, "more than %d nodes; a graph topology may have at most %d",
                         KB_TOPO_MAX_GRAPH_NODES, KB_TOPO_MAX_GRAPH_NODES);
        free(id);
        return false;
    }
    if (kb_strmap_get(&g->ids, id) >= 0) {
        b->err = kb_yerr(at, "node id '%s' is used twice", id);
        free(id);
        return false;
    }
    uint32_t n = kb_add_node(b, id, spec, -1, -1, -1, -1);
    kb_strmap_put(&g->ids, b->t->nodes[n].id, n);
    return true;
}

/* A directed link; a self-loop or a second link between the same two nodes
 * in the same direction is an error at `at` (link entry `entry`; -1 for
 * the line). */
static bool add_link(kb_builder *b, graph *g, uint32_t s, uint32_t d, double bw, double mm, const kb_ynode *at,
                     int64_t entry)
{
    const kb_topo *t = b->t;
    if (s == d) {
        b->err = kb_yerr(at, "a link from node '%s' to itself; a link joins two different nodes", t->nodes[s].id);
        return false;
    }
    int64_t prev = kb_pairmap_get(&g->links, s, d);
    if (prev >= 0) {
        b->err = prev == UINT32_MAX
                     ? kb_yerr(at, "link %s -> %s duplicates a link of graph.line", t->nodes[s].id, t->nodes[d].id)
                     : kb_yerr(at, "link %s -> %s is already given by graph.links[%lld]", t->nodes[s].id,
                               t->nodes[d].id, (long long)prev);
        return false;
    }
    kb_pairmap_put(&g->links, s, d, entry < 0 ? UINT32_MAX : (uint32_t)entry);
    kb_add_edge(b, s, d, KB_EK_LINK, bw, mm, -1);
    return true;
}

static void build_line(kb_builder *b, graph *gr, kb_ynode *line)
{
    if (!kb_ymap_get(line, "count")) {
        b->err = kb_yerr_key(line, "count", "missing: how many nodes the line has");
        return;
    }
    int count = kb_rd_int(b, line, "count", 2, 1, KB_TOPO_MAX_GRAPH_NODES);
    const char *prefix = kb_rd_string(b, line, "prefix", "n");
    if (!b->err) { /* the ids are prefix0, prefix1 ...: the rule applies to prefix0 */
        char *id0 = kb_asprintf("%s0", prefix);
        kb_ynode *pn = kb_ymap_get(line, "prefix");
        kb_id_check(b, pn ? pn : line, "the line's first node id", id0, true);
        free(id0);
    }
    kb_comp_spec *spec = kb_rd_component(b, line, "node", "transit", "builtin.forwarding");
    kb_ynode *lk = kb_rd_map(b, line, "link");
    double bw = kb_rd_bw(b, lk, "bw_gbs", 256.0, true);
    double mm = kb_rd_mm(b, lk, "mm", 1.0);
    if (b->err)
        return;
    uint32_t first = (uint32_t)b->t->nnodes;
    kb_ynode *at = kb_ymap_get(line, "count");
    for (int i = 0; i < count; i++)
        if (!add_node(b, gr, kb_asprintf("%s%d", prefix, i), spec, at))
            return;
    for (int i = 0; i + 1 < count; i++) {
        add_link(b, gr, first + (uint32_t)i, first + (uint32_t)i + 1, bw, mm, at, -1);
        add_link(b, gr, first + (uint32_t)i + 1, first + (uint32_t)i, bw, mm, at, -1);
    }
}

static void read_nodes(kb_builder *b, graph *gr, kb_ynode *nodes)
{
    for (size_t i = 0; nodes && i < nodes->n && !b->err; i++) {
        kb_ynode *nm = nodes->items[i].val;
        if (!kb_yas_map(nm, &b->err))
            return;
        const char *id = kb_rd_string(b, nm, "id", NULL);
        if (!b->err && !id)
            b->err = kb_yerr_key(nm, "id", "missing: every node needs an id");
        if (!b->err && !id[0])
            b->err = kb_yerr(kb_ymap_get(nm, "id"), "a node id must not be empty");
        if (!b->err)
            kb_id_check(b, kb_ymap_get(nm, "id"), "node id", id, true);
        const char *kind = kb_rd_string(b, nm, "kind", "transit");
        if (!b->err && !known_kind(kind)) {
            char *kinds = kind_list();
            b->err = kb_yerr(kb_ymap_get(nm, "kind"), "unknown node kind '%s' (known: %s)", kind, kinds);
            free(kinds);
        }
        if (b->err)
            return;
        char *role = kb_asprintf("graph.nodes.%s", id);
        kb_comp_spec *spec = kb_rd_component_block(b, nm, nm, role, kind, "builtin.forwarding");
        free(role);
        if (spec)
            add_node(b, gr, kb_xstrdup(id), spec, kb_ymap_get(nm, "id"));
    }
}

static void read_links(kb_builder *b, graph *gr, kb_ynode *links)
{
    for (size_t i = 0; links && i < links->n && !b->err; i++) {
        kb_ynode *lm = links->items[i].val;
        if (!kb_yas_map(lm, &b->err))
            return;
        int64_t ends[2] = {-1, -1};
        const char *keys[2] = {"src", "dst"};
        for (int k = 0; k < 2 && !b->err; k++) {
            const char *id = kb_rd_string(b, lm, keys[k], NULL);
            if (!b->err && !id)
                b->err = kb_yerr_key(lm, keys[k], "missing: a node id");
            else if (!b->err && (ends[k] = kb_strmap_get(&gr->ids, id)) < 0)
                b->err = kb_yerr(kb_ymap_get(lm, keys[k]), "no node named '%s'", id);
        }
        double bw = kb_rd_bw(b, lm, "bw_gbs", 256.0, true);
        double mm = kb_rd_mm(b, lm, "mm", 0.0);
        bool bidir = true;
        kb_ynode *bn = kb_ymap_get(lm, "bidir");
        if (!b->err && bn)
            kb_yas_bool(bn, &bidir, &b->err);
        kb_cfg_note(b, lm, "bidir", bn, bn ? NULL : "true");
        if (b->err)
            return;
        uint32_t s = (uint32_t)ends[0], d = (uint32_t)ends[1];
        if (add_link(b, gr, s, d, bw, mm, lm, (int64_t)i) && bidir)
            add_link(b, gr, d, s, bw, mm, lm, (int64_t)i);
    }
}

void kb_build_graph(kb_builder *b, kb_ynode *root)
{
    kb_topo_params *p = &b->t->p;
    kb_ynode *system = kb_rd_map(b, root, "system");
    p->ns_per_mm = kb_rd_number(b, system, "ns_per_mm", 0.01, 0, false, 1000);
    p->flit_bytes = kb_rd_flit(b, system);
    p->host_max_outstanding = kb_rd_int(b, kb_rd_map(b, system, "host"), "max_outstanding", 16, 1, 1 << 16);
    p->sip_topology = "none";
    kb_ynode *g = kb_rd_map(b, root, "graph");
    if (b->err)
        return;
    graph gr = {0};
    kb_ynode *line = kb_rd_map(b, g, "line");
    if (line && !line->absent)
        build_line(b, &gr, line);
    read_nodes(b, &gr, kb_rd_seq(b, g, "nodes"));
    read_links(b, &gr, kb_rd_seq(b, g, "links"));
    kb_strmap_free(&gr.ids);
    kb_pairmap_free(&gr.links);
    if (!b->err && b->t->nnodes == 0)
        b->err = kb_yerr(g, "the graph has no nodes (give `line:` or `nodes:`)");
}
