/* The priority store and the filter store (SimPy's PriorityStore and
 * FilterStore), shared objects (shared.h) holding items (kb_item, as a
 * store does) up to a capacity (0: unbounded). Puts are served from the
 * head of their queue, one per try, as in a Store.
 *
 * Priority store: each item has a priority (a double); a get takes the
 * item of lowest priority. The items are a binary heap kept exactly as
 * Python's heapq keeps its list, so items of equal priority leave in the
 * same order as in SimPy (not necessarily the order they came in).
 *
 * Filter store: items in arrival order; a get takes the first item its
 * filter accepts (match), and every waiting get is tried in turn, so a
 * later get can be served before an earlier one. */
#ifndef KB_CORE_PSTORE_H
#define KB_CORE_PSTORE_H

#include "core/shared.h"

/* Does get request r accept item? Called for each item, oldest first; the
 * owner's (a Lua filter); must not change the store. */
typedef bool (*kb_pstore_match)(void *ctx, kb_request *r, kb_item item);

kb_shared *kb_pstore_new_priority(kb_sim *sim, const char *name, size_t capacity);
kb_shared *kb_pstore_new_filter(kb_sim *sim, const char *name, size_t capacity,
                                kb_pstore_match match, void *match_ctx);

/* A put of item (with priority key for a priority store). */
void kb_pstore_put(kb_shared *sh, kb_request *r, kb_item item, double key);
/* A get (r->qw.item is free for the owner to mark its filter). */
void kb_pstore_get(kb_shared *sh, kb_request *r);

size_t kb_pstore_count(const kb_shared *sh);
size_t kb_pstore_capacity(const kb_shared *sh);
/* Item i in the store's own order (heap order for a priority store). */
kb_item kb_pstore_item(const kb_shared *sh, size_t i);
bool kb_pstore_is_filter(const kb_shared *sh);

#endif
