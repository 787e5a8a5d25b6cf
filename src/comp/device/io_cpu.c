/* IO_CPU (builtin.io_cpu; execution-pe-tl.md §1.5, §1.8): the IO chiplet's
 * command processor. It fans messages out to its SIP's M_CPUs and collects
 * their Completions as M_CPU does for its PEs (control.c); its own step is
 * a launch's start barrier, stamped before the launch fans out. */
#include "comp/device/control.h"

#include "core/sim.h"
#include "topo/route.h"

#include <stdlib.h>

#define WHAT "KernelLaunch start barrier"

/* The node of `kind` at a place of a pes x cubes launch grid, or false
 * after failing the run at IO_CPU io. */
static bool grid_node(kb_comp *io, const char *kind, int sip, int cube, int pe, int pes, int cubes, uint32_t *out)
{
    char *err = NULL;
    if (kb_ctrl_node_at(io->fab, kind, sip, cube, pe, -1, NULL, WHAT, out, &err))
        return true;
    kb_comp_fail(io, "%s (the launch's grid is %d PEs x %d cubes)", err, pes, cubes);
    free(err);
    return false;
}

/* The route from a to b, or NULL after failing the run at IO_CPU io. */
static const kb_path *leg(kb_comp *io, uint32_t a, uint32_t b)
{
    char *err = NULL;
    const kb_path *p = kb_route(kb_fabric_topo(io->fab), KB_VIEW_ALL, a, b, &err);
    if (!p) {
        kb_comp_fail(io, WHAT ": %s", err);
        free(err);
    }
    return p;
}

/* The start barrier: now plus the longest predicted two-leg latency
 * IO_CPU -> M_CPU -> PE_CPU over the launch's grid rectangle on this SIP,
 * with IO_CPU's overhead (already paid) left out and M_CPU's (the end of
 * one leg and the start of the next) counted once. Every node and route of
 * the rectangle must exist: the grid is the kernels' view of the machine. */
bool kb_ctrl_start_barrier(kb_comp *io, int sip, int pes, int cubes, kb_time *at)
{
    const kb_topo *t = kb_fabric_topo(io->fab);
    kb_time worst = 0;
    for (int cube = 0; cube < cubes; cube++) {
        uint32_t m, cpu;
        const kb_path *leg1, *leg2;
        if (!grid_node(io, "m_cpu", sip, cube, -1, pes, cubes, &m) || !(leg1 = leg(io, io->node, m)))
            return false;
        kb_time l1 = kb_path_latency_ps(t, leg1, 0), m_oh = kb_fabric_comp(io->fab, m)->overhead_ps;
        for (int pe = 0; pe < pes; pe++) {
            if (!grid_node(io, "pe_cpu", sip, cube, pe, pes, cubes, &cpu) || !(leg2 = leg(io, m, cpu)))
                return false;
            kb_time l = l1 + kb_path_latency_ps(t, leg2, 0) - io->overhead_ps - m_oh;
            if (l > worst)
                worst = l;
        }
    }
    *at = kb_sim_now(kb_fabric_sim(io->fab)) + worst;
    return true;
}
