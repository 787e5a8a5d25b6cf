/* Transactions: made, listed while live, completed and freed; the one
 * message kind the fabric defines, Response (fabric.h, "messages"). */
#include "fabric/fabric_internal.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdlib.h>

const kb_msg_kind kb_msg_response = {.name = "Response", .data_span = "Response", .ack_span = "Response"};

static uint32_t flits_for(const kb_fabric *f, uint64_t nbytes)
{
    if (nbytes == 0)
        return 1;
    return (uint32_t)((nbytes + (uint64_t)f->flit_bytes - 1) / (uint64_t)f->flit_bytes);
}

kb_txn *kb_txn_new(kb_fabric *f, const kb_msg_kind *kind, const kb_path *path, uint64_t nbytes)
{
    kb_txn *t = kb_pool_alloc(&f->txn_pool);
    t->id = ++f->next_txn_id;
    t->fab = f;
    t->kind = kind;
    t->request = kind;
    t->path = path;
    t->nbytes = nbytes;
    t->nflits = flits_for(f, nbytes);
    t->last_bytes = (uint32_t)(nbytes - (uint64_t)(t->nflits - 1) * (uint64_t)f->flit_bytes);
    t->t_start = kb_sim_now(f->sim);
    t->flow = f->flow_base | t->id;
    if (f->tr) {
        t->tr_first = kb_xcalloc(path->n, sizeof *t->tr_first);
        t->tr_first[0] = t->t_start;
    }
    f->live_txns++;
    t->lprev = f->live_tail;
    if (f->live_tail)
        f->live_tail->lnext = t;
    else
        f->live_head = t;
    f->live_tail = t;
    return t;
}

const kb_txn *kb_fabric_next_live(const kb_fabric *f, const kb_txn *prev)
{
    return prev ? prev->lnext : f->live_head;
}

void kb_txn_free(kb_txn *t)
{
    kb_fabric *f = t->fab;
    f->live_txns--;
    if (t->lprev)
        t->lprev->lnext = t->lnext;
    else
        f->live_head = t->lnext;
    if (t->lnext)
        t->lnext->lprev = t->lprev;
    else
        f->live_tail = t->lprev;
    free(t->tr_first);
    if (t->request->release)
        t->request->release(t->payload);
    kb_pool_free(&f->txn_pool, t);
}

void kb_txn_complete(kb_txn *t)
{
    kb_fabric *f = t->fab;
    if (f->tr)
        kb_fabric_trace_hop(f, t, t->path->n - 1, kb_sim_now(f->sim), true);
    if (t->done)
        t->done(t, t->done_arg);
    kb_txn_free(t);
}
