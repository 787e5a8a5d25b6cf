/* The PE wing: one processing element, from the commands its kernel issues
 * to the engines that carry them out (docs/pe-model.md). The PE's state
 * hangs off its PE_CPU component; its nine parts are nodes of the topology.
 * This is the wing's one header for the rest of kernbench (engines.h and
 * pipe.h are its files' own); one file per part or concern:
 *
 *   pe.c           what every file of the wing shares: busy time and trace
 *                  slices of parts, where and when its errors happened
 *   cpu.c          PE_CPU: the PE assembled from its nine parts (kb_pe, its
 *                  parameters, kb_pe_of / kb_pe_find), kernel launches
 *                  (start barrier, instance, answer)
 *   dispatch.c     issuing a command: PE_CPU's and PE_SCHEDULER's dispatch
 *   kernel.c       kernel instances (kb_kernel): scratch, the blocking
 *                  command, composites in flight, waits, statistics
 *   command.c      the machine that runs simple commands' stages (kb_pe_submit)
 *   load_store.c   the load and store commands (translate, DMA, TCM)
 *   cycles.c       the cycles command (PE_CPU busy)
 *   ops.c          the rules of tl.composite: a composite from plain
 *                  operands, its output's dtype and shape, the errors
 *   scheduler.c    PE_SCHEDULER: composite commands submitted, fed tile by
 *                  tile, completed; the pipeline's state for inspection
 *   pipeline.c     the stage lanes: hand-over, backpressure, register file
 *   tile_data.c    data mode of composite tiles (values per stage)
 *   tiling.c       tile plans (pure functions, no simulation)
 *   mmu.c          PE_MMU: page table, translation (the one place a virtual
 *                  address becomes a memory node and offset), faults
 *   dma.c          PE_DMA: read, write and comm channels over the fabric;
 *                  the PE's port (what ends there for another part)
 *   tcm.c          PE_TCM: port bandwidth formula, latency hook, slices, and
 *                  the allocator of its space (kernel scratch, torch.alloc_tcm)
 *   fetch_store.c  PE_FETCH_STORE: TCM <-> register file moves, and the
 *                  fetch and write-back stages of commands
 *   gemm.c         PE_GEMM: MAC-array formula, hook, slice, op log, values;
 *                  the dot command
 *   math.c         PE_MATH: vector formula, hook, slice, op log, values;
 *                  the math command
 *   parts.c        the parts that take no fabric transactions
 *   engines.h      internal: ports, slices, error context, dispatch, the
 *                  engines and the stages commands share
 *   pipe.h         internal: the pipeline's pieces shared by the files above
 *   ipcq.c         PE_IPCQ: queues between PEs, their plan installed, their
 *                  report and statistics (its own public header, ipcq.h)
 *   ipcq_cmd.c     the send and recv commands, tokens and credits
 *   ipcq_state.h   internal: PE_IPCQ's state, shared by the two above
 *   ipcq_plan.c    IPCQ install plans and their checks
 *
 * Times are picoseconds. Formulas and stages: docs/pe-model.md. Past ~500
 * lines as the wing's one public header: every declaration the rest of
 * kernbench uses from the PE, with its contract. */
#ifndef KB_COMP_PE_PE_H
#define KB_COMP_PE_PE_H

#include "comp/comp.h"
#include "mem/addr.h"
#include "mem/alloc.h"
#include "tensor/engine.h"
#include "mem/dtype.h"
#include "mem/pagetable.h"
#include "mem/view.h"

/* ---- the parts' behaviours (kb_impl.ops of the builtins, src/comp/builtin.c) ---- */

/* PE_CPU: takes kernel launches and owns its PE's state (cpu.c). */
extern const kb_comp_ops kb_pe_cpu_ops;
/* PE_MMU: takes map messages and holds the PE's page table (mmu.c). */
extern const kb_comp_ops kb_pe_mmu_ops;
/* PE_DMA: read and write channels over the fabric (dma.c). */
extern const kb_comp_ops kb_pe_dma_ops;
/* The parts that take no fabric transactions (parts.c). */
extern const kb_comp_ops kb_pe_part_ops;

