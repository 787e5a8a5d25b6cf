/* Data-mode arithmetic: what PE_GEMM and PE_MATH compute when data
 * execution is on. Pure functions over arrays (no simulation, no store).
 *
 * Matrix products go through CBLAS (OpenBLAS): 16-bit float inputs are
 * widened to f32 and accumulated in f32 (sgemm), as the MAC array does;
 * integer inputs use dgemm, exact for products that fit in a double's 53
 * bits. Element-wise math and reductions compute in double; the caller
 * rounds once when it stores the result in its dtype. */
#ifndef KB_MEM_COMPUTE_H
#define KB_MEM_COMPUTE_H

#include <stdbool.h>
#include <stdint.h>

/* The math operations of PE_MATH (tl.* math functions and operators). */
typedef enum kb_mop {
    /* unary */
    KB_OP_EXP, KB_OP_LOG, KB_OP_SQRT, KB_OP_ABS, KB_OP_SIGMOID, KB_OP_COS, KB_OP_SIN, KB_OP_RELU,
    KB_OP_NEG,
    /* binary */
    KB_OP_ADD, KB_OP_SUB, KB_OP_MUL, KB_OP_DIV, KB_OP_MAXIMUM, KB_OP_MINIMUM,
    /* ternary: fma(a, b, c) = a * b + c; clamp(x, lo, hi); where(cond, a, b) */
    KB_OP_FMA, KB_OP_CLAMP, KB_OP_WHERE,
    /* along an axis */
    KB_OP_SUM, KB_OP_MAX, KB_OP_MIN, KB_OP_SOFTMAX,
    KB_NOPS
} kb_mop;

/* How PE_MATH's time is counted for an op (docs/pe-model.md). */
typedef enum kb_mop_cost {
    KB_COST_SIMPLE,        /* one vector instruction per vector of elements */
    KB_COST_TRANSCENDENTAL,/* transcendental_cycles per vector */
    KB_COST_REDUCE,        /* one per vector, plus a log2(lanes) tree per output */
    KB_COST_SOFTMAX        /* max, subtract, exp, sum, divide: 3 simple + 2 transcendental passes */
} kb_mop_cost;

typedef struct kb_mop_info {
    const char *name; /* the tl name: "exp", "add", "softmax" ... */
    int arity;        /* tensor inputs: 1, 2 or 3 */
    kb_mop_cost cost;
    bool axis;        /* takes an axis (reductions, softmax) */
} kb_mop_info;

const kb_mop_info *kb_mop_info_of(kb_mop op);
/* By name; false if unknown. */
bool kb_mop_parse(const char *name, kb_mop *out);

/* y[i] = op(x[i]) for unary ops; y may alias x. */
void kb_compute_unary(kb_mop op, const double *x, double *y, int64_t n);
/* y[i] = op(a[i], b[i]) for binary ops. */
void kb_compute_binary(kb_mop op, const double *a, const double *b, double *y, int64_t n);
/* y[i] = op(a[i], b[i], c[i]) for ternary ops. */
void kb_compute_ternary(kb_mop op, const double *a, const double *b, const double *c, double *y,
                        int64_t n);
/* Along an axis of `len` elements: x is [outer, len, inner] row-major. A
 * reduction writes [outer, inner]; softmax writes [outer, len, inner]. */
void kb_compute_axis(kb_mop op, const double *x, double *y, int64_t outer, int64_t len, int64_t inner);

/* c[m x n] = a[m x k] * b[k x n], row-major, f32 accumulation (sgemm);
 * sizes >= 1. */
void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n);
/* The same in double (dgemm), for integer operands. */
void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n);

#endif
