/* PE_FETCH_STORE (pe.h): moves between TCM and the register file. A move
 * pays the part's overhead, then takes the TCM read port (fetch) or write
 * port (store) for its bytes. A simple command's move is a slice on both
 * parts ("fetch" / "store" from the request, "read" / "write" on the
 * port); a tile's stage is traced by its lane (pipeline.c). */
#include "comp/pe/engines.h"

kb_time kb_pe_fetch_store(kb_pe *p, int store, kb_time now, uint64_t n, bool trace)
{
    kb_time start, end = kb_pe_tcm(p, store, now + p->fs_ps, n, false, &start);
    if (trace) {
        kb_pe_span_bytes(p, p->fetch_store, store ? "store" : "fetch", now, end, n);
        kb_pe_span_bytes(p, p->tcm, store ? "write" : "read", start, end, n);
    }
    return end;
}

/* The compute commands' stages; without stages_simple_commands (the
 * original's register-only sub-command) they take no time. */
kb_pe_step kb_pe_stage_fetch(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_pe *p = op->pe;
    if (!p->stage_simple)
        return KB_PE_NEXT;
    const kb_pe_operands *a = KB_PE_ARGS(op, kb_pe_operands);
    uint64_t n = 0;
    for (int i = 0; i < a->nin; i++)
        if (!a->in[i].is_imm)
            n += kb_tview_nbytes(&a->in[i].v);
    *at = kb_pe_fetch_store(p, 0, now, n, true);
    return KB_PE_AT;
}

kb_pe_step kb_pe_stage_writeback(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_pe *p = op->pe;
    if (!p->stage_simple)
        return KB_PE_NEXT;
    *at = kb_pe_fetch_store(p, 1, now, kb_tview_nbytes(&op->out), true);
    return KB_PE_AT;
}
