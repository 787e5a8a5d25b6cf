#include "core/shared.h"

#include "core/sim_internal.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

static void destroy(kb_owned *o)
{
    kb_shared *sh = KB_CONTAINER_OF(o, kb_shared, owned);
    kb_waiter_cancel_all(&sh->putq);
    kb_waiter_cancel_all(&sh->getq);
    if (sh->ops->destroy)
        sh->ops->destroy(sh);
    free(sh->name);
    free(sh);
}

kb_shared *kb_shared_new(kb_sim *sim, const kb_shared_ops *ops, const char *name, void *ctx)
{
    kb_shared *sh = kb_xcalloc(1, sizeof *sh);
    sh->w.kind = KB_WAITABLE_SHARED;
    sh->sim = sim;
    sh->name = kb_xstrdup(name);
    sh->ops = ops;
    sh->ctx = ctx;
    kb_list_init(&sh->putq);
    kb_list_init(&sh->getq);
    kb_sim_own(sim, &sh->owned, destroy);
    return sh;
}

void kb_shared_close(kb_shared *sh)
{
    kb_waiter_cancel_all(&sh->putq);
    kb_waiter_cancel_all(&sh->getq);
    kb_owned_close(&sh->owned);
}

void kb_shared_grant(kb_shared *sh, kb_request *r, kb_item value)
{
    kb_request_grant(r, &sh->owned, value);
}

/* SimPy's _trigger_put / _trigger_get: from the head, offer each request;
 * a served one leaves the queue; stop when the kind says so. */
static void trigger(kb_shared *sh, kb_link *q, bool (*offer)(kb_shared *sh, kb_request *r))
{
    kb_link *l = q->next;
    while (l != q) {
        kb_request *r = KB_CONTAINER_OF(l, kb_request, qw.link);
        kb_link *next = l->next;
        bool go_on = offer(sh, r);
        if (r->ev->state != KB_EVENT_PENDING)
            kb_waiter_cancel(&r->qw); /* served: out of the queue */
        if (!go_on)
            return;
        l = next;
    }
}

void kb_shared_trigger_put(kb_shared *sh) { trigger(sh, &sh->putq, sh->ops->do_put); }

void kb_shared_trigger_get(kb_shared *sh) { trigger(sh, &sh->getq, sh->ops->do_get); }

/* The object's part of a request's processing (SimPy's callback). */
static void put_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_request *r = KB_CONTAINER_OF(arg, kb_request, hook);
    kb_shared *sh = r->qw.target;
    kb_shared_trigger_get(sh);
    kb_request_processed(r, &sh->owned);
}

static void get_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_request *r = KB_CONTAINER_OF(arg, kb_request, hook);
    kb_shared *sh = r->qw.target;
    kb_shared_trigger_put(sh);
    kb_request_processed(r, &sh->owned);
}

void kb_shared_put(kb_shared *sh, kb_request *r)
{
    kb_item item = r->qw.item;
    kb_request_init(sh->sim, r, KB_REQ_SH_PUT, sh, put_processed);
    r->qw.item = item;
    if (sh->ops->enqueue_put)
        sh->ops->enqueue_put(sh, r);
    else
        kb_waiter_enqueue(&sh->putq, &r->qw, &sh->w, "to put to");
    kb_shared_trigger_put(sh);
}

void kb_shared_get(kb_shared *sh, kb_request *r)
{
    kb_item item = r->qw.item;
    kb_request_init(sh->sim, r, KB_REQ_SH_GET, sh, get_processed);
    r->qw.item = item;
    kb_waiter_enqueue(&sh->getq, &r->qw, &sh->w, "to get from");
    kb_shared_trigger_get(sh);
}

static void release_processed(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_shared *sh = arg;
    kb_shared_trigger_put(sh);
    kb_owned_ran(&sh->owned);
}

void kb_shared_schedule_trigger_put(kb_shared *sh)
{
    kb_owned_schedule(sh->sim, &sh->owned, release_processed, sh);
}

void kb_shared_describe(const kb_shared *sh, char *buf, size_t n)
{
    char state[160] = "";
    if (sh->ops->describe)
        sh->ops->describe(sh, state, sizeof state);
    snprintf(buf, n, "%s '%s' (%s%s%zu getters and %zu putters waiting)", sh->ops->what,
             sh->name ? sh->name : "?", state, state[0] ? ", " : "", kb_list_count(&sh->getq),
             kb_list_count(&sh->putq));
}
