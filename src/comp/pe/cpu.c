/* PE_CPU (pe.h): issuing a command costs dispatch_cycles at clock_ghz plus
 * PE_CPU's overhead, then PE_SCHEDULER's overhead before an engine starts;
 * tl.cycles keeps it busy for n cycles. Its trace track shows a slice per
 * tl call and one per kernel instance. */
#include "comp/pe/pe.h"

#include <math.h>

kb_time kb_cycles_ps(double cycles, double clock_ghz)
{
    if (clock_ghz <= 0) /* a part whose implementation has no clock (not a builtin) */
        return 0;
    return (kb_time)llround(cycles * 1000.0 / clock_ghz);
}

kb_time kb_pe_dispatch(kb_pe *p, const char *what, kb_time now)
{
    kb_time end = now + p->dispatch_ps + p->sched_ps;
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
