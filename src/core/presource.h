/* The priority resource and the preemptive resource (SimPy's
 * PriorityResource and PreemptiveResource), shared objects (shared.h).
 *
 * A request carries a priority (lower is more important), the time it was
 * made and whether it may preempt; its key is (priority, time, not
 * preempt). The queue is kept sorted by key, equal keys in arrival order;
 * only its head is tried, and granted while slots are free. A preemptive
 * resource first makes room for a preempting head: the user of greatest key
 * (the latest granted of equal ones) loses its slot if its key is greater
 * than the head's, and the owner's preempt hook is told (SimPy interrupts
 * its process). A release frees the request's slot and queues a try of the
 * queue at the current time. */
#ifndef KB_CORE_PRESOURCE_H
#define KB_CORE_PRESOURCE_H

#include "core/shared.h"

/* victim lost its slot to by (the request being granted). */
typedef void (*kb_presource_preempted)(void *ctx, kb_request *victim, kb_request *by);

kb_shared *kb_presource_new(kb_sim *sim, const char *name, size_t capacity, bool preemptive,
                            kb_presource_preempted on_preempt, void *ctx);
/* A request: priority, whether it may preempt, by process `proc` (NULL:
 * none). */
void kb_presource_request(kb_shared *sh, kb_request *r, double priority, bool preempt, kb_proc *proc);
/* Frees r's slot if it holds one (true) and queues a try of the queue,
 * held or not (SimPy's release). */
bool kb_presource_release(kb_shared *sh, kb_request *r);

/* Its owner is going: r stops being a user, nothing queued. */
void kb_presource_forget(kb_shared *sh, kb_request *r);

size_t kb_presource_capacity(const kb_shared *sh);
size_t kb_presource_in_use(const kb_shared *sh);
bool kb_presource_preemptive(const kb_shared *sh);
/* Its users, in the order they were granted (kb_request.user links). */
const kb_link *kb_presource_users(const kb_shared *sh);
bool kb_presource_is(const kb_shared *sh);

#endif
