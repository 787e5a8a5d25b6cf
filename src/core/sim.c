#include "core/sim_internal.h"

#include "core/event.h"
#include "core/proc.h"
#include "core/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

kb_sim *kb_sim_new(void)
{
    kb_sim *sim = kb_xcalloc(1, sizeof *sim);
    kb_queue_init(&sim->queue);
    kb_list_init(&sim->procs);
    kb_list_init(&sim->owned);
    kb_list_init(&sim->reporters);
    kb_event_pool_init(sim);
    sim->interrupt = &sim->no_interrupt;
    return sim;
}

void kb_sim_own(kb_sim *sim, kb_owned *o, void (*destroy)(kb_owned *o))
{
    o->destroy = destroy;
    kb_list_push_back(&sim->owned, &o->link);
}

void kb_sim_disown(kb_owned *o)
{
    kb_link_unlink(&o->link);
    o->destroy(o);
}

void kb_owned_schedule(kb_sim *sim, kb_owned *o, kb_callback fn, void *arg)
{
    o->queued++;
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, fn, arg);
}

void kb_owned_ran(kb_owned *o)
{
    if (--o->queued == 0 && o->closed)
        kb_sim_disown(o);
}

void kb_owned_close(kb_owned *o)
{
    o->closed = true;
    if (o->queued == 0)
        kb_sim_disown(o);
}

void kb_sim_free(kb_sim *sim)
{
    if (!sim)
        return;
    /* Processes still blocked when the simulation goes: end them (their names). */
    while (sim->procs.next != &sim->procs)
        kb_proc_end(KB_CONTAINER_OF(sim->procs.next, kb_proc, link));
    kb_queue_destroy(&sim->queue);
    while (!kb_list_empty(&sim->owned))
        kb_sim_disown(KB_CONTAINER_OF(sim->owned.next, kb_owned, link));
    kb_event_pool_destroy(sim);
    free(sim->error);
    free(sim);
}

kb_time kb_sim_now(const kb_sim *sim) { return sim->now; }

/* The rare failures of scheduling, out of the hot path. */
static __attribute__((noinline, cold)) void fail_past(kb_sim *sim, kb_time t)
{
    char a[KB_TIME_STRLEN], b[KB_TIME_STRLEN];
    kb_sim_fail(sim, "event scheduled in the past: t=%s is before now=%s", kb_time_format(t, a),
                kb_time_format(sim->now, b));
}

static __attribute__((noinline, cold)) void fail_prio(kb_sim *sim, int prio)
{
    kb_sim_fail(sim, "invalid event priority %d (valid: 0..%d)", prio, KB_QUEUE_PRIOS - 1);
}

__attribute__((always_inline)) inline void kb_sim_at(kb_sim *sim, kb_time t, int prio, kb_callback fn, void *arg)
{
    if (__builtin_expect(t < sim->now, 0)) {
        fail_past(sim, t);
        return;
    }
    if (__builtin_expect(prio < 0 || prio >= KB_QUEUE_PRIOS, 0)) {
        fail_prio(sim, prio);
        return;
    }
    uint64_t key = ((uint64_t)prio << KB_QUEUE_SEQ_BITS) | (sim->seq++ & KB_QUEUE_SEQ_MASK);
    kb_queue_push(&sim->queue, t, key, fn, arg);
}

uint64_t kb_sim_take_key(kb_sim *sim, int prio)
{
    if (__builtin_expect(prio < 0 || prio >= KB_QUEUE_PRIOS, 0)) {
        fail_prio(sim, prio);
        prio = KB_QUEUE_PRIOS - 1;
    }
    return ((uint64_t)prio << KB_QUEUE_SEQ_BITS) | (sim->seq++ & KB_QUEUE_SEQ_MASK);
}

void kb_sim_at_key(kb_sim *sim, kb_time t, uint64_t key, kb_callback fn, void *arg)
{
    if (__builtin_expect(t < sim->now, 0)) {
        fail_past(sim, t);
        return;
    }
    kb_queue_push(&sim->queue, t, key, fn, arg);
}

static __attribute__((noinline, cold)) void fail_delay(kb_sim *sim, kb_time delay)
{
    char now[KB_TIME_STRLEN];
    kb_sim_fail(sim, "invalid delay %" PRId64 " ps at now=%s", delay, kb_time_format(sim->now, now));
}

