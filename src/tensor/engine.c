/* The arithmetic engine (engine.h): the op table, every op's formula (one
 * switch per arity), comparisons, reductions and softmax. GEMM is in
 * gemm.c, typed runs in runs.c. */
#include "tensor/engine.h"

#include <math.h>
#include <string.h>

static const kb_mop_info infos[KB_NOPS] = {
    [KB_OP_EXP] = {"exp", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_LOG] = {"log", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_SQRT] = {"sqrt", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_ABS] = {"abs", 1, KB_COST_SIMPLE, false},
    [KB_OP_SIGMOID] = {"sigmoid", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_COS] = {"cos", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_SIN] = {"sin", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_RELU] = {"relu", 1, KB_COST_SIMPLE, false},
    [KB_OP_NEG] = {"neg", 1, KB_COST_SIMPLE, false},
    [KB_OP_GELU] = {"gelu", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_SILU] = {"silu", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_TANH] = {"tanh", 1, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_ADD] = {"add", 2, KB_COST_SIMPLE, false},
    [KB_OP_SUB] = {"sub", 2, KB_COST_SIMPLE, false},
    [KB_OP_MUL] = {"mul", 2, KB_COST_SIMPLE, false},
    [KB_OP_DIV] = {"div", 2, KB_COST_TRANSCENDENTAL, false},
    [KB_OP_MAXIMUM] = {"maximum", 2, KB_COST_SIMPLE, false},
    [KB_OP_MINIMUM] = {"minimum", 2, KB_COST_SIMPLE, false},
    [KB_OP_FMA] = {"fma", 3, KB_COST_SIMPLE, false},
    [KB_OP_CLAMP] = {"clamp", 3, KB_COST_SIMPLE, false},
    [KB_OP_WHERE] = {"where", 3, KB_COST_SIMPLE, false},
    [KB_OP_SUM] = {"sum", 1, KB_COST_REDUCE, true},
    [KB_OP_MAX] = {"max", 1, KB_COST_REDUCE, true},
    [KB_OP_MIN] = {"min", 1, KB_COST_REDUCE, true},
    [KB_OP_SOFTMAX] = {"softmax", 1, KB_COST_SOFTMAX, true},
    [KB_OP_MEAN] = {"mean", 1, KB_COST_REDUCE, true},
    [KB_OP_CAST] = {"cast", 1, KB_COST_SIMPLE, false},
};

const kb_mop_info *kb_mop_info_of(kb_mop op) { return (unsigned)op < KB_NOPS ? &infos[op] : NULL; }

bool kb_mop_parse(const char *name, kb_mop *out)
{
    for (int i = 0; i < KB_NOPS; i++)
        if (strcmp(infos[i].name, name) == 0) {
            *out = (kb_mop)i;
            return true;
        }
    return false;
}

/* ==== element-wise: each formula once ==== */

#define LOOP(expr)                                                                                                \
    do {                                                                                                          \
        for (int64_t i = 0; i < n; i++)                                                                           \
            y[i] = (expr);                                                                                        \
    } while (0)

/* maximum/minimum propagate NaN, as torch.maximum does. */
static inline double nan_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }
static inline double nan_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a < b ? a : b); }

void kb_compute_unary(kb_mop op, const double *x, double *y, int64_t n)
{
    switch (op) {
    case KB_OP_EXP: LOOP(exp(x[i])); break;
    case KB_OP_LOG: LOOP(log(x[i])); break;
    case KB_OP_SQRT: LOOP(sqrt(x[i])); break;
    case KB_OP_ABS: LOOP(fabs(x[i])); break;
    case KB_OP_SIGMOID: LOOP(1.0 / (1.0 + exp(-x[i]))); break;
    case KB_OP_COS: LOOP(cos(x[i])); break;
    case KB_OP_SIN: LOOP(sin(x[i])); break;
    case KB_OP_RELU: LOOP(x[i] < 0 ? 0.0 : x[i]); break; /* NaN stays NaN, -0 stays -0 (torch) */
    case KB_OP_NEG: LOOP(-x[i]); break;
    case KB_OP_GELU: LOOP(0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)))); break;
    case KB_OP_SILU: LOOP(x[i] / (1 + exp(-x[i]))); break;
    case KB_OP_TANH: LOOP(tanh(x[i])); break;
    case KB_OP_CAST: LOOP(x[i]); break; /* rounded when written, to the result's dtype */
    default: LOOP(NAN); break;
    }
}

