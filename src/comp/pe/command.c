/* The stage machine of simple commands (pe.h): a command is a fixed
 * sequence of stages, each on one part; a stage books its resource in
 * closed form and schedules the next one at its end, so a command costs
 * one event per stage that takes time. The engines' files give each
 * stage's time, slice and op-log record. */
#include "comp/pe/engines.h"
#include "comp/pe/ipcq.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <stdlib.h>
#include <string.h>

enum stage {
    S_DISPATCH,  /* PE_CPU issue (dispatch cycles) and PE_SCHEDULER dispatch */
    S_MMU,       /* PE_MMU: translation of the command's address, tlb_overhead_ns */
    S_DMA_READ, S_DMA_WRITE,
    S_TCM_WRITE, S_TCM_READ, /* a load's landing, a store's read-out */
    S_FETCH,     /* PE_FETCH_STORE: operands TCM -> register file */
    S_COMPUTE,   /* PE_GEMM or PE_MATH on the accel slot */
    S_WRITEBACK, /* PE_FETCH_STORE: result register file -> TCM */
    S_CYCLES,    /* tl.cycles: PE_CPU busy */
    S_SPACE, S_SEND, S_ARRIVAL, S_SLOT_READ, S_CREDIT, /* PE_IPCQ's (ipcq.c) */
    S_END
};

static const uint8_t plans[][5] = {
    [KB_PE_LOAD] = {S_DISPATCH, S_MMU, S_DMA_READ, S_TCM_WRITE, S_END},
    [KB_PE_STORE] = {S_DISPATCH, S_MMU, S_TCM_READ, S_DMA_WRITE, S_END},
    [KB_PE_GEMM] = {S_DISPATCH, S_FETCH, S_COMPUTE, S_WRITEBACK, S_END},
    [KB_PE_MATH] = {S_DISPATCH, S_FETCH, S_COMPUTE, S_WRITEBACK, S_END},
    [KB_PE_CYCLES] = {S_DISPATCH, S_CYCLES, S_END, S_END, S_END},
    [KB_PE_SEND] = {S_DISPATCH, S_SPACE, S_SEND, S_END, S_END},
    [KB_PE_RECV] = {S_DISPATCH, S_ARRIVAL, S_SLOT_READ, S_CREDIT, S_END},
};

static const kb_ipcq_stage ipcq_stage[] = {[S_SPACE] = KB_IPCQ_SPACE, [S_SEND] = KB_IPCQ_SEND,
                                           [S_ARRIVAL] = KB_IPCQ_ARRIVAL, [S_SLOT_READ] = KB_IPCQ_SLOT_READ,
                                           [S_CREDIT] = KB_IPCQ_CREDIT};

static kb_sim *sim_of(const kb_pe_op *op) { return kb_fabric_sim(op->pe->fab); }

static uint64_t operand_bytes(const kb_pe_op *op)
{
    uint64_t n = 0;
    for (int i = 0; i < op->nin; i++)
        if (!op->in[i].is_imm)
            n += kb_tview_nbytes(&op->in[i].v);
    return n;
}

static void run(kb_pe_op *op);

static void resume(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_pe_op *op = arg;
    op->stage++;
    run(op);
}

static void after(kb_pe_op *op, kb_time end)
{
    kb_sim_at(sim_of(op), end, KB_PRIO_NORMAL, resume, op);
}

static void dma_done(kb_txn *t, void *arg)
{
    kb_pe_op *op = arg;
    kb_time now = kb_sim_now(sim_of(op));
    op->dma_ps += now - op->t_stage;
    const kb_mem_req *r = kb_mem_req_of(t);
    if (op->kind == KB_PE_LOAD && r->data) {
        op->buf = kb_xmalloc(r->nbytes);
        memcpy(op->buf, kb_data_buffer_bytes(r->data), r->nbytes);
    }
    after(op, now);
}

void kb_pe_op_continue(kb_pe_op *op, kb_time at) { after(op, at); }

static void fail(kb_pe_op *op, char *err)
{
    op->error = err;
    op->stage = (int)(sizeof plans[0] - 1); /* S_END */
    run(op);
}

/* Data mode: results are in TCM as the command's last write ends. */
static void land_data(kb_pe_op *op)
{
    if (op->kind == KB_PE_LOAD && op->buf)
        kb_memstore_write(kb_fabric_memstore(op->pe->fab), op->tcm.domain, op->tcm.offset, op->buf,
                          kb_tview_nbytes(&op->tcm));
    else if (op->kind == KB_PE_RECV && op->buf)
        kb_memstore_write(kb_fabric_memstore(op->pe->fab), op->out.domain, op->out.offset, op->buf,
                          kb_tview_nbytes(&op->out));
    else if (op->kind == KB_PE_GEMM)
        kb_pe_gemm_values(op);
    else if (op->kind == KB_PE_MATH)
        kb_pe_math_values(op);
}

