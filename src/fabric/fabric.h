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
 * Hot path: one event per flit per hop, no allocation in the steady state
 * (flits, runs and transactions come from pools). A wire keeps its flits in
 * flight as runs (flits of one transaction sent back to back) and only the
 * oldest flit has an event in the queue, under the key it took when it was
 * sent (kb_sim_at_key), so events run in the order one event per flit
 * scheduled at its send would give, and a flit is materialised (kb_flit)
 * only while a component holds it: a train of a million flits waiting on
 * its first wire is one run. */
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

/* ---- messages ----
 *
 * The fabric moves transactions; what a transaction means is its kind,
 * defined by the component module that owns the message (memory accesses,
 * the host's and PE DMA's, in comp/mem_access.h; KernelLaunch, MMU updates
 * and Completion in comp/device/control.h ...), never here: a new message
 * needs no edit to the fabric. The fabric only names a kind (traces, errors,
 * statistics) and carries its payload: KB_TXN_PAYLOAD bytes inside the
 * transaction, written by the sender, read by the components that know the
 * kind's layout, and moved to the response leg by kb_fabric_respond. The
 * one kind the fabric defines is Response, its own return leg. */
#define KB_TXN_PAYLOAD 64

typedef struct kb_msg_kind {
    const char *name;      /* "MemoryWrite": trace slices, errors, statistics */
    const char *data_span; /* the slice of a response carrying data: "MemoryRead data" */
    const char *ack_span;  /* the slice of an empty response: "PeDmaWrite ack" */
    /* The payload's C type, for components that read payloads of several
     * kinds (a memory target serves every kb_mem_req kind): an address
     * owned by the module defining the layout, NULL for none. */
    const void *layout;
    /* Frees what a payload holds (its real bytes ...) when the operation's
     * last transaction is freed, also a zeroed payload (one whose contents
     * moved on); NULL if it holds nothing. */
    void (*release)(void *payload);
} kb_msg_kind;

/* A kind's descriptor whose response slices are "NAME data" / "NAME ack". */
#define KB_MSG_KIND(nm, layout_, release_) \
    {.name = nm, .data_span = nm " data", .ack_span = nm " ack", .layout = (layout_), .release = (release_)}

/* The fabric's return leg: a response to a request of another kind. */
extern const kb_msg_kind kb_msg_response;

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

struct kb_txn {
    uint64_t id;
    kb_fabric *fab;
    const kb_msg_kind *kind;
    const kb_msg_kind *request; /* the operation's kind (a response answers it; else == kind) */
    const kb_path *path;
    uint64_t nbytes;       /* payload carried on this leg (0 = control message) */
    uint32_t nflits;       /* flits of this leg */
    uint32_t last_bytes;   /* payload of the last flit (0 for a control message) */
    uint32_t step;         /* path position of a whole (reassembled) transaction */
    kb_time t_start;       /* when the operation was issued */
    kb_txn_done_fn done;   /* fired once when the operation completes */
    void *done_arg;
    kb_hoplog *log;        /* optional; shared by every leg of the operation */
    uint32_t log_base;     /* log index of this leg's hop 0 */
    void (*then)(kb_txn *t); /* pending kb_fabric_at callback */
    /* scratch of the component holding the transaction: a time and a queue link */
    kb_time t_mark;
    kb_txn *next;
    uint64_t flow;         /* trace flow id: the operation's first transaction */
    kb_time *tr_first;     /* tracing only: first-flit arrival per path node */
    kb_txn *lprev, *lnext; /* the fabric's live list (for inspection) */
    /* the kind's payload (zeroed by kb_txn_new; 8-byte aligned) */
    uint64_t payload[KB_TXN_PAYLOAD / 8];
};

/* The payload as its layout's type: KB_PAYLOAD(t, kb_mem_req). */
#define KB_PAYLOAD(t, type) ((type *)(void *)(t)->payload)
/* For a layout's header: fails the build if a payload type does not fit. */
#define KB_PAYLOAD_FITS(type) _Static_assert(sizeof(type) <= KB_TXN_PAYLOAD, #type " exceeds KB_TXN_PAYLOAD")

/* One flit at a component: it travels with its transaction along the path.
 * on_flit lends it for the call (kept false); a component that holds it
 * past the call takes its own copy with kb_fabric_keep_flit. */
typedef struct kb_flit {
    kb_txn *txn;
    uint32_t idx;   /* 0 .. txn->nflits-1 */
    uint32_t hop;   /* path position it is at or travelling to */
    uint32_t bytes;
    bool kept;      /* from kb_fabric_keep_flit: the fabric frees it when done */
} kb_flit;

/* Per-edge wire state and counters; set up by the edge's first flit (its
 * fields are zero until then: kb_fabric_active_edges lists the others). */
