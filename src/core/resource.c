#include "core/resource.h"

#include "core/proc.h"
#include "core/sim.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb_resource_init(kb_resource *r, kb_sim *sim, const char *name, size_t capacity)
{
    memset(r, 0, sizeof *r);
    r->w.kind = KB_WAITABLE_RESOURCE;
    r->sim = sim;
    r->name = kb_xstrdup(name);
    r->capacity = capacity;
    kb_list_init(&r->waiters);
}

void kb_resource_deinit(kb_resource *r)
{
    kb_link *l;
    while ((l = r->waiters.next) != &r->waiters)
        kb_waiter_cancel(KB_CONTAINER_OF(l, kb_waiter, link));
    free(r->name);
    r->name = NULL;
}

bool kb_resource_acquire(kb_resource *r, kb_waiter *w)
{
    if (r->in_use < r->capacity) {
        r->in_use++;
        r->acquisitions++;
        return true;
    }
    if (w) {
        kb_list_push_back(&r->waiters, &w->link);
        if (w->proc)
            kb_proc_set_wait(w->proc, &r->w, "to acquire");
    }
    return false;
}

bool kb_resource_release(kb_resource *r)
{
    if (r->in_use == 0)
        return false;
    if (kb_list_empty(&r->waiters)) {
        r->in_use--;
        return true;
    }
    /* The slot passes straight to the first waiter: in_use is unchanged. */
    kb_waiter *w = KB_CONTAINER_OF(r->waiters.next, kb_waiter, link);
    kb_waiter_cancel(w);
    w->ok = true;
    r->acquisitions++;
    kb_sim_after(r->sim, 0, KB_PRIO_NORMAL, w->wake, w);
    return true;
}

void kb_resource_describe(const kb_resource *r, char *buf, size_t n)
{
    snprintf(buf, n, "resource '%s' (%zu of %zu in use, %zu waiting)", r->name ? r->name : "?",
             r->in_use, r->capacity, kb_list_count(&r->waiters));
}
