/* A PE assembled from its nine parts (pe.h). The PE's state lives in its
 * PE_CPU component (builtin.pe_cpu), which takes kernel launches (cpu.c);
 * the other parts are found beside it in the topology and give their
 * attributes as the PE's parameters. */
#include "comp/pe/engines.h"

#include "comp/device/control.h"
#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>

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
    kb_pe_cpu_drop_runs(p);
    kb_kernel_detach_all(p);
    kb_alloc_fini(&p->tcm_space);
    free(p);
}

static const kb_msg_handler cpu_handlers[] = {
    {&kb_msg_kernel_launch, kb_pe_cpu_launch}, {&kb_msg_transfer, kb_store_forward_txn}, {NULL, NULL}};

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

void kb_pe_span(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, const kb_targ *args,
                size_t nargs)
{
    kb_comp_busy(kb_fabric_comp(p->fab, node), start, end);
    kb_tracer *tr = kb_fabric_tracer(p->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(p->fab, node), name, start, end, args, nargs, 0, KB_FLOW_NONE);
}

void kb_pe_span_bytes(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, uint64_t n)
{
    kb_targ a = {"bytes", NULL, (int64_t)n};
    kb_pe_span(p, node, name, start, end, &a, 1);
}

kb_val *kb_pe_shape_val(const kb_tview *v)
{
    kb_val *a = kb_val_arr();
    for (int d = 0; d < v->ndim; d++)
        kb_arr_push(a, kb_val_int(v->shape[d]));
    return a;
}

double *kb_pe_view_values(const kb_memstore *m, const kb_tview *v)
{
    int64_t n = kb_tview_numel(v);
    double *x = kb_xmalloc((size_t)(n ? n : 1) * sizeof *x);
    kb_tview_read(m, v, x);
    return x;
}

char *kb_pe_where(kb_pe *p, const char *kernel)
{
    if (!kernel)
        return kb_asprintf("sip%d.cube%d.pe%d", p->sip, p->cube, p->pe);
    char t[KB_TIME_STRLEN];
    return kb_asprintf("sip%d.cube%d.pe%d (kernel '%s' at t=%s)", p->sip, p->cube, p->pe, kernel,
                       kb_time_format(kb_sim_now(kb_fabric_sim(p->fab)), t));
}

char *kb_pe_error(kb_pe *p, const char *call, const char *kernel, char *why)
{
    char *where = kb_pe_where(p, kernel);
    char *msg = kb_asprintf("%s on %s: %s", call, where, why);
    free(where);
    free(why);
    return msg;
}
