/* The fabric: transactions moving as flits over per-edge wires between
 * component instances, on one simulation.
 *
 * A kb_fabric binds a compiled topology (shared, read-only) to a kb_sim:
 * it owns one component instance per node and one wire per directed edge.
 *
 * Timing model (topology-fabric-latency.md §4.2-4.5, choices in
 * docs/decisions.md):
 *  - A transaction carries a path and a payload size; a payload is split
 *    into flits of flit_bytes (the last may be shorter); a control message
 *    (0 bytes) travels as one empty flit.
 *  - Wire (one per directed edge, FIFO): a flit departs at
 *    max(ready, available_at), occupies the wire for bytes / bandwidth and
 *    arrives one propagation delay (length x ns_per_mm) after it has been
 *    fully sent. The two directions of a link are independent.
 *  - Flit-aware components see every flit; the others see a transaction
 *    once all its flits have arrived (reassembly at a leg boundary) and
 *    send it on as a new train of flits.
 *
 * Hot path: one scheduled event per flit per hop, no allocation in the
 * steady state (flits and transactions come from pools). */
#ifndef KB_FABRIC_FABRIC_H
#define KB_FABRIC_FABRIC_H

#include "core/pool.h"
#include "core/types.h"
#include "topo/route.h"
#include "topo/topo.h"
#include "trace/oplog.h"
#include "trace/trace.h"

typedef struct kb_fabric kb_fabric;
typedef struct kb_txn kb_txn;
typedef struct kb_comp kb_comp;

/* What a transaction asks of its destination. */
typedef enum kb_msg {
    KB_MSG_TRANSFER,  /* move bytes to the last node (chains, tests) */
    KB_MSG_MEM_WRITE, /* host MemoryWrite (bypasses IO_CPU and M_CPU) */
    KB_MSG_MEM_READ,  /* host MemoryRead: data returns on the reverse path */
    KB_MSG_DMA_WRITE, /* PE DMA write: data to the target, ack back */
    KB_MSG_DMA_READ,  /* PE DMA read: command to the target, data back */
    KB_MSG_RESPONSE   /* the return leg of a read or an acknowledgement */
} kb_msg;

const char *kb_msg_name(kb_msg m);

/* Optional per-hop record of one operation: when its first and last flit
 * reached each node of each leg. */
typedef struct kb_hop {
    uint32_t node;
    kb_time first_in, last_in;
} kb_hop;

typedef struct kb_hoplog {
    kb_hop *hops;
    size_t n, cap;
} kb_hoplog;

void kb_hoplog_free(kb_hoplog *log);

typedef void (*kb_txn_done_fn)(kb_txn *t, void *arg);

/* Where an operation's real bytes come from or go to. The target calls
 * `write` when it serves a write (source -> store) and `read` when it
 * serves a read (store -> sink); timing never depends on either. The
 * transaction owns the kb_data and calls `release` when it is freed. */
struct kb_memstore;
typedef struct kb_data {
    void (*write)(struct kb_data *d, struct kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n);
    void (*read)(struct kb_data *d, const struct kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n);
    void (*release)(struct kb_data *d);
} kb_data;

/* A kb_data over a malloc'd buffer of n bytes: a write's bytes (copied from
 * src), or, with src NULL, a buffer a read fills. kb_data_buffer_bytes
 * gives the buffer. */
kb_data *kb_data_buffer(const void *src, uint64_t n);
const void *kb_data_buffer_bytes(const kb_data *d);