/* Starts a PE DMA transfer of `nbytes` between the PE whose pe_dma node is
 * `pe_dma` and the target node `dst` (an HBM controller or the SRAM), at
 * target-local offset `addr`. kind is &kb_msg_dma_write or &kb_msg_dma_read.
 * The transfer waits for a free read or write channel, pays the DMA setup
 * overhead, and completes (done) when the acknowledgement or the data is
 * back at the PE. `data` (optional, taken over even on failure): the
 * bytes a write stores or a read fills, moved when the target serves it.
 * False with *err if pe_dma is not builtin.pe_dma or there is no route. */
bool kb_pe_dma_submit(kb_fabric *f, uint32_t pe_dma, const kb_msg_kind *kind, uint32_t dst, uint64_t addr,
                      uint64_t nbytes, kb_data *data, kb_txn_done_fn done, void *arg, kb_hoplog *log,
                      char **err);

/* ---- engine formulas (pure; pe.c, tcm.c, gemm.c, math.c) ---- */

typedef struct kb_gemm_model {
    double clock_ghz;
    int64_t rows, cols, depth; /* MAC array: output rows x cols, K elements per cell per cycle */
    double f32_slowdown;       /* cycle factor for 32-bit operands */
    kb_time overhead_ps;
} kb_gemm_model;

typedef struct kb_math_model {
    double clock_ghz;
    int64_t simd_bytes;        /* bytes per vector instruction */
    double transcendental_cycles;
    kb_time overhead_ps;
} kb_math_model;

/* round(cycles / clock) in ps; 0 without a clock (a part that is not builtin). */
kb_time kb_cycles_ps(double cycles, double clock_ghz);
/* Time to move nbytes at bw_gbs (GB/s = bytes/ns), rounded up to the ps;
 * 0 if bw_gbs is 0 (not paced). */
kb_time kb_bw_ps(uint64_t nbytes, double bw_gbs);
/* MAC array cycles for [m x k] x [k x n] (gemm.c). */
double kb_gemm_cycles(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in);
kb_time kb_gemm_ps(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in);
/* Vector unit time for op over `elems` inputs giving `outs` results (math.c). */
kb_time kb_math_ps(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t);

/* ---- tile plans (pure; tiling.c has the stage sequences) ----
 * Not materialised: kb_plan_tile gives the stages of tile `id`. */

typedef enum kb_stage_type {
    KB_ST_DMA_READ, KB_ST_FETCH, KB_ST_GEMM, KB_ST_MATH, KB_ST_STORE, KB_ST_DMA_WRITE, KB_ST_COUNT
} kb_stage_type;

const char *kb_stage_name(kb_stage_type t); /* "DMA_READ" ... */

typedef enum kb_scope { KB_SCOPE_K_TILE, KB_SCOPE_OUTPUT_TILE } kb_scope;

/* What an epilogue op reads besides the tile, fetched with it: nothing (or
 * a scalar), a row or column vector over the tile, a whole tile (residual). */
typedef enum kb_epi_operand { KB_EPI_NONE, KB_EPI_COLS, KB_EPI_ROWS, KB_EPI_TILE } kb_epi_operand;

#define KB_MAX_EPILOGUE 8
#define KB_MAX_STAGES (6 + 2 * KB_MAX_EPILOGUE)
#define KB_STAGE_HEAD 255

typedef struct kb_stage {
    uint8_t type;   /* kb_stage_type */
    uint8_t arg;    /* DMA_READ: operand 0 (A / X) or 1 (B / Y); MATH: epilogue index, or KB_STAGE_HEAD */
    uint32_t bytes; /* bytes moved (DMA, FETCH, STORE) or elements computed (MATH) */
} kb_stage;

typedef struct kb_plan_spec {
    bool gemm;                 /* else an element-wise math plan */
    int64_t M, K, N;           /* math: M x N, K unused */
    int64_t tm, tk, tn;        /* tile sizes (math: tm x tn) */
    bool pinned[2];            /* operand 0 / 1 already in TCM: no DMA_READ */
    bool has[2];               /* math: operand 1 exists (binary op); gemm: both */
    uint32_t in_size[2];       /* bytes per element of each operand */
    uint32_t acc_size;         /* accumulator bytes per element (GEMM) */
    uint32_t out_size;         /* output bytes per element */
    int nepi;
    kb_scope scope[KB_MAX_EPILOGUE];
    kb_epi_operand epi_operand[KB_MAX_EPILOGUE];
    uint32_t epi_size[KB_MAX_EPILOGUE];          /* the epilogue operand's bytes per element */
} kb_plan_spec;

