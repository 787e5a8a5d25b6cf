/* The simulation context's fields, shared by the core's own files only.
 * Other layers go through sim.h. */
#ifndef KB_CORE_SIM_INTERNAL_H
#define KB_CORE_SIM_INTERNAL_H

#include "core/list.h"
#include "core/pool.h"
#include "core/queue.h"
#include "core/sim.h"

/* Links o into sim's owned list; kb_sim_free calls o->destroy. */
void kb_sim_own(kb_sim *sim, kb_owned *o, void (*destroy)(kb_owned *o));
/* Unlinks and destroys o now. */
void kb_sim_disown(kb_owned *o);
/* Schedules fn(sim, arg) at the current time (NORMAL), a callback that
 * refers to o; kb_owned_ran(o) when it has run. */
void kb_owned_schedule(kb_sim *sim, kb_owned *o, kb_callback fn, void *arg);
void kb_owned_ran(kb_owned *o);
/* The owner is done with o: destroyed now, or after its last queued callback. */
void kb_owned_close(kb_owned *o);

struct kb_sim {
    kb_time now;
    uint64_t seq; /* insertion counter for the queue's tie-break */
    kb_queue queue;
    uint64_t events;
    double wall_s;
    bool stop_requested;
    bool running;
    char *error;
    kb_link procs; /* live processes, in start order */
    size_t nprocs;
    uint64_t next_proc_id;
    uint64_t next_event_id;
    kb_pool event_pool;
    const volatile sig_atomic_t *interrupt; /* never NULL: no_interrupt when none is set */
    sig_atomic_t no_interrupt;              /* stays 0 */
    kb_sim_control *ctl; /* NULL, or the control `interrupt` belongs to */
    int ctl_id;
    kb_observer observer;
    void *observer_ctx;
    /* SimPy's order within one instant (kb_sim_can_continue): the process
     * the event being processed resumes as its last action, and whether
     * this run may process an operation without the queue at all. */
    const kb_proc *last_resumed;
    bool may_inline;
    bool until_reached; /* a run(until) event stopped the run */
    kb_link owned; /* kb_owned objects */
    kb_link reporters; /* kb_reporter, in the order added */
    kb_unhandled_fn on_unhandled;
    void *unhandled_ctx;
};

#endif
