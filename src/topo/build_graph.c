/* The explicit topology form: `graph:` with a `line` of nodes and/or
 * explicit `nodes` and `links`. Used for chains, wire tests and models
 * that are not a SIP/cube system. */
#include "topo/build_internal.h"

#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rd_bw(kb_builder *b, kb_ynode *m, double dflt)
{
    return kb_rd_number(b, m, "bw_gbs", dflt, 0, false, INFINITY);
}

static void build_line(kb_builder *b, kb_ynode *line)
{
    if (!kb_ymap_get(line, "count")) {
        b->err = kb_yerr_key(line, "count", "missing: how many nodes the line has");
        return;
    }
    int count = kb_rd_int(b, line, "count", 2, 1, 1 << 20);
    const char *prefix = kb_rd_string(b, line, "prefix", "n");
    kb_comp_spec *spec = kb_rd_component(b, line, "node", "transit", "builtin.forwarding");
    kb_ynode *lk = kb_rd_map(b, line, "link");
    double bw = rd_bw(b, lk, 256.0);
    double mm = kb_rd_number(b, lk, "mm", 1.0, 0, false, INFINITY);
    if (b->err)
        return;
    uint32_t first = (uint32_t)b->t->nnodes;
    for (int i = 0; i < count; i++)
        kb_add_node(b, kb_asprintf("%s%d", prefix, i), spec, -1, -1, -1, -1);
    for (int i = 0; i + 1 < count; i++)
        kb_add_link(b, first + (uint32_t)i, first + (uint32_t)i + 1, KB_EK_LINK, KB_EK_LINK, bw, mm, -1);
}

static int64_t find_built(const kb_builder *b, const char *id)
{
    for (size_t i = 0; i < b->t->nnodes; i++)
        if (strcmp(b->t->nodes[i].id, id) == 0)
            return (int64_t)i;
    return -1;
}

void kb_build_graph(kb_builder *b, kb_ynode *root)
{
    kb_topo_params *p = &b->t->p;
    kb_ynode *system = kb_rd_map(b, root, "system");
    p->ns_per_mm = kb_rd_number(b, system, "ns_per_mm", 0.01, 0, false, 1000);
    p->flit_bytes = kb_rd_int(b, system, "flit_bytes", 256, 1, 1 << 20);
    p->host_max_outstanding = kb_rd_int(b, kb_rd_map(b, system, "host"), "max_outstanding", 16, 1, 1 << 20);
    p->sip_topology = "none";
    kb_ynode *g = kb_rd_map(b, root, "graph");
    if (b->err)
        return;
    kb_ynode *line = kb_rd_map(b, g, "line");
    if (line && !line->absent)
        build_line(b, line);
    kb_ynode *nodes = kb_rd_seq(b, g, "nodes");
    for (size_t i = 0; nodes && i < nodes->n && !b->err; i++) {
        kb_ynode *nm = nodes->items[i].val;
        if (!kb_yas_map(nm, &b->err))
            return;
        const char *id = kb_rd_string(b, nm, "id", NULL);
        if (!b->err && !id)
            b->err = kb_yerr_key(nm, "id", "missing: every node needs an id");
        if (!b->err && find_built(b, id) >= 0)
            b->err = kb_yerr(kb_ymap_get(nm, "id"), "node id '%s' is used twice", id);
        const char *kind = kb_rd_string(b, nm, "kind", "transit");
        if (b->err)
            return;
        char *role = kb_asprintf("graph.nodes.%s", id);
        kb_comp_spec *spec = kb_rd_component_block(b, nm, nm, role, kind, "builtin.forwarding");
        free(role);
        if (spec)
            kb_add_node(b, kb_xstrdup(id), spec, -1, -1, -1, -1);
    }
    kb_ynode *links = kb_rd_seq(b, g, "links");
    for (size_t i = 0; links && i < links->n && !b->err; i++) {
        kb_ynode *lm = links->items[i].val;
        if (!kb_yas_map(lm, &b->err))
            return;
        int64_t ends[2];
        const char *keys[2] = {"src", "dst"};
        for (int k = 0; k < 2 && !b->err; k++) {
            const char *id = kb_rd_string(b, lm, keys[k], NULL);
            if (!b->err && !id)
                b->err = kb_yerr_key(lm, keys[k], "missing: a node id");
            else if (!b->err && (ends[k] = find_built(b, id)) < 0)
                b->err = kb_yerr(kb_ymap_get(lm, keys[k]), "no node named '%s'", id);
        }
        double bw = rd_bw(b, lm, 256.0);
        double mm = kb_rd_number(b, lm, "mm", 0.0, 0, false, INFINITY);
        bool bidir = true;
        kb_ynode *bn = kb_ymap_get(lm, "bidir");
        if (!b->err && bn)
            kb_yas_bool(bn, &bidir, &b->err);
        kb_cfg_note(b, lm, "bidir", bn, bn ? NULL : "true");
        if (b->err)
            return;
        if (bidir)
            kb_add_link(b, (uint32_t)ends[0], (uint32_t)ends[1], KB_EK_LINK, KB_EK_LINK, bw, mm, -1);
        else
            kb_add_edge(b, (uint32_t)ends[0], (uint32_t)ends[1], KB_EK_LINK, bw, mm, -1);
    }
    if (!b->err && b->t->nnodes == 0)
        b->err = kb_yerr(g, "the graph has no nodes (give `line:` or `nodes:`)");
}
