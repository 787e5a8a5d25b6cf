/* The simulation context: clock, event queue, run control and counters.
 *
 * One kb_sim is one independent simulation; nothing here is global, so a
 * process may hold any number of them. All objects created on a simulation
 * (events, processes, stores, resources) belong to it and must not be used
 * with another one. */
#ifndef KB_CORE_SIM_H
#define KB_CORE_SIM_H

#include "core/types.h"
#include "core/list.h"

#include <signal.h>

kb_sim *kb_sim_new(void);
/* Frees the simulation and everything it still owns (pending events,
 * pooled event objects). Stores and resources embedded elsewhere must be
 * deinitialised by their owner first. */
void kb_sim_free(kb_sim *sim);

kb_time kb_sim_now(const kb_sim *sim);

/* Schedules fn(sim, arg) at absolute time t with a priority (KB_PRIO_*).
 * Scheduling in the past is a model bug: the simulation fails with a
 * message naming both times and the callback is dropped. */
void kb_sim_at(kb_sim *sim, kb_time t, int prio, kb_callback fn, void *arg);
/* Same, at now + delay (delay >= 0). */
void kb_sim_after(kb_sim *sim, kb_time delay, int prio, kb_callback fn, void *arg);
/* A key taken now and used later: kb_sim_at_key schedules fn at t in the
 * place within its instant that kb_sim_at would have given it when the key
 * was taken (events of one time and priority run in key order). The
 * fabric's wires use it to keep only their first flit in flight in the
 * queue (src/fabric/delivery.c). */
uint64_t kb_sim_take_key(kb_sim *sim, int prio);
void kb_sim_at_key(kb_sim *sim, kb_time t, uint64_t key, kb_callback fn, void *arg);

typedef enum kb_run_status {
    KB_RUN_EMPTY,   /* no events remain */
    KB_RUN_UNTIL,   /* reached the requested time or step count; events remain */
    KB_RUN_STOPPED, /* kb_sim_stop was called from inside the run */
    KB_RUN_FAILED,  /* kb_sim_fail was called; see kb_sim_error */
    KB_RUN_INTERRUPTED /* the interrupt flag was raised (e.g. by Ctrl-C) */
} kb_run_status;

/* Processes events until none remain (until == KB_TIME_MAX) or until the
 * clock reaches `until`: as SimPy's run(until), `until` is an URGENT event
 * at that time which stops whichever run processes it (events at `until`
 * are left for the next run and the clock is set to `until`, so run(10);
 * run(20) covers [0,10) then [10,20)). A run that ends earlier (a stop, a
 * failure) leaves that event queued: it then stops a later run at `until`,
 * as SimPy's does. Returns KB_RUN_EMPTY when a run reaches its own
 * `until` with nothing left, KB_RUN_UNTIL when events remain. */
