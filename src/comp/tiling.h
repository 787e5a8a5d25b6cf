/* Tile plans of composite commands (ADR-0042): pure functions of the
 * command's shape, tile sizes, operand staging and epilogue, with no
 * simulation. A plan is not materialised: kb_plan_tile gives the stages of
 * tile `id`, so a 4096^3 GEMM (a million tiles) costs no memory up front.
 *
 * GEMM, tiles in M -> N -> K order, per (m, n, k):
 *   [DMA_READ A] [DMA_READ B] FETCH GEMM [MATH k_tile epilogue]*
 *   and on the last k: [MATH output_tile epilogue]* STORE DMA_WRITE
 * The accumulator stays in the register file across K: no STORE or
 * DMA_WRITE before the last k (docs/decisions.md, contradiction 9). A pinned
 * operand (already in TCM from tl.load) has no DMA_READ.
 * Math, tiles in M -> N order: [DMA_READ X] [DMA_READ Y] FETCH MATH STORE DMA_WRITE.
 * Deterministic and idempotent: the same spec and id give the same tile. */
#ifndef KB_COMP_TILING_H
#define KB_COMP_TILING_H

#include "tensor/engine.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum kb_stage_type {
    KB_ST_DMA_READ, KB_ST_FETCH, KB_ST_GEMM, KB_ST_MATH, KB_ST_STORE, KB_ST_DMA_WRITE, KB_ST_COUNT
} kb_stage_type;

const char *kb_stage_name(kb_stage_type t); /* "DMA_READ" ... */

typedef enum kb_scope { KB_SCOPE_K_TILE, KB_SCOPE_OUTPUT_TILE } kb_scope;

/* An epilogue op's extra operand, fetched with the tile it applies to: none
 * (or a scalar), a row vector over the tile's columns, a column vector over
 * its rows, or a whole tile (a residual). */
typedef enum kb_epi_operand { KB_EPI_NONE, KB_EPI_COLS, KB_EPI_ROWS, KB_EPI_TILE } kb_epi_operand;

#define KB_MAX_EPILOGUE 8
#define KB_MAX_STAGES (6 + 2 * KB_MAX_EPILOGUE)

typedef struct kb_stage {
    uint8_t type;   /* kb_stage_type */
    uint8_t arg;    /* DMA_READ: operand 0 (A / X) or 1 (B / Y); MATH: epilogue index, or 255 the head op */
    uint32_t bytes; /* bytes moved (DMA, FETCH, STORE) or elements computed (MATH) */
} kb_stage;

#define KB_STAGE_HEAD 255

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
    kb_epi_operand epi_operand[KB_MAX_EPILOGUE]; /* what an epilogue op reads besides the tile */
    uint32_t epi_size[KB_MAX_EPILOGUE];          /* its bytes per element */
} kb_plan_spec;

typedef struct kb_tile {
    uint64_t id;
    int64_t m, n, k;           /* tile indices */
    int64_t rows, depth, cols; /* this tile's sizes (edges are smaller) */
    bool first_k, last_k;
    int nstages;
    kb_stage stages[KB_MAX_STAGES];
} kb_tile;

/* Tiles of the plan: max(1, ceil(M / tm)) * ... */
uint64_t kb_plan_tiles(const kb_plan_spec *s);
/* Tiles along each dimension. */
void kb_plan_grid(const kb_plan_spec *s, int64_t *mt, int64_t *nt, int64_t *kt);
/* The stages of tile `id` (< kb_plan_tiles). */
void kb_plan_tile(const kb_plan_spec *s, uint64_t id, kb_tile *out);
/* Register-file bytes the tile needs at once (operands, epilogue operands
 * and, from its first k, the accumulator). */
uint64_t kb_plan_rf_bytes(const kb_plan_spec *s, const kb_tile *t);

#endif
