/* PE_CPU (pe.h): it runs kernels. A launch starts an instance at the
 * launch's barrier and answers when its body is done. Issuing a command
 * costs dispatch_cycles at clock_ghz plus PE_CPU's overhead, then
 * PE_SCHEDULER's overhead before an engine starts; tl.cycles keeps it busy
 * for n cycles. Its trace track shows a slice per tl call and one per
 * kernel instance. */
#include "comp/pe/engines.h"

#include "comp/device/control.h"
#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

kb_time kb_cycles_ps(double cycles, double clock_ghz)
{
    if (clock_ghz <= 0) /* a part whose implementation has no clock (not a builtin) */
        return 0;
    return (kb_time)llround(cycles * 1000.0 / clock_ghz);
}

kb_time kb_pe_dispatched_at(const kb_pe *p, kb_time now) { return now + p->dispatch_ps + p->sched_ps; }

kb_time kb_pe_dispatch(kb_pe *p, const char *what, kb_time now)
{
    kb_time end = kb_pe_dispatched_at(p, now);
    if (p->sched_ps)
        kb_pe_span(p, p->sched, what, now + p->dispatch_ps, end, NULL, 0);
    return end;
}

void kb_pe_cpu_span(kb_pe *p, const char *name, kb_time start, kb_time end)
{
    kb_tracer *tr = kb_fabric_tracer(p->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(p->fab, p->cpu), name, start, end, NULL, 0, 0, KB_FLOW_NONE);
}

/* ---- kernel launches ---- */

/* One launch on this PE, from its message's arrival to its answer. */
typedef struct kb_pe_run {
    struct kb_pe_run *prev, *next;
    kb_pe *pe;
    kb_ctrl_op *op;   /* a reference */
    size_t target;    /* this PE's place in the launch */
    kb_kernel *k;     /* once started: PE_CPU's reference */
    uint64_t scratch; /* its TCM offset */
    kb_time start_ps, late_ps;
} kb_pe_run;

static void run_free(kb_pe_run *r)
{
    kb_pe *p = r->pe;
    if (r->prev)
        r->prev->next = r->next;
    else
        p->runs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    if (r->k)
        kb_kernel_unref(r->k);
    kb_ctrl_put(r->op);
    free(r);
}

void kb_pe_cpu_drop_runs(kb_pe *p)
{
    while (p->runs)
        run_free(p->runs);
}

/* The body has returned: the instance's slice, its scratch back, the answer. */
static void finished(kb_kernel *k, void *arg)
{
    kb_pe_run *r = arg;
    kb_pe *p = r->pe;
    kb_time now = kb_sim_now(kb_fabric_sim(p->fab));
    char span[160];
    snprintf(span, sizeof span, "kernel %s", kb_kernel_name(k));
    kb_pe_cpu_span(p, span, r->start_ps, now);
    char *err = NULL;
    if (!kb_pe_tcm_free(p, r->scratch, &err)) {
        kb_comp_fail(kb_fabric_comp(p->fab, p->cpu), "%s", err);
        free(err);
    }
    kb_kernel_stats st;
    kb_kernel_stats_of(k, &st);
    kb_pe_answer a = {r->start_ps, now, r->late_ps, st.dma_ps, st.compute_ps, st.calls};
    kb_ctrl_leaf_answer(p->fab, p->cpu, r->op, r->target, &a);
    run_free(r);
}

/* The start barrier: the kernel instance, handed to the launch's runner. */
static void begin(kb_sim *sim, void *arg)
{
    kb_pe_run *r = arg;
    kb_pe *p = r->pe;
    const kb_launch *l = kb_ctrl_launch(r->op);
    char *err = NULL;
    if (!kb_pe_tcm_alloc(p, p->scratch_bytes, &r->scratch, &err)) {
        kb_comp_fail(kb_fabric_comp(p->fab, p->cpu), "kernel %s: scratch for %s (pe_cpu.attrs.scratch_kb)",
                     l->name, err);
        free(err);
        return;
    }
    r->start_ps = kb_sim_now(sim);
    r->k = kb_kernel_new(p, l->name, r->scratch, p->scratch_bytes, l->data, l->pa_fallback);
    kb_kernel_on_finish(r->k, finished, r);
    l->run(l->ctx, r->k, p->sip, p->cube, p->pe);
}

/* The launch message, PE_CPU's overhead paid: wait for the barrier. */
static void arrived(kb_txn *t)
{
    kb_comp *c = kb_txn_comp(t);
    kb_pe *p = c->state;
    kb_pe_run *r = kb_xcalloc(1, sizeof *r);
    r->pe = p;
    r->op = kb_ctrl_take(t, &r->target);
    r->next = p->runs;
    if (p->runs)
        p->runs->prev = r;
    p->runs = r;
    kb_sim *sim = kb_fabric_sim(c->fab);
    kb_time now = kb_sim_now(sim), at = kb_ctrl_start_ps(r->op, p->sip);
    if (now < at) {
        kb_sim_at(sim, at, KB_PRIO_NORMAL, begin, r);
        return;
    }
    r->late_ps = now - at;
    begin(sim, r);
}

void kb_pe_cpu_launch(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, arrived); }
