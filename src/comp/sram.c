/* Cube SRAM (builtin.sram): a terminal scratchpad. Transactions
 * are reassembled, then served one at a time by a serial worker that pays
 * the overhead; the bandwidth is the wire's (sram_to_router link), so no
 * extra drain is charged (docs/decisions.md, C5). Only memory accesses
 * may end here. */
#include "comp/comp.h"

#include "core/sim.h"

static void sram_txn(kb_comp *c, kb_txn *t)
{
    bool ends_here = t->step + 1 == t->path->n;
    kb_mem_req *r = kb_mem_req_of(t);
    if (ends_here && !r) {
        kb_target_refuse(c, t);
        kb_txn_free(t);
        return;
    }
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab));
    kb_time start = (c->busy_until > now ? c->busy_until : now) + c->overhead_ps;
    c->busy_until = start;
    kb_comp_busy(c, start - c->overhead_ps, start);
    if (r)
        r->t_serve = now;
    if (!ends_here) {
        kb_fabric_forward(t, start);
        return;
    }
    if (start > now)
        kb_fabric_at(t, start, kb_target_finish);
    else
        kb_target_finish(t);
}

const kb_comp_ops kb_sram_ops = {.flit_aware = false, .on_txn = sram_txn};