typedef struct kb_tile {
    uint64_t id;
    int64_t m, n, k;           /* tile indices */
    int64_t rows, depth, cols; /* this tile's sizes (edges are smaller) */
    bool first_k, last_k;
    int nstages;
    kb_stage stages[KB_MAX_STAGES];
} kb_tile;

uint64_t kb_plan_tiles(const kb_plan_spec *s); /* max(1, ceil(M / tm)) * ... */
void kb_plan_grid(const kb_plan_spec *s, int64_t *mt, int64_t *nt, int64_t *kt);
void kb_plan_tile(const kb_plan_spec *s, uint64_t id, kb_tile *out); /* id < kb_plan_tiles */
/* Operand i's part of tile t: from (r0, c0), [rows, depth] of A or
 * [depth, cols] of B (GEMM), [rows, cols] (math). */
void kb_plan_operand(const kb_plan_spec *s, const kb_tile *t, int i, int64_t *r0, int64_t *c0, int64_t *rows,
                     int64_t *cols);
/* Where tile t's part of a row-major matrix at `base` (`ld` elements per
 * row of `elem` bytes) starts: operand i's part (kb_plan_operand) or, for
 * i = KB_TILE_OUT, the output tile's, from (m * tm, n * tn). */
#define KB_TILE_OUT (-1)
uint64_t kb_tile_va(const kb_plan_spec *s, const kb_tile *t, int i, uint64_t base, int64_t ld, uint64_t elem);
/* An upper bound of what one stage of any tile of the plan moves (bytes)
 * or computes (elements): a full tile's, every epilogue operand fetched.
 * Exact in 64 bits for operands and outputs within KB_VIEW_MAX_BYTES; a
 * plan whose bound passes UINT32_MAX cannot be tiled (kb_stage.bytes). */
uint64_t kb_plan_max_stage(const kb_plan_spec *s);
/* Register-file bytes the tile needs at once (operands, epilogue operands
 * and, from its first k, the accumulator). */
uint64_t kb_plan_rf_bytes(const kb_plan_spec *s, const kb_tile *t);

/* ---- the PE (cpu.c) ---- */

typedef struct kb_pe {
    kb_fabric *fab;
    int sip, cube, pe;
    uint32_t cpu, sched, dma, fetch_store, gemm, math, tcm, mmu, ipcq; /* node indices */
    kb_time tcm_free[2]; /* PE_TCM read [0] and write [1] ports: free from */
    kb_time accel_free;  /* accel slot (PE_GEMM and PE_MATH): free from */
    /* parameters (attributes of the parts) */
    double cpu_clock_ghz;
    uint64_t scratch_bytes; /* a kernel instance's scratch (scratch_kb) */
    kb_time sched_ps, fs_ps, tlb_ps;
    kb_time dispatch_ps; /* dispatch_cycles on PE_CPU plus its overhead */
    double tcm_bw[2];
    bool dma_tcm; /* PE_DMA transfers charge the TCM ports (pe_dma.tcm_ports) */
    bool stage_simple; /* simple dot/math commands fetch and write back (pe_fetch_store.stages_simple_commands) */
    kb_gemm_model gemm_m;
    kb_math_model math_m;
    /* PE_MMU: the HBM slice last resolved (mmu.c): PAs [xl_lo, xl_hi) are
     * node xl_node's offsets from xl_off */
    kb_pa xl_lo, xl_hi;
    uint32_t xl_node;
    uint64_t xl_off;
    struct kb_pipe *pipe;      /* composite commands, made on first use (scheduler.c) */
    struct kb_pe_op *active;   /* the simple command in flight, if any (inspection) */
    struct kb_kernel *kernels; /* kernel instances on this PE (kernel.c) */
    struct kb_pe_run *runs;    /* launches from arrival to answer (cpu.c) */
    kb_alloc tcm_space;        /* PE_TCM's allocatable space (tcm.c) */
} kb_pe;

/* The PE of the pe_cpu node `node`, or NULL if it is not a builtin.pe_cpu. */
kb_pe *kb_pe_of(kb_fabric *f, uint32_t node);
/* PE (sip, cube, pe), or NULL with *err naming it (also when an engine is
 * not its builtin: the PE's commands drive the engines). */
kb_pe *kb_pe_find(kb_fabric *f, int sip, int cube, int pe, char **err);

