/* Fabric engine: the instance, its component instances and wires (set up
 * by their first flit, delivery.c), and what it keeps for observation.
 * Transactions are in txn.c, delivery in delivery.c, the trace hooks in
 * fabric_trace.c, the statistics in fabric_stats.c. */
#include "fabric/fabric_internal.h"

#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

void kb_fabric_idlist_add(kb_idlist *l, uint32_t id)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->ids = kb_xrealloc(l->ids, l->cap * sizeof *l->ids);
    }
    l->sorted = l->n == 0 || (l->sorted && l->ids[l->n - 1] < id);
    l->ids[l->n++] = id;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static size_t idlist_sorted(kb_idlist *l, const uint32_t **ids)
{
    if (!l->sorted && l->n > 1)
        qsort(l->ids, l->n, sizeof *l->ids, cmp_u32);
    l->sorted = true;
    *ids = l->ids;
    return l->n;
}

kb_fabric *kb_fabric_new(kb_sim *sim, const kb_topo *t, char **err)
{
    kb_fabric *f = kb_xcalloc(1, sizeof *f);
    f->sim = sim;
    f->topo = t;
    f->flit_bytes = kb_topo_params_of(t)->flit_bytes;
    kb_pool_init(&f->txn_pool, sizeof(kb_txn), 256);
    kb_pool_init(&f->flit_pool, sizeof(kb_flit), 4096);
    kb_pool_init(&f->run_pool, sizeof(kb_run), 1024);
    size_t nn = kb_topo_node_count(t), ne = kb_topo_edge_count(t);
    f->comps = kb_xcalloc(nn ? nn : 1, sizeof *f->comps);
    /* Each wire is set up by its first flit (wire_first_flit): a tray has
     * tens of thousands of edges and a run may use a few, so the array's
     * pages are touched only where traffic goes. */
    f->wires = kb_xcalloc(ne ? ne : 1, sizeof *f->wires);
    for (size_t i = 0; i < nn; i++) {
        kb_comp *c = &f->comps[i];
        c->fab = f;
        c->node = (uint32_t)i;
        c->n = kb_topo_node(t, (uint32_t)i);
        c->ops = c->n->spec->impl->ops;
        const char *unusable = !c->ops ? "has no behaviour in this build"
                               : c->ops->flit_aware && c->ops->handlers
                                   ? "is flit-aware and lists message handlers, which only whole transactions reach"
                                   : NULL;
        if (unusable) {
            *err = kb_asprintf("%s: implementation %s %s", c->n->id, c->n->spec->impl->name, unusable);
            c->ops = NULL; /* not initialised: kb_fabric_free finalises the nodes before it only */
            kb_fabric_free(f);
            return NULL;
        }
        if (kb_impl_attr_index(c->n->spec->impl, "overhead_ns") >= 0)
            c->overhead_ps = llround(kb_spec_attr(c->n->spec, "overhead_ns") * 1000.0);
        if (c->ops->init)
            c->ops->init(c);
    }
    return f;
}

void kb_fabric_free(kb_fabric *f)
{
    if (!f)
        return;
    for (kb_txn *t = f->live_head; t; t = t->lnext) { /* operations cut off by the close */
        free(t->tr_first);
        if (t->request->release)
            t->request->release(t->payload);
    }
    size_t nn = kb_topo_node_count(f->topo);
    for (size_t i = 0; i < nn; i++)
        if (f->comps[i].ops && f->comps[i].ops->fini)
            f->comps[i].ops->fini(&f->comps[i]);
    kb_pool_destroy(&f->txn_pool);
    kb_pool_destroy(&f->flit_pool);
    kb_pool_destroy(&f->run_pool);
    kb_oplog_free(&f->oplog);
    kb_memstore_free(f->mem);
    free(f->active_nodes.ids);
    free(f->active_edges.ids);
    free(f->tracks);
    free(f->wire_ctr);
    free(f->wire_ctr_done);
    free(f->comps);
    free(f->wires);
    free(f);
}

kb_sim *kb_fabric_sim(const kb_fabric *f) { return f->sim; }
const kb_topo *kb_fabric_topo(const kb_fabric *f) { return f->topo; }
kb_comp *kb_fabric_comp(kb_fabric *f, uint32_t node) { return &f->comps[node]; }
const kb_wire *kb_fabric_wire(const kb_fabric *f, uint32_t edge) { return &f->wires[edge]; }
size_t kb_fabric_live_txns(const kb_fabric *f) { return f->live_txns; }
void kb_fabric_note_active(kb_fabric *f, uint32_t node) { kb_fabric_idlist_add(&f->active_nodes, node); }
size_t kb_fabric_active_nodes(kb_fabric *f, const uint32_t **ids) { return idlist_sorted(&f->active_nodes, ids); }
size_t kb_fabric_active_edges(kb_fabric *f, const uint32_t **ids) { return idlist_sorted(&f->active_edges, ids); }

void kb_comp_fail(kb_comp *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = kb_vasprintf(fmt, ap);
    va_end(ap);
    char t[KB_TIME_STRLEN];
    kb_sim_fail(c->fab->sim, "%s (%s) at %s: %s", c->n->id, c->n->spec->impl->name,
                kb_time_format(kb_sim_now(c->fab->sim), t), msg);
    free(msg);
}

kb_oplog *kb_fabric_oplog(kb_fabric *f) { return &f->oplog; }

kb_memstore *kb_fabric_memstore(kb_fabric *f)
{
    if (!f->mem)
        f->mem = kb_memstore_new();
    return f->mem;
}
