#include "core/event.h"

#include "core/proc.h"
#include "core/request.h"
#include "core/sim_internal.h"
#include "core/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* A child waiter of a condition knows its condition and its position. */
typedef struct cond_waiter {
    kb_waiter w;
    kb_cond *cond;
    size_t index;
} cond_waiter;

struct kb_cond {
    bool any;
    /* Its waiters may be queued on children: it holds a reference on self
     * meanwhile, as SimPy's children keep a condition alive through their
     * callbacks, so it fires and takes failures with no other owner. */
    bool listening;
    size_t n, done;
    int index; /* child that decided the outcome, -1 until then */
    kb_event *self;
    kb_event **children;
    cond_waiter *waiters;
};

/* The condition of a condition event, NULL for every other kind. */
static inline kb_cond *cond_of(const kb_event *ev)
{
    return ev->kind == KB_EVENT_COND ? ev->cond : NULL;
}

void kb_event_pool_init(kb_sim *sim) { kb_pool_init(&sim->event_pool, sizeof(kb_event), 256); }

void kb_event_pool_destroy(kb_sim *sim)
{
    /* Conditions and names hang off pooled events that may still be live
     * when the simulation is freed; release them before the chunks go. */
    kb_pool *pool = &sim->event_pool;
    for (size_t c = 0; c < pool->nchunks; c++) {
        char *chunk = pool->chunks[c];
        for (size_t i = 0, used = kb_pool_chunk_used(pool, c); i < used; i++) {
            kb_event *ev = (kb_event *)(void *)(chunk + i * pool->obj_size);
            if (ev->sim == sim && ev->refs > 0) {
                kb_cond *cd = cond_of(ev);
                if (cd) {
                    free(cd->children);
                    free(cd->waiters);
                    free(cd);
                }
                free(ev->name);
            }
        }
    }
    kb_pool_destroy(pool);
}

kb_event *kb_event_new(kb_sim *sim)
{
    kb_event *ev = kb_pool_alloc(&sim->event_pool);
    ev->w.kind = KB_WAITABLE_EVENT;
    ev->sim = sim;
    ev->refs = 1;
    ev->state = KB_EVENT_PENDING;
    ev->ok = true;
    kb_list_init(&ev->waiters);
    ev->id = ++sim->next_event_id;
    return ev;
}

void kb_event_ref(kb_event *ev) { ev->refs++; }

static void cond_free(kb_cond *c)
{
    for (size_t i = 0; i < c->n; i++) {
        kb_waiter_cancel(&c->waiters[i].w);
        kb_event_unref(c->children[i]);
    }
    free(c->children);
    free(c->waiters);
    free(c);
}

void kb_event_unref(kb_event *ev)
{
    if (--ev->refs > 0)
        return;
    /* Nobody can trigger it any more: waiters still queued would never be
     * woken. Owners of waiters hold a reference, so this is only reachable
     * through misuse; detach them rather than leave dangling links. */
    kb_waiter_cancel_all(&ev->waiters);
    kb_sim *sim = ev->sim;
    if (cond_of(ev))
        cond_free(ev->cond);
    free(ev->name);
    ev->sim = NULL;
    kb_pool_free(&sim->event_pool, ev);
}

void kb_event_set_name(kb_event *ev, const char *name)
{
    free(ev->name);
    ev->name = kb_xstrdup(name);
}

void kb_event_set_unhandled(kb_sim *sim, kb_unhandled_fn fn, void *ctx)
{
    sim->on_unhandled = fn;
    sim->unhandled_ctx = ctx;
}

static void unhandled(kb_sim *sim, kb_event *ev)
{
    if (sim->on_unhandled) {
        sim->on_unhandled(sim->unhandled_ctx, ev);
        return;
    }
    char what[200];
    kb_event_label(ev, what, sizeof what);
    kb_sim_fail(sim, "%s failed and nothing waited on it", what);
}

static void detach_nested(kb_cond *c);