/* ---- PE_CPU's track and PE_TCM's space (pe.c, tcm.c) ----
 * The engines' stages, ports and slices are internal (engines.h). */

/* A slice on PE_CPU's track (a tl call, a kernel instance). */
void kb_pe_cpu_span(kb_pe *p, const char *name, kb_time start, kb_time end);
/* PE_TCM's space (pe_tcm.attrs.size_mb less scheduler_reserved_kb at the
 * start, 16-byte granules): an offset of n bytes, or false with *err. */
bool kb_pe_tcm_alloc(kb_pe *p, uint64_t n, uint64_t *offset, char **err);
bool kb_pe_tcm_free(kb_pe *p, uint64_t offset, char **err);
bool kb_pe_tcm_pristine(const kb_pe *p);

/* ---- PE_MMU (mmu.c) ---- */

/* The PE's page table, or NULL with *err (if err is not NULL) when PE_MMU
 * is not builtin.pe_mmu. Read it only: MmuMap and MmuUnmap messages change
 * it, when they arrive (mmu.c). */
kb_pagetable *kb_mmu_table(kb_pe *p, char **err);
/* The physical address of va: its mapping, or (pa_fallback) va itself when
 * nothing maps it. The access [va, va + nbytes) must lie inside the
 * mapping va starts in (nbytes 0: va alone): a map entry is one tensor's
 * allocation on one memory (a shard, or the whole tensor), so bytes past
 * it belong to something else. False when unmapped without the fallback,
 * with *err the fault: naming `call`, va in hex, the PE and, if `kernel`
 * is not NULL, that kernel and the simulated time; or when the access
 * leaves its mapping, with *err naming the same, the mapping's label (the
 * tensor), its extent and holder, and the bytes outside it. An address
 * nothing maps that pa_fallback lets through is not checked (the raw mode,
 * docs/tl.md). No time passes (the stages that translate charge the PE's
 * tlb_ps, tlb_overhead_ns). */
bool kb_mmu_va_to_pa(kb_pe *p, uint64_t va, uint64_t nbytes, bool pa_fallback, const char *call,
                     const char *kernel, uint64_t *pa, char **err);
/* Where va lives: translated and checked (kb_mmu_va_to_pa), then the
 * physical address's memory node (HBM controller or cube SRAM) and node
 * offset. False with *err (naming the same) when va faults, the access
 * leaves its mapping, or its physical address is not memory. */
bool kb_mmu_resolve(kb_pe *p, uint64_t va, uint64_t nbytes, bool pa_fallback, const char *call,
                    const char *kernel, uint32_t *node, uint64_t *offset, char **err);
/* The rows of a row-major matrix, `rows` of row_bytes from va one after
 * another, each checked as an access of its own (kb_mmu_va_to_pa): a
 * matrix may span mappings (a tensor's shards) but no row may leave the
 * one it starts in. One lookup per mapping crossed. */
bool kb_mmu_check_rows(kb_pe *p, uint64_t va, uint64_t rows, uint64_t row_bytes, bool pa_fallback,
                       const char *call, const char *kernel, char **err);

/* ---- simple commands (command.c): open descriptors ----
 * A simple command is a kind (kb_pe_cmd) and its operands. A kind is a
 * descriptor defined in the file that owns it, as a message kind is
 * (kb_msg_kind): its stages in order, what lands when it ends, and the
 * layout of its own fields inside kb_pe_op.args. The kinds and their files:
 *   load:   dispatch -> translate -> DMA read  -> TCM write    load_store.c
 *   store:  dispatch -> translate -> TCM read  -> DMA write    load_store.c
 *   dot:    dispatch -> fetch -> GEMM -> write back            gemm.c
 *   math:   dispatch -> fetch -> MATH -> write back            math.c
 *   cycles: dispatch -> PE_CPU busy for n cycles               cycles.c
 *   send, recv: PE_IPCQ's (ipcq.h)                             ipcq_cmd.c
 * A stage starts when the previous one ends and its resource is free; it
 * books its resource in closed form, so a command costs one event per
 * stage that takes time. The translate stage turns the command's virtual
 * address into memory (a fault ends the command there, with op->error)
 * and costs tlb_overhead_ns. With data on, values move with time: a
 * load's bytes land in TCM as its TCM write ends, a store's leave TCM as
 * its TCM read ends, a GEMM or MATH result is written as its last stage
 * ends (the kind's land hook). How to add a kind: docs/architecture.md. */

