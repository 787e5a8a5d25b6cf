/* PE engine latency formulas (docs/pe-model.md): pure functions of an
 * operation's size and the engine's attributes, unit-tested without a
 * simulation. Times are picoseconds. */
#ifndef KB_COMP_PE_MODEL_H
#define KB_COMP_PE_MODEL_H

#include "core/types.h"
#include "tensor/engine.h"
#include "mem/dtype.h"

#include <stdint.h>

typedef struct kb_gemm_model {
    double clock_ghz;
    int64_t rows, cols, depth; /* MAC array: output rows x cols, K elements per cell per cycle */
    double f32_slowdown;       /* cycle factor for 32-bit operands */
    kb_time overhead_ps;
} kb_gemm_model;

typedef struct kb_math_model {
    double clock_ghz;
    int64_t simd_bytes;         /* bytes per vector instruction */
    double transcendental_cycles;
    kb_time overhead_ps;
} kb_math_model;

/* round(cycles / clock) in ps. */
kb_time kb_cycles_ps(double cycles, double clock_ghz);
/* Time to move nbytes at bw_gbs (GB/s = bytes/ns), rounded up to the ps;
 * 0 if bw_gbs is 0 (not paced). */
kb_time kb_bw_ps(uint64_t nbytes, double bw_gbs);

/* MAC array cycles for an [m x k] x [k x n] product:
 * ceil(m/rows) * ceil(n/cols) * ceil(k/depth), times f32_slowdown for
 * 32-bit operands. */
double kb_gemm_cycles(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in);
kb_time kb_gemm_ps(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in);

/* Vector cycles for op over `elems` input elements producing `outs`
 * results (reductions: one per output row) in dtype: vectors =
 * ceil(elems / lanes), lanes = simd_bytes / itemsize; simple ops 1 cycle
 * per vector, transcendental ones transcendental_cycles, reductions 1 per
 * vector plus ceil(log2(lanes)) per output, softmax 3 + 2 x transcendental
 * per vector. */
double kb_math_cycles(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t);
kb_time kb_math_ps(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t);

#endif
