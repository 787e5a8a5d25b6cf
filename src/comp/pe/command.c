/* The machine that runs simple commands (pe.h): a command is its kind's
 * stages in order (kb_pe_cmd, defined by the file that owns the kind). A
 * stage books its resource in closed form and says when the next one
 * starts, so a command costs one event per stage that takes time. The
 * machine knows no kind: what a stage does, and what lands at the end,
 * are the kind's. */
#include "comp/pe/engines.h"

#include "core/sim.h"

#include <stdlib.h>

static kb_sim *sim_of(const kb_pe_op *op) { return kb_fabric_sim(op->pe->fab); }

static void run(kb_pe_op *op);

static void resume(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_pe_op *op = arg;
    op->stage++;
    run(op);
}

void kb_pe_op_continue(kb_pe_op *op, kb_time at) { kb_sim_at(sim_of(op), at, KB_PRIO_NORMAL, resume, op); }

/* The last stage has ended, or one failed (op->error): the values land
 * (data mode, no error), the call's slice goes on PE_CPU, the issuer hears. */
static void finish(kb_pe_op *op, kb_time now)
{
    kb_pe *p = op->pe;
    if (op->data && !op->error && op->cmd->land)
        op->cmd->land(op);
    kb_pe_cpu_span(p, op->what, op->t_issue, now);
    free(op->buf);
    op->buf = NULL;
    if (p->active == op)
        p->active = NULL;
    op->done(op);
}

static void run(kb_pe_op *op)
{
    kb_sim *sim = sim_of(op);
    for (;;) {
        kb_time now = kb_sim_now(sim), at = now;
        op->t_stage = now;
        kb_pe_stage_fn stage = op->stage < KB_PE_CMD_STAGES ? op->cmd->stages[op->stage] : NULL;
        if (!stage)
            return finish(op, now);
        switch (stage(op, now, &at)) {
        case KB_PE_NEXT:
            break;
        case KB_PE_AT:
            return kb_pe_op_continue(op, at);
        case KB_PE_WAIT:
            return;
        case KB_PE_FAILED:
            return finish(op, now);
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
