/* Inside the fabric: the instance's state and what its files share
 * (fabric.c the instance, txn.c transactions, delivery.c wires, flits and
 * delivery, fabric_trace.c the trace hooks). Not for components. */
#ifndef KB_FABRIC_FABRIC_INTERNAL_H
#define KB_FABRIC_FABRIC_INTERNAL_H

#include "fabric/fabric.h"

#include "mem/memstore.h"

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

/* Appends id (fabric.c). Not inline: the first flit of a wire and the
 * first count of a node call it, once each. */
void kb_fabric_idlist_add(kb_idlist *l, uint32_t id);

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

/* The slice of transaction t at path position hop, from its first flit's
 * arrival until `end` (fabric_trace.c; only when f->tr). */
void kb_fabric_trace_hop(kb_fabric *f, kb_txn *t, uint32_t hop, kb_time end, bool final);
/* Edge ei's utilisation counter, made on first use; NULL when its ends are
 * filtered out (only when f->wire_ctr). */
kb_tcounter *kb_fabric_wire_counter(kb_fabric *f, uint32_t ei);

#endif
