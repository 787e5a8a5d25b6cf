/* Cube SRAM (builtin.sram, ADR-0041): a terminal scratchpad. Transactions
 * are reassembled, then served one at a time by a serial worker that pays
 * the overhead; the bandwidth is the wire's (sram_to_router link), so no
 * extra drain is charged (docs/decisions.md, C5). */
#include "comp/comp.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <stdlib.h>

#include <string.h>

static void sram_txn(kb_comp *c, kb_txn *t)
{
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab));
    kb_time start = (c->busy_until > now ? c->busy_until : now) + c->overhead_ps;
    c->busy_until = start;
    kb_comp_busy(c, start - c->overhead_ps, start);
    t->t_serve = now;
    if (t->step + 1 < t->path->n) {
        kb_fabric_forward(t, start);
        return;
    }
    if (start > now)
        kb_fabric_at(t, start, kb_target_finish);
    else
        kb_target_finish(t);
}

const char *kb_target_space(const kb_node *n)
{
    return strncmp(n->spec->kind, "hbm", 3) == 0 ? "hbm" : n->spec->kind;
}

/* Host memory operations are logged where they are served. */
static void log_host_memory(kb_txn *t, kb_time now)
{
    if (t->msg != KB_MSG_MEM_WRITE && t->msg != KB_MSG_MEM_READ)
        return;
    const kb_topo *topo = kb_fabric_topo(t->fab);
    kb_val *p = kb_val_obj();
    kb_obj_str(p, "space", kb_target_space(kb_topo_node(topo, t->path->nodes[t->path->n - 1])));
    kb_obj_int(p, "offset", (int64_t)t->addr);
    kb_obj_int(p, "nbytes", (int64_t)t->req_bytes);
    kb_obj_str(p, "src", kb_topo_node(topo, t->path->nodes[0])->id);
    kb_obj_int(p, "txn", (int64_t)t->id);
    kb_oplog_add(kb_fabric_oplog(t->fab), t->t_serve, now,
                 kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id, "memory",
                 t->msg == KB_MSG_MEM_WRITE ? "memory_write" : "memory_read", p);
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

const kb_comp_ops kb_sram_ops = {.flit_aware = false, .on_txn = sram_txn};
