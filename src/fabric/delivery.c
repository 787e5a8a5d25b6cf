/* Delivery: flits over wires, reassembly, whole transactions to their
 * components, forwarding and responses, and the hop log they fill. The
 * per-flit hot path: wire_send, wire_arrive and flit_arrive inline into
 * one another here (fabric.h, "Hot path"). */
#include "fabric/fabric_internal.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- hop log ---- */

void kb_hoplog_free(kb_hoplog *log)
{
    if (log)
        free(log->hops);
}

static void log_first(kb_txn *t, uint32_t hop, kb_time now)
{
    kb_hoplog *log = t->log;
    if (log->n != t->log_base + hop) /* legs overlapping in one log: keep the first */
        return;
    if (log->n == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 16;
        log->hops = kb_xrealloc(log->hops, log->cap * sizeof *log->hops);
    }
    log->hops[log->n++] = (kb_hop){t->path->nodes[hop], now, now};
}

void kb_txn_set_log(kb_txn *t, kb_hoplog *log)
{
    t->log = log;
    if (log) {
        t->log_base = (uint32_t)log->n;
        log_first(t, 0, kb_sim_now(t->fab->sim));
    }
}

static void log_last(kb_txn *t, uint32_t hop, kb_time now)
{
    size_t i = t->log_base + hop;
    if (i < t->log->n && t->log->hops[i].node == t->path->nodes[hop])
        t->log->hops[i].last_in = now;
}

/* ---- delivery ---- */

/* A transaction ending at a component with handlers: its kind's. */
static void handle(kb_comp *c, kb_txn *t)
{
    for (const kb_msg_handler *h = c->ops->handlers; h->kind; h++)
        if (h->kind == t->kind) {
            h->fn(c, t);
            return;
        }
    kb_comp_fail(c, "received a %s (transaction #%llu from %s), a message it has no handler for", t->kind->name,
                 (unsigned long long)t->id, kb_topo_node(c->fab->topo, t->path->nodes[0])->id);
    kb_txn_free(t);
}

static void deliver_txn(kb_fabric *f, kb_txn *t, uint32_t hop)
{
    kb_comp *c = &f->comps[t->path->nodes[hop]];
    t->step = hop;
    kb_comp_count(c, 1, 0);
    if (c->ops->handlers && hop + 1 == t->path->n)
        handle(c, t);
    else
        c->ops->on_txn(c, t);
}

/* Payload bytes of flit idx of t (the last may be shorter; 0 for a control message). */
static inline uint32_t flit_bytes_of(const kb_fabric *f, const kb_txn *t, uint32_t idx)
{
    return idx + 1 < t->nflits ? (uint32_t)f->flit_bytes : t->last_bytes;
}

static inline int64_t wire_ser_ps(const kb_fabric *f, const kb_wire *w, uint32_t bytes)
{
    if (bytes == (uint32_t)f->flit_bytes)
        return w->flit_ser_ps;
    return kb_edge_serialize_ps(kb_topo_edge(f->topo, (uint32_t)(w - f->wires)), bytes);
}

static void wire_arrive(kb_sim *sim, void *arg);

/* A wire's set-up, by its first flit (kb_fabric_new leaves the array zero). */
static __attribute__((noinline, cold)) void wire_first_flit(kb_fabric *f, kb_wire *w, uint32_t ei)
{
    const kb_edge *e = kb_topo_edge(f->topo, ei);
    w->prop_ps = kb_topo_edge_prop_ps(f->topo, e);
    w->flit_ser_ps = kb_edge_serialize_ps(e, (uint64_t)f->flit_bytes);
    w->to = &f->comps[e->dst];
    kb_fabric_idlist_add(&f->active_edges, ei);
}

/* Flit idx of t, `bytes` long, ready at `ready` at path position hop,
 * takes the wire to hop + 1: it departs at max(ready, avail), holds the
 * wire for its serialisation and arrives one propagation later. Inline:
 * with the arrival of the flit before it, it is the per-flit work of a
 * passing node. */