static void event_process(kb_sim *sim, void *arg)
{
    kb_event *ev = arg;
    ev->state = KB_EVENT_PROCESSED;
    if (cond_of(ev))
        detach_nested(ev->cond);
    kb_link *l;
    while ((l = kb_list_pop_front(&ev->waiters)) != NULL) {
        kb_waiter *w = KB_CONTAINER_OF(l, kb_waiter, link);
        if (w->proc) {
            kb_proc_clear_wait(w->proc);
            if (!ev->ok) /* the process gets the failure raised */
                ev->defused = true;
        }
        w->item = ev->value;
        w->ok = ev->ok;
        kb_sim_resuming_last(sim, kb_list_empty(&ev->waiters) ? w->proc : NULL);
        w->wake(sim, w);
    }
    if (!ev->ok && !ev->defused)
        unhandled(sim, ev);
    kb_event_unref(ev); /* the reference held by the schedule */
}

static bool trigger(kb_event *ev, bool ok, kb_item value, kb_time delay)
{
    if (ev->state != KB_EVENT_PENDING)
        return false;
    ev->state = KB_EVENT_TRIGGERED;
    ev->ok = ok;
    ev->value = value;
    kb_event_ref(ev);
    kb_sim_after(ev->sim, delay, KB_PRIO_NORMAL, event_process, ev); /* fails the sim on a bad delay */
    return true;
}

bool kb_event_succeed(kb_event *ev, kb_item value) { return trigger(ev, true, value, 0); }

bool kb_event_fail(kb_event *ev, kb_item reason) { return trigger(ev, false, reason, 0); }

kb_event *kb_event_timeout(kb_sim *sim, kb_time delay, kb_item value)
{
    kb_event *ev = kb_event_new(sim);
    ev->kind = KB_EVENT_TIMEOUT;
    ev->delay = delay;
    trigger(ev, true, value, delay);
    return ev;
}

void kb_event_set_process(kb_event *ev, const kb_proc *proc)
{
    ev->kind = KB_EVENT_PROCESS;
    ev->proc_id = proc->id;
    kb_event_set_name(ev, proc->name);
}

bool kb_event_wait(kb_event *ev, kb_waiter *w)
{
    if (ev->state == KB_EVENT_PROCESSED) {
        w->item = ev->value;
        w->ok = ev->ok;
        return true;
    }
    kb_waiter_enqueue(&ev->waiters, w, &ev->w, "on");
    return false;
}

/* ---- conditions ---- */

/* The condition no longer watches its children (SimPy removes its
 * _check callbacks). May free c: nothing may touch it afterwards. */
static void stop_listening(kb_cond *c)
{
    for (size_t i = 0; i < c->n; i++)
        kb_waiter_cancel(&c->waiters[i].w);
    if (c->listening) {
        c->listening = false;
        kb_event_unref(c->self);
    }
}

/* Processing a condition detaches the conditions nested in it, however
 * deep, as SimPy's _remove_check_callbacks does: one still pending then
 * never fires. Children are held by their parents, so none is freed here. */
static void detach_nested(kb_cond *c)
{
    for (size_t i = 0; i < c->n; i++) {
        kb_cond *inner = cond_of(c->children[i]);
        if (inner) {
            stop_listening(inner);
            detach_nested(inner);
        }
    }
}

static void cond_settle(kb_cond *c, size_t index, bool ok, kb_item value)
{
    kb_event *self = c->self;
    if (self->state != KB_EVENT_PENDING)
        return;
    if (c->any || !ok) {
        c->index = (int)index;
        trigger(self, ok, value, 0);
        stop_listening(c); /* the outcome is known (trigger holds self) */
    } else if (c->done == c->n) {
        c->index = (int)index;
        trigger(self, true, (kb_item){.u = c->n}, 0);
        stop_listening(c);
    }
}

static void cond_child_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    cond_waiter *cw = arg;
    if (!cw->w.ok) /* a pending condition takes its child's failure */
        cw->cond->children[cw->index]->defused = true;
    cw->cond->done++;
    cond_settle(cw->cond, cw->index, cw->w.ok, cw->w.item);
}