struct kb_txn {
    uint64_t id;
    kb_fabric *fab;
    kb_msg msg;
    kb_msg request;        /* for responses: the message answered */
    const kb_path *path;
    uint64_t nbytes;       /* payload carried on this leg (0 = control message) */
    uint64_t req_bytes;    /* bytes the operation moves (a read's size) */
    uint64_t addr;         /* target-local byte offset of the first byte */
    uint32_t nflits;       /* flits of this leg */
    uint32_t step;         /* path position of a whole (reassembled) transaction */
    kb_time t_start;       /* when the operation was issued */
    kb_txn_done_fn done;   /* fired once when the operation completes */
    void *done_arg;
    kb_hoplog *log;        /* optional; shared by every leg of the operation */
    uint32_t log_base;     /* log index of this leg's hop 0 */
    struct kb_data *data;  /* real bytes of the operation, if any (kb_txn_set_data) */
    kb_txn *dprev, *dnext; /* transactions holding data, released if the fabric is freed */
    void (*then)(kb_txn *t); /* pending kb_fabric_at callback */
    kb_time t_mark;        /* scratch of the component at the end of the path */
    kb_comp *owner;        /* component that issued the operation, if any */
    kb_txn *next;          /* queue link for the owner */
    kb_time t_serve;       /* when the target began serving it (op log) */
    kb_time t_chan;        /* when the issuing PE DMA channel took it (op log) */
    bool relay;            /* the first node already paid its overhead (a fan-out step) */
    uint64_t flow;         /* trace flow id: the operation's first transaction */
    kb_time *tr_first;     /* tracing only: first-flit arrival per path node */
    kb_txn *lprev, *lnext; /* the fabric's live list (for inspection) */
};

/* One flit in flight: it travels with its transaction along the path. */
typedef struct kb_flit {
    kb_txn *txn;
    uint32_t idx;   /* 0 .. txn->nflits-1 */
    uint32_t hop;   /* path position it is at or travelling to */
    uint32_t bytes;
} kb_flit;

/* Per-edge wire state and counters. */
typedef struct kb_wire {
    kb_time avail;      /* when the wire can start sending the next flit */
    int64_t prop_ps;
    uint64_t bytes, flits;
    kb_time busy_ps;    /* total serialisation time */
    kb_time max_wait_ps; /* longest a flit waited for the wire (queueing) */
} kb_wire;

/* ---- components ---- */

/* A timing query to a component's latency model (a Lua function named by
 * `latency_model` in the topology): the operation, its parameters, and the
 * builtin formula's answer. The model returns the time to use instead. */
#define KB_LAT_MAXP 6
typedef struct kb_lat_query {
    const char *op;
    int n;
    const char *keys[KB_LAT_MAXP];
    double vals[KB_LAT_MAXP];
    kb_time builtin_ps;
} kb_lat_query;

static inline void kb_lat_param(kb_lat_query *q, const char *key, double v)
{
    if (q->n < KB_LAT_MAXP) {
        q->keys[q->n] = key;
        q->vals[q->n++] = v;
    }
}

/* Behaviour of an implementation (kb_impl.ops points at one of these). */
typedef struct kb_comp_ops {
    bool flit_aware;
    void (*init)(kb_comp *c);        /* optional: allocate c->state */
    void (*fini)(kb_comp *c);        /* optional */
    void (*on_flit)(kb_comp *c, kb_flit *f); /* flit-aware components */
    void (*on_txn)(kb_comp *c, kb_txn *t);   /* others: a whole transaction arrived */
    /* optional: adds implementation-specific statistics to the component's
     * entry (an object) and may replace its "util" */
    void (*stats)(kb_comp *c, kb_val *entry, kb_time now);
} kb_comp_ops;

struct kb_comp {
    kb_fabric *fab;
    uint32_t node;
    const kb_node *n;
    const kb_comp_ops *ops;
    kb_time overhead_ps;  /* attrs.overhead_ns, if the impl has it */
    kb_time busy_until;   /* serial worker */
    uint64_t txns, flits; /* counters */
    uint64_t bytes;       /* payload bytes injected here or received */
    kb_time busy_ps;      /* time with work in service (see kb_comp_busy) */
    kb_time busy_end;
    void *state;
    /* set by the host when the node has a latency model (NULL: formulas) */
    kb_time (*latency)(kb_comp *c, const kb_lat_query *q, void *ctx);
    void *latency_ctx;
};

/* q's time from c's latency model, or the builtin's when c has none. */
static inline kb_time kb_comp_latency(kb_comp *c, const kb_lat_query *q)
{
    return c->latency ? c->latency(c, q, c->latency_ctx) : q->builtin_ps;
}

/* Books [start, end) as busy time of c. Intervals must come in
 * non-decreasing start order; overlapping ones count once, so the
 * utilisation busy_ps / now stays within [0, 1]. */
static inline void kb_comp_busy(kb_comp *c, kb_time start, kb_time end)
{
    if (start < c->busy_end)
        start = c->busy_end;
    if (end > start) {
        c->busy_ps += end - start;
        c->busy_end = end;
    }
}

