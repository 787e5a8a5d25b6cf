/* Internal to the PE wing (src/comp/pe): what the parts' files offer one
 * another: request-order ports, busy time and slices, the context of
 * errors (call, kernel, PE, simulated time), dispatch, the TCM ports,
 * fetch and store, PE_DMA's comm channel and port, and the stages the
 * kinds of command share. Nothing outside the wing calls these; it uses
 * pe.h. */
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
/* Books [start, end) as busy time of the PE's part `node`; the part is
 * listed in the statistics from then on (pe.c). */
void kb_pe_busy(kb_pe *p, uint32_t node, kb_time start, kb_time end);
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
/* A builder's refusal: *err = the formatted message; returns false. */
bool kb_pe_fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- engines (dispatch.c, tcm.c, fetch_store.c, gemm.c, math.c) ----
 * Times are the builtin formulas, or the part's Lua latency model when the
 * topology names one. */

/* PE_CPU: a command's dispatch from `now` (PE_SCHEDULER's slice when it
 * costs time); returns its end, kb_pe_dispatched_at (dispatch.c). */
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

/* ---- PE_DMA (dma.c) ----
 * Besides its read and write channels (kb_pe_dma_submit, pe.h), a comm
 * channel (the spec's vc_comm) for messages between PEs: taken in request
 * order for each message's setup (overhead_ns) and let go (no round trip),
 * the wires pacing the bytes. t leaves pe_dma after the setup, from
 * `ready` >= now; returns when it leaves. */
kb_time kb_pe_dma_comm(kb_fabric *f, uint32_t pe_dma, kb_txn *t, kb_time ready);
/* PE_DMA's vc_chunk_size: bytes the comm channel reads from TCM at a time. */
uint64_t kb_pe_dma_chunk(kb_fabric *f, uint32_t pe_dma);
/* PE_DMA is its PE's port onto the fabric: from now on a transaction
 * ending there of a kind that `part` (another part of the same PE) lists
 * among its handlers goes to that handler, with part as its component.
 * Idempotent. False with *err if pe_dma is not builtin.pe_dma. */
bool kb_pe_dma_serve(kb_fabric *f, uint32_t pe_dma, kb_comp *part, char **err);

/* ---- stages the kinds of command share (dispatch.c, fetch_store.c) ---- */

/* PE_CPU's issue and PE_SCHEDULER's dispatch (every kind's first stage). */
kb_pe_step kb_pe_stage_dispatch(kb_pe_op *op, kb_time now, kb_time *at);

/* The fields of the compute commands (dot, math) in kb_pe_op.args. */
typedef struct kb_pe_operands {
    kb_mop mop;            /* math: the op */
    int nin;               /* operands */
    kb_pe_operand in[3];   /* dot: in[0] x in[1] */
    int axis;              /* math ops along an axis */
} kb_pe_operands;
KB_PE_ARGS_FIT(kb_pe_operands);

/* PE_FETCH_STORE's stages of a compute command (pe_fetch_store.
 * stages_simple_commands; without it no time and no slice): its tensor
 * operands TCM -> register file, its result back. */
kb_pe_step kb_pe_stage_fetch(kb_pe_op *op, kb_time now, kb_time *at);
kb_pe_step kb_pe_stage_writeback(kb_pe_op *op, kb_time now, kb_time *at);

/* ---- when the PE is freed with its fabric (cpu.c) ---- */

/* Frees a PE's pipeline and the composites only it still holds. */
void kb_pipe_free(kb_pe *pe);
/* Detaches every kernel instance of p. */
void kb_kernel_detach_all(kb_pe *p);

#endif
