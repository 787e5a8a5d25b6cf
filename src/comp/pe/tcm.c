/* PE_TCM (pe.h): the scratchpad's read and write ports, one request at a
 * time each in request order, at read_bw_gbs / write_bw_gbs; a latency
 * model may replace the formula ({op = "read" | "write", bytes}). Each
 * access of a simple command is a slice ("read" / "write", with bytes). */
#include "comp/pe/pe.h"

#include <math.h>

kb_time kb_bw_ps(uint64_t nbytes, double bw_gbs)
{
    if (bw_gbs <= 0 || nbytes == 0)
        return 0;
    return (kb_time)ceil((double)nbytes * 1000.0 / bw_gbs - 1e-9);
}

kb_time kb_pe_tcm_ps(kb_pe *p, int write, uint64_t bytes)
{
    kb_time t = kb_bw_ps(bytes, p->tcm_bw[write]);
    kb_comp *c = kb_fabric_comp(p->fab, p->tcm);
    if (!c->latency)
        return t;
    kb_lat_query q = {.op = write ? "write" : "read", .builtin_ps = t};
    kb_lat_param(&q, "bytes", (double)bytes);
    return kb_comp_latency(c, &q);
}

kb_time kb_pe_tcm(kb_pe *p, int write, kb_time at, uint64_t n, kb_time *start)
{
    kb_time end = kb_pe_take(&p->tcm_free[write], at, kb_pe_tcm_ps(p, write, n), start);
    kb_pe_span_bytes(p, p->tcm, write ? "write" : "read", *start, end, n);
    return end;
}
