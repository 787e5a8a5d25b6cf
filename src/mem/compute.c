/* Data-mode arithmetic (compute.h). */
#include "mem/compute.h"

#include <cblas.h>
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
};

const kb_mop_info *kb_mop_info_of(kb_mop op) { return op < KB_NOPS ? &infos[op] : NULL; }

bool kb_mop_parse(const char *name, kb_mop *out)
{
    for (int i = 0; i < KB_NOPS; i++)
        if (strcmp(infos[i].name, name) == 0) {
            *out = (kb_mop)i;
            return true;
        }
    return false;
}

static double unary(kb_mop op, double x)
{
    switch (op) {
    case KB_OP_EXP: return exp(x);
    case KB_OP_LOG: return log(x);
    case KB_OP_SQRT: return sqrt(x);
    case KB_OP_ABS: return fabs(x);
    case KB_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case KB_OP_COS: return cos(x);
    case KB_OP_SIN: return sin(x);
    case KB_OP_RELU: return x > 0 ? x : 0.0; /* NaN -> 0, as max(x, 0) in hardware */
    case KB_OP_NEG: return -x;
    default: return NAN;
    }
}

void kb_compute_unary(kb_mop op, const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = unary(op, x[i]);
}

/* maximum/minimum propagate NaN, as torch.maximum does. */
static double nan_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }
static double nan_min(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a < b ? a : b); }

void kb_compute_binary(kb_mop op, const double *a, const double *b, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double x = a[i], z = b[i];
        switch (op) {
        case KB_OP_ADD: y[i] = x + z; break;
        case KB_OP_SUB: y[i] = x - z; break;
        case KB_OP_MUL: y[i] = x * z; break;
        case KB_OP_DIV: y[i] = x / z; break;
        case KB_OP_MAXIMUM: y[i] = nan_max(x, z); break;
        case KB_OP_MINIMUM: y[i] = nan_min(x, z); break;
        default: y[i] = NAN; break;
        }
    }
}

void kb_compute_ternary(kb_mop op, const double *a, const double *b, const double *c, double *y,
                        int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (op) {
        case KB_OP_FMA: y[i] = fma(a[i], b[i], c[i]); break;
        case KB_OP_CLAMP: y[i] = nan_min(nan_max(a[i], b[i]), c[i]); break;
        case KB_OP_WHERE: y[i] = a[i] != 0 ? b[i] : c[i]; break;
        default: y[i] = NAN; break;
        }
    }
}

static double reduce(kb_mop op, const double *x, int64_t len, int64_t inner)
{
    double r = x[0];
    for (int64_t j = 1; j < len; j++) {
        double v = x[j * inner];
        if (op == KB_OP_SUM)
            r += v;
        else if (op == KB_OP_MAX)
            r = nan_max(r, v);
        else
            r = nan_min(r, v);
    }
    return r;
}

void kb_compute_axis(kb_mop op, const double *x, double *y, int64_t outer, int64_t len, int64_t inner)
{
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            const double *xs = x + o * len * inner + i;
            if (op != KB_OP_SOFTMAX) {
                y[o * inner + i] = len ? reduce(op, xs, len, inner) : 0.0;
                continue;
            }
            double mx = reduce(KB_OP_MAX, xs, len, inner), sum = 0;
            double *ys = y + o * len * inner + i;
            for (int64_t j = 0; j < len; j++) {
                ys[j * inner] = exp(xs[j * inner] - mx);
                sum += ys[j * inner];
            }
            for (int64_t j = 0; j < len; j++)
                ys[j * inner] /= sum;
        }
    }
}

void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, a,
                (blasint)k, b, (blasint)n, 0.0f, c, (blasint)n);
}

void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0, a,
                (blasint)k, b, (blasint)n, 0.0, c, (blasint)n);
}
