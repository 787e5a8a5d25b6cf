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
static void log_host_memory(kb_txn *t, kb_time now)
{
    if (t->msg != KB_MSG_MEM_WRITE && t->msg != KB_MSG_MEM_READ)
        return;
    const char *name = t->msg == KB_MSG_MEM_WRITE ? "memory_write" : "memory_read";
    if (!kb_oplog_keeps(kb_fabric_oplog(t->fab))) {
        kb_oplog_add(kb_fabric_oplog(t->fab), 0, 0, "", "memory", name, NULL);
        return;
    }
    const kb_topo *topo = kb_fabric_topo(t->fab);
    kb_val *p = kb_val_obj();
    kb_obj_str(p, "space", kb_target_space(kb_topo_node(topo, t->path->nodes[t->path->n - 1])));
    kb_obj_int(p, "offset", (int64_t)t->addr);
    kb_obj_int(p, "nbytes", (int64_t)t->req_bytes);
    kb_obj_str(p, "src", kb_topo_node(topo, t->path->nodes[0])->id);
    kb_obj_int(p, "txn", (int64_t)t->id);
    kb_oplog_add(kb_fabric_oplog(t->fab), t->t_serve, now,
                 kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id, "memory", name, p);
}

/* Data moves with time: a write's bytes land when it is served, a read
 * takes what the store holds then. The store domain is the target node. */
static void move_data(kb_txn *t)
{
    uint32_t node = t->path->nodes[t->path->n - 1];
    if (!t->data)
        return;
    if (t->msg == KB_MSG_MEM_WRITE || t->msg == KB_MSG_DMA_WRITE)
        t->data->write(t->data, kb_fabric_memstore(t->fab), node, t->addr, t->req_bytes);
    else if (t->msg == KB_MSG_MEM_READ || t->msg == KB_MSG_DMA_READ)
        t->data->read(t->data, kb_fabric_memstore(t->fab), node, t->addr, t->req_bytes);
}

void kb_target_finish(kb_txn *t)
{
    kb_time now = kb_sim_now(kb_fabric_sim(t->fab));
    log_host_memory(t, now);
    move_data(t);
    switch (t->msg) {
    case KB_MSG_DMA_WRITE:
        kb_fabric_respond(t, 0, now);
        break;
    case KB_MSG_MEM_READ:
    case KB_MSG_DMA_READ:
        kb_fabric_respond(t, t->req_bytes, now);
        break;
    default:
        kb_txn_complete(t);
        break;
    }
}

