#include "core/request.h"

#include "core/resource.h"
#include "core/shared.h"
#include "core/sim_internal.h"
#include "core/store.h"

#include <inttypes.h>
#include <stdio.h>

bool kb_request_busy(const kb_request *r)
{
    return kb_waiter_queued(&r->qw) || (r->ev && r->ev->state == KB_EVENT_TRIGGERED) ||
           kb_link_linked(&r->user);
}

bool kb_request_cancel(kb_request *r)
{
    if (!kb_waiter_queued(&r->qw))
        return false;
    kb_waiter_cancel(&r->qw);
    r->cancelled = true;
    return true;
}

void kb_request_fini(kb_request *r)
{
    if (!r->ev)
        return;
    /* Misuse (still busy) must not leave links into freed memory. */
    kb_waiter_cancel(&r->qw);
    kb_waiter_cancel(&r->hook);
    if (r->ev->req == r)
        r->ev->req = NULL; /* the event may outlive it (other references) */
    kb_event_unref(r->ev);
    r->ev = NULL;
}

void kb_request_label(const kb_request *r, char *buf, size_t n)
{
    uint64_t id = r->ev ? r->ev->id : 0;
    switch (r->kind) {
    case KB_REQ_PUT:
    case KB_REQ_GET: {
        const kb_store *st = r->qw.target;
        snprintf(buf, n, "%s request #%" PRIu64 " %s store '%s'", r->kind == KB_REQ_PUT ? "put" : "get",
                 id, r->kind == KB_REQ_PUT ? "to" : "from", st->name ? st->name : "?");
        return;
    }
    case KB_REQ_ACQUIRE: {
        const kb_resource *res = r->qw.target;
        snprintf(buf, n, "request #%" PRIu64 " for resource '%s'", id, res->name ? res->name : "?");
        return;
    }
    case KB_REQ_SH_PUT:
    case KB_REQ_SH_GET: {
        const kb_shared *sh = r->qw.target;
        bool put = r->kind == KB_REQ_SH_PUT;
        snprintf(buf, n, "%s #%" PRIu64 " %s %s '%s'", put ? sh->ops->put_noun : "get request", id,
                 put ? sh->ops->put_prep : "from", sh->ops->what, sh->name ? sh->name : "?");
        return;
    }
    }
    snprintf(buf, n, "request #%" PRIu64, id);
}

void kb_request_init(kb_sim *sim, kb_request *r, kb_request_kind kind, void *target,
                     kb_callback processed)
{
    r->kind = (uint8_t)kind;
    r->since = 0;
    r->cancelled = false;
    kb_list_init(&r->user);
    r->ev = kb_event_new(sim);
    r->ev->kind = KB_EVENT_REQUEST;
    r->ev->req = r;
    /* SimPy appends the object's callback first: it runs before any waiter. */
    kb_waiter_init(&r->hook, processed, NULL);
    kb_event_wait(r->ev, &r->hook);
    kb_waiter_init(&r->qw, NULL, NULL);
    r->qw.request = true;
    r->qw.target = target;
}

void kb_request_grant(kb_request *r, kb_owned *o, kb_item value)
{
    o->queued++; /* the object stays until the event's processing has run its part */
    kb_event_succeed(r->ev, value);
}

void kb_request_processed(kb_request *r, kb_owned *o)
{
    if (r->on_processed)
        r->on_processed(r);
    kb_owned_ran(o); /* may free the object: last */
}

void kb_request_settle(kb_request *r)
{
    kb_waiter_cancel(&r->hook);
    r->ev->state = KB_EVENT_PROCESSED;
    r->ev->ok = true;
    r->ev->value = r->qw.item;
}
