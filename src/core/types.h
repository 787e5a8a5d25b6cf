/* Basic types shared by every part of the event core.
 *
 * Time is an int64 count of picoseconds. Nothing in the core keeps time in
 * floating point; the Lua boundary converts to and from nanoseconds. */
#ifndef KB_CORE_TYPES_H
#define KB_CORE_TYPES_H

#include "core/list.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t kb_time; /* picoseconds */

#define KB_TIME_MAX INT64_MAX
#define KB_PS_PER_NS INT64_C(1000)

/* ps as a floating-point count of ns, for reports (results print it). */
static inline double kb_ps_to_ns(double ps) { return ps / (double)KB_PS_PER_NS; }

typedef struct kb_sim kb_sim;
typedef struct kb_event kb_event;
typedef struct kb_proc kb_proc;
typedef struct kb_waiter kb_waiter;
typedef struct kb_store kb_store;
typedef struct kb_resource kb_resource;

/* Every scheduled action is a callback and an opaque argument. */
typedef void (*kb_callback)(kb_sim *sim, void *arg);

/* Told about a failed event that nothing took when it was processed
 * (event.h, kb_event_set_unhandled). */
typedef void (*kb_unhandled_fn)(void *ctx, kb_event *ev);

/* A value carried by an event or a store: a number or a pointer. */
typedef union kb_item {
    uint64_t u;
    int64_t i;
    double d;
    void *p;
} kb_item;

#define KB_ITEM_NONE ((kb_item){.u = 0})

/* Priorities order events that fall on the same picosecond; lower first
 * (0..KB_QUEUE_PRIOS-1, see queue.h).
 * Process start-up is URGENT (it runs before ordinary events at the same
 * time, as in SimPy); everything else defaults to NORMAL. */
enum {
    KB_PRIO_URGENT = 0,
    KB_PRIO_NORMAL = 1,
    KB_PRIO_LATE = 2
};

/* Objects a process can block on start with this header, so a quiescence
 * report can say what each waiting process is stuck on. */
typedef enum kb_waitable_kind {
    KB_WAITABLE_EVENT = 1,
    KB_WAITABLE_STORE,
    KB_WAITABLE_RESOURCE,
    KB_WAITABLE_SHARED /* shared.h */
} kb_waitable_kind;

typedef struct kb_waitable {
    kb_waitable_kind kind;
} kb_waitable;

/* Objects a simulation owns and frees with itself (stores, resources): a
 * header embedded in each, linked in the simulation's list while it lives
 * (kb_sim_own in sim_internal.h). A queued callback may refer to one, so
 * one its owner has closed goes only when none is queued any more. */
typedef struct kb_owned {
    kb_link link;
    void (*destroy)(struct kb_owned *o);
    size_t queued; /* callbacks in the queue that refer to it */
    bool closed;   /* its owner is done with it */
} kb_owned;

#define KB_CONTAINER_OF(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif
