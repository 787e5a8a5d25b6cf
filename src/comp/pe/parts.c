/* PE parts that take no fabric transactions (PE_SCHEDULER, PE_FETCH_STORE,
 * PE_GEMM, PE_MATH, PE_TCM): nodes of the
 * graph with their attributes, whose work comes from their PE's commands
 * (pe.h). A transaction reaching one is a routing error, reported as such.
 * (PE_CPU, PE_MMU and PE_IPCQ terminate control messages: pe.c, mmu.c,
 * ipcq.c.) */
#include "comp/pe/pe.h"

static void refuse(kb_comp *c, kb_txn *t)
{
    kb_comp_fail(c, "received a %s (transaction #%llu), but this PE component takes no fabric "
                    "transactions: its work comes from its PE's commands (only PE_DMA moves data on "
                    "the fabric)",
                 t->kind->name, (unsigned long long)t->id);
}

static void part_txn(kb_comp *c, kb_txn *t)
{
    refuse(c, t);
    kb_txn_free(t);
}

const kb_comp_ops kb_pe_part_ops = {.flit_aware = false, .on_txn = part_txn};
