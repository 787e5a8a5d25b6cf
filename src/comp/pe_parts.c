/* PE components whose behaviour comes with kernel execution
 * (PE_SCHEDULER, PE_FETCH_STORE, PE_GEMM, PE_MATH, PE_TCM, PE_IPCQ): they
 * are nodes of the graph with their attributes, but they do not serve
 * fabric transactions yet, and say so if one reaches them. (PE_CPU and
 * PE_MMU terminate control messages: builtin.c.) */
#include "comp/comp.h"

static void refuse(kb_comp *c, kb_txn *t)
{
    kb_comp_fail(c, "received a %s (transaction #%llu), but this PE component is not modelled "
                    "yet: only PE_DMA moves data on the fabric so far",
                 kb_msg_name(t->msg), (unsigned long long)t->id);
}

static void part_txn(kb_comp *c, kb_txn *t)
{
    refuse(c, t);
    kb_txn_free(t);
}

const kb_comp_ops kb_pe_part_ops = {.flit_aware = false, .on_txn = part_txn};
