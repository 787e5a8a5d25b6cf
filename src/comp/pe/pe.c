/* What every file of the PE wing shares (engines.h): busy time and trace
 * slices of its parts, PE_CPU's track, cycles at a clock, views' values
 * and shapes, and where and when an error happened. */
#include "comp/pe/engines.h"

#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

kb_time kb_cycles_ps(double cycles, double clock_ghz)
{
    if (clock_ghz <= 0) /* a part whose implementation has no clock (not a builtin) */
        return 0;
    return (kb_time)llround(cycles * 1000.0 / clock_ghz);
}

void kb_pe_busy(kb_pe *p, uint32_t node, kb_time start, kb_time end)
{
    kb_comp *c = kb_fabric_comp(p->fab, node);
    /* an engine that moves no flit (PE_GEMM, PE_MATH, PE_CPU) is listed in
     * the statistics from its first busy time */
    if (!c->busy_ps && !c->txns && !c->flits && end > start)
        kb_fabric_note_active(p->fab, node);
    kb_comp_busy(c, start, end);
}

void kb_pe_span(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, const kb_targ *args,
                size_t nargs)
{
    kb_pe_busy(p, node, start, end);
    kb_tracer *tr = kb_fabric_tracer(p->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(p->fab, node), name, start, end, args, nargs, 0, KB_FLOW_NONE);
}

void kb_pe_cpu_span(kb_pe *p, const char *name, kb_time start, kb_time end)
{
    kb_tracer *tr = kb_fabric_tracer(p->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(p->fab, p->cpu), name, start, end, NULL, 0, 0, KB_FLOW_NONE);
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

bool kb_pe_fail(char **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *err = kb_vasprintf(fmt, ap);
    va_end(ap);
    return false;
}
