/* Waiters: how anything blocks in the core.
 *
 * Every blocking operation (wait on an event, get from or put to a store,
 * acquire a resource) follows one convention:
 *   bool op(object, ..., kb_waiter *w)
 * returns true when the caller may go on at once (the result is in w or an
 * out parameter), and false when w->wake(sim, w) will be called later,
 * with the result in w->item / w->ok. The waiter's memory must stay valid
 * until then; embed it in the process or component that waits. Waiters
 * are served in FIFO order.
 *
 * The waiter of a process (w->proc set) follows SimPy: an operation that
 * completes at once is still processed through the queue at the current
 * time, and w is woken then, unless nothing could tell the difference
 * (kb_sim_can_continue, sim.h), in which case op returns true. */
#ifndef KB_CORE_WAITER_H
#define KB_CORE_WAITER_H

#include "core/list.h"
#include "core/types.h"

struct kb_waiter {
    kb_link link;        /* in the queue of the object waited on */
    kb_callback wake;    /* called as wake(sim, waiter) */
    kb_proc *proc;       /* optional: the process this blocks, for reports */
    void *target;        /* the store or resource w has a request with */
    kb_item item;        /* value delivered on wake */
    bool ok;             /* false when the awaited event failed */
    bool request;        /* the queued half of a kb_request (request.h): granting
                            it triggers the request's event instead of waking */
};

static inline void kb_waiter_init(kb_waiter *w, kb_callback wake, kb_proc *proc)
{
    kb_list_init(&w->link);
    w->wake = wake;
    w->proc = proc;
    w->target = NULL;
    w->item = KB_ITEM_NONE;
    w->ok = true;
    w->request = false;
}

/* True while the waiter sits in some object's queue. */
static inline bool kb_waiter_queued(const kb_waiter *w) { return kb_link_linked(&w->link); }

/* Removes a queued waiter from whatever it waits on, without waking it. */
void kb_waiter_cancel(kb_waiter *w);

/* Queues w (if not NULL) at the back of queue; records on w's process what
 * it now waits on ("to get from" ... `on`) for quiescence reports. */
void kb_waiter_enqueue(kb_link *queue, kb_waiter *w, const kb_waitable *on, const char *op);

/* The first waiter of a non-empty queue, taken off it (kb_waiter_cancel). */
kb_waiter *kb_waiter_take_first(kb_link *queue);

/* Detaches every waiter of a queue without waking any (object teardown). */
void kb_waiter_cancel_all(kb_link *queue);

#endif
