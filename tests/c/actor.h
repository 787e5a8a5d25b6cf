/* Test helper: a minimal C process that records each wake-up.
 * It is how a builtin component waits: a kb_proc for reports and an
 * embedded kb_waiter whose wake callback is the component's next step. */
#ifndef KB_TEST_ACTOR_H
#define KB_TEST_ACTOR_H

#include "core/proc.h"
#include "core/sim.h"
#include "core/waiter.h"

typedef struct wake_log {
    int who[64];
    kb_time when[64];
    int n;
} wake_log;

typedef struct actor {
    kb_proc proc;
    kb_waiter w;
    int id;
    wake_log *log;
    int wakes;
    kb_item item; /* last item delivered */
    bool ok;      /* last status delivered */
} actor;

static inline void actor_woke(kb_sim *sim, void *arg)
{
    kb_waiter *w = arg;
    actor *a = KB_CONTAINER_OF(w, actor, w);
    a->wakes++;
    a->item = w->item;
    a->ok = w->ok;
    if (a->log) {
        a->log->who[a->log->n] = a->id;
        a->log->when[a->log->n++] = kb_sim_now(sim);
    }
}

static inline void actor_init(actor *a, kb_sim *sim, int id, wake_log *log, const char *name,
                              unsigned flags)
{
    a->id = id;
    a->log = log;
    a->wakes = 0;
    kb_proc_start(sim, &a->proc, name, flags);
    kb_waiter_init(&a->w, actor_woke, &a->proc);
}

#endif
