/* Resource: N identical slots, acquired and released in FIFO order.
 *
 * acquire takes a slot if one is free; otherwise the waiter queues and is
 * woken (scheduled at the current time) when a release hands it the slot.
 * See waiter.h for the blocking convention. */
#ifndef KB_CORE_RESOURCE_H
#define KB_CORE_RESOURCE_H

#include "core/list.h"
#include "core/types.h"
#include "core/waiter.h"

struct kb_resource {
    kb_waitable w;
    kb_sim *sim;
    char *name; /* owned */
    size_t capacity;
    size_t in_use;
    kb_link waiters;
};

/* capacity >= 1; name is copied (NULL allowed). */
void kb_resource_init(kb_resource *r, kb_sim *sim, const char *name, size_t capacity);
void kb_resource_deinit(kb_resource *r);

/* True if a slot was taken now. Otherwise, with w, w queues and is woken
 * holding the slot; without w, nothing happens. */
bool kb_resource_acquire(kb_resource *r, kb_waiter *w);
/* Frees a slot (or hands it to the first waiter). False if no slot was
 * held: releasing more than was acquired is a caller bug. */
bool kb_resource_release(kb_resource *r);

static inline size_t kb_resource_queued(const kb_resource *r) { return kb_list_count(&r->waiters); }

void kb_resource_describe(const kb_resource *r, char *buf, size_t n);

#endif
