/* Resource: N identical slots, with SimPy's semantics.
 *
 * An acquire is a request: requests wait in arrival order and only the
 * first waiting one is tried. A request granted a slot completes at once
 * and is processed through the queue at the current time, which wakes the
 * requester. A release frees its slot at once; processing the release
 * (queued at the current time) grants the slot to the first waiting
 * request. See waiter.h for the blocking convention and sim.h
 * (kb_sim_can_continue) for when a process need not wait for its own
 * request's processing.
 *
 * A resource belongs to its simulation: kb_resource_close gives it up, and
 * it is freed once no processing of its requests is queued (or with the
 * simulation). */
#ifndef KB_CORE_RESOURCE_H
#define KB_CORE_RESOURCE_H

#include "core/list.h"
#include "core/request.h"
#include "core/types.h"
#include "core/waiter.h"

struct kb_resource {
    kb_waitable w;
    kb_sim *sim;
    char *name; /* owned */
    size_t capacity;
    size_t in_use;
    kb_link waiters;
    kb_link users;  /* granted requests (request.h), in grant order */
    size_t nusers;  /* their count; in_use - nusers slots are held by blocking acquires */
    kb_owned owned; /* its simulation owns it (sim_internal.h) */
};

/* capacity >= 1; name is copied (NULL allowed). */
kb_resource *kb_resource_new(kb_sim *sim, const char *name, size_t capacity);
/* The owner is done with r: waiters still queued are detached without
 * being woken; r is freed when nothing queued refers to it. */
void kb_resource_close(kb_resource *r);

/* Acquire. With w (a process or component waiting): follows waiter.h.
 * Without w (from outside any process): true if a slot was taken at once,
 * false and nothing happens if the acquire would have to wait. */
bool kb_resource_acquire(kb_resource *r, kb_waiter *w);
/* Frees a slot taken by a blocking acquire. False if none is held:
 * releasing more than was acquired is a caller bug. */
bool kb_resource_release(kb_resource *r);

/* A request as an event (request.h): queued behind every earlier acquire
 * and request, granted by the same rules; once granted it is one of the
 * users until released. */
void kb_resource_request(kb_resource *r, kb_request *req);
/* An interrupt: req takes over w, a process's blocking acquire, as
 * kb_store_adopt does (store.h); a granted one makes req a user. */
void kb_resource_adopt(kb_resource *r, kb_request *req, kb_waiter *w, kb_callback served_done);
/* SimPy's release(req): frees req's slot if it holds one (true) and, held
 * or not, queues a release whose processing grants the first waiter. A
 * request still waiting stays queued (cancel it first). */
bool kb_resource_release_request(kb_resource *r, kb_request *req);

static inline size_t kb_resource_queued(const kb_resource *r) { return kb_list_count(&r->waiters); }

void kb_resource_describe(const kb_resource *r, char *buf, size_t n);

#endif
