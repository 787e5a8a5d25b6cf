/* The arithmetic engine of data mode: the one place where kernbench computes
 * values. PE_MATH and PE_GEMM results (src/comp), the PE pipeline's
 * epilogues and host tensor math (tensor.h) all go through these functions.
 * Pure functions over arrays: no simulation, no memory store, no Lua, no
 * allocation (except a GEMM's copy of b's column panel, gemm.c).
 *
 * Element-wise math, reductions and softmax compute in double; callers
 * round once when they store a result in its dtype (kb_compute_store_run or
 * kb_dtype_store). Each op's formula is written once, in one switch over
 * kb_mop (engine.c); every caller, flat arrays or strided host tensors,
 * goes through it.
 *
 * Matrix products are the engine's own (gemm.c): each output accumulates
 * along k in order from +0, products rounded then added (no fused
 * multiply-add), in f32 (what the MAC array does) or in double (integer
 * operands, and host f16 / bf16 matmul, whose products are exact in
 * double). No library picks the order, so every machine gets the same
 * bits. References: docs/decisions.md, "One arithmetic engine" and "The
 * device's arithmetic". */
#ifndef KB_TENSOR_ENGINE_H
#define KB_TENSOR_ENGINE_H

#include "mem/dtype.h"

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

/* Options that let the compiler reorder, fuse or widen floating-point
 * operations would make the engine's results depend on the build. The
 * build turns contraction off (-ffp-contract=off, CMakeLists.txt); these
 * refuse the rest. */
