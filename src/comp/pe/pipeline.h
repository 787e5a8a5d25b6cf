/* The PE pipeline (ADR-0014/0021): composite commands expanded into tiles
 * that flow DMA_READ -> FETCH -> GEMM|MATH -> STORE -> DMA_WRITE, each tile
 * token carrying its own plan (tiling.h) and routing itself.
 *
 * - PE_SCHEDULER takes composites in submission order; one feeder feeds
 *   every tile of a composite before the next (no interleaving).
 * - Six stage lanes, one per stage type, each a serial worker with an input
 *   queue of `queue_depth` tokens (the component's attribute): PE_DMA's read
 *   and write channels, PE_FETCH_STORE's fetch and store sides, PE_GEMM,
 *   PE_MATH. A worker that finishes a stage hands the token to the next
 *   stage's lane, or keeps it when the next stage is its own (consecutive
 *   DMA_READs, chained epilogues); when that queue is full it holds the token
 *   and waits (backpressure up to the feeder, never the scheduler).
 * - PE_GEMM and PE_MATH share the accel slot with simple commands; FETCH
 *   and STORE use PE_TCM's read and write ports; DMA stages are PE DMA
 *   transfers; FETCH takes register-file space (operands, and the
 *   accumulator from the first K tile to the STORE) and stalls when the
 *   register file is full.
 * - A composite completes exactly once, when its last tile's last stage ends.
 * Data mode: each tile's bytes are read when its DMA_READ (or, pinned, its
 * FETCH) completes, GEMM accumulates in f32, epilogues apply in order, and the
 * output tile reaches HBM when its DMA_WRITE completes. */
#ifndef KB_COMP_PIPELINE_H
#define KB_COMP_PIPELINE_H

#include "comp/pe/pe.h"
#include "comp/pe/tiling.h"

typedef enum kb_epi_kind {
    KB_EPI_DEQUANT, KB_EPI_BIAS, KB_EPI_RELU, KB_EPI_SCALE, KB_EPI_GELU, KB_EPI_SILU, KB_EPI_ADD, KB_EPI_KINDS
} kb_epi_kind;

const char *kb_epi_name(kb_epi_kind k);

/* One epilogue op: a scalar or a TCM tensor broadcast over the output. */
typedef struct kb_epilogue {
    kb_epi_kind kind;
    bool has_view;
    kb_tview v;  /* [N], [1, N] (per column), [M, 1] (per row) or [M, N] */
    double value;
} kb_epilogue;

/* An operand: pinned (a TCM view) or streamed from memory (a virtual
 * address of a row-major [rows, cols] matrix, translated per DMA). */
typedef struct kb_operand {
    bool pinned;
    kb_tview v;   /* pinned */
    uint64_t va;  /* streamed */
    int64_t rows, cols;
    kb_dtype dtype;
} kb_operand;

typedef struct kb_composite kb_composite;
typedef void (*kb_composite_fn)(kb_composite *c);

struct kb_composite {
    /* filled by the caller */
    kb_plan_spec plan;
    kb_mop mop;                 /* math composites: the op */
    kb_operand in[2];
    uint64_t out_va;
    kb_dtype out_dtype;
    kb_epilogue epi[KB_MAX_EPILOGUE];
    bool data, pa_fallback;
    kb_time ready_at;           /* when PE_SCHEDULER may start feeding it */
    kb_composite_fn done;       /* called once, when the last tile completes */
    void *arg;
    /* state */
    kb_pe *pe;
    uint64_t ntiles, fed, completed;
    bool finished;
    char *error;                /* the first stage error, if any */
    kb_time t_submit, t_first, t_done;
    kb_time stage_ps[KB_ST_COUNT];   /* service time per stage type */
    uint64_t stage_n[KB_ST_COUNT];   /* stages per type */
    uint64_t acc_rf;            /* register-file bytes of the accumulator in use */
    float *acc;                 /* data: the current (m, n) accumulator */
    kb_composite *next;         /* feed queue */
    int refs;                   /* pipeline + handle */
};

/* Checks and queues c on pe's scheduler (c->plan, operands, epilogue and
 * done filled in). False with *err if it cannot run: a tile needs more
 * register file than there is, an address does not translate ... */
bool kb_composite_submit(kb_pe *pe, kb_composite *c, char **err);
/* Drops one reference (the submitter's); the pipeline drops its own when
 * the composite is finished. Frees c at zero. */
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

/* Frees a PE's pipeline state (PE_CPU's fini). */
void kb_pipe_free(kb_pe *pe);

#endif