typedef struct kb_pe_op kb_pe_op;
typedef void (*kb_pe_done_fn)(kb_pe_op *op);

/* What a stage asks of the command machine (command.c). */
typedef enum kb_pe_step {
    KB_PE_NEXT,   /* done, no time passed: the next stage starts now, in this call */
    KB_PE_AT,     /* the next stage starts at *at (>= now; an event even at now) */
    KB_PE_WAIT,   /* parked: whoever holds it calls kb_pe_op_continue */
    KB_PE_FAILED  /* op->error is set: the command ends now */
} kb_pe_step;

typedef kb_pe_step (*kb_pe_stage_fn)(kb_pe_op *op, kb_time now, kb_time *at);

#define KB_PE_CMD_STAGES 6 /* stages of a kind at most, with the NULL that ends them */

/* A kind of simple command: a static descriptor in the file that owns it. */
typedef struct kb_pe_cmd {
    const char *name;                        /* "load": inspection and reports */
    kb_pe_stage_fn stages[KB_PE_CMD_STAGES]; /* in order; the first NULL ends the list */
    /* Data mode, once the last stage has ended without error: the values
     * the command leaves (its result into TCM); NULL if it leaves none. */
    void (*land)(kb_pe_op *op);
} kb_pe_cmd;

/* Bytes of a command's own fields, its kind's layout (kb_pe_op.args). */
#define KB_PE_OP_ARGS 576

/* One command in flight; the caller owns the memory until done() runs. */
struct kb_pe_op {
    kb_pe *pe;
    const kb_pe_cmd *cmd; /* its kind, set by its builder (kb_pe_op_load ...) */
    const char *what;     /* the tl call, for slices and errors ("tl.load"); static */
    bool data;            /* data mode: move bytes and compute values */
    bool pa_fallback;     /* an unmapped va is used as a physical address */
    const char *kernel;   /* the kernel's name for fault messages, or NULL */
    /* The result, for kinds that make one (load, dot, math, recv): its
     * dtype and shape from the builder, its place from the caller (the
     * kernel's scratch, kb_kernel_alloc) before kb_pe_submit. */
    kb_tview out;
    kb_pe_done_fn done;
    void *arg;
    /* filled in */
    kb_time t_issue;     /* when the command was issued */
    kb_time dma_ps, compute_ps;
    char *error;         /* set if a stage failed (done() runs at once) */
    bool submitting;     /* done() called from within kb_pe_submit (a zero-time command) */
    /* the machine's and the stages' */
    int stage;           /* index in cmd->stages */
    kb_time t_stage;     /* when the current stage began */
    void *buf;           /* data in transit (freed when the command ends) */
    /* the kind's own fields, as its layout: KB_PE_ARGS(op, type) */
    uint64_t args[KB_PE_OP_ARGS / 8];
};

/* The kind's fields as its layout's type: KB_PE_ARGS(op, mem_args). */
#define KB_PE_ARGS(op, type) ((type *)(void *)(op)->args)
/* For a kind's layout: fails the build if it does not fit. */
#define KB_PE_ARGS_FIT(type) _Static_assert(sizeof(type) <= KB_PE_OP_ARGS, #type " exceeds KB_PE_OP_ARGS")

/* Starts op (its kind and operands set by a builder) at the current time.
 * It never fails here: done() is called exactly once when the command
 * completes, with op->error set if a stage failed (a fault at PE_MMU, no
 * route for the DMA), from an event callback or, when the whole command
 * takes no time, from within this call (op->submitting). */
void kb_pe_submit(kb_pe_op *op);
/* A command parked by a stage (KB_PE_WAIT) goes on with its next stage at
 * `at` (>= now). */
void kb_pe_op_continue(kb_pe_op *op, kb_time at);


/* ---- composite commands (scheduler.c, pipeline.c, tile_data.c) ----
 * Tiles flow DMA_READ -> FETCH -> GEMM|MATH -> STORE -> DMA_WRITE through
 * six lanes, sharing the TCM ports, the accel slot and the DMA channels
 * with simple commands; a composite completes exactly once, when its last
 * tile's last stage ends. Data moves with each stage (tile_data.c). */

