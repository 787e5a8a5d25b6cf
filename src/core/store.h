/* Store: a FIFO of items with an optional capacity.
 *
 * put blocks while the store is full, get blocks while it is empty; blocked
 * putters and getters are served in arrival order. A put that finds a
 * getter waiting hands the item straight to it. Wake-ups are scheduled at
 * the current time (NORMAL priority), never run inside put/get, so callers
 * are not re-entered. See waiter.h for the blocking convention. */
#ifndef KB_CORE_STORE_H
#define KB_CORE_STORE_H

#include "core/list.h"
#include "core/types.h"
#include "core/waiter.h"

struct kb_store {
    kb_waitable w;
    kb_sim *sim;
    char *name;      /* owned */
    size_t capacity; /* 0 = unbounded */
    kb_item *ring;
    size_t head, count, ring_cap;
    kb_link getters, putters;
};

/* capacity 0 means unbounded. name is copied; NULL is allowed. */
void kb_store_init(kb_store *st, kb_sim *sim, const char *name, size_t capacity);
/* Frees the ring; waiters still queued are detached without being woken. */
void kb_store_deinit(kb_store *st);

/* Put: true if accepted now. Otherwise, with w, w is queued holding the
 * item and woken once the item is accepted; without w, nothing happens. */
bool kb_store_put(kb_store *st, kb_item item, kb_waiter *w);
/* Get: true with *out set if an item was available. Otherwise, with w,
 * w is queued and woken with the item in w->item; without w, nothing. */
bool kb_store_get(kb_store *st, kb_item *out, kb_waiter *w);

static inline size_t kb_store_count(const kb_store *st) { return st->count; }

void kb_store_describe(const kb_store *st, char *buf, size_t n);

#endif
