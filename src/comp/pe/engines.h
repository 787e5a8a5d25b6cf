/* Internal to the PE wing (src/comp/pe): what the parts' files offer one
 * another: request-order ports, busy time and slices, the context of
 * errors (call, kernel, PE, simulated time), PE_CPU's launches and
 * dispatch, the TCM ports, fetch and store, and the compute stages of
 * simple commands. Nothing outside the wing calls these; it uses pe.h. */
#ifndef KB_COMP_PE_ENGINES_H
#define KB_COMP_PE_ENGINES_H

#include "comp/pe/pe.h"

/* A capacity-1 port served in request order: a request made at `now` that
 * takes `dur` starts at *start and ends at the returned time. */
static inline kb_time kb_pe_take(kb_time *free_at, kb_time now, kb_time dur, kb_time *start)
{
    *start = *free_at > now ? *free_at : now;
    *free_at = *start + dur;
    return *free_at;
}

/* Counts [start, end) as busy time of part `node` and, with a trace, puts a
 * slice there; kb_pe_span_bytes adds a "bytes" argument (pe.c). */
void kb_pe_span(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, const kb_targ *args,
                size_t nargs);
void kb_pe_span_bytes(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, uint64_t n);
/* A view's shape as an array value (op-log records). */
kb_val *kb_pe_shape_val(const kb_tview *v);
/* A view's values in row-major order (malloc'd, at least one element). */
double *kb_pe_view_values(const kb_memstore *m, const kb_tview *v);
/* Where an error happened, for its message (the caller frees it):
 * "sipS.cubeC.peP" and, when the kernel is known, " (kernel 'K' at t=T)"
 * with the current simulated time. */
char *kb_pe_where(kb_pe *p, const char *kernel);
/* why (taken) as the error of `call`: "call on <kb_pe_where>: why". */
char *kb_pe_error(kb_pe *p, const char *call, const char *kernel, char *why);

/* ---- engines (cpu.c, tcm.c, fetch_store.c, gemm.c, math.c) ----
 * Times are the builtin formulas, or the part's Lua latency model when the
 * topology names one. */

/* PE_CPU takes a KernelLaunch (its overhead paid): at the launch's start
 * barrier (at once if it is late) it makes a kernel instance with scratch
 * from PE_TCM and hands it to the launch's runner; when the runner tells
 * the body's end (kb_kernel_finish), the instance's slice goes on PE_CPU's
 * track, its scratch is freed and the PE's answer goes back to M_CPU. */
void kb_pe_cpu_launch(kb_comp *c, kb_txn *t);
/* Frees the PE's launches still running (the PE is freed with its fabric). */
void kb_pe_cpu_drop_runs(kb_pe *p);
/* PE_CPU: a command's dispatch from `now` (PE_SCHEDULER's slice when it
 * costs time); returns its end, kb_pe_dispatched_at. */
kb_time kb_pe_dispatch(kb_pe *p, const char *what, kb_time now);
/* When a command issued at `now` is dispatched: PE_CPU's dispatch, then
 * PE_SCHEDULER's overhead (no slice). */
kb_time kb_pe_dispatched_at(const kb_pe *p, kb_time now);
kb_time kb_pe_tcm_ps(kb_pe *p, int write, uint64_t bytes);
/* Sets up PE_TCM's space (when the PE is assembled); false with *err. */
bool kb_pe_tcm_init(kb_pe *p, char **err);
/* A TCM access of n bytes requested at `at` on the read (0) or write (1)
 * port; returns its end (*start: when the port took it). `trace`: its
 * slice and busy time on PE_TCM (a tile's stage is traced by its lane). */
kb_time kb_pe_tcm(kb_pe *p, int write, kb_time at, uint64_t n, bool trace, kb_time *start);
/* The TCM port a PE_DMA transfer uses (a read lands through the write port,
 * a write leaves through the read port), or nothing when pe_dma.tcm_ports is
 * false (*start = at, returns at). */
kb_time kb_pe_dma_tcm(kb_pe *p, int write, kb_time at, uint64_t n, bool trace, kb_time *start);
/* PE_FETCH_STORE: n bytes TCM -> register file (store = 0) or back, from
 * `now`: overhead, then the TCM port; `trace`: slices on both parts. */
kb_time kb_pe_fetch_store(kb_pe *p, int store, kb_time now, uint64_t n, bool trace);
kb_time kb_pe_gemm_ps(kb_pe *p, int64_t m, int64_t k, int64_t n, kb_dtype t);
kb_time kb_pe_math_ps(kb_pe *p, kb_mop op, int64_t elems, int64_t outs, kb_dtype t);

/* The compute stage of a gemm / math command on the accel slot from `now`:
 * slice, op-log record; returns its end (gemm.c, math.c). With data, the
 * result is computed into op->out by kb_pe_*_values when the command ends. */
kb_time kb_pe_gemm_stage(kb_pe_op *op, kb_time now);
kb_time kb_pe_math_stage(kb_pe_op *op, kb_time now);
void kb_pe_gemm_values(kb_pe_op *op);
void kb_pe_math_values(kb_pe_op *op);

/* A command parked by PE_IPCQ goes on with its next stage at `at` (>= now)
 * (command.c). */
void kb_pe_op_continue(kb_pe_op *op, kb_time at);

/* ---- when the PE is freed with its fabric (pe.c) ---- */

/* Frees a PE's pipeline and the composites only it still holds. */
void kb_pipe_free(kb_pe *pe);
/* Detaches every kernel instance of p. */
void kb_kernel_detach_all(kb_pe *p);

#endif
