/* Fabric engine: component instances, wires, flit delivery.
 * Kept whole past ~500 lines: delivery, wires and the hop log and trace hooks
 * they call are the per-flit hot path, one translation unit so they inline. */
#include "fabric/fabric.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Flits of one transaction in flight on one wire, sent back to back: flit
 * idx0 + k left at depart0 + k x the wire's flit_ser_ps, under the event
 * key key0 + k. Only full flits precede another in a run. */
typedef struct kb_run {
    struct kb_run *next;
    kb_txn *txn;
    kb_time depart0;
    uint64_t key0;
    uint32_t idx0, n;
    uint32_t hop; /* the path position the flits travel to */
} kb_run;

/* Node or edge indices in the order they became active; sorted on demand. */
typedef struct kb_idlist {
    uint32_t *ids;
    size_t n, cap;
    bool sorted;
} kb_idlist;

static void idlist_add(kb_idlist *l, uint32_t id)
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

struct kb_fabric {
    kb_sim *sim;
    const kb_topo *topo;
    kb_comp *comps;
    kb_wire *wires;
    kb_pool txn_pool, flit_pool, run_pool;
    uint64_t next_txn_id;
    size_t live_txns;
    int flit_bytes;
    /* observation */
    kb_oplog oplog;
    kb_memstore *mem;
    kb_txn *live_head, *live_tail; /* every live transaction, in creation order */
    kb_idlist active_nodes, active_edges; /* what the statistics list */
    kb_tracer *tr;
    uint64_t flow_base;
    kb_track **tracks;      /* per node */
    kb_track *host_track;
    kb_tcounter **wire_ctr; /* per edge, when counters are on */
    unsigned char *wire_ctr_done;
};

const kb_msg_kind kb_msg_response = {.name = "Response", .data_span = "Response", .ack_span = "Response"};

void kb_hoplog_free(kb_hoplog *log)
{
    if (log)
        free(log->hops);
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
void kb_fabric_note_active(kb_fabric *f, uint32_t node) { idlist_add(&f->active_nodes, node); }
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

/* ---- transactions ---- */

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

/* ---- trace ---- */

static const char *span_name(const kb_txn *t)
{
    if (t->kind != &kb_msg_response)
        return t->kind->name;
    return t->nbytes ? t->request->data_span : t->request->ack_span;
}

/* The slice of transaction t at path position hop, from its first flit's
 * arrival until `end`. A response's first node already has the request's
 * slice. */
static void trace_hop(kb_fabric *f, kb_txn *t, uint32_t hop, kb_time end, bool final)
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

static kb_tcounter *wire_counter(kb_fabric *f, uint32_t ei)
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
kb_oplog *kb_fabric_oplog(kb_fabric *f) { return &f->oplog; }

kb_memstore *kb_fabric_memstore(kb_fabric *f)
{
    if (!f->mem)
        f->mem = kb_memstore_new();
    return f->mem;
}

void kb_txn_complete(kb_txn *t)
{
    kb_fabric *f = t->fab;
    if (f->tr)
        trace_hop(f, t, t->path->n - 1, kb_sim_now(f->sim), true);
    if (t->done)
        t->done(t, t->done_arg);
    kb_txn_free(t);
}

/* ---- hop log ---- */

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
    idlist_add(&f->active_edges, ei);
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
            trace_hop(f, t, hop, ready, false);
        if (f->wire_ctr)
            kb_trace_busy(f->tr, wire_counter(f, ei), depart, depart + ser);
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
        trace_hop(f, req, req->path->n - 1, kb_sim_now(f->sim), false);
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
