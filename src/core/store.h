/* Store: a FIFO of items with an optional capacity, with SimPy's semantics.
 *
 * Every put and get is a request. Requests wait in arrival order (putters
 * while the store is full, getters while it is empty) and only the first
 * waiting request of a kind is tried, as in SimPy's Store. A request that
 * can be served completes at once (the item moves) and is then processed
 * through the queue at the current time: processing a put tries the first
 * waiting getter, processing a get the first waiting putter, and then
 * wakes the requester. See waiter.h for the blocking convention and
 * sim.h (kb_sim_can_continue) for when a process need not wait for its own
 * request's processing.
 *
 * A store belongs to its simulation: kb_store_close gives it up, and it is
 * freed once no processing of its requests is queued (or with the
 * simulation). */
#ifndef KB_CORE_STORE_H
#define KB_CORE_STORE_H

#include "core/list.h"
#include "core/request.h"
#include "core/types.h"
#include "core/waiter.h"

struct kb_store {
    kb_waitable w;
    kb_sim *sim;
    char *name;      /* owned */
    size_t capacity; /* 0 = unbounded */
    kb_item *ring;
    size_t head, count, ring_cap;
    kb_link getters, putters; /* requests not yet served */
    kb_owned owned; /* its simulation owns it (sim_internal.h) */
};

/* capacity 0 means unbounded. name is copied; NULL is allowed. */
kb_store *kb_store_new(kb_sim *sim, const char *name, size_t capacity);
/* The owner is done with st: waiters still queued are detached without
 * being woken; st is freed when nothing queued refers to it. */
void kb_store_close(kb_store *st);

/* Put. With w (a process or component waiting): the request queues
 * holding the item and follows waiter.h. Without w (from outside any
 * process): true if the item went in at once (its processing is queued),
 * false and nothing happens if the put would have to wait. */
bool kb_store_put(kb_store *st, kb_item item, kb_waiter *w);
/* Get. With w: as put; the item arrives in w->item (or *out when true).
 * Without w: true with *out set if an item could be taken at once. */
bool kb_store_get(kb_store *st, kb_item *out, kb_waiter *w);

/* Requests as events (request.h): r joins the queue behind every earlier
 * put (get) and is served by the same rules; its event succeeds when it is
 * (a get's value: the item). The item of a put request stays in r->qw.item
 * until served; after a cancel it is the caller's again. */
void kb_store_put_request(kb_store *st, kb_request *r, kb_item item);
void kb_store_get_request(kb_store *st, kb_request *r);

/* An interrupt (SimPy withdraws the process, its request goes on): r takes
 * over w, a blocking put or get (`kind`) of a process, with w's item. If w
 * still waits, r waits in its place in the queue and is a request as
 * above. If w was served and its processing is queued, that processing
 * goes on for r (it serves the other side) and then calls
 * served_done(sim, &r->qw) instead of waking anybody; r's event is not
 * triggered (kb_request_settle). w is free afterwards. */
void kb_store_adopt(kb_store *st, kb_request *r, kb_waiter *w, kb_request_kind kind,
                    kb_callback served_done);

static inline size_t kb_store_count(const kb_store *st) { return st->count; }

void kb_store_describe(const kb_store *st, char *buf, size_t n);

#endif
