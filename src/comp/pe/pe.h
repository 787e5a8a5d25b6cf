/* A PE's engines for the commands a kernel issues (execution-pe-tl.md
 * §2.3, §2.8): PE_CPU dispatch, PE_MMU translation, PE_DMA transfers,
 * PE_TCM's read and write ports, PE_FETCH_STORE moves between TCM and the
 * register file, and the accel slot PE_GEMM and PE_MATH share.
 *
 * A command is a short sequence of stages, each on one component:
 *   load:   dispatch -> [mmu] -> DMA read  -> TCM write
 *   store:  dispatch -> [mmu] -> TCM read  -> DMA write
 *   gemm:   dispatch -> fetch (TCM read)   -> GEMM  -> store (TCM write)
 *   math:   dispatch -> fetch (TCM read)   -> MATH  -> store (TCM write)
 *   cycles: dispatch -> PE_CPU busy for n cycles
 * A stage starts when the previous one ends and its resource is free; the
 * TCM ports and the accel slot serve in request order (capacity 1 each).
 * Each stage is a trace span on its component's track; GEMM and MATH
 * stages are op-log records. With data on, a load's bytes land in TCM when
 * its TCM write ends, a store's bytes leave TCM when its TCM read ends, and
 * a GEMM or MATH result is computed and written to TCM when its store
 * stage ends: data moves with time. Formulas: pe_model.h. */
#ifndef KB_COMP_PE_H
#define KB_COMP_PE_H

#include "comp/comp.h"
#include "comp/pe/model.h"
#include "mem/pagetable.h"
#include "mem/view.h"

typedef struct kb_pe {
    kb_fabric *fab;
    int sip, cube, pe;
    uint32_t cpu, sched, dma, fetch_store, gemm, math, tcm, mmu; /* node indices */
    kb_time tcm_free[2]; /* PE_TCM read [0] and write [1] ports: free from */
    kb_time accel_free;  /* accel_slot (PE_GEMM and PE_MATH): free from */
    /* parameters (attributes of the PE's components) */
    double cpu_clock_ghz;
    int64_t dispatch_cycles;
    uint64_t scratch_bytes;
    kb_time cpu_ps, sched_ps, fs_ps, tlb_ps;
    double tcm_bw[2];
    kb_gemm_model gemm_m;
    kb_math_model math_m;
    struct kb_pipe *pipe; /* composite commands (pipeline.c), made on first use */
    struct kb_pe_op *active; /* the simple command in flight, if any (inspection) */
} kb_pe;

/* A capacity-1 port served in request order: a request made at `now` that
 * takes `dur` starts at *start and ends at the returned time; the port is
 * booked until then. */
static inline kb_time kb_pe_take(kb_time *free_at, kb_time now, kb_time dur, kb_time *start)
{
    *start = *free_at > now ? *free_at : now;
    *free_at = *start + dur;
    return *free_at;
}

/* The PE of the pe_cpu node `node`, or NULL if it is not a builtin.pe_cpu. */
kb_pe *kb_pe_of(kb_fabric *f, uint32_t node);
/* PE (sip, cube, pe), or NULL with *err naming it. */
kb_pe *kb_pe_find(kb_fabric *f, int sip, int cube, int pe, char **err);

/* The PE's page table (its PE_MMU's), or NULL if PE_MMU is not builtin. */
kb_pagetable *kb_pe_pagetable(kb_pe *p);

/* Engine times: the builtin formulas (pe_model.h), or the component's Lua
 * latency model when the topology names one. */
kb_time kb_pe_tcm_ps(kb_pe *p, int write, uint64_t bytes);
kb_time kb_pe_gemm_ps(kb_pe *p, int64_t m, int64_t k, int64_t n, kb_dtype t);
kb_time kb_pe_math_ps(kb_pe *p, kb_mop op, int64_t elems, int64_t outs, kb_dtype t);

typedef enum kb_pe_kind { KB_PE_LOAD, KB_PE_STORE, KB_PE_GEMM, KB_PE_MATH, KB_PE_CYCLES } kb_pe_kind;

/* A math operand: a tensor view or an immediate. */
typedef struct kb_pe_operand {
    bool is_imm;
    double imm;
    kb_tview v;
} kb_pe_operand;

typedef struct kb_pe_op kb_pe_op;
typedef void (*kb_pe_done_fn)(kb_pe_op *op);

/* One command in flight; the caller owns the memory until done() runs. */
struct kb_pe_op {
    kb_pe *pe;
    kb_pe_kind kind;
    const char *what;   /* the tl call, for trace spans ("tl.load"); static */
    bool data;          /* data mode: move bytes and compute values */
    bool translated;    /* load/store: the address went through PE_MMU */
    /* load/store: the memory side (target node and its local offset) and
     * the TCM side (a contiguous view) */
    uint32_t target;
    uint64_t target_off;
    kb_tview tcm;
    /* gemm: in[0] x in[1] -> out; math: op over nin operands -> out */
    kb_mop mop;
    int nin;
    kb_pe_operand in[3];
    int axis;           /* math ops along an axis */
    kb_tview out;
    int64_t cycles;     /* cycles */
    kb_pe_done_fn done;
    void *arg;
    /* filled in */
    kb_time t_issue;    /* when the command was issued */
    kb_time dma_ps, compute_ps;
    char *error;        /* set if a stage failed (then done() runs at once) */
    bool submitting;    /* done() called from within kb_pe_submit (a zero-time command) */
    /* internal */
    int stage;
    kb_time t_stage;
    void *buf;          /* data in transit (load: bytes between DMA and TCM) */
};

/* Starts op at the current time; done() is called when it completes (with
 * op->error set if a stage failed), from an event callback, or from within
 * this call (op->submitting) when the whole command takes no time. */
bool kb_pe_submit(kb_pe_op *op, char **err);

#endif