static inline __attribute__((always_inline)) void wire_send(kb_fabric *f, kb_txn *t, uint32_t idx, uint32_t hop, uint32_t bytes, kb_time ready)
{
    uint32_t ei = t->path->edges[hop];
    kb_wire *w = &f->wires[ei];
    if (__builtin_expect(w->flits == 0, 0))
        wire_first_flit(f, w, ei);
    kb_time depart = ready > w->avail ? ready : w->avail;
    int64_t ser = wire_ser_ps(f, w, bytes);
    if (depart - ready > w->max_wait_ps)
        w->max_wait_ps = depart - ready;
    w->avail = depart + ser;
    w->bytes += bytes;
    w->flits++;
    w->busy_ps += ser;
    if (f->tr) {
        if (idx + 1 == t->nflits)
            kb_fabric_trace_hop(f, t, hop, ready, false);
        if (f->wire_ctr)
            kb_trace_busy(f->tr, kb_fabric_wire_counter(f, ei), depart, depart + ser);
    }
    uint64_t key = kb_sim_take_key(f->sim, KB_PRIO_NORMAL);
    kb_run *r = w->tail;
    /* The key first: between hops it is the condition that fails most. */
    if (r && r->key0 + r->n == key && r->txn == t && r->idx0 + r->n == idx && r->hop == hop + 1 &&
        r->depart0 + (kb_time)r->n * w->flit_ser_ps == depart) {
        r->n++; /* the run goes on */
        return;
    }
    r = kb_pool_take(&f->run_pool);
    *r = (kb_run){.txn = t, .depart0 = depart, .key0 = key, .idx0 = idx, .n = 1, .hop = hop + 1};
    if (w->tail) {
        w->tail->next = r;
        w->tail = r;
        return;
    }
    w->head = w->tail = r;
    kb_sim_at_key(f->sim, depart + ser + w->prop_ps, key, wire_arrive, w);
}

/* Lends flit idx of t, at path position hop, to flit-aware component c,
 * and sends it on when c says when it leaves. */
static inline void lend_flit(kb_fabric *f, kb_comp *c, kb_txn *t, uint32_t idx, uint32_t hop, uint32_t bytes)
{
    kb_flit lent = {.txn = t, .idx = idx, .hop = hop, .bytes = bytes};
    kb_time ready = c->ops->on_flit(c, &lent);
    if (ready != KB_FLIT_TAKEN)
        wire_send(f, t, idx, hop, bytes, ready);
}

/* Flit idx of t, `bytes` long, reaches path position hop: component c. */
static inline void flit_arrive(kb_fabric *f, kb_comp *c, kb_txn *t, uint32_t idx, uint32_t hop, uint32_t bytes)
{
    kb_time now = kb_sim_now(f->sim);
    bool last = idx + 1 == t->nflits;
    if (t->tr_first && idx == 0)
        t->tr_first[hop] = now;
    if (t->log) {
        if (idx == 0)
            log_first(t, hop, now);
        if (last)
            log_last(t, hop, now);
    }
    c->bytes += bytes;
    kb_comp_count(c, c->ops->flit_aware && idx == 0, 1);
    if (c->ops->flit_aware) {
        lend_flit(f, c, t, idx, hop, bytes);
        return;
    }
    /* Reassembly: flits arrive in order, so the last one completes the train. */
    if (last)
        deliver_txn(f, t, hop);
}

static inline kb_time run_arrival(const kb_fabric *f, const kb_wire *w, const kb_run *r, uint32_t bytes)
{
    return r->depart0 + wire_ser_ps(f, w, bytes) + w->prop_ps;
}

/* The oldest flit in flight on a wire arrives; the next one's event is
 * scheduled under the key it took when sent. */
static void wire_arrive(kb_sim *sim, void *arg)
{
    kb_wire *w = arg;
    kb_run *r = w->head;
    kb_txn *t = r->txn;
    kb_fabric *f = w->to->fab; /* one load fewer in the chain than t->fab */
    uint32_t idx = r->idx0, hop = r->hop, bytes = flit_bytes_of(f, t, idx);
    if (--r->n == 0) {
        w->head = r->next;
        if (!w->head)
            w->tail = NULL;
        kb_pool_free(&f->run_pool, r);
        r = w->head;
        if (r)
            kb_sim_at_key(sim, run_arrival(f, w, r, flit_bytes_of(f, r->txn, r->idx0)), r->key0, wire_arrive, w);
    } else { /* flits before a run's last are full */
        r->idx0++;
        r->depart0 += w->flit_ser_ps;
        r->key0++;
        kb_sim_at_key(sim, run_arrival(f, w, r, r->n > 1 ? (uint32_t)f->flit_bytes : flit_bytes_of(f, t, r->idx0)),
                      r->key0, wire_arrive, w);
    }
    flit_arrive(f, w->to, t, idx, hop, bytes);
}

