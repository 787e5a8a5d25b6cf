/* The fabric's trace hooks: a slice per transaction per node, link
 * counters, and the tracks of nodes and the host (docs/tracing.md). */
#include "fabric/fabric_internal.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

static const char *span_name(const kb_txn *t)
{
    if (t->kind != &kb_msg_response)
        return t->kind->name;
    return t->nbytes ? t->request->data_span : t->request->ack_span;
}

/* The slice of transaction t at path position hop, from its first flit's
 * arrival until `end`. A response's first node already has the request's
 * slice. */
void kb_fabric_trace_hop(kb_fabric *f, kb_txn *t, uint32_t hop, kb_time end, bool final)
{
    bool response = t->kind == &kb_msg_response;
    if (hop == 0 && response && !final)
        return;
    const kb_topo *topo = f->topo;
    kb_targ args[4] = {
        {"bytes", NULL, (int64_t)t->nbytes},
        {"src", kb_topo_node(topo, t->path->nodes[0])->id, 0},
        {"dst", kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id, 0},
        {"txn", NULL, (int64_t)t->id},
    };
    kb_flow_phase ph = final ? KB_FLOW_END : (hop == 0 && !response ? KB_FLOW_START : KB_FLOW_STEP);
    kb_trace_span(f->tr, f->tracks[t->path->nodes[hop]], span_name(t), t->tr_first[hop], end, args,
                  4, t->flow, ph);
}

kb_tcounter *kb_fabric_wire_counter(kb_fabric *f, uint32_t ei)
{
    if (!f->wire_ctr_done[ei]) {
        f->wire_ctr_done[ei] = 1;
        const kb_edge *e = kb_topo_edge(f->topo, ei);
        const char *a = kb_topo_node(f->topo, e->src)->id, *b = kb_topo_node(f->topo, e->dst)->id;
        if (kb_tracer_wants(f->tr, a) || kb_tracer_wants(f->tr, b)) {
            char *name = kb_asprintf("link %s -> %s", a, b);
            f->wire_ctr[ei] = kb_tracer_counter(f->tr, kb_fabric_process(f, e->src), name);
            free(name);
        }
    }
    return f->wire_ctr[ei];
}

int kb_fabric_process(kb_fabric *f, uint32_t node)
{
    int sip = kb_topo_node(f->topo, node)->sip;
    if (sip < 0)
        return kb_tracer_process(f->tr, "fabric");
    char name[24];
    snprintf(name, sizeof name, "sip%d", sip);
    return kb_tracer_process(f->tr, name);
}

void kb_fabric_set_tracer(kb_fabric *f, kb_tracer *tr, int sim)
{
    f->tr = tr;
    f->flow_base = (uint64_t)sim << 40;
    if (!tr)
        return;
    size_t nn = kb_topo_node_count(f->topo), ne = kb_topo_edge_count(f->topo);
    /* Processes in a fixed order: host, then SIPs, then the tray fabric. */
    f->host_track = kb_tracer_track(tr, kb_tracer_process(tr, "host"), "host.requests");
    f->tracks = kb_xcalloc(nn ? nn : 1, sizeof *f->tracks);
    for (size_t i = 0; i < nn; i++)
        f->tracks[i] = kb_tracer_track(tr, kb_fabric_process(f, (uint32_t)i),
                                       kb_topo_node(f->topo, (uint32_t)i)->id);
    if (kb_tracer_counters(tr)) {
        f->wire_ctr = kb_xcalloc(ne ? ne : 1, sizeof *f->wire_ctr);
        f->wire_ctr_done = kb_xcalloc(ne ? ne : 1, 1);
    }
}

kb_tracer *kb_fabric_tracer(const kb_fabric *f) { return f->tr; }
kb_track *kb_fabric_track(kb_fabric *f, uint32_t node) { return f->tr ? f->tracks[node] : NULL; }
kb_track *kb_fabric_host_track(kb_fabric *f) { return f->tr ? f->host_track : NULL; }
