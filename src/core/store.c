#include "core/store.h"

#include "core/proc.h"
#include "core/request.h"
#include "core/sim_internal.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

static void destroy(kb_owned *o)
{
    kb_store *st = KB_CONTAINER_OF(o, kb_store, owned);
    kb_waiter_cancel_all(&st->getters);
    kb_waiter_cancel_all(&st->putters);
    free(st->ring);
    free(st->name);
    free(st);
}

kb_store *kb_store_new(kb_sim *sim, const char *name, size_t capacity)
{
    kb_store *st = kb_xcalloc(1, sizeof *st);
    st->w.kind = KB_WAITABLE_STORE;
    st->sim = sim;
    st->name = kb_xstrdup(name);
    st->capacity = capacity;
    kb_list_init(&st->getters);
    kb_list_init(&st->putters);
    kb_sim_own(sim, &st->owned, destroy);
    return st;
}

void kb_store_close(kb_store *st)
{
    kb_waiter_cancel_all(&st->getters);
    kb_waiter_cancel_all(&st->putters);
    kb_owned_close(&st->owned);
}

static bool full(const kb_store *st) { return st->capacity && st->count >= st->capacity; }

/* Out of line: ring_push stays small enough to inline on every put. */
static void ring_grow(kb_store *st)
{
    size_t cap = st->ring_cap ? st->ring_cap * 2 : 16; /* a power of two: indices wrap by mask */
    kb_item *ring = kb_xmalloc(cap * sizeof *ring);
    for (size_t i = 0; i < st->count; i++)
        ring[i] = st->ring[(st->head + i) & (st->ring_cap - 1)];
    free(st->ring);
    st->ring = ring;
    st->ring_cap = cap;
    st->head = 0;
}

static inline void ring_push(kb_store *st, kb_item item)
{
    if (st->count == st->ring_cap)
        ring_grow(st);
    st->ring[(st->head + st->count) & (st->ring_cap - 1)] = item;
    st->count++;
}

static kb_item ring_pop(kb_store *st)
{
    kb_item item = st->ring[st->head];
    st->head = (st->head + 1) & (st->ring_cap - 1);
    st->count--;
    return item;
}

/* ---- serving requests (SimPy's _trigger_put / _trigger_get) ---- */

/* The first waiting putter, if there is room: its item goes in. */
static kb_waiter *admit_putter(kb_store *st)
{
    if (kb_list_empty(&st->putters) || full(st))
        return NULL;
    kb_waiter *w = kb_waiter_take_first(&st->putters);
    ring_push(st, w->item);
    return w;
}

/* The first waiting getter, if there is an item: it gets the oldest. */
static kb_waiter *admit_getter(kb_store *st)
{
    if (kb_list_empty(&st->getters) || st->count == 0)
        return NULL;
    kb_waiter *w = kb_waiter_take_first(&st->getters);
    w->item = ring_pop(st);
    w->ok = true;
    return w;
}

static void schedule(kb_store *st, kb_callback processed, void *arg)
{
    kb_owned_schedule(st->sim, &st->owned, processed, arg);
}

static void processed_one(kb_store *st) { kb_owned_ran(&st->owned); }

/* A served request: a blocking one's processing is queued (`processed`),
 * a request's event is triggered with `value`; both at the current time. */
static void grant(kb_store *st, kb_waiter *w, kb_callback processed, kb_item value)
{
    if (w->request)
        kb_request_grant(KB_CONTAINER_OF(w, kb_request, qw), &st->owned, value);
    else
        schedule(st, processed, w);
}

static void serve_getter(kb_store *st);
static void serve_putter(kb_store *st);

/* Processing a put tries the first getter, a get the first putter
 * (`serve`); a waiter's requester is then resumed, as the event's last
 * action. */
static void finish(kb_sim *sim, kb_waiter *w, void (*serve)(kb_store *st))
{
    kb_store *st = w->target;
    serve(st);
    processed_one(st);
    sim->last_resumed = w->proc; /* kb_sim_resuming_last */
    w->wake(sim, w);
}

static void put_processed(kb_sim *sim, void *arg) { finish(sim, arg, serve_getter); }
static void get_processed(kb_sim *sim, void *arg) { finish(sim, arg, serve_putter); }

/* The same for a put or get from outside any process: nobody to resume. */
static void anonymous_put_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    serve_getter(arg);
    processed_one(arg);
}

static void anonymous_get_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    serve_putter(arg);
    processed_one(arg);
}

static void serve_putter(kb_store *st)
{
    kb_waiter *w = admit_putter(st);
    if (w)
        grant(st, w, put_processed, KB_ITEM_NONE);
}