typedef enum kb_epi_kind {
    KB_EPI_DEQUANT, KB_EPI_BIAS, KB_EPI_RELU, KB_EPI_SCALE, KB_EPI_GELU, KB_EPI_SILU, KB_EPI_ADD, KB_EPI_KINDS
} kb_epi_kind;

const char *kb_epi_name(kb_epi_kind k);
/* The math op an epilogue is, for its value and its PE_MATH time:
 * dequant and scale multiply, bias and add add, relu, gelu, silu. */
kb_mop kb_epi_mop(kb_epi_kind k);

/* One epilogue op: a scalar or a TCM tensor broadcast over the output. */
typedef struct kb_epilogue {
    kb_epi_kind kind;
    bool has_view;
    kb_tview v;  /* [N], [1, N] (per column), [M, 1] (per row) or [M, N] */
    double value;
} kb_epilogue;

/* A composite's operand: pinned (a TCM view) or streamed from memory (a
 * virtual address of a row-major [rows, cols] matrix, translated per DMA). */
typedef struct kb_composite_operand {
    bool pinned;
    kb_tview v;   /* pinned */
    uint64_t va;  /* streamed */
    int64_t rows, cols;
    kb_dtype dtype;
} kb_composite_operand;

typedef struct kb_composite kb_composite;
typedef void (*kb_composite_fn)(kb_composite *c);

struct kb_composite {
    /* filled by the caller */
    kb_plan_spec plan;
    kb_mop mop;                 /* math composites: the op */
    kb_composite_operand in[2];
    uint64_t out_va;
    kb_dtype out_dtype;
    kb_epilogue epi[KB_MAX_EPILOGUE];
    bool data, pa_fallback;
    kb_time ready_at;           /* when PE_SCHEDULER may start feeding it */
    kb_composite_fn done;       /* called once, when the last tile completes */
    void *arg;
    struct kb_kernel *kernel;   /* the issuing instance (a reference), or NULL */
    const char *kernel_name;    /* its name, for errors (NULL: none) */
    kb_composite_fn release;    /* called once as c is freed while it holds kernel */
    /* state */
    uint64_t ntiles, fed, completed;
    bool finished;
    char *error;                /* the first stage error, if any */
    kb_time t_submit, t_first, t_done;
    kb_time stage_ps[KB_ST_COUNT]; /* service time per stage type */
    uint64_t stage_n[KB_ST_COUNT]; /* stages per type */
    float *acc;                 /* data: the current (m, n) accumulator */
    kb_composite *next;         /* feed queue */
    int refs;                   /* pipeline + submitter */
};

/* Checks c (malloc'd; plan, operands, epilogue and done filled in; tile
 * sizes left 0 take PE_SCHEDULER's) and queues it on pe's scheduler; c then
 * holds two references, the pipeline's and the caller's. False with *err,
 * c not taken (the caller frees it), if it cannot run: a streamed operand's
 * or the output's base address does not translate (a PE_MMU fault), or a
 * tile needs more register file than there is. */
bool kb_composite_submit(kb_pe *pe, kb_composite *c, char **err);
/* Drops one reference; frees c at zero (and its kernel reference). */
void kb_composite_unref(kb_composite *c);

/* What a PE's pipeline holds now (inspection). */
typedef struct kb_pipe_state {
    int queued[KB_ST_COUNT];  /* tokens waiting in each stage's queue */
    bool busy[KB_ST_COUNT];   /* a token in service (or held for the next queue) */
    uint64_t rf_used, rf_cap; /* register-file bytes */
    size_t composites;        /* composites not finished */
    uint64_t tiles_left;      /* tiles of those not yet completed */
} kb_pipe_state;
void kb_pipe_state_of(kb_pe *pe, kb_pipe_state *out);

/* ---- building commands (each in its kind's file) ----
 * The rules of the tl calls on plain C values: a command from its operands
 * (shapes, dtypes, axes, immediates), with its result's dtype and shape.
 * Nothing is issued and no time passes. False with *err (the call's
 * message, "tl.dot: ..."; the caller frees it). A result gets only its
 * dtype, ndim and shape here (op->out): its place is the kernel's scratch
 * (kb_kernel_alloc). op comes from kb_kernel_command. */

/* A math operand: a tensor view or an immediate. */
typedef struct kb_pe_operand {
    bool is_imm;
    double imm;
    kb_tview v;
} kb_pe_operand;

