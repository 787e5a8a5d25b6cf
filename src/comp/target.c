/* What a target (HBM controller, SRAM) does when it has served a request:
 * record host memory operations in the op log, move the data to or from
 * the memory store, and answer (kb_target_finish in comp.h). */
#include "comp/comp.h"

#include "core/sim.h"
#include "mem/memstore.h"

#include <string.h>

const char *kb_target_space(const kb_node *n)
{
    return strncmp(n->spec->kind, "hbm", 3) == 0 ? "hbm" : n->spec->kind;
}

/* Host memory operations are logged where they are served. */
static void log_host_memory(kb_txn *t, const kb_mem_req *r, kb_time now)
{
    if (!kb_mem_is_host(t))
        return;
    const char *name = t->kind == &kb_msg_mem_write ? "memory_write" : "memory_read";
    if (!kb_oplog_keeps(kb_fabric_oplog(t->fab))) {
        kb_oplog_add(kb_fabric_oplog(t->fab), 0, 0, "", "memory", name, NULL);
        return;
    }
    const kb_topo *topo = kb_fabric_topo(t->fab);
    kb_val *p = kb_val_obj();
    kb_obj_str(p, "space", kb_target_space(kb_topo_node(topo, t->path->nodes[t->path->n - 1])));
    kb_obj_int(p, "offset", (int64_t)r->addr);
    kb_obj_int(p, "nbytes", (int64_t)r->nbytes);
    kb_obj_str(p, "src", kb_topo_node(topo, t->path->nodes[0])->id);
    kb_obj_int(p, "txn", (int64_t)t->id);
    kb_oplog_add(kb_fabric_oplog(t->fab), r->t_serve, now,
                 kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id, "memory", name, p);
}

/* Data moves with time: a write's bytes land when it is served, a read
 * takes what the store holds then. The store domain is the target node. */
static void move_data(kb_txn *t, kb_mem_req *r)
{
    uint32_t node = t->path->nodes[t->path->n - 1];
    if (!r->data || t->kind == &kb_msg_transfer)
        return;
    if (kb_mem_writes(t))
        r->data->write(r->data, kb_fabric_memstore(t->fab), node, r->addr, r->nbytes);
    else
        r->data->read(r->data, kb_fabric_memstore(t->fab), node, r->addr, r->nbytes);
}

void kb_target_refuse(kb_comp *c, const kb_txn *t)
{
    kb_comp_fail(c, "received a %s (transaction #%llu from %s), which is not a memory access", t->kind->name,
                 (unsigned long long)t->id, kb_topo_node(kb_fabric_topo(c->fab), t->path->nodes[0])->id);
}

void kb_target_finish(kb_txn *t)
{
    kb_time now = kb_sim_now(kb_fabric_sim(t->fab));
    kb_mem_req *r = kb_mem_req_of(t);
    log_host_memory(t, r, now);
    move_data(t, r);
    if (t->kind == &kb_msg_dma_write)
        kb_fabric_respond(t, 0, now);
    else if (t->kind == &kb_msg_mem_read || t->kind == &kb_msg_dma_read)
        kb_fabric_respond(t, r->ack_only ? 0 : r->nbytes, now);
    else
        kb_txn_complete(t);
}