#if defined(__FAST_MATH__) || defined(__ASSOCIATIVE_MATH__) || defined(__RECIPROCAL_MATH__) ||                    \
    defined(__NO_SIGNED_ZEROS__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "the arithmetic engine needs IEEE floating point: build without -ffast-math and its parts (docs/decisions.md, \"The device's arithmetic\")"
#endif
#if FLT_EVAL_METHOD != 0
#error "the arithmetic engine needs float and double evaluated in their own precision (FLT_EVAL_METHOD 0: SSE2, not x87)"
#endif

/* The math operations (tl.* math functions and operators, epilogues, host
 * tensor math). */
typedef enum kb_mop {
    /* unary */
    KB_OP_EXP, KB_OP_LOG, KB_OP_SQRT, KB_OP_ABS, KB_OP_SIGMOID, KB_OP_COS, KB_OP_SIN, KB_OP_RELU,
    KB_OP_NEG, KB_OP_GELU, KB_OP_SILU, KB_OP_TANH,
    /* binary */
    KB_OP_ADD, KB_OP_SUB, KB_OP_MUL, KB_OP_DIV, KB_OP_MAXIMUM, KB_OP_MINIMUM,
    /* ternary: fma(a, b, c) = a * b + c; clamp(x, lo, hi); where(cond, a, b) */
    KB_OP_FMA, KB_OP_CLAMP, KB_OP_WHERE,
    /* along an axis */
    KB_OP_SUM, KB_OP_MAX, KB_OP_MIN, KB_OP_SOFTMAX, KB_OP_MEAN,
    /* unary, last so the numbers above keep their meaning: the value itself,
     * rounded to the result's dtype (tl.cast) */
    KB_OP_CAST,
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

/* NULL for an op out of range. */
const kb_mop_info *kb_mop_info_of(kb_mop op);
/* By name; false if unknown. */
bool kb_mop_parse(const char *name, kb_mop *out);

/* ---- element-wise, over flat arrays of doubles (outputs may alias inputs) ----
 * relu(x) = x < 0 ? 0 : x (NaN propagates, as in torch); gelu is the erf
 * form 0.5 x (1 + erf(x / sqrt 2)); silu(x) = x / (1 + exp(-x));
 * maximum/minimum/clamp propagate NaN; where(c, a, b) takes a where c != 0. */

/* y[i] = op(x[i]) for unary ops. */
void kb_compute_unary(kb_mop op, const double *x, double *y, int64_t n);
/* y[i] = op(a[i], b[i]) for binary ops. */
void kb_compute_binary(kb_mop op, const double *a, const double *b, double *y, int64_t n);
/* y[i] = op(a[i], b[i], c[i]) for ternary ops. */
void kb_compute_ternary(kb_mop op, const double *a, const double *b, const double *c, double *y,
                        int64_t n);
/* y[i] = op(x[0][i] .. x[arity - 1][i]) for any element-wise op: one of
 * the three above, chosen by kb_mop_info_of(op)->arity. */
void kb_compute_ewise(kb_mop op, const double *const *x, double *y, int64_t n);

/* Comparisons, 1.0 (true) or 0.0 per element. isclose is torch's: equal
 * values (infinities included) are close; NaN only to NaN with equal_nan;
 * otherwise |a - b| <= atol + rtol * |b|. equal: a == b (NaN unequal). */
typedef struct kb_close {
    double rtol, atol;
    bool equal_nan;
} kb_close;
void kb_compute_isclose(const kb_close *c, const double *a, const double *b, double *y, int64_t n);
void kb_compute_equal(const double *a, const double *b, double *y, int64_t n);

/* ---- along an axis ---- */

/* Along an axis of `len` elements: x is [outer, len, inner] row-major. A
 * reduction (sum, max, min, mean) writes [outer, inner] (0 for len 0);
 * softmax writes [outer, len, inner]. */
void kb_compute_axis(kb_mop op, const double *x, double *y, int64_t outer, int64_t len, int64_t inner);

/* One reduction lane fed in pieces, in order: sum and mean accumulate from
 * 0 in double; max and min keep the first extreme, and the first NaN wins
 * and stays (its index is the argument). */
typedef struct kb_reducer {
    kb_mop op; /* KB_OP_SUM, MEAN, MAX or MIN */
    double acc;
    int64_t seen, arg;
} kb_reducer;
void kb_reducer_init(kb_reducer *r, kb_mop op);
/* Feeds n elements x[0], x[stride], ... */
void kb_reducer_feed(kb_reducer *r, const double *x, int64_t stride, int64_t n);
/* The result (mean divides by the count fed); *arg (may be NULL) the index
 * of the max/min among the elements fed. */
double kb_reducer_result(const kb_reducer *r, int64_t *arg);

/* Softmax of a lane in pieces: max with a kb_reducer, then
 * sum = kb_compute_softmax_sum(sum, ...) over the pieces in order (from
 * 0), then y = exp(x - max) / sum. */
double kb_compute_softmax_sum(double sum, const double *x, int64_t stride, int64_t n, double max);
void kb_compute_softmax_apply(const double *x, int64_t stride, int64_t n, double max, double sum, double *y,
                              int64_t ystride);

/* ---- matrix products (row-major, contiguous; m, k, n >= 0) ---- */

/* c[m x n] = a[m x k] * b[k x n]: c[i][j] = (...((+0 + a[i][0] b[0][j]) +
 * a[i][1] b[1][j]) + ...) + a[i][k-1] b[k-1][j] in f32, each product and
 * each sum rounded to nearest even; k = 0 gives +0 (empty sums). */
void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n);
/* The same in double. */
void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n);

/* ---- typed element runs (the dtype conversions every loop goes through) ---- */

/* n elements of dtype t from p, `stride` elements apart (0 repeats one), as doubles. */
void kb_compute_load_run(kb_dtype t, const void *p, int64_t stride, double *dst, int64_t n);
/* Stores n doubles at p, `stride` elements apart: f32 rounds to nearest
 * even; f16 and bf16 round to f32 first, then to nearest even (as every
 * run has since the first host tensors: see docs/decisions.md); integers
 * and bool as kb_dtype_store. */
void kb_compute_store_run(kb_dtype t, void *p, int64_t stride, const double *src, int64_t n);

#endif