static kb_event *cond_new(kb_sim *sim, kb_event *const *children, size_t n, bool any)
{
    kb_event *self = kb_event_new(sim);
    kb_cond *c = kb_xcalloc(1, sizeof *c);
    c->any = any;
    c->n = n;
    c->index = -1;
    c->self = self;
    c->children = kb_xcalloc(n, sizeof *c->children);
    c->waiters = kb_xcalloc(n, sizeof *c->waiters);
    self->kind = KB_EVENT_COND;
    self->cond = c;
    for (size_t i = 0; i < n; i++) {
        c->children[i] = children[i];
        kb_event_ref(children[i]);
        kb_waiter_init(&c->waiters[i].w, cond_child_processed, NULL);
        c->waiters[i].cond = c;
        c->waiters[i].index = i;
    }
    if (n == 0) {
        trigger(self, true, (kb_item){.u = 0}, 0);
        return self;
    }
    /* Children already processed count at once; stop as soon as the
     * outcome is known (any_of with a processed child, a failed child). */
    for (size_t i = 0; i < n && self->state == KB_EVENT_PENDING; i++) {
        if (kb_event_wait(children[i], &c->waiters[i].w)) {
            c->done++;
            cond_settle(c, i, c->waiters[i].w.ok, c->waiters[i].w.item);
        }
    }
    if (self->state == KB_EVENT_PENDING) {
        c->listening = true;
        kb_event_ref(self);
    }
    return self;
}

kb_event *kb_event_all_of(kb_sim *sim, kb_event *const *children, size_t n)
{
    return cond_new(sim, children, n, false);
}

kb_event *kb_event_any_of(kb_sim *sim, kb_event *const *children, size_t n)
{
    return cond_new(sim, children, n, true);
}

int kb_event_cond_index(const kb_event *ev) { return cond_of(ev) ? ev->cond->index : -1; }

kb_event *kb_event_cond_failed_child(const kb_event *ev)
{
    if (!cond_of(ev) || ev->ok || ev->state == KB_EVENT_PENDING || ev->cond->index < 0)
        return NULL;
    return ev->cond->children[ev->cond->index];
}

size_t kb_event_cond_done(const kb_event *ev) { return cond_of(ev) ? ev->cond->done : 0; }


void kb_event_label(const kb_event *ev, char *buf, size_t n)
{
    if (ev->kind == KB_EVENT_REQUEST && ev->req) {
        kb_request_label(ev->req, buf, n);
        return;
    }
    if (ev->kind == KB_EVENT_PROCESS) { /* as the process is named, not its event */
        snprintf(buf, n, "process '%s' #%" PRIu64, ev->name ? ev->name : "?", ev->proc_id);
        return;
    }
    const kb_cond *c = cond_of(ev);
    const char *kind = c ? (c->any ? "any_of event" : "all_of event")
                       : ev->kind == KB_EVENT_TIMEOUT ? "timeout"
                                                      : "event";
    if (ev->name)
        snprintf(buf, n, "%s '%s' #%" PRIu64, kind, ev->name, ev->id);
    else
        snprintf(buf, n, "%s #%" PRIu64, kind, ev->id);
}

void kb_event_describe(const kb_event *ev, char *buf, size_t n)
{
    static const char *const states[] = {"pending", "triggered", "processed"};
    char label[200], detail[64] = "";
    kb_event_label(ev, label, sizeof label);
    const char *state = states[ev->state];
    const kb_cond *c = cond_of(ev);
    if (c) {
        snprintf(detail, sizeof detail, ", %zu of %zu children processed", c->done, c->n);
    } else if (ev->kind == KB_EVENT_TIMEOUT) { /* "timeout #4 (5.000 ns, triggered)" */
        char delay[KB_TIME_STRLEN];
        snprintf(buf, n, "%s (%s, %s)", label, kb_time_format(ev->delay, delay), state);
        return;
    } else if (ev->kind == KB_EVENT_PROCESS) { /* its process's state, not its event's */
        state = ev->state == KB_EVENT_PENDING ? "alive" : ev->ok ? "finished" : "failed";
    } else if (ev->kind == KB_EVENT_REQUEST && ev->req && ev->req->cancelled &&
               ev->state == KB_EVENT_PENDING) { /* withdrawn: it will never be served */
        state = "cancelled";
    }
    snprintf(buf, n, "%s (%s%s)", label, state, detail);
}
