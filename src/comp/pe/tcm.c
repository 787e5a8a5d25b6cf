/* PE_TCM (pe.h): the scratchpad's read and write ports, one request at a
 * time each in request order, at read_bw_gbs / write_bw_gbs; a latency
 * model may replace the formula ({op = "read" | "write", bytes}). Each
 * access of a simple command is a slice ("read" / "write", with bytes).
 * Its space is allocated here: the scheduler's reserved region at the
 * start is never handed out (docs/decisions.md "TCM reserved region"). */
#include "comp/pe/engines.h"

#include "core/util.h"

#include <math.h>
#include <stdlib.h>

bool kb_pe_tcm_init(kb_pe *p, char **err)
{
    const kb_comp_spec *s = kb_topo_node(kb_fabric_topo(p->fab), p->tcm)->spec;
    kb_tcm_params prm = KB_TCM_PARAMS_DEFAULT;
    prm.tcm_bytes = (uint64_t)floor(kb_spec_attr(s, "size_mb") * 1024.0 * 1024.0);
    prm.reserved_bytes = (uint64_t)floor(kb_spec_attr(s, "scheduler_reserved_kb") * 1024.0);
    return kb_alloc_init_tcm(&p->tcm_space, &prm, err);
}

static char *on_pe(kb_pe *p, char *why)
{
    char *msg = kb_asprintf("sip%d.cube%d.pe%d: %s", p->sip, p->cube, p->pe, why);
    free(why);
    return msg;
}

bool kb_pe_tcm_alloc(kb_pe *p, uint64_t n, uint64_t *offset, char **err)
{
    char *why = NULL;
    if (kb_alloc_alloc(&p->tcm_space, n, 16, offset, &why))
        return true;
    *err = on_pe(p, why);
    return false;
}

bool kb_pe_tcm_free(kb_pe *p, uint64_t offset, char **err)
{
    char *why = NULL;
    if (kb_alloc_free(&p->tcm_space, offset, &why))
        return true;
    *err = on_pe(p, why);
    return false;
}

bool kb_pe_tcm_pristine(const kb_pe *p) { return kb_alloc_is_pristine(&p->tcm_space); }

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

kb_time kb_pe_dma_tcm(kb_pe *p, int write, kb_time at, uint64_t n, bool trace, kb_time *start)
{
    if (p->dma_tcm)
        return kb_pe_tcm(p, write, at, n, trace, start);
    *start = at;
    return at;
}

kb_time kb_pe_tcm(kb_pe *p, int write, kb_time at, uint64_t n, bool trace, kb_time *start)
{
    kb_time end = kb_pe_take(&p->tcm_free[write], at, kb_pe_tcm_ps(p, write, n), start);
    if (trace)
        kb_pe_span_bytes(p, p->tcm, write ? "write" : "read", *start, end, n);
    return end;
}