void kb_compute_binary(kb_mop op, const double *a, const double *b, double *y, int64_t n)
{
    switch (op) {
    case KB_OP_ADD: LOOP(a[i] + b[i]); break;
    case KB_OP_SUB: LOOP(a[i] - b[i]); break;
    case KB_OP_MUL: LOOP(a[i] * b[i]); break;
    case KB_OP_DIV: LOOP(a[i] / b[i]); break;
    case KB_OP_MAXIMUM: LOOP(nan_max(a[i], b[i])); break;
    case KB_OP_MINIMUM: LOOP(nan_min(a[i], b[i])); break;
    default: LOOP(NAN); break;
    }
}

void kb_compute_ternary(kb_mop op, const double *a, const double *b, const double *c, double *y, int64_t n)
{
    switch (op) {
    case KB_OP_FMA: LOOP(fma(a[i], b[i], c[i])); break;
    case KB_OP_CLAMP: LOOP(nan_min(nan_max(a[i], b[i]), c[i])); break;
    case KB_OP_WHERE: LOOP(a[i] != 0 ? b[i] : c[i]); break;
    default: LOOP(NAN); break;
    }
}

void kb_compute_ewise(kb_mop op, const double *const *x, double *y, int64_t n)
{
    const kb_mop_info *info = kb_mop_info_of(op);
    int arity = info ? info->arity : 0;
    if (arity == 1)
        kb_compute_unary(op, x[0], y, n);
    else if (arity == 2)
        kb_compute_binary(op, x[0], x[1], y, n);
    else
        kb_compute_ternary(op, x[0], x[1], x[2], y, n);
}

static inline bool isclose1(const kb_close *c, double a, double b)
{
    if (a == b)
        return true;
    if (isnan(a) || isnan(b))
        return c->equal_nan && isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return false;
    return fabs(a - b) <= c->atol + c->rtol * fabs(b);
}

void kb_compute_isclose(const kb_close *c, const double *a, const double *b, double *y, int64_t n)
{
    LOOP(isclose1(c, a[i], b[i]) ? 1.0 : 0.0);
}

void kb_compute_equal(const double *a, const double *b, double *y, int64_t n) { LOOP(a[i] == b[i] ? 1.0 : 0.0); }

#undef LOOP

/* ==== reductions and softmax ==== */

void kb_reducer_init(kb_reducer *r, kb_mop op)
{
    r->op = op;
    r->acc = op == KB_OP_MAX ? -INFINITY : op == KB_OP_MIN ? INFINITY : 0.0;
    r->seen = 0;
    r->arg = 0;
}

void kb_reducer_feed(kb_reducer *r, const double *x, int64_t stride, int64_t n)
{
    double acc = r->acc;
    if (r->op == KB_OP_SUM || r->op == KB_OP_MEAN) {
        for (int64_t i = 0; i < n; i++)
            acc += x[i * stride];
    } else {
        bool max = r->op == KB_OP_MAX;
        for (int64_t i = 0; i < n && !isnan(acc); i++) {
            double v = x[i * stride];
            if (isnan(v) || (max ? v > acc : v < acc)) {
                acc = v;
                r->arg = r->seen + i;
            }
        }
    }
    r->acc = acc;
    r->seen += n;
}

double kb_reducer_result(const kb_reducer *r, int64_t *arg)
{
    if (arg)
        *arg = r->arg;
    return r->op == KB_OP_MEAN ? r->acc / (double)r->seen : r->acc;
}

double kb_compute_softmax_sum(double sum, const double *x, int64_t stride, int64_t n, double max)
{
    for (int64_t i = 0; i < n; i++)
        sum += exp(x[i * stride] - max);
    return sum;
}

void kb_compute_softmax_apply(const double *x, int64_t stride, int64_t n, double max, double sum, double *y,
                              int64_t ystride)
{
    for (int64_t i = 0; i < n; i++)
        y[i * ystride] = exp(x[i * stride] - max) / sum;
}

void kb_compute_axis(kb_mop op, const double *x, double *y, int64_t outer, int64_t len, int64_t inner)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *xs = x + o * len * inner + i;
            kb_reducer r;
            kb_reducer_init(&r, op == KB_OP_SOFTMAX ? KB_OP_MAX : op);
            kb_reducer_feed(&r, xs, inner, len);
            if (op != KB_OP_SOFTMAX) {
                y[o * inner + i] = len ? kb_reducer_result(&r, NULL) : 0.0;
                continue;
            }
            double mx = kb_reducer_result(&r, NULL), sum = kb_compute_softmax_sum(0.0, xs, inner, len, mx);
            kb_compute_softmax_apply(xs, inner, len, mx, sum, y + o * len * inner + i, inner);
        }
}
