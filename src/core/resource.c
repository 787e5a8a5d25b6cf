#include "core/resource.h"

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
    kb_waiter_cancel_all(&r->waiters);
    free(r->name);
    r->name = NULL;
}

bool kb_resource_acquire(kb_resource *r, kb_waiter *w)
{
    if (r->in_use < r->capacity) {
        r->in_use++;
        return true;
    }
    kb_waiter_enqueue(&r->waiters, w, &r->w, "to acquire");
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
    kb_waiter_wake_first(r->sim, &r->waiters)->ok = true;
    return true;
}

void kb_resource_describe(const kb_resource *r, char *buf, size_t n)
{
    snprintf(buf, n, "resource '%s' (%zu of %zu in use, %zu waiting)", r->name ? r->name : "?",
             r->in_use, r->capacity, kb_list_count(&r->waiters));
}
