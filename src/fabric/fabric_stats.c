/* Per-component and per-link statistics of a fabric (docs/tracing.md,
 * "Statistics"). Utilisations are busy time over simulated time, in
 * [0, 1]: a component's busy time counts overlapping work once
 * (kb_comp_busy), a link's is its serialisation time (one flit at a time). */
#include "fabric/fabric.h"

#include "topo/registry.h"

static double ns(kb_time ps) { return (double)ps / 1000.0; }
static double ratio(kb_time part, kb_time whole) { return whole > 0 ? (double)part / (double)whole : 0.0; }

kb_val *kb_fabric_stats(kb_fabric *f, kb_time now)
{
    const kb_topo *t = kb_fabric_topo(f);
    kb_val *root = kb_val_obj();
    kb_val *comps = kb_obj_put(root, "components", kb_val_arr());
    const uint32_t *ids;
    size_t nn = kb_fabric_active_nodes(f, &ids);
    for (size_t k = 0; k < nn; k++) {
        kb_comp *c = kb_fabric_comp(f, ids[k]);
        kb_val *e = kb_arr_push(comps, kb_val_obj());
        kb_obj_str(e, "id", c->n->id);
        kb_obj_str(e, "impl", c->n->spec->impl->name);
        kb_obj_int(e, "txns", (int64_t)c->txns);
        kb_obj_int(e, "flits", (int64_t)c->flits);
        kb_obj_int(e, "bytes", (int64_t)c->bytes);
        kb_obj_num(e, "busy_ns", ns(c->busy_ps));
        kb_obj_num(e, "util", ratio(c->busy_ps, now));
        if (c->ops->stats)
            c->ops->stats(c, e, now);
    }
    kb_val *links = kb_obj_put(root, "links", kb_val_arr());
    size_t ne = kb_fabric_active_edges(f, &ids);
    for (size_t k = 0; k < ne; k++) {
        const kb_wire *w = kb_fabric_wire(f, ids[k]);
        const kb_edge *ed = kb_topo_edge(t, ids[k]);
        kb_val *e = kb_arr_push(links, kb_val_obj());
        kb_obj_str(e, "src", kb_topo_node(t, ed->src)->id);
        kb_obj_str(e, "dst", kb_topo_node(t, ed->dst)->id);
        kb_obj_str(e, "kind", kb_edge_kind_name(ed->kind));
        kb_obj_num(e, "bw_gbs", ed->bw_gbs);
        kb_obj_int(e, "bytes", (int64_t)w->bytes);
        kb_obj_int(e, "flits", (int64_t)w->flits);
        kb_obj_num(e, "busy_ns", ns(w->busy_ps));
        kb_obj_num(e, "util", ratio(w->busy_ps, now));
        kb_obj_num(e, "peak_queue_ns", ns(w->max_wait_ps));
    }
    return root;
}