void kb_fabric_free_flit(kb_fabric *f, kb_flit *fl)
{
    if (fl->kept)
        kb_pool_free(&f->flit_pool, fl);
}

kb_flit *kb_fabric_keep_flit(kb_fabric *f, const kb_flit *fl)
{
    kb_flit *k = kb_pool_take(&f->flit_pool);
    *k = *fl;
    k->kept = true;
    return k;
}

void kb_fabric_send_flit(kb_flit *fl, kb_time ready)
{
    kb_txn *t = fl->txn;
    kb_fabric *f = t->fab;
    wire_send(f, t, fl->idx, fl->hop, fl->bytes, ready);
    kb_fabric_free_flit(f, fl);
}

static void send_train(kb_txn *t, kb_time ready)
{
    kb_fabric *f = t->fab;
    for (uint32_t i = 0; i < t->nflits; i++)
        wire_send(f, t, i, t->step, flit_bytes_of(f, t, i), ready);
}

static void forward_now(kb_sim *sim, void *arg)
{
    kb_txn *t = arg;
    send_train(t, kb_sim_now(sim));
}

void kb_fabric_forward(kb_txn *t, kb_time ready)
{
    kb_fabric *f = t->fab;
    if (t->step + 1 >= t->path->n) {
        kb_sim_fail(f->sim, "transaction #%llu: forward past the end of its path",
                    (unsigned long long)t->id);
        return;
    }
    /* Several parallel transactions of one component may become ready out
     * of order; sending at `ready` keeps each wire's submissions in time order. */
    if (ready > kb_sim_now(f->sim))
        kb_sim_at(f->sim, ready, KB_PRIO_NORMAL, forward_now, t);
    else
        send_train(t, ready);
}

void kb_fabric_inject(kb_fabric *f, kb_txn *t)
{
    t->step = 0;
    kb_comp *c = &f->comps[t->path->nodes[0]];
    c->bytes += t->nbytes;
    if (!c->ops->flit_aware) {
        deliver_txn(f, t, 0);
        return;
    }
    uint32_t n = t->nflits;
    kb_comp_count(c, 1, 0);
    for (uint32_t i = 0; i < n; i++) {
        kb_comp_count(c, 0, 1);
        lend_flit(f, c, t, i, 0, flit_bytes_of(f, t, i));
    }
}

void kb_fabric_send(kb_fabric *f, kb_txn *t)
{
    t->step = 0;
    kb_comp *c = &f->comps[t->path->nodes[0]];
    c->bytes += t->nbytes;
    kb_comp_count(c, 1, c->ops->flit_aware ? t->nflits : 0);
    send_train(t, kb_sim_now(f->sim));
}

static void run_then(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_txn *t = arg;
    void (*fn)(kb_txn *) = t->then;
    t->then = NULL;
    fn(t);
}

void kb_fabric_at(kb_txn *t, kb_time at, void (*fn)(kb_txn *t))
{
    t->then = fn;
    kb_sim_at(t->fab->sim, at, KB_PRIO_NORMAL, run_then, t);
}

static void respond_now(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_txn *r = arg;
    send_train(r, kb_sim_now(r->fab->sim));
}

void kb_fabric_respond(kb_txn *req, uint64_t nbytes, kb_time ready)
{
    kb_fabric *f = req->fab;
    char *err = NULL;
    const kb_path *rev = kb_path_reverse(f->topo, req->path, &err);
    if (!rev) {
        kb_sim_fail(f->sim, "transaction #%llu: %s", (unsigned long long)req->id, err);
        free(err);
        return;
    }
    if (f->tr)
        kb_fabric_trace_hop(f, req, req->path->n - 1, kb_sim_now(f->sim), false);
    kb_txn *r = kb_txn_new(f, &kb_msg_response, rev, nbytes);
    r->flow = req->flow;
    r->request = req->request;
    r->t_start = req->t_start;
    r->done = req->done;
    r->done_arg = req->done_arg;
    r->log = req->log;
    memcpy(r->payload, req->payload, sizeof r->payload); /* the payload moves on */
    memset(req->payload, 0, sizeof req->payload);
    if (r->log)
        r->log_base = (uint32_t)r->log->n - 1; /* hop 0 is where the request ended */
    kb_txn_free(req);
    if (rev->n < 2) {
        kb_txn_complete(r);
        return;
    }
    if (ready > kb_sim_now(f->sim))
        kb_sim_at(f->sim, ready, KB_PRIO_NORMAL, respond_now, r);
    else
        send_train(r, ready);
}
