/* M_CPU (builtin.m_cpu; execution-pe-tl.md §1.6): the cube's command
 * processor. A KernelLaunch, MmuMap or MmuUnmap from IO_CPU pays its
 * overhead and goes on to each target PE's leaf (PE_CPU for a launch,
 * PE_MMU for a map); every leaf's answer is counted (a PE_CPU's Completion
 * message, a PE_MMU's message arriving) and, with the last, the cube's
 * Completion goes back to IO_CPU. */
#include "comp/device/control.h"

#include "comp/comp.h"
#include "core/sim.h"


/* The cube's answer to its SIP's IO_CPU, from M_CPU node m. */
static void answer_io(kb_fabric *f, kb_ctrl_op *op, size_t g, uint32_t m)
{
    kb_ctrl_pass_on(kb_fabric_comp(f, m), op, &kb_msg_completion, g,
                    kb_topo_io_node(kb_fabric_topo(f), kb_ctrl_cube(op, g)->sip, 0, "io_cpu"), NULL);
}

/* A map message reached its PE_MMU and was applied: that PE's answer. */
static void mmu_arrived(kb_txn *t, void *arg)
{
    kb_ctrl_op *op = arg;
    size_t i;
    kb_ctrl_of(t, &i);
    size_t g = kb_ctrl_cube_of(op, i);
    if (kb_ctrl_cube_answered(op, g)) {
        const kb_ctrl_target *cube = kb_ctrl_cube(op, g);
        answer_io(t->fab, op, g, (uint32_t)kb_topo_cube_node(kb_fabric_topo(t->fab), cube->sip, cube->cube, "m_cpu"));
    }
}

/* IO_CPU's message, its overhead paid: on to the cube's target PEs. */
static void fan_out(kb_txn *t)
{
    kb_comp *c = kb_fabric_comp(t->fab, t->path->nodes[t->path->n - 1]);
    const kb_msg_kind *kind = t->kind;
    bool launch = kind == &kb_msg_kernel_launch;
    size_t g;
    kb_ctrl_op *op = kb_ctrl_take(t, &g);
    size_t n, first = kb_ctrl_cube_first(op, g, &n);
    for (size_t i = first; i < first + n; i++) {
        const kb_ctrl_target *tg = kb_ctrl_target_at(op, i);
        kb_ctrl_pass_on(c, op, kind, i,
                        kb_topo_pe_node(kb_fabric_topo(c->fab), tg->sip, tg->cube, tg->pe, launch ? "pe_cpu" : "pe_mmu"),
                        launch ? NULL : mmu_arrived);
    }
    kb_ctrl_put(op);
}

/* A PE_CPU's Completion, its overhead paid: the cube's goes up with the last. */
static void collect(kb_txn *t)
{
    kb_comp *c = kb_fabric_comp(t->fab, t->path->nodes[t->path->n - 1]);
    size_t i;
    kb_ctrl_op *op = kb_ctrl_take(t, &i);
    size_t g = kb_ctrl_cube_of(op, i);
    if (kb_ctrl_cube_answered(op, g))
        answer_io(c->fab, op, g, c->node);
    kb_ctrl_put(op);
}

static void down(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, fan_out); }
static void up(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, collect); }

static const kb_msg_handler handlers[] = {
    {&kb_msg_kernel_launch, down}, {&kb_msg_mmu_map, down}, {&kb_msg_mmu_unmap, down},
    {&kb_msg_completion, up},      {&kb_msg_transfer, kb_ctrl_end_transfer}, {NULL, NULL}};

const kb_comp_ops kb_m_cpu_ops = {.flit_aware = false, .handlers = handlers, .on_txn = kb_store_forward_txn};