kb_run_status kb_sim_run(kb_sim *sim, kb_time until);
/* Processes at most n events; *done (may be NULL) receives the count. */
kb_run_status kb_sim_step(kb_sim *sim, uint64_t n, uint64_t *done);
/* Asks the current run to return after the event being processed. */
void kb_sim_stop(kb_sim *sim);
/* Records an error (the first one wins) and stops the current run. */
void kb_sim_fail(kb_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The recorded error, or NULL. kb_sim_clear_error forgets it. */
const char *kb_sim_error(const kb_sim *sim);
void kb_sim_clear_error(kb_sim *sim);
/* True while kb_sim_run or kb_sim_step is executing. */
bool kb_sim_running(const kb_sim *sim);

typedef struct kb_sim_stats {
    uint64_t events;       /* events processed so far */
    kb_time now;           /* simulated time, ps */
    double wall_s;         /* wall time spent inside run/step */
    double events_per_s;   /* events / wall_s (0 if no wall time yet) */
    size_t pending;        /* events in the queue */
    size_t procs;          /* live processes */
    size_t waiting;        /* live non-daemon processes blocked on something */
    size_t events_live;    /* kb_event objects not yet freed */
} kb_sim_stats;

void kb_sim_get_stats(const kb_sim *sim, kb_sim_stats *out);

/* An optional flag, typically set by a signal handler, that makes a run
 * return KB_RUN_INTERRUPTED at the next event boundary after it becomes
 * non-zero. The run does not clear it. */
void kb_sim_set_interrupt(kb_sim *sim, const volatile sig_atomic_t *flag);

/* Why runs stop early (kb_sim_control.stop). */
typedef enum kb_stop {
    KB_STOP_NONE,
    KB_STOP_SIGINT,  /* the owner's signal handlers */
    KB_STOP_SIGTERM,
    KB_STOP_TIMEOUT, /* the owner's wall-clock limit */
    KB_STOP_UNTIL,   /* a run reached the simulated-time limit */
    KB_STOP_EVENTS   /* a run reached the event limit */
} kb_stop;

/* Run control shared by any number of simulations (a command line's
 * session): a stop flag and limits (zero: none, so a zeroed control
 * changes nothing). When `stop` is non-zero every run returns
 * KB_RUN_INTERRUPTED at its next event boundary. A run that would
 * process an event at or after `until`, or one event more than
 * `max_events` in its simulation, raises `stop` itself (KB_STOP_UNTIL,
 * KB_STOP_EVENTS; the clock is then set to `until`, as by
 * kb_sim_run(until)), calls on_limit, and returns KB_RUN_INTERRUPTED; an
 * empty queue still ends a run normally. The first run to stop records
 * where it was in `reached`; every run records where it ended in `latest`
 * (where the simulated time was when a stop finds Lua code running between
 * runs). */
typedef struct kb_sim_where {
    bool seen;
    int id; /* the simulation's id given to kb_sim_set_control */
    kb_time now;
    uint64_t events;
} kb_sim_where;

/* What a run under a control reports to its on_progress. */
typedef struct kb_sim_progress {
    int id;          /* the simulation's id given to kb_sim_set_control (0: no simulation:
                        kernbench.procpool's report of the bench's points alone) */
    kb_time now;     /* its clock */
    uint64_t events; /* events it has processed, all runs */
    double wall_s;   /* wall time its runs have taken, this one so far */
    double clock_s;  /* kb_wall_seconds() at the call */
    bool ended;      /* the run is returning (its last call) */
} kb_sim_progress;

/* Progress reports: a run under a control with on_progress calls it
 * between events each time its simulation's event count passes a multiple
 * of KB_SIM_PROGRESS_EVERY, and once as it returns (ended). The callback
 * must not touch the simulation; NULL costs nothing per event. */
#define KB_SIM_PROGRESS_EVERY (UINT64_C(1) << 16)

typedef struct kb_sim_control {
    volatile sig_atomic_t stop; /* a kb_stop */
    kb_time until;              /* > 0, or 0: no limit */
    uint64_t max_events;        /* > 0, or 0: no limit */
    void (*on_limit)(void *ctx);
    void *ctx;
    void (*on_progress)(void *progress_ctx, const kb_sim_progress *p);
    void *progress_ctx;
    kb_sim_where reached;
    kb_sim_where latest;
} kb_sim_control;

/* Puts sim under c (which must outlive it); `id` names it in c->reached.
 * Replaces an interrupt flag. */
void kb_sim_set_control(kb_sim *sim, kb_sim_control *c, int id);

/* ---- SimPy's order within one instant ----
 * The core follows SimPy: an operation of a process that can complete at
 * once (a get from a store with items, a free slot, a zero delay) still
 * completes through the queue, and the process resumes when that
 * completion is processed, after everything queued before it at the same
 * time. Skipping the queue is allowed only where nobody could tell:
 *
 * kb_sim_resuming_last(sim, p): the code resuming process p declares that
 * p's resumption is the last thing the event being processed does (an
 * event's last waiter, a sleep ending, a process starting). Every event
 * starts with no such process.
 *
 * kb_sim_can_continue(sim, p): true when p may go on at once as if its
 * completed operation had been processed through the queue: p was resumed
 * last, nothing with priority NORMAL or more urgent is queued at the
 * current time, the run is neither stepping nor counting towards an event
 * limit, and no stop is pending. Queued, that completion would be the next
 * event and resume p next; continuing is the same.
 *
 * kb_sim_count_inline(sim): the caller processed such a completion itself;
 * it counts as an event, so event counts are the same either way. */
void kb_sim_resuming_last(kb_sim *sim, const kb_proc *proc);
bool kb_sim_can_continue(const kb_sim *sim, const kb_proc *proc);
void kb_sim_count_inline(kb_sim *sim);

/* Every queued callback fn(arg) becomes new_fn(new_arg) in the same place
 * of the order; returns how many did. Scans the whole queue: for rare
 * rewrites only (an interrupted process's pending wake-up). */
size_t kb_sim_redirect(kb_sim *sim, kb_callback fn, void *arg, kb_callback new_fn, void *new_arg);

/* Time of the next queued event, or KB_TIME_MAX when none is (SimPy's
 * peek). */
kb_time kb_sim_peek(const kb_sim *sim);

/* Called before each event is processed; for tests and tracing. */
typedef void (*kb_observer)(void *ctx, kb_time t, uint64_t key, kb_callback fn, void *arg);
void kb_sim_set_observer(kb_sim *sim, kb_observer fn, void *ctx);

/* Quiescence: a newly allocated report of every live non-daemon process
 * that is blocked, one per line, then what each reporter adds, or NULL
 * when there is nothing to say. The caller frees it. Its first line says
 * where the simulation is: "simulation quiescent at t=... with N processes
 * still waiting:" only when no run is going on and no event is queued (as
 * after a run that emptied the queue: a deadlock); otherwise "simulation
 * [running ]at t=... with M events queued and N processes waiting:". */
char *kb_sim_quiescence_report(kb_sim *sim);

/* A reporter: something that can be blocked without being a process (a
 * kernel waiting in a PE's queue) says so in quiescence reports. report()
 * appends lines ("\n  ...") to b and returns how many it wrote. The owner
 * embeds it and removes it before freeing it. */
struct kb_buf;
typedef struct kb_reporter {
    kb_link link;
    size_t (*report)(struct kb_reporter *r, struct kb_buf *b);
} kb_reporter;
void kb_sim_add_reporter(kb_sim *sim, kb_reporter *r);
void kb_sim_remove_reporter(kb_reporter *r);

#endif
