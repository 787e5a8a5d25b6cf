/* The cycles command (pe.h): tl.cycles(n) keeps PE_CPU busy for n cycles
 * at its clock after the dispatch; tl.cycles(0) is the dispatch alone.
 * The smallest kind of command, and the example docs/architecture.md
 * walks through: a layout, a builder, its stages, a descriptor. */
#include "comp/pe/engines.h"

#include "core/sim.h"
#include "core/util.h"


typedef struct cycles_args {
    int64_t n;
} cycles_args;
KB_PE_ARGS_FIT(cycles_args);

static kb_pe_step busy(kb_pe_op *op, kb_time now, kb_time *at)
{
    *at = now + kb_cycles_ps((double)KB_PE_ARGS(op, cycles_args)->n, op->pe->cpu_clock_ghz);
    return *at > now ? KB_PE_AT : KB_PE_NEXT;
}

static const kb_pe_cmd cycles_cmd = {.name = "cycles", .stages = {kb_pe_stage_dispatch, busy}};

bool kb_pe_op_cycles(kb_pe_op *op, int64_t n, char **err)
{
    if (n < 0)
        return kb_pe_fail(err, "tl.cycles: the count must be >= 0 (got %lld)", (long long)n);
    const kb_pe *p = op->pe;
    if (p && p->cpu_clock_ghz > 0) {
        /* the busy time, in ps, must end within int64 picoseconds */
        kb_time from = kb_pe_dispatched_at(p, kb_sim_now(kb_fabric_sim(p->fab)));
        double room = (double)(KB_TIME_MAX - from), ps = (double)n * 1000.0 / p->cpu_clock_ghz;
        if (!(ps < room)) {
            char t[KB_TIME_STRLEN];
            return kb_pe_fail(err, "tl.cycles: %lld cycles at %g GHz last %.6g ns, beyond the simulated range (int64 "
                                   "picoseconds, up to t=9223372036854775.807 ns): from t=%s, about %.6g cycles at "
                                   "most",
                              (long long)n, p->cpu_clock_ghz, ps / 1000.0, kb_time_format(from, t),
                              room * p->cpu_clock_ghz / 1000.0);
        }
    }
    op->cmd = &cycles_cmd;
    KB_PE_ARGS(op, cycles_args)->n = n;
    return true;
}
