/* PE_CPU (builtin.pe_cpu, pe.h): the PE assembled from its nine parts,
 * and the kernels it runs. The PE's state lives in this component; the
 * other parts are found beside it in the topology and give their
 * attributes as the PE's parameters. A launch starts an instance at the
 * launch's barrier and answers when its body is done. Its trace track
 * shows a slice per tl call (command.c) and one per kernel instance;
 * issuing a command is dispatch.c's. */
#include "comp/pe/engines.h"

#include "comp/device/control.h"
#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

static void drop_runs(kb_pe *p)
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

static void launch(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, arrived); }

/* ---- the PE ---- */

static uint32_t sibling(const kb_topo *t, const kb_node *cpu, const char *kind, bool *ok)
{
    int64_t n = kb_topo_pe_node(t, cpu->sip, cpu->cube, cpu->pe, kind);
    if (n < 0)
        *ok = false;
    return n < 0 ? 0 : (uint32_t)n;
}

static double attr(const kb_topo *t, uint32_t node, const char *name)
{
    return kb_spec_attr(kb_topo_node(t, node)->spec, name);
}

static kb_time attr_ps(const kb_topo *t, uint32_t node, const char *name)
{
    return (kb_time)llround(attr(t, node, name) * 1000.0);
}

/* Attributes an implementation does not declare read as 0 (a Lua or other
 * implementation of a part): only builtin parts give engine parameters. */
static void pe_init(kb_comp *c)
{
    const kb_topo *t = kb_fabric_topo(c->fab);
    kb_pe *p = kb_xcalloc(1, sizeof *p);
    c->state = p;
    p->fab = c->fab;
    p->cpu = c->node;
    p->sip = c->n->sip;
    p->cube = c->n->cube;
    p->pe = c->n->pe;
    bool ok = true;
    p->sched = sibling(t, c->n, "pe_scheduler", &ok);
    p->dma = sibling(t, c->n, "pe_dma", &ok);
    p->fetch_store = sibling(t, c->n, "pe_fetch_store", &ok);
    p->gemm = sibling(t, c->n, "pe_gemm", &ok);
    p->math = sibling(t, c->n, "pe_math", &ok);
    p->tcm = sibling(t, c->n, "pe_tcm", &ok);
    p->mmu = sibling(t, c->n, "pe_mmu", &ok);
    p->ipcq = sibling(t, c->n, "pe_ipcq", &ok);
    if (!ok) { /* the builder always makes all nine parts */
        free(p);
        c->state = NULL;
        return;
    }
    p->cpu_clock_ghz = attr(t, p->cpu, "clock_ghz");
    int64_t dispatch_cycles = (int64_t)attr(t, p->cpu, "dispatch_cycles");
    p->scratch_bytes = (uint64_t)llround(attr(t, p->cpu, "scratch_kb") * 1024.0);
    p->dispatch_ps = kb_cycles_ps((double)dispatch_cycles, p->cpu_clock_ghz) + c->overhead_ps;
    p->sched_ps = attr_ps(t, p->sched, "overhead_ns");
    p->fs_ps = attr_ps(t, p->fetch_store, "overhead_ns");
    p->tlb_ps = attr_ps(t, p->mmu, "tlb_overhead_ns");
    p->tcm_bw[0] = attr(t, p->tcm, "read_bw_gbs");
    p->tcm_bw[1] = attr(t, p->tcm, "write_bw_gbs");
    p->dma_tcm = attr(t, p->dma, "tcm_ports") != 0;
    p->stage_simple = attr(t, p->fetch_store, "stages_simple_commands") != 0;
    p->gemm_m = (kb_gemm_model){attr(t, p->gemm, "clock_ghz"), (int64_t)attr(t, p->gemm, "mac_rows"),
                                (int64_t)attr(t, p->gemm, "mac_cols"), (int64_t)attr(t, p->gemm, "mac_depth"),
                                attr(t, p->gemm, "f32_slowdown"), attr_ps(t, p->gemm, "overhead_ns")};
    p->math_m = (kb_math_model){attr(t, p->math, "clock_ghz"), (int64_t)attr(t, p->math, "simd_bytes"),
                                attr(t, p->math, "transcendental_cycles"), attr_ps(t, p->math, "overhead_ns")};
    char *err = NULL;
    if (!kb_pe_tcm_init(p, &err)) {
        kb_comp_fail(c, "PE_TCM: %s", err);
        free(err);
    }
}

/* Composites in flight release their kernels with the pipeline; kernel
 * instances still referenced from elsewhere are then detached. */
static void pe_fini(kb_comp *c)
{
    kb_pe *p = c->state;
    if (!p)
        return;
    kb_pipe_free(p);
    drop_runs(p);
    kb_kernel_detach_all(p);
    kb_alloc_fini(&p->tcm_space);
    free(p);
}

static const kb_msg_handler cpu_handlers[] = {
    {&kb_msg_kernel_launch, launch}, {&kb_msg_transfer, kb_store_forward_txn}, {NULL, NULL}};

const kb_comp_ops kb_pe_cpu_ops = {
    .flit_aware = false, .handlers = cpu_handlers, .init = pe_init, .fini = pe_fini, .on_txn = kb_store_forward_txn};

kb_pe *kb_pe_of(kb_fabric *f, uint32_t node)
{
    kb_comp *c = kb_fabric_comp(f, node);
    return c->ops == &kb_pe_cpu_ops ? c->state : NULL;
}

kb_pe *kb_pe_find(kb_fabric *f, int sip, int cube, int pe, char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    int64_t n = kb_topo_pe_node(t, sip, cube, pe, "pe_cpu");
    kb_pe *p = n < 0 ? NULL : kb_pe_of(f, (uint32_t)n);
    if (!p) {
        *err = n < 0 ? kb_asprintf("no PE sip%d.cube%d.pe%d in topology %s", sip, cube, pe, kb_topo_name(t))
                     : kb_asprintf("%s is not a builtin.pe_cpu: it cannot run kernels", kb_topo_node(t, (uint32_t)n)->id);
        return NULL;
    }
    /* The engines are driven by the PE's commands, not by fabric traffic:
     * another implementation in their place would never be asked. */
    const uint32_t parts[] = {p->sched, p->fetch_store, p->gemm, p->math, p->tcm};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        kb_comp *c = kb_fabric_comp(f, parts[i]);
        if (c->ops != &kb_pe_part_ops) {
            *err = kb_asprintf("%s is %s: a PE engine must be its builtin (the PE's commands drive it); "
                               "change its timing with a latency_model instead (docs/extending.md)",
                               c->n->id, c->n->spec->impl->name);
            return NULL;
        }
    }
    return p;
}
