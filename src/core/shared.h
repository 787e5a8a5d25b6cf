/* Shared objects with SimPy's general request loop (BaseResource): the
 * Container, the priority and filter stores and the priority (preemptive)
 * resource. The FIFO Store and the plain Resource have their own, faster
 * files (store.h, resource.h); these take requests only (request.h): a
 * blocking call is a request waited on.
 *
 * A put request joins the put queue (a kind may keep it sorted) and the
 * put queue is tried at once; processing a put tries the get queue, and
 * processing a get the put queue. Trying a queue is SimPy's loop: from the
 * head, each request is offered to the kind's do_put / do_get, which serves
 * it or not (kb_shared_grant) and says whether to go on to the next; a
 * served request leaves the queue.
 *
 * A shared object belongs to its simulation, as a store does. */
#ifndef KB_CORE_SHARED_H
#define KB_CORE_SHARED_H

#include "core/list.h"
#include "core/request.h"
#include "core/types.h"

typedef struct kb_shared kb_shared;

typedef struct kb_shared_ops {
    const char *what; /* "container", "priority store" ... for messages */
    const char *put_noun, *put_prep; /* "put request", "to": "put request #3 to container 'c'" */
    /* Offer r (the head, or a later one when the last call said go on):
     * serve it with kb_shared_grant, or not; return true to go on. */
    bool (*do_put)(kb_shared *sh, kb_request *r);
    bool (*do_get)(kb_shared *sh, kb_request *r);
    /* Where a new put request goes in the put queue (NULL: at the back). */
    void (*enqueue_put)(kb_shared *sh, kb_request *r);
    /* The kind's own state, freed with the object (may be NULL). */
    void (*destroy)(kb_shared *sh);
    /* A state line for reports, after "<what> 'name' (". */
    void (*describe)(const kb_shared *sh, char *buf, size_t n);
} kb_shared_ops;

struct kb_shared {
    kb_waitable w;
    kb_sim *sim;
    char *name; /* owned */
    const kb_shared_ops *ops;
    kb_link putq, getq; /* requests waiting (kb_request.qw), in queue order */
    kb_owned owned;
    void *ctx; /* the kind's state */
};

/* A new object of the kind `ops` (name copied, NULL allowed). */
kb_shared *kb_shared_new(kb_sim *sim, const kb_shared_ops *ops, const char *name, void *ctx);
/* The owner is done with it (as kb_store_close). */
void kb_shared_close(kb_shared *sh);

/* Requests: r's payload (qw.item, key ...) set by the caller first. */
void kb_shared_put(kb_shared *sh, kb_request *r);
void kb_shared_get(kb_shared *sh, kb_request *r);
/* For the kinds: r is served now; its event succeeds with value. */
void kb_shared_grant(kb_shared *sh, kb_request *r, kb_item value);
/* For the kinds: try the put (get) queue as processing a get (put) does. */
void kb_shared_trigger_put(kb_shared *sh);
void kb_shared_trigger_get(kb_shared *sh);
/* For the kinds: trying the put queue, at the current time, as a queued
 * event (a resource's release). */
void kb_shared_schedule_trigger_put(kb_shared *sh);

void kb_shared_describe(const kb_shared *sh, char *buf, size_t n);

#endif