__attribute__((always_inline)) inline void kb_sim_after(kb_sim *sim, kb_time delay, int prio, kb_callback fn, void *arg)
{
    if (__builtin_expect(delay < 0 || delay > KB_TIME_MAX - sim->now, 0)) {
        fail_delay(sim, delay);
        return;
    }
    kb_sim_at(sim, sim->now + delay, prio, fn, arg);
}

static inline void process(kb_sim *sim, kb_qentry e)
{
    sim->now = e.t;
    sim->events++;
    sim->last_resumed = NULL;
    if (sim->observer)
        sim->observer(sim->observer_ctx, e.t, e.key, e.fn, e.arg);
    e.fn(sim, e.arg);
}

/* A limit of the control is reached: raise its stop flag (unless a stop
 * is already under way) and let its owner know. */
static void limit_reached(kb_sim *sim, kb_stop why)
{
    kb_sim_control *c = sim->ctl;
    if (c->stop)
        return;
    c->stop = why;
    if (c->on_limit)
        c->on_limit(c->ctx);
}

/* Reports to the control's on_progress (sim.h). */
static void report_progress(kb_sim *sim, double t0, bool ended)
{
    double clock = kb_wall_seconds();
    kb_sim_progress p = {sim->ctl_id, sim->now, sim->events, sim->wall_s + (clock - t0), clock, ended};
    sim->ctl->on_progress(sim->ctl->progress_ctx, &p);
}

static inline uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* The next event count at which a run reports its progress. */
static inline uint64_t next_report(const kb_sim *sim) { return (sim->events | (KB_SIM_PROGRESS_EVERY - 1)) + 1; }

static kb_run_status loop(kb_sim *sim, kb_time until, uint64_t max_events, uint64_t *done)
{
    double t0 = kb_wall_seconds();
    uint64_t start = sim->events;
    bool nested = sim->running, inline_before = sim->may_inline;
    sim->running = true;
    sim->until_reached = false;
    /* An error recorded outside a run (a bad schedule from a script) fails
     * the next run at once rather than being lost. */
    sim->stop_requested = sim->error != NULL;
    kb_time lim_until = sim->ctl && sim->ctl->until > 0 ? sim->ctl->until : KB_TIME_MAX;
    uint64_t lim_events = sim->ctl && sim->ctl->max_events > 0 ? sim->ctl->max_events : UINT64_MAX;
    /* A run's own until event at exactly the limit is processed: it ends
     * the run there, which passes nothing. */
    kb_time bound = until != KB_TIME_MAX && until == lim_until ? lim_until + 1 : lim_until;
    /* Stepping and event limits count events one by one: no shortcuts. */
    sim->may_inline = max_events == UINT64_MAX && lim_events == UINT64_MAX;
    /* The step count, the event limit and the progress reports share one
     * comparison per event: `check_at` is the nearest event count of the
     * three (UINT64_MAX: none is ever reached). */
    uint64_t step_end = max_events < UINT64_MAX - start ? start + max_events : UINT64_MAX;
    bool reports = sim->ctl && sim->ctl->on_progress;
    uint64_t report_at = reports ? next_report(sim) : UINT64_MAX;
    uint64_t check_at = min3(step_end, lim_events, report_at);
    kb_run_status st = KB_RUN_EMPTY;
    for (;;) {
        if (sim->stop_requested) {
            st = sim->error ? KB_RUN_FAILED : sim->until_reached ? KB_RUN_UNTIL : KB_RUN_STOPPED;
            break;
        }
        if (*sim->interrupt) {
            st = KB_RUN_INTERRUPTED;
            break;
        }
        if (sim->events >= check_at) {
            if (sim->events >= step_end) {
                st = kb_queue_size(&sim->queue) ? KB_RUN_UNTIL : KB_RUN_EMPTY;
                break;
            }
            if (sim->events >= lim_events && kb_queue_size(&sim->queue)) {
                limit_reached(sim, KB_STOP_EVENTS);
                st = KB_RUN_INTERRUPTED;
                break;
            }
            if (sim->events >= report_at) {
                report_progress(sim, t0, false);
                report_at = next_report(sim);
            }
            check_at = min3(step_end, lim_events, report_at);
        }
        kb_qentry e;
        if (!kb_queue_pop_before(&sim->queue, bound, &e)) {
            if (kb_queue_size(&sim->queue)) { /* past the simulated-time limit */
                if (sim->now < lim_until)
                    sim->now = lim_until;
                limit_reached(sim, KB_STOP_UNTIL);
                st = KB_RUN_INTERRUPTED;
            }
            break;
        }
        process(sim, e);
    }
    /* Where the stop found this run (also one that failed meanwhile: the
     * stop may have raised in a process's Lua code). */
    if (sim->ctl) {
        kb_sim_where here = {true, sim->ctl_id, sim->now, sim->events};
        sim->ctl->latest = here;
        if (sim->ctl->stop && !sim->ctl->reached.seen)
            sim->ctl->reached = here;
    }
    sim->stop_requested = false;
    sim->running = nested;
    sim->may_inline = inline_before;
    sim->last_resumed = NULL;
    if (reports && sim->ctl->on_progress) /* the run returns: e.g. a progress line goes */
        report_progress(sim, t0, true);
    sim->wall_s += kb_wall_seconds() - t0;
    if (done)
        *done = sim->events - start;
    return st;
}

