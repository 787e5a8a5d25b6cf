/* Requests as events: a put to or get from a store, or a resource request,
 * made without waiting (SimPy's StorePut, StoreGet and Request events).
 *
 * A request joins its object's queue at once, behind every earlier request
 * of its kind, blocking calls (waiter.h) and requests alike, and is served
 * by the same rules (store.h, resource.h). Being served triggers its event,
 * which is then processed through the queue at the current time: processing
 * first does what the object's own callback does in SimPy (a put's serves
 * the first waiting getter, a get's the first waiting putter), then wakes
 * whatever waits on the event, processes and conditions, in the order they
 * began to wait. A request that has not been served can be cancelled: it
 * leaves the queue and its event stays pending.
 *
 * The owner embeds the kb_request and keeps it valid while
 * kb_request_busy() (queued, its event triggered but not processed, or
 * holding a resource slot); kb_request_fini drops it afterwards. */
#ifndef KB_CORE_REQUEST_H
#define KB_CORE_REQUEST_H

#include "core/event.h"
#include "core/list.h"
#include "core/types.h"
#include "core/waiter.h"

typedef enum kb_request_kind {
    KB_REQ_PUT = 1, /* to a store */
    KB_REQ_GET,     /* from a store */
    KB_REQ_ACQUIRE, /* a resource slot */
    KB_REQ_SH_PUT,  /* to a shared object (shared.h): a put, or a priority resource's request */
    KB_REQ_SH_GET   /* from a shared object */
} kb_request_kind;

struct kb_request {
    kb_waiter qw;   /* in the object's queue while pending (qw.request is set);
                       qw.target: the object; qw.item: a put's item, a get's once served */
    kb_waiter hook; /* the event's first waiter: the object's part of processing */
    kb_event *ev;   /* one reference */
    kb_link user;   /* in a resource's users while it holds a slot */
    kb_time since;  /* when a resource request was granted */
    uint8_t kind;   /* kb_request_kind */
    bool preempt;   /* a priority resource's request may preempt */
    bool cancelled; /* withdrawn by kb_request_cancel before it was served */
    double key;     /* a priority store's item priority, a priority request's priority,
                       a container's amount */
    kb_time time;   /* when a priority resource's request was made */
    kb_proc *proc;  /* the process that made it, if any (preemption interrupts it) */
    /* Optional: told after the object's part of the event's processing
     * (before any waiter is woken). */
    void (*on_processed)(kb_request *r);
};

/* True while the request must stay where it is (see the header comment). */
bool kb_request_busy(const kb_request *r);
/* True while the request waits in its object's queue. */
static inline bool kb_request_pending(const kb_request *r) { return kb_waiter_queued(&r->qw); }
/* Withdraws a request not served yet from its object's queue (SimPy's
 * cancel): true if it was queued (it is then `cancelled`, and its event,
 * which stays pending, is described so); false, and nothing changes, if it
 * was already served (or cancelled). Nothing else is served by a cancel. */
bool kb_request_cancel(kb_request *r);
/* Drops the request's event reference; the request should not be busy
 * (kb_request_cancel and a resource's release first): one still queued or
 * triggered is detached (its object's part of processing then never runs),
 * and it must not hold a slot. */
void kb_request_fini(kb_request *r);

/* A request that took over a served blocking call (kb_store_adopt): its
 * event becomes processed without being queued, once that call's
 * processing has run. */
void kb_request_settle(kb_request *r);

/* "get request #12 from store 'q'" */
void kb_request_label(const kb_request *r, char *buf, size_t n);

/* For the objects' files: sets up r with a new event whose first waiter is
 * `processed` (the object's part), and r->qw for `target`'s queue. */
void kb_request_init(kb_sim *sim, kb_request *r, kb_request_kind kind, void *target,
                     kb_callback processed);
/* For the objects' files: r was served; its event succeeds with `value`.
 * `o` is the object's kb_owned header: it stays alive until processed. */
void kb_request_grant(kb_request *r, kb_owned *o, kb_item value);
/* For the objects' files, at the end of their `processed` callback. */
void kb_request_processed(kb_request *r, kb_owned *o);

#endif
