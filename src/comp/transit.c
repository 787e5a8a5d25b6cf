/* Transit components (builtin.forwarding / switch / noc / ucie):
 * one serial in-order worker; the overhead is paid once per transaction,
 * on its first flit (header decode); later flits pipeline behind it.
 * Control messages (0-byte transactions: launch and map fan-out, DMA read
 * commands) are handled in parallel with the worker, each in a process of
 * its own as the spec's unchunked messages are (topology-fabric-latency.md
 * §4.3); otherwise a launch fanned out to many PEs would queue on each
 * router's decode and miss its start barrier (docs/decisions.md). */
#include "comp/comp.h"

#include "core/sim.h"

void kb_complete_at(kb_txn *t, kb_time at)
{
    if (at > kb_sim_now(kb_fabric_sim(t->fab)))
        kb_fabric_at(t, at, kb_txn_complete);
    else
        kb_txn_complete(t);
}

static void send_control(kb_sim *sim, void *arg)
{
    kb_flit *f = arg;
    kb_fabric_send_flit(f, kb_sim_now(sim));
}

/* A transaction's header decode: overhead_ns, or the node's latency model's. */
static kb_time decode_ps(kb_comp *c, const kb_txn *t)
{
    if (!c->latency)
        return c->overhead_ps;
    kb_lat_query q = {.op = "decode", .builtin_ps = c->overhead_ps};
    kb_lat_param(&q, "bytes", (double)t->nbytes);
    return kb_comp_latency(c, &q);
}

/* A control message: decoded in parallel, sent when decoded. */
static __attribute__((noinline)) kb_time transit_control(kb_comp *c, kb_flit *f, kb_time now)
{
    kb_txn *t = f->txn;
    kb_time ready = now + decode_ps(c, t);
    kb_comp_busy(c, now, ready);
    if (kb_flit_at_end(f)) {
        kb_fabric_free_flit(c->fab, f);
        kb_complete_at(t, ready);
        return KB_FLIT_TAKEN;
    }
    if (ready > now) {
        kb_sim_at(kb_fabric_sim(c->fab), ready, KB_PRIO_NORMAL, send_control, kb_fabric_keep_flit(c->fab, f));
        return KB_FLIT_TAKEN;
    }
    return now;
}

/* A transaction's first flit (its header decode) or a flit at the
 * transaction's last node: out of line, so the per-flit path below needs
 * no saved registers. */
static __attribute__((noinline)) kb_time transit_rare(kb_comp *c, kb_flit *f, kb_time start)
{
    kb_txn *t = f->txn;
    if (f->idx == 0) {
        kb_time oh = decode_ps(c, t);
        kb_comp_busy(c, start, start + oh);
        start += oh;
    }
    c->busy_until = start;
    if (!kb_flit_at_end(f))
        return start;
    /* Terminal: the operation ends when its last flit has been handled. */
    bool last = f->idx + 1 == t->nflits;
    kb_fabric_free_flit(c->fab, f);
    if (last)
        kb_complete_at(t, start);
    return KB_FLIT_TAKEN;
}

static kb_time transit_flit(kb_comp *c, kb_flit *f)
{
    kb_txn *t = f->txn;
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab));
    if (__builtin_expect(t->nbytes == 0, 0)) /* rare next to data flits */
        return transit_control(c, f, now);
    kb_time start = c->busy_until > now ? c->busy_until : now;
    if (__builtin_expect(f->idx == 0 || kb_flit_at_end(f), 0))
        return transit_rare(c, f, start);
    c->busy_until = start;
    return start;
}

const kb_comp_ops kb_transit_ops = {.flit_aware = true, .on_flit = transit_flit};