typedef struct kb_wire {
    kb_time avail;      /* when the wire can start sending the next flit */
    int64_t prop_ps;
    int64_t flit_ser_ps; /* a full flit's serialisation, computed once */
    uint64_t bytes, flits;
    kb_time busy_ps;    /* total serialisation time */
    kb_time max_wait_ps; /* longest a flit waited for the wire (queueing) */
    /* Flits in flight, oldest first, as runs (delivery.c): only the oldest
     * has an event in the queue. */
    struct kb_run *head, *tail;
    struct kb_comp *to; /* the edge's destination: where its flits arrive */
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

/* What a component does with a whole transaction of one kind that ends at
 * it (see kb_comp_ops.handlers). */
typedef struct kb_msg_handler {
    const kb_msg_kind *kind;
    void (*fn)(kb_comp *c, kb_txn *t);
} kb_msg_handler;

/* Behaviour of an implementation (kb_impl.ops points at one of these). */
typedef struct kb_comp_ops {
    bool flit_aware;
    /* Components that receive whole transactions and act on their kind
     * list a handler per kind they take (ended by {NULL, NULL}): a
     * transaction ending at the component goes to its kind's handler, and
     * one of a kind it does not list is an error naming both. NULL: every
     * transaction goes to on_txn. Passing ones always go to on_txn. A
     * flit-aware component sees flits only, so it may not list handlers. */
    const kb_msg_handler *handlers;
    void (*init)(kb_comp *c);        /* optional: allocate c->state */
    void (*fini)(kb_comp *c);        /* optional */
    /* Flit-aware components: returns when the (lent) flit leaves for the
     * next node of its path (>= now; the fabric sends it), or KB_FLIT_TAKEN
     * when the component ended it, kept it (kb_fabric_keep_flit) or sent
     * it itself. */
    kb_time (*on_flit)(kb_comp *c, kb_flit *f);
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

/* Records a node as active (kb_comp_count calls it on its first count). */
void kb_fabric_note_active(kb_fabric *f, uint32_t node);

/* Counts transactions or flits at c (statistics list the components with
 * any; kb_fabric_active_nodes). */
static inline void kb_comp_count(kb_comp *c, uint64_t txns, uint64_t flits)
{
    if (__builtin_expect(c->txns == 0 && c->flits == 0, 0) && (txns || flits))
        kb_fabric_note_active(c->fab, c->node);
    c->txns += txns;
    c->flits += flits;
}

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
 * with *err if a node's implementation has no behaviour, or is flit-aware
 * and lists message handlers (which only whole transactions reach). */
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
/* The nodes that counted a transaction or a flit, and the edges that
 * carried a flit, in index order: what the statistics list, kept as the
 * counters first move so a report costs the active part, not the tray. */
size_t kb_fabric_active_nodes(kb_fabric *f, const uint32_t **ids);
size_t kb_fabric_active_edges(kb_fabric *f, const uint32_t **ids);

/* A new transaction of `kind` (zeroed payload, id assigned, t_start = now). */
kb_txn *kb_txn_new(kb_fabric *f, const kb_msg_kind *kind, const kb_path *path, uint64_t nbytes);
/* Records t's hops in `log` (may be NULL), starting with its first node now. */
void kb_txn_set_log(kb_txn *t, kb_hoplog *log);
/* Completes the operation: calls done(t, arg) now, then frees t. */
void kb_txn_complete(kb_txn *t);
/* Frees a transaction without completing it (its kind's release runs). */
void kb_txn_free(kb_txn *t);

/* Starts t at path[0] now, as if it had arrived there. */
void kb_fabric_inject(kb_fabric *f, kb_txn *t);
/* Starts t from path[0] now as a message that node has already handled: a
 * component passing on what it received (a fan-out step) pays no overhead
 * again. The node counts it as it would an injected one. */
void kb_fabric_send(kb_fabric *f, kb_txn *t);
/* Sends a whole transaction from its current node (path[t->step]) to the
 * next one, as a train of flits, starting at `ready` (>= now). */
void kb_fabric_forward(kb_txn *t, kb_time ready);
/* Sends one flit from its node to the next at `ready` (>= now); the flit
 * (lent or kept) goes back to the fabric (it is in flight until it
 * arrives). A component must send on each edge in non-decreasing `ready`
 * order, which a serial worker guarantees. */
void kb_fabric_send_flit(kb_flit *f, kb_time ready);
/* A flit the component is done with (it ended here). */
void kb_fabric_free_flit(kb_fabric *f, kb_flit *fl);
/* A copy of a lent flit that outlives on_flit (sent or freed later). */
kb_flit *kb_fabric_keep_flit(kb_fabric *f, const kb_flit *fl);
/* on_flit's answer when the fabric is not to send the flit on. */
#define KB_FLIT_TAKEN ((kb_time)-1)
/* Runs fn(t) at time `at` (>= now): for components that finish a
 * transaction later, without blocking their worker. */
void kb_fabric_at(kb_txn *t, kb_time at, void (*fn)(kb_txn *t));
/* A response to `req` (which must be at the last node of its path) on the
 * reverse path, carrying `nbytes`, sent at `ready`; req is consumed and its
 * payload moves to the response. */
void kb_fabric_respond(kb_txn *req, uint64_t nbytes, kb_time ready);

/* The component holding whole transaction t (the one at path[t->step]). */
static inline kb_comp *kb_txn_comp(kb_txn *t) { return kb_fabric_comp(t->fab, t->path->nodes[t->step]); }

/* Whether the flit or transaction is at the last node of its path. */
static inline bool kb_flit_at_end(const kb_flit *f) { return f->hop + 1 == f->txn->path->n; }

/* Fails the simulation with a message naming the component. */
void kb_comp_fail(kb_comp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
