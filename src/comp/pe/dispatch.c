/* Issuing a command (engines.h): PE_CPU pays dispatch_cycles at its clock
 * plus its overhead (kb_pe.dispatch_ps), then PE_SCHEDULER its overhead
 * before an engine starts. Every kind of simple command begins with this
 * stage; a composite starts feeding when it is over. */
#include "comp/pe/engines.h"

kb_time kb_pe_dispatched_at(const kb_pe *p, kb_time now) { return now + p->dispatch_ps + p->sched_ps; }

kb_time kb_pe_dispatch(kb_pe *p, const char *what, kb_time now)
{
    kb_time end = kb_pe_dispatched_at(p, now);
    if (p->sched_ps)
        kb_pe_span(p, p->sched, what, now + p->dispatch_ps, end, NULL, 0);
    return end;
}

kb_pe_step kb_pe_stage_dispatch(kb_pe_op *op, kb_time now, kb_time *at)
{
    *at = kb_pe_dispatch(op->pe, op->what, now);
    return *at > now ? KB_PE_AT : KB_PE_NEXT;
}
