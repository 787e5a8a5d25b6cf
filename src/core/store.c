#include "core/store.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb_store_init(kb_store *st, kb_sim *sim, const char *name, size_t capacity)
{
    memset(st, 0, sizeof *st);
    st->w.kind = KB_WAITABLE_STORE;
    st->sim = sim;
    st->name = kb_xstrdup(name);
    st->capacity = capacity;
    kb_list_init(&st->getters);
    kb_list_init(&st->putters);
}

void kb_store_deinit(kb_store *st)
{
    kb_waiter_cancel_all(&st->getters);
    kb_waiter_cancel_all(&st->putters);
    free(st->ring);
    free(st->name);
    st->ring = NULL;
    st->name = NULL;
}

static bool full(const kb_store *st) { return st->capacity && st->count >= st->capacity; }

static void ring_push(kb_store *st, kb_item item)
{
    if (st->count == st->ring_cap) {
        size_t cap = st->ring_cap ? st->ring_cap * 2 : 16;
        kb_item *ring = kb_xmalloc(cap * sizeof *ring);
        for (size_t i = 0; i < st->count; i++)
            ring[i] = st->ring[(st->head + i) % st->ring_cap];
        free(st->ring);
        st->ring = ring;
        st->ring_cap = cap;
        st->head = 0;
    }
    st->ring[(st->head + st->count) % st->ring_cap] = item;
    st->count++;
}

static kb_item ring_pop(kb_store *st)
{
    kb_item item = st->ring[st->head];
    st->head = (st->head + 1) % st->ring_cap;
    st->count--;
    return item;
}

bool kb_store_put(kb_store *st, kb_item item, kb_waiter *w)
{
    if (!kb_list_empty(&st->getters)) { /* the store is empty: hand over */
        kb_waiter *g = kb_waiter_wake_first(st->sim, &st->getters);
        g->item = item; /* read when the scheduled wake-up runs */
        g->ok = true;
        return true;
    }
    if (!full(st)) {
        ring_push(st, item);
        return true;
    }
    if (w) {
        w->item = item;
        w->ok = true;
    }
    kb_waiter_enqueue(&st->putters, w, &st->w, "to put to");
    return false;
}

bool kb_store_get(kb_store *st, kb_item *out, kb_waiter *w)
{
    if (st->count > 0) {
        *out = ring_pop(st);
        if (!kb_list_empty(&st->putters)) { /* room for the first blocked putter */
            kb_waiter *p = kb_waiter_wake_first(st->sim, &st->putters);
            ring_push(st, p->item);
        }
        return true;
    }
    kb_waiter_enqueue(&st->getters, w, &st->w, "to get from");
    return false;
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
