#include "core/proc.h"

#include "core/event.h"
#include "core/resource.h"
#include "core/shared.h"
#include "core/sim_internal.h"
#include "core/store.h"
#include "core/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void kb_proc_start(kb_sim *sim, kb_proc *proc, const char *name, unsigned flags)
{
    proc->sim = sim;
    proc->id = ++sim->next_proc_id;
    proc->name = name ? kb_xstrdup(name) : kb_asprintf("proc#%" PRIu64, proc->id);
    proc->flags = flags;
    proc->wait_on = NULL;
    proc->wait_op = NULL;
    proc->where = NULL;
    kb_list_push_back(&sim->procs, &proc->link);
    sim->nprocs++;
}

void kb_proc_end(kb_proc *proc)
{
    if (!proc->sim)
        return;
    kb_link_unlink(&proc->link);
    proc->sim->nprocs--;
    proc->sim = NULL;
    free(proc->name);
    proc->name = NULL;
}

bool kb_proc_live(const kb_proc *proc) { return proc->sim != NULL; }

void kb_proc_set_wait(kb_proc *proc, const kb_waitable *on, const char *op)
{
    proc->wait_on = on;
    proc->wait_op = op;
}

void kb_proc_clear_wait(kb_proc *proc)
{
    proc->wait_on = NULL;
    proc->wait_op = NULL;
}

size_t kb_proc_waiting_count(const kb_sim *sim)
{
    size_t n = 0;
    for (const kb_link *l = sim->procs.next; l != &sim->procs; l = l->next) {
        const kb_proc *p = KB_CONTAINER_OF(l, kb_proc, link);
        if (p->wait_on && !(p->flags & KB_PROC_DAEMON))
            n++;
    }
    return n;
}

static void describe_waitable(const kb_waitable *w, char *buf, size_t n)
{
    switch (w->kind) {
    case KB_WAITABLE_EVENT:
        kb_event_describe((const kb_event *)(const void *)w, buf, n);
        return;
    case KB_WAITABLE_STORE:
        kb_store_describe((const kb_store *)(const void *)w, buf, n);
        return;
    case KB_WAITABLE_RESOURCE:
        kb_resource_describe((const kb_resource *)(const void *)w, buf, n);
        return;
    case KB_WAITABLE_SHARED:
        kb_shared_describe((const kb_shared *)(const void *)w, buf, n);
        return;
    }
    snprintf(buf, n, "unknown object");
}

void kb_proc_describe(const kb_proc *proc, char *buf, size_t n)
{
    char what[256] = "nothing";
    char where[256] = "";
    if (proc->wait_on)
        describe_waitable(proc->wait_on, what, sizeof what);
    if (proc->where)
        proc->where(proc, where, sizeof where);
    snprintf(buf, n, "process '%s' #%" PRIu64 "%s%s%s waiting %s %s", proc->name, proc->id,
             where[0] ? " (" : "", where, where[0] ? ")" : "", proc->wait_op ? proc->wait_op : "on",
             what);
}

/* Declared in sim.h: the report is about processes, so it lives here. */
char *kb_sim_quiescence_report(kb_sim *sim)
{
    size_t waiting = kb_proc_waiting_count(sim);
    kb_buf extra = {0};
    size_t reported = 0;
    for (kb_link *l = sim->reporters.next; l != &sim->reporters; l = l->next) {
        kb_reporter *r = KB_CONTAINER_OF(l, kb_reporter, link);
        reported += r->report(r, &extra);
    }
    char *more = kb_buf_take(&extra);
    if (waiting == 0 && reported == 0) {
        free(more);
        return NULL;
    }
    kb_buf b = {0};
    char now[KB_TIME_STRLEN];
    kb_time_format(sim->now, now);
    size_t queued = kb_queue_size(&sim->queue);
    if (queued == 0 && !sim->running) /* nothing can happen any more by itself */
        kb_buf_printf(&b, "simulation quiescent at t=%s with %zu process%s still waiting:", now, waiting,
                      waiting == 1 ? "" : "es");
    else /* asked during a run, or between runs with events left: they may wake these */
        kb_buf_printf(&b, "simulation %sat t=%s with %zu event%s queued and %zu process%s waiting:",
                      sim->running ? "running " : "", now, queued, queued == 1 ? "" : "s", waiting,
                      waiting == 1 ? "" : "es");
    for (const kb_link *l = sim->procs.next; l != &sim->procs; l = l->next) {
        const kb_proc *p = KB_CONTAINER_OF(l, kb_proc, link);
        if (!p->wait_on || (p->flags & KB_PROC_DAEMON))
            continue;
        char line[768];
        kb_proc_describe(p, line, sizeof line);
        kb_buf_printf(&b, "\n  %s", line);
    }
    kb_buf_printf(&b, "%s", more);
    free(more);
    return kb_buf_take(&b);
}

void kb_sim_add_reporter(kb_sim *sim, kb_reporter *r) { kb_list_push_back(&sim->reporters, &r->link); }

void kb_sim_remove_reporter(kb_reporter *r)
{
    if (kb_link_linked(&r->link))
        kb_link_unlink(&r->link);
}
