/* The load and store commands (pe.h): tl.load moves a tensor from memory
 * into TCM, tl.store from TCM to memory, both through PE_DMA.
 *   load:  dispatch -> translate -> DMA read  -> TCM write (its landing)
 *   store: dispatch -> translate -> TCM read  -> DMA write
 * The memory side is a virtual address, turned into a memory node and
 * offset by PE_MMU at the translate stage; the TCM side is a contiguous
 * view: a load's result (op->out), a store's source. With data on, a
 * load's bytes land as its TCM write ends, a store's leave TCM as its TCM
 * read ends. */
#include "comp/pe/engines.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <stdlib.h>
#include <string.h>

typedef struct mem_args {
    uint64_t va;          /* the memory side */
    kb_tview src;         /* store: the TCM side (a load's is op->out) */
    uint32_t target;      /* va's memory node and offset (the translate stage) */
    uint64_t target_off;
} mem_args;
KB_PE_ARGS_FIT(mem_args);

static const kb_pe_cmd load_cmd, store_cmd;

static const kb_tview *tcm_side(const kb_pe_op *op)
{
    return op->cmd == &load_cmd ? &op->out : &KB_PE_ARGS(op, mem_args)->src;
}

/* PE_MMU: the address becomes memory; tlb_overhead_ns on its track. */
static kb_pe_step translate(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_pe *p = op->pe;
    mem_args *a = KB_PE_ARGS(op, mem_args);
    if (!kb_mmu_resolve(p, a->va, kb_tview_nbytes(tcm_side(op)), op->pa_fallback, op->what, op->kernel, &a->target,
                        &a->target_off, &op->error))
        return KB_PE_FAILED;
    if (!p->tlb_ps)
        return KB_PE_NEXT;
    kb_pe_span(p, p->mmu, "translate", now, now + p->tlb_ps, NULL, 0);
    *at = now + p->tlb_ps;
    return KB_PE_AT;
}

static void dma_done(kb_txn *t, void *arg)
{
    kb_pe_op *op = arg;
    kb_time now = kb_sim_now(kb_fabric_sim(op->pe->fab));
    op->dma_ps += now - op->t_stage;
    const kb_mem_req *r = kb_mem_req_of(t);
    if (op->cmd == &load_cmd && r->data) {
        op->buf = kb_xmalloc(r->nbytes);
        memcpy(op->buf, kb_data_buffer_bytes(r->data), r->nbytes);
    }
    kb_pe_op_continue(op, now);
}

/* The transfer through PE_DMA; the command goes on when it is back. */
static kb_pe_step dma(kb_pe_op *op, bool write)
{
    kb_pe *p = op->pe;
    const mem_args *a = KB_PE_ARGS(op, mem_args);
    uint64_t n = kb_tview_nbytes(tcm_side(op));
    kb_data *d = NULL;
    if (op->data) {
        d = kb_data_buffer(op->buf, n);
        free(op->buf);
        op->buf = NULL;
    }
    char *err = NULL;
    if (!kb_pe_dma_submit(p->fab, p->dma, write ? &kb_msg_dma_write : &kb_msg_dma_read, a->target, a->target_off, n,
                          d, dma_done, op, NULL, &err)) {
        op->error = kb_pe_error(p, op->what, op->kernel, err);
        return KB_PE_FAILED;
    }
    return KB_PE_WAIT;
}

static kb_pe_step dma_read(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)now, (void)at;
    return dma(op, false);
}

static kb_pe_step dma_write(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)now, (void)at;
    return dma(op, true);
}

/* A load's landing in TCM (the write port), a store's read-out (the read
 * port), when PE_DMA transfers use the TCM ports (pe_dma.tcm_ports). */
static kb_pe_step tcm_write(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_time start;
    *at = kb_pe_dma_tcm(op->pe, 1, now, kb_tview_nbytes(&op->out), true, &start);
    return KB_PE_AT;
}

static kb_pe_step tcm_read(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_pe *p = op->pe;
    const kb_tview *src = &KB_PE_ARGS(op, mem_args)->src;
    uint64_t n = kb_tview_nbytes(src);
    kb_time start;
    *at = kb_pe_dma_tcm(p, 0, now, n, true, &start);
    if (op->data) { /* the bytes leave TCM now */
        op->buf = kb_xmalloc(n ? n : 1);
        kb_memstore_read(kb_fabric_memstore(p->fab), src->domain, src->offset, op->buf, n);
    }
    return KB_PE_AT;
}

/* Data mode: the loaded bytes are in TCM as the TCM write ends. */
static void land(kb_pe_op *op)
{
    if (op->buf)
        kb_memstore_write(kb_fabric_memstore(op->pe->fab), op->out.domain, op->out.offset, op->buf,
                          kb_tview_nbytes(&op->out));
}

static const kb_pe_cmd load_cmd = {.name = "load",
                                   .stages = {kb_pe_stage_dispatch, translate, dma_read, tcm_write},
                                   .land = land};
static const kb_pe_cmd store_cmd = {.name = "store",
                                    .stages = {kb_pe_stage_dispatch, translate, tcm_read, dma_write}};

void kb_pe_op_load(kb_pe_op *op, uint64_t va, kb_dtype dt, int ndim, const int64_t *shape)
{
    op->cmd = &load_cmd;
    KB_PE_ARGS(op, mem_args)->va = va;
    op->out.dtype = dt;
    op->out.ndim = ndim;
    memcpy(op->out.shape, shape, (size_t)ndim * sizeof *shape);
}

bool kb_pe_op_store(kb_pe_op *op, uint64_t va, const kb_tview *v, char **err)
{
    if (!kb_tview_contiguous(v))
        return kb_pe_fail(err, "tl.store: the handle is a transposed view (tl.trans); a store moves contiguous "
                               "bytes: compute a contiguous result first");
    op->cmd = &store_cmd;
    KB_PE_ARGS(op, mem_args)->va = va;
    KB_PE_ARGS(op, mem_args)->src = *v;
    return true;
}