/* A [shape] dt tensor from va into TCM (load_store.c). */
void kb_pe_op_load(kb_pe_op *op, uint64_t va, kb_dtype dt, int ndim, const int64_t *shape);
/* v must be contiguous (a store moves contiguous bytes) (load_store.c). */
bool kb_pe_op_store(kb_pe_op *op, uint64_t va, const kb_tview *v, char **err);
/* n >= 0 cycles; 0 is the dispatch alone (tl.composite's cost). With
 * op->pe set (kb_kernel_command sets it), n cycles at that PE_CPU's clock
 * must also end within the simulated range (int64 picoseconds) when
 * dispatched now (cycles.c). */
bool kb_pe_op_cycles(kb_pe_op *op, int64_t n, char **err);
/* a x b: 2-D, one dtype, a's columns b's rows; [M, N] of *out_dtype (NULL:
 * the operands') (gemm.c). */
bool kb_pe_op_dot(kb_pe_op *op, const kb_tview *a, const kb_tview *b, const kb_dtype *out_dtype, char **err);
/* mop over in[0 .. nin-1], views or immediates (nin is checked against the
 * op's arity before in is read). Tensors broadcast (numpy rules) to the
 * result; its dtype is theirs (kb_pe_common_dtype; where's condition does
 * not count). Axis ops take one tensor and *axis (NULL: none given;
 * negative counts from the end) and keep the axis with size 1; without an
 * axis, softmax takes the last and a reduction every element of a
 * contiguous view (result [1]) (math.c). */
bool kb_pe_op_math(kb_pe_op *op, kb_mop mop, int nin, const kb_pe_operand *in, const int64_t *axis, char **err);
/* tl.cast: x's values as `dtype` (a math command, one simple pass). */
bool kb_pe_op_cast(kb_pe_op *op, const kb_pe_operand *x, kb_dtype dtype, char **err);
/* Math on two dtypes gives: the same one; else f32 if either is a float, i32 (math.c). */
kb_dtype kb_pe_common_dtype(kb_dtype a, kb_dtype b);

/* ---- building composites (ops.c) ----
 * The same for tl.composite: operands, epilogues and tile sizes. */

/* x with its last two dimensions swapped, sharing its data (tl.trans). */
bool kb_pe_trans(const kb_tview *x, kb_tview *out, char **err);

/* A composite as its caller asks for it (tl.composite's table, as values). */
typedef struct kb_composite_arg {
    bool pinned;      /* already in TCM (v); else streamed from memory at va */
    kb_tview v;       /* pinned: its view; streamed: its shape and dtype only */
    uint64_t va;
} kb_composite_arg;

typedef struct kb_epilogue_arg {
    const char *op;    /* "dequant", "bias" ... (kb_epi_name) */
    const char *scope; /* "k_tile" or "output_tile" (NULL) */
    bool has_view;
    kb_tview v;        /* its operand, a TCM view, when has_view */
    double value;      /* else its scalar (relu, gelu and silu take none) */
} kb_epilogue_arg;

typedef struct kb_composite_args {
    const char *op;            /* "gemm" or "math" */
    const char *math_op;       /* math: "exp", "add" ... */
    int nin;                   /* 1 (a) or 2 (a and b) */
    kb_composite_arg in[2];
    uint64_t out_va;
    const kb_dtype *out_dtype; /* NULL: a's */
    bool has_tile[3];          /* tile sizes given: tm, tk, tn (math: tk unused) */
    int64_t tile[3];
    int nepi;                  /* ops asked for; epi holds the first KB_MAX_EPILOGUE */
    kb_epilogue_arg epi[KB_MAX_EPILOGUE];
} kb_composite_args;

/* c (cleared) from a: operands, M, K, N, the op, output, tile sizes (the
 * call's; those left 0 take PE_SCHEDULER's when c is submitted), element
 * sizes (f32 accumulation), and each epilogue's scope and operand, which
 * must broadcast to the output. Ready for kb_kernel_composite. */
bool kb_composite_plan(const kb_composite_args *a, kb_composite *c, char **err);

/* ---- kernel instances (kernel.c) ----
 * A kernel's run on one PE, driven by whoever runs its body (today the Lua
 * binding, src/lua/ltl.c): scratch ring in TCM, the one blocking command,
 * composites in flight, waits, statistics. Reference counted: the creator,
 * a command in flight and each composite it issued hold one. When the PE
 * goes with its fabric, instances still referenced are detached. */

