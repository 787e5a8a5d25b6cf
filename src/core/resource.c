#include "core/resource.h"

#include "core/request.h"
#include "core/sim_internal.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

static void destroy(kb_owned *o)
{
    kb_resource *r = KB_CONTAINER_OF(o, kb_resource, owned);
    kb_waiter_cancel_all(&r->waiters);
    while (kb_list_pop_front(&r->users))
        ;
    free(r->name);
    free(r);
}

kb_resource *kb_resource_new(kb_sim *sim, const char *name, size_t capacity)
{
    kb_resource *r = kb_xcalloc(1, sizeof *r);
    r->w.kind = KB_WAITABLE_RESOURCE;
    r->sim = sim;
    r->name = kb_xstrdup(name);
    r->capacity = capacity;
    kb_list_init(&r->waiters);
    kb_list_init(&r->users);
    kb_sim_own(sim, &r->owned, destroy);
    return r;
}

void kb_resource_close(kb_resource *r)
{
    kb_waiter_cancel_all(&r->waiters);
    while (kb_list_pop_front(&r->users))
        ;
    kb_owned_close(&r->owned);
}

/* SimPy's _trigger_put: the first waiting request gets a free slot. */
static kb_waiter *admit(kb_resource *r)
{
    if (kb_list_empty(&r->waiters) || r->in_use >= r->capacity)
        return NULL;
    r->in_use++;
    return kb_waiter_take_first(&r->waiters);
}

static void schedule(kb_resource *r, kb_callback processed, void *arg)
{
    kb_owned_schedule(r->sim, &r->owned, processed, arg);
}

static void processed_one(kb_resource *r) { kb_owned_ran(&r->owned); }

/* Processing a granted request wakes its requester (releases never wait,
 * so there is nothing else to try). */
static void acquire_processed(kb_sim *sim, void *arg)
{
    kb_waiter *w = arg;
    processed_one(w->target);
    w->ok = true;
    kb_sim_resuming_last(sim, w->proc);
    w->wake(sim, w);
}

/* A granted request: a blocking acquire's processing is queued; a request
 * (request.h) becomes a user and its event is triggered. */
static void grant(kb_resource *r, kb_waiter *w)
{
    if (!w->request) {
        schedule(r, acquire_processed, w);
        return;
    }
    kb_request *req = KB_CONTAINER_OF(w, kb_request, qw);
    kb_list_push_back(&r->users, &req->user);
    r->nusers++;
    req->since = r->sim->now;
    kb_request_grant(req, &r->owned, KB_ITEM_NONE);
}

static void release_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_resource *r = arg;
    kb_waiter *w = admit(r);
    if (w)
        grant(r, w);
    processed_one(r);
}

bool kb_resource_acquire(kb_resource *r, kb_waiter *w)
{
    if (!w) {
        if (!kb_list_empty(&r->waiters) || r->in_use >= r->capacity)
            return false;
        r->in_use++;
        return true;
    }
    w->target = r;
    kb_waiter_enqueue(&r->waiters, w, &r->w, "to acquire");
    kb_waiter *granted = admit(r);
    if (granted == w && kb_sim_can_continue(r->sim, w->proc)) {
        kb_sim_count_inline(r->sim); /* this request's processing, done here */
        return true;
    }
    if (granted)
        grant(r, granted);
    return false;
}

bool kb_resource_release(kb_resource *r)
{
    if (r->in_use == r->nusers) /* no slot taken by a blocking acquire */
        return false;
    r->in_use--;
    schedule(r, release_processed, r);
    return true;
}

/* ---- requests as events (request.h) ---- */

/* SimPy runs the resource's _trigger_get when a request is processed: its
 * releases never wait, so nothing is left to serve. */
static void request_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_request *req = KB_CONTAINER_OF(arg, kb_request, hook);
    kb_resource *r = req->qw.target;
    kb_request_processed(req, &r->owned);
}

void kb_resource_request(kb_resource *r, kb_request *req)
{
    kb_request_init(r->sim, req, KB_REQ_ACQUIRE, r, request_processed);
    kb_waiter_enqueue(&r->waiters, &req->qw, &r->w, "to acquire");
    kb_waiter *w = admit(r);
    if (w)
        grant(r, w);
}

void kb_resource_adopt(kb_resource *r, kb_request *req, kb_waiter *w, kb_callback served_done)
{
    kb_request_init(r->sim, req, KB_REQ_ACQUIRE, r, request_processed);
    if (kb_waiter_queued(w)) { /* not granted: the request waits in its place */
        kb_list_push_back(&w->link, &req->qw.link); /* just before w */
        kb_waiter_cancel(w);
        return;
    }
    /* Granted, its processing queued: the slot is the request's. */
    kb_list_push_back(&r->users, &req->user);
    r->nusers++;
    req->since = r->sim->now;
    req->qw.request = false;
    req->qw.wake = served_done;
    kb_sim_redirect(r->sim, acquire_processed, w, acquire_processed, &req->qw);
}

bool kb_resource_release_request(kb_resource *r, kb_request *req)
{
    bool held = kb_link_linked(&req->user);
    if (held) {
        kb_link_unlink(&req->user);
        r->nusers--;
        r->in_use--;
    }
    schedule(r, release_processed, r);
    return held;
}

void kb_resource_describe(const kb_resource *r, char *buf, size_t n)
{
    snprintf(buf, n, "resource '%s' (%zu of %zu in use, %zu waiting)", r->name ? r->name : "?",
             r->in_use, r->capacity, kb_list_count(&r->waiters));
}
