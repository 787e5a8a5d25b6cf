/* One-shot events.
 *
 * An event is pending until it is triggered (succeed or fail, once), then
 * processed at the time it was triggered for (now, or now + delay for a
 * timeout) in queue order; processing wakes its waiters in the order they
 * started waiting. all_of / any_of build a condition event over others.
 *
 * Failures are never ignored, as in SimPy: a failed event is "taken" by a
 * waiter with a process (the process gets the failure raised) or by a
 * pending condition it belongs to (which fails in turn). A failed event
 * that nothing took when it is processed is handed to the simulation's
 * unhandled hook (kb_event_set_unhandled), or fails the simulation.
 *
 * Events are reference counted and pooled per simulation: kb_event_new
 * returns one reference; a scheduled processing holds another; a condition
 * holds one on each child. The last unref returns the event to the pool. */
#ifndef KB_CORE_EVENT_H
#define KB_CORE_EVENT_H

#include "core/list.h"
#include "core/types.h"
#include "core/waiter.h"

typedef enum kb_event_state {
    KB_EVENT_PENDING,   /* not triggered */
    KB_EVENT_TRIGGERED, /* succeed/fail called; processing scheduled */
    KB_EVENT_PROCESSED  /* waiters have been woken */
} kb_event_state;

typedef struct kb_cond kb_cond;
typedef struct kb_request kb_request;

/* What an event is, beyond a plain one: what its union member means, and
 * how messages and reports name it (kb_event_label). */
typedef enum kb_event_kind {
    KB_EVENT_PLAIN,   /* made by kb_event_new */
    KB_EVENT_COND,    /* all_of / any_of: cond is set */
    KB_EVENT_REQUEST, /* a store or resource request (request.h): req is set */
    KB_EVENT_TIMEOUT, /* kb_event_timeout: delay is set */
    KB_EVENT_PROCESS  /* a process's completion (kb_event_set_process): proc_id is set,
                         name is the process's */
} kb_event_kind;

struct kb_event {
    kb_waitable w;
    uint8_t kind;   /* kb_event_kind */
    kb_sim *sim;
    uint32_t refs;
    uint8_t state;  /* kb_event_state */
    bool ok;
    bool defused;   /* a failure that a waiter took */
    kb_item value;  /* success value or failure reason */
    kb_link waiters;
    union {
        kb_cond *cond;   /* KB_EVENT_COND */
        kb_request *req; /* KB_EVENT_REQUEST: the request it completes */
        kb_time delay;    /* KB_EVENT_TIMEOUT: its delay */
        uint64_t proc_id; /* KB_EVENT_PROCESS: the process's id (kb_proc.id) */
    };
    char *name;     /* optional, owned */
    uint64_t id;
};

kb_event *kb_event_new(kb_sim *sim);
void kb_event_ref(kb_event *ev);
void kb_event_unref(kb_event *ev);
void kb_event_set_name(kb_event *ev, const char *name);

/* Trigger: false (and no effect) if the event was already triggered. */
bool kb_event_succeed(kb_event *ev, kb_item value);
bool kb_event_fail(kb_event *ev, kb_item reason);

/* An event that succeeds with `value` after `delay` ps. */
kb_event *kb_event_timeout(kb_sim *sim, kb_time delay, kb_item value);

/* Makes a pending plain event the completion event of `proc` (which its
 * owner triggers when the process ends): it is then named as the process
 * is, "process 'name' #<process id>", in messages and reports. */
void kb_event_set_process(kb_event *ev, const kb_proc *proc);

/* Waits for the event to be processed (see waiter.h for the convention).
 * Returns true with w->ok / w->item filled if it already was. */
bool kb_event_wait(kb_event *ev, kb_waiter *w);

/* Conditions. all_of succeeds when every child succeeded (value = count)
 * and fails as soon as one fails (value = that child's reason); any_of
 * succeeds or fails like the first child to be processed. With no children
 * both succeed at once. The condition holds references on its children. */
kb_event *kb_event_all_of(kb_sim *sim, kb_event *const *children, size_t n);
kb_event *kb_event_any_of(kb_sim *sim, kb_event *const *children, size_t n);
/* For any_of / all_of: index of the child that decided the outcome, or -1. */
int kb_event_cond_index(const kb_event *ev);
/* For conditions: children processed so far. */
size_t kb_event_cond_done(const kb_event *ev);

/* Who is told about failed events that nothing took when they were
 * processed (NULL: the simulation fails, naming the event). The hook may
 * fail the simulation itself. */
void kb_event_set_unhandled(kb_sim *sim, kb_unhandled_fn fn, void *ctx);
/* For a condition that failed: the child whose failure it took, else NULL. */
kb_event *kb_event_cond_failed_child(const kb_event *ev);

/* The event's name for messages, e.g. "event 'ready' #7", "all_of event #9",
 * "timeout #4", "process 'worker' #2" (the process's id), or a request's
 * (kb_request_label). */
void kb_event_label(const kb_event *ev, char *buf, size_t n);
/* A one-line description for reports: the label and the state, e.g.
 * "event 'ready' #7 (pending)", "timeout #4 (5.000 ns, triggered)",
 * "process 'worker' #2 (alive)" (then "finished" or "failed"),
 * "get request #12 from store 'q' (cancelled)" (withdrawn, never served). */
void kb_event_describe(const kb_event *ev, char *buf, size_t n);

/* Pool management, called by kb_sim_new / kb_sim_free. */
void kb_event_pool_init(kb_sim *sim);
void kb_event_pool_destroy(kb_sim *sim);

#endif