static void serve_getter(kb_store *st)
{
    kb_waiter *w = admit_getter(st);
    if (w)
        grant(st, w, get_processed, w->item);
}

/* ---- operations ---- */

bool kb_store_put(kb_store *st, kb_item item, kb_waiter *w)
{
    if (!w) {
        if (!kb_list_empty(&st->putters) || full(st))
            return false;
        ring_push(st, item);
        schedule(st, anonymous_put_processed, st);
        return true;
    }
    w->item = item;
    w->ok = true;
    w->target = st;
    kb_waiter *served;
    if (kb_list_empty(&st->putters) && !full(st)) {
        /* Queued then admitted at once: the same as the path below, without
         * the queue round trip. */
        if (w->proc)
            kb_proc_clear_wait(w->proc);
        ring_push(st, item);
        served = w;
    } else {
        kb_waiter_enqueue(&st->putters, w, &st->w, "to put to");
        served = admit_putter(st);
    }
    if (served == w && kb_sim_can_continue(st->sim, w->proc)) {
        kb_sim_count_inline(st->sim); /* this put's processing, done here */
        serve_getter(st);
        return true;
    }
    if (served)
        grant(st, served, put_processed, KB_ITEM_NONE);
    return false;
}

bool kb_store_get(kb_store *st, kb_item *out, kb_waiter *w)
{
    if (!w) {
        if (!kb_list_empty(&st->getters) || st->count == 0)
            return false;
        *out = ring_pop(st);
        schedule(st, anonymous_get_processed, st);
        return true;
    }
    w->target = st;
    kb_waiter *served;
    if (kb_list_empty(&st->getters) && st->count > 0) { /* as in kb_store_put */
        if (w->proc)
            kb_proc_clear_wait(w->proc);
        w->item = ring_pop(st);
        w->ok = true;
        served = w;
    } else {
        kb_waiter_enqueue(&st->getters, w, &st->w, "to get from");
        served = admit_getter(st);
    }
    if (served == w && kb_sim_can_continue(st->sim, w->proc)) {
        kb_sim_count_inline(st->sim); /* this get's processing, done here */
        serve_putter(st);
        *out = w->item;
        return true;
    }
    if (served)
        grant(st, served, get_processed, served->item);
    return false;
}

/* ---- requests as events (request.h) ---- */

/* The store's part of a request's processing: SimPy's _trigger_get for a
 * put, _trigger_put for a get. */
static void put_request_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_request *r = KB_CONTAINER_OF(arg, kb_request, hook);
    kb_store *st = r->qw.target;
    serve_getter(st);
    kb_request_processed(r, &st->owned);
}

static void get_request_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_request *r = KB_CONTAINER_OF(arg, kb_request, hook);
    kb_store *st = r->qw.target;
    serve_putter(st);
    kb_request_processed(r, &st->owned);
}

void kb_store_put_request(kb_store *st, kb_request *r, kb_item item)
{
    kb_request_init(st->sim, r, KB_REQ_PUT, st, put_request_processed);
    r->qw.item = item;
    kb_waiter_enqueue(&st->putters, &r->qw, &st->w, "to put to");
    serve_putter(st); /* the first waiting put: this one, or one a cancel left first */
}

void kb_store_get_request(kb_store *st, kb_request *r)
{
    kb_request_init(st->sim, r, KB_REQ_GET, st, get_request_processed);
    kb_waiter_enqueue(&st->getters, &r->qw, &st->w, "to get from");
    serve_getter(st);
}

void kb_store_adopt(kb_store *st, kb_request *r, kb_waiter *w, kb_request_kind kind,
                    kb_callback served_done)
{
    bool put = kind == KB_REQ_PUT;
    kb_callback processed = put ? put_processed : get_processed;
    kb_request_init(st->sim, r, kind, st, put ? put_request_processed : get_request_processed);
    r->qw.item = w->item;
    if (kb_waiter_queued(w)) { /* not served: the request waits in its place */
        kb_list_push_back(&w->link, &r->qw.link); /* just before w */
        kb_waiter_cancel(w);
        return;
    }
    /* Served, its processing queued: that processing goes on for r. */
    r->qw.request = false;
    r->qw.wake = served_done;
    kb_sim_redirect(st->sim, processed, w, processed, &r->qw);
}

void kb_store_describe(const kb_store *st, char *buf, size_t n)
{
    char cap[32] = "unbounded";
    if (st->capacity)
        snprintf(cap, sizeof cap, "capacity %zu", st->capacity);
    snprintf(buf, n, "store '%s' (%zu items, %s, %zu getters and %zu putters waiting)",
             st->name ? st->name : "?", st->count, cap, kb_list_count(&st->getters),
             kb_list_count(&st->putters));
}