/* Creates the fabric of `t` on `sim` (the topology must outlive it). NULL
 * with *err if a node's implementation has no behaviour. */
kb_fabric *kb_fabric_new(kb_sim *sim, const kb_topo *t, char **err);
void kb_fabric_free(kb_fabric *f);

kb_sim *kb_fabric_sim(const kb_fabric *f);
const kb_topo *kb_fabric_topo(const kb_fabric *f);
kb_comp *kb_fabric_comp(kb_fabric *f, uint32_t node);
const kb_wire *kb_fabric_wire(const kb_fabric *f, uint32_t edge);
/* Transactions created but not yet completed. */
size_t kb_fabric_live_txns(const kb_fabric *f);
/* Iterates them, oldest first: start with NULL. */
const kb_txn *kb_fabric_next_live(const kb_fabric *f, const kb_txn *prev);

/* ---- observation: trace, op log, statistics ---- */

/* Starts tracing into tr (owned by the caller, who frees it after the
 * fabric); sim is the simulation's number (flow ids). Call before any
 * traffic. */
void kb_fabric_set_tracer(kb_fabric *f, kb_tracer *tr, int sim);
kb_tracer *kb_fabric_tracer(const kb_fabric *f); /* NULL when tracing is off */
/* The track of a node (NULL when filtered out or tracing is off). */
kb_track *kb_fabric_track(kb_fabric *f, uint32_t node);
/* The host's track (requests issued and completed). */
kb_track *kb_fabric_host_track(kb_fabric *f);
/* The process a node's tracks belong to: "sip<S>", or "fabric". */
int kb_fabric_process(kb_fabric *f, uint32_t node);
kb_oplog *kb_fabric_oplog(kb_fabric *f);
/* The simulation's memory store (created on first use). */
struct kb_memstore *kb_fabric_memstore(kb_fabric *f);
/* Per-component and per-link statistics at time now: an object with
 * "components" and "links" arrays, listing what carried any traffic. */
kb_val *kb_fabric_stats(kb_fabric *f, kb_time now);

/* A new transaction (zeroed, id assigned, t_start = now). */
kb_txn *kb_txn_new(kb_fabric *f, kb_msg msg, const kb_path *path, uint64_t nbytes);
/* Records t's hops in `log` (may be NULL), starting with its first node now. */
void kb_txn_set_log(kb_txn *t, kb_hoplog *log);
/* Gives t the operation's data (taken over); it moves to the response leg
 * and is released when the last leg is freed, or with the fabric. */
void kb_txn_set_data(kb_txn *t, kb_data *data);
/* Completes the operation: calls done(t, arg) now, then frees t. */
void kb_txn_complete(kb_txn *t);
/* Frees a transaction without completing it. */
void kb_txn_free(kb_txn *t);

/* Starts t at path[0] now, as if it had arrived there. */
void kb_fabric_inject(kb_fabric *f, kb_txn *t);
/* Sends a whole transaction from its current node (path[t->step]) to the
 * next one, as a train of flits, starting at `ready` (>= now). */
void kb_fabric_forward(kb_txn *t, kb_time ready);
/* Sends one flit from its node to the next at `ready` (>= now). A component
 * must send on each edge in non-decreasing `ready` order, which a serial
 * worker guarantees. */
void kb_fabric_send_flit(kb_flit *f, kb_time ready);
void kb_fabric_free_flit(kb_fabric *f, kb_flit *fl);
/* Runs fn(t) at time `at` (>= now): for components that finish a
 * transaction later, without blocking their worker. */
void kb_fabric_at(kb_txn *t, kb_time at, void (*fn)(kb_txn *t));
/* A response to `req` (which must be at the last node of its path) on the
 * reverse path, carrying `nbytes`, sent at `ready`; req is consumed. */
void kb_fabric_respond(kb_txn *req, uint64_t nbytes, kb_time ready);

/* Whether the flit or transaction is at the last node of its path. */
static inline bool kb_flit_at_end(const kb_flit *f) { return f->hop + 1 == f->txn->path->n; }

/* Fails the simulation with a message naming the component. */
void kb_comp_fail(kb_comp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