static void run(kb_pe_op *op)
{
    kb_pe *p = op->pe;
    kb_sim *sim = sim_of(op);
    for (;;) {
        kb_time now = kb_sim_now(sim), start, end;
        op->t_stage = now;
        switch (plans[op->kind][op->stage]) {
        case S_DISPATCH:
            end = kb_pe_dispatch(p, op->what, now);
            if (end > now)
                return after(op, end);
            break;
        case S_MMU: {
            char *err = NULL;
            if (!kb_mmu_resolve(p, op->va, kb_tview_nbytes(&op->tcm), op->pa_fallback, op->what, op->kernel,
                                &op->target, &op->target_off, &err))
                return fail(op, err);
            if (p->tlb_ps) {
                kb_pe_span(p, p->mmu, "translate", now, now + p->tlb_ps, NULL, 0);
                return after(op, now + p->tlb_ps);
            }
            break;
        }
        case S_DMA_READ:
        case S_DMA_WRITE: {
            bool write = plans[op->kind][op->stage] == S_DMA_WRITE;
            uint64_t n = kb_tview_nbytes(&op->tcm);
            kb_data *d = NULL;
            if (op->data) {
                d = kb_data_buffer(op->buf, n);
                free(op->buf);
                op->buf = NULL;
            }
            char *err = NULL;
            if (!kb_pe_dma_submit(p->fab, p->dma, write ? &kb_msg_dma_write : &kb_msg_dma_read, op->target,
                                  op->target_off, n, d, dma_done, op, NULL, &err))
                return fail(op, kb_pe_error(p, op->what, op->kernel, err));
            return;
        }
        case S_TCM_WRITE:
        case S_TCM_READ: {
            int w = plans[op->kind][op->stage] == S_TCM_WRITE;
            uint64_t n = kb_tview_nbytes(&op->tcm);
            end = kb_pe_dma_tcm(p, w, now, n, true, &start); /* a load's landing, a store's read-out */
            if (op->data && !w) { /* a store's bytes leave TCM now (a load's land at the end) */
                op->buf = kb_xmalloc(n ? n : 1);
                kb_memstore_read(kb_fabric_memstore(p->fab), op->tcm.domain, op->tcm.offset, op->buf, n);
            }
            return after(op, end);
        }
        case S_FETCH:
            if (!p->stage_simple) /* the original's register-only sub-command */
                break;
            return after(op, kb_pe_fetch_store(p, 0, now, operand_bytes(op), true));
        case S_WRITEBACK:
            if (!p->stage_simple)
                break;
            return after(op, kb_pe_fetch_store(p, 1, now, kb_tview_nbytes(&op->out), true));
        case S_COMPUTE:
            return after(op, op->kind == KB_PE_GEMM ? kb_pe_gemm_stage(op, now) : kb_pe_math_stage(op, now));
        case S_SPACE:
        case S_SEND:
        case S_ARRIVAL:
        case S_SLOT_READ:
        case S_CREDIT:
            switch (kb_ipcq_run(op, ipcq_stage[plans[op->kind][op->stage]], now, &end)) {
            case KB_IPCQ_GO:
                break;
            case KB_IPCQ_AT:
                return after(op, end);
            case KB_IPCQ_WAIT: /* PE_IPCQ resumes it (kb_pe_op_continue) */
                return;
            case KB_IPCQ_FAILED:
                return fail(op, op->error);
            }
            break;
        case S_CYCLES:
            end = now + kb_cycles_ps((double)op->cycles, p->cpu_clock_ghz);
            if (end > now)
                return after(op, end);
            break;
        case S_END:
            if (op->data && !op->error)
                land_data(op);
            kb_pe_cpu_span(p, op->what, op->t_issue, now);
            free(op->buf);
            op->buf = NULL;
            if (p->active == op)
                p->active = NULL;
            op->done(op);
            return;
        }
        op->stage++;
    }
}

void kb_pe_submit(kb_pe_op *op)
{
    op->t_issue = kb_sim_now(sim_of(op));
    op->dma_ps = op->compute_ps = 0;
    op->error = NULL;
    op->stage = 0;
    op->buf = NULL;
    op->submitting = true;
    op->pe->active = op;
    run(op);
    op->submitting = false;
}
