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