typedef struct kb_kernel kb_kernel;
/* Called from an event when the command completes or a wait is satisfied. */
typedef void (*kb_kernel_wake_fn)(kb_kernel *k, void *arg);

typedef struct kb_kernel_stats {
    kb_time dma_ps, compute_ps; /* of its commands and finished composites */
    uint64_t calls;             /* blocking commands issued */
    uint64_t scratch_bytes;     /* scratch used so far (at most its size) */
    size_t composites;          /* in flight */
} kb_kernel_stats;

/* A new instance (one reference) of kernel `name` on p, with scratch
 * [base, base + size) of p's TCM. */
kb_kernel *kb_kernel_new(kb_pe *p, const char *name, uint64_t scratch_base, uint64_t scratch_size, bool data,
                         bool pa_fallback);
void kb_kernel_ref(kb_kernel *k);
void kb_kernel_unref(kb_kernel *k);
void kb_kernel_set_wake(kb_kernel *k, kb_kernel_wake_fn fn, void *arg);
kb_pe *kb_kernel_pe(const kb_kernel *k); /* NULL once detached */
const char *kb_kernel_name(const kb_kernel *k); /* NULL for k NULL */
const char *kb_kernel_where(const kb_kernel *k); /* "sip0.cube0.pe3" */
bool kb_kernel_data(const kb_kernel *k);
uint64_t kb_kernel_scratch_size(const kb_kernel *k);
/* Scratch for a result of shape/dtype: its view and the stamp that tells
 * later whether it is still live. False with *err (naming `call`) when one
 * result needs more than the whole scratch. */
bool kb_kernel_alloc(kb_kernel *k, const char *call, kb_dtype dt, int ndim, const int64_t *shape, kb_tview *v,
                     uint64_t *stamp, char **err);
/* Whether a result made at `stamp` still holds its bytes (the ring has not
 * come round to them). */
bool kb_kernel_live(const kb_kernel *k, uint64_t stamp);
/* Data mode: v's elements become first, first + step, ... (no time). */
void kb_kernel_fill(kb_kernel *k, const kb_tview *v, double first, double step);
/* The command to fill for `call` (zeroed; kb_pe_op_* fill it), or NULL
 * with *err when one is in flight or the instance is detached. Then
 * kb_kernel_submit starts it; the wake function is called when it
 * completes, and kb_kernel_take_error gives its error (the caller frees
 * it), if any. */
kb_pe_op *kb_kernel_command(kb_kernel *k, const char *call, char **err);
void kb_kernel_submit(kb_kernel *k);
char *kb_kernel_take_error(kb_kernel *k);
/* Submits composite c (kb_composite_submit) for k: it starts feeding after
 * the PE_CPU's dispatch, in k's data and pa_fallback modes, and holds a
 * reference on k. False with *err, c not taken. */
bool kb_kernel_composite(kb_kernel *k, kb_composite *c, char **err);
/* Whether composite c (NULL: every composite of k) is done. */
bool kb_kernel_done(const kb_kernel *k, const kb_composite *c);
/* kb_kernel_done, or else the wake function is called when it is. */
bool kb_kernel_wait(kb_kernel *k, kb_composite *c);
/* The first failed composite's error, once (the caller frees it), or NULL. */
char *kb_kernel_take_composite_error(kb_kernel *k);
void kb_kernel_stats_of(const kb_kernel *k, kb_kernel_stats *out);
/* Who launched the instance is told when its body has returned (PE_CPU):
 * the runner calls kb_kernel_finish once, with no composite in flight
 * (false with *err otherwise). */
typedef void (*kb_kernel_finish_fn)(kb_kernel *k, void *arg);
void kb_kernel_on_finish(kb_kernel *k, kb_kernel_finish_fn fn, void *arg);
bool kb_kernel_finish(kb_kernel *k, char **err);
/* The body has failed: the instance ends (its launcher is told, as by
 * kb_kernel_finish) as soon as no command or composite of it is in
 * flight, now if none is; nothing is woken any more. A no-op once ended. */
void kb_kernel_abandon(kb_kernel *k);
/* Whether kb_kernel_finish has succeeded (or an abandoned instance has
 * ended): the instance's scratch is the PE's again, its handles are dead. */
bool kb_kernel_ended(const kb_kernel *k);

#endif