/* SimPy's until event: it stops whichever run processes it. */
static void until_reached(kb_sim *sim, void *arg)
{
    (void)arg;
    sim->until_reached = true;
    sim->stop_requested = true;
}

kb_run_status kb_sim_run(kb_sim *sim, kb_time until)
{
    if (until < sim->now)
        until = sim->now;
    if (until != KB_TIME_MAX)
        kb_sim_at(sim, until, KB_PRIO_URGENT, until_reached, NULL);
    kb_run_status st = loop(sim, until, UINT64_MAX, NULL);
    if (st == KB_RUN_UNTIL && until != KB_TIME_MAX && kb_queue_size(&sim->queue) == 0)
        st = KB_RUN_EMPTY; /* its own limit reached, nothing left */
    return st;
}

kb_run_status kb_sim_step(kb_sim *sim, uint64_t n, uint64_t *done)
{
    return loop(sim, KB_TIME_MAX, n, done);
}

void kb_sim_stop(kb_sim *sim) { sim->stop_requested = true; }

void kb_sim_fail(kb_sim *sim, const char *fmt, ...)
{
    if (!sim->error) {
        va_list ap;
        va_start(ap, fmt);
        sim->error = kb_vasprintf(fmt, ap);
        va_end(ap);
    }
    sim->stop_requested = true;
}

const char *kb_sim_error(const kb_sim *sim) { return sim->error; }

void kb_sim_clear_error(kb_sim *sim)
{
    free(sim->error);
    sim->error = NULL;
}

bool kb_sim_running(const kb_sim *sim) { return sim->running; }

void kb_sim_get_stats(const kb_sim *sim, kb_sim_stats *out)
{
    out->events = sim->events;
    out->now = sim->now;
    out->wall_s = sim->wall_s;
    out->events_per_s = sim->wall_s > 0 ? (double)sim->events / sim->wall_s : 0.0;
    out->pending = kb_queue_size(&sim->queue);
    out->procs = sim->nprocs;
    out->waiting = kb_proc_waiting_count(sim);
    out->events_live = sim->event_pool.live;
}

void kb_sim_set_interrupt(kb_sim *sim, const volatile sig_atomic_t *flag)
{
    sim->interrupt = flag ? flag : &sim->no_interrupt;
    sim->ctl = NULL;
}

void kb_sim_set_control(kb_sim *sim, kb_sim_control *c, int id)
{
    sim->ctl = c;
    sim->ctl_id = id;
    sim->interrupt = &c->stop;
}

void kb_sim_resuming_last(kb_sim *sim, const kb_proc *proc) { sim->last_resumed = proc; }

bool kb_sim_can_continue(const kb_sim *sim, const kb_proc *proc)
{
    /* While an event is processed, now is the time of the queue's last
     * removal; entries of a priority up to NORMAL would run before a NORMAL
     * event scheduled now (LATE ones after it). */
    return proc && proc == sim->last_resumed && sim->may_inline && !sim->stop_requested &&
           !*sim->interrupt && !kb_queue_has_now(&sim->queue, KB_PRIO_NORMAL);
}

void kb_sim_count_inline(kb_sim *sim) { sim->events++; }

size_t kb_sim_redirect(kb_sim *sim, kb_callback fn, void *arg, kb_callback new_fn, void *new_arg)
{
    return kb_queue_redirect(&sim->queue, fn, arg, new_fn, new_arg);
}

kb_time kb_sim_peek(const kb_sim *sim) { return kb_queue_min_time(&sim->queue); }

void kb_sim_set_observer(kb_sim *sim, kb_observer fn, void *ctx)
{
    sim->observer = fn;
    sim->observer_ctx = ctx;
}
