/* IO_CPU (builtin.io_cpu; execution-pe-tl.md §1.5, §1.8): the IO chiplet's
 * command processor. A KernelLaunch, MmuMap or MmuUnmap from the host pays
 * its overhead, a launch gets its start barrier, and one message per target
 * cube of this SIP goes to that cube's M_CPU; Completions from the M_CPUs
 * are counted and, with the last, the SIP's Completion goes to the PCIe
 * endpoint. */
#include "comp/device/control.h"

#include "comp/comp.h"
#include "core/sim.h"
#include "topo/route.h"

#include <stdlib.h>

/* The start barrier: now plus the longest predicted two-leg latency
 * IO_CPU -> M_CPU -> PE_CPU over the launch's grid rectangle on this SIP,
 * with IO_CPU's overhead (already paid) left out and M_CPU's (the end of
 * one leg and the start of the next) counted once. */
static kb_time barrier(kb_comp *io, const kb_ctrl_op *op, int sip, kb_time now)
{
    kb_fabric *f = io->fab;
    const kb_topo *t = kb_fabric_topo(f);
    int pes, cubes;
    kb_ctrl_grid(op, &pes, &cubes);
    kb_time worst = 0;
    char *err = NULL;
    for (int cube = 0; cube < cubes; cube++) {
        int64_t m = kb_topo_cube_node(t, sip, cube, "m_cpu");
        const kb_path *leg1 = m < 0 ? NULL : kb_route(t, KB_VIEW_ALL, io->node, (uint32_t)m, &err);
        if (!leg1)
            continue;
        kb_time l1 = kb_path_latency_ps(t, leg1, 0), m_oh = kb_fabric_comp(f, (uint32_t)m)->overhead_ps;
        for (int pe = 0; pe < pes; pe++) {
            int64_t cpu = kb_topo_pe_node(t, sip, cube, pe, "pe_cpu");
            const kb_path *leg2 = cpu < 0 ? NULL : kb_route(t, KB_VIEW_ALL, (uint32_t)m, (uint32_t)cpu, &err);
            if (!leg2)
                continue;
            kb_time l = l1 + kb_path_latency_ps(t, leg2, 0) - io->overhead_ps - m_oh;
            if (l > worst)
                worst = l;
        }
    }
    free(err);
    return now + worst;
}

/* The host's message, its overhead paid: on to the M_CPUs. */
static void fan_out(kb_txn *t)
{
    kb_comp *c = kb_fabric_comp(t->fab, t->path->nodes[t->path->n - 1]);
    const kb_msg_kind *kind = t->kind;
    size_t s;
    kb_ctrl_op *op = kb_ctrl_take(t, &s);
    int sip = kb_ctrl_group_sip(op, s);
    if (kind == &kb_msg_kernel_launch)
        kb_ctrl_set_start(op, sip, barrier(c, op, sip, kb_sim_now(kb_fabric_sim(c->fab))));
    size_t n, first = kb_ctrl_sip_cubes(op, sip, &n);
    for (size_t g = first; g < first + n; g++)
        kb_ctrl_pass_on(c, op, kind, g, kb_topo_cube_node(kb_fabric_topo(c->fab), sip, kb_ctrl_cube(op, g)->cube, "m_cpu"),
                        NULL);
    kb_ctrl_put(op);
}

/* A cube's Completion, its overhead paid: the SIP's goes up with the last. */
static void collect(kb_txn *t)
{
    kb_comp *c = kb_fabric_comp(t->fab, t->path->nodes[t->path->n - 1]);
    size_t g;
    kb_ctrl_op *op = kb_ctrl_take(t, &g);
    int sip = kb_ctrl_cube(op, g)->sip;
    if (kb_ctrl_sip_answered(op, sip))
        kb_ctrl_answer_host(c->fab, op, sip, c->node);
    kb_ctrl_put(op);
}

static void down(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, fan_out); }
static void up(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, collect); }

static const kb_msg_handler handlers[] = {
    {&kb_msg_kernel_launch, down}, {&kb_msg_mmu_map, down}, {&kb_msg_mmu_unmap, down},
    {&kb_msg_completion, up},      {&kb_msg_transfer, kb_ctrl_end_transfer}, {NULL, NULL}};

const kb_comp_ops kb_io_cpu_ops = {.flit_aware = false, .handlers = handlers, .on_txn = kb_store_forward_txn};
