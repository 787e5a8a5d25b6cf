/* Reductions and softmax of host tensors (tensor.h), lane by lane in
 * chunks through engine.h's reducer and softmax pieces. */
#include "tensor/tensor_internal.h"

#include <string.h>

/* Reduces the n elements base, base + stride, ... of t. */
static double lane(kb_mop op, const kb_tensor *t, int64_t base, int64_t stride, int64_t n, int64_t *arg)
{
    double buf[RUN];
    kb_reducer r;
    kb_reducer_init(&r, op);
    for (int64_t s = 0; s < n; s += RUN) {
        int64_t m = n - s < RUN ? n - s : RUN;
        kb_compute_load_run(t->dtype, kb_tensor_eptr(t, base + s * stride), stride, buf, m);
        kb_reducer_feed(&r, buf, 1, m);
    }
    return kb_reducer_result(&r, arg);
}

/* The result dtype, or an error (mean of integers; max/min of nothing). */
static bool check(kb_mop op, const kb_tensor *t, int64_t n, int64_t outs, bool has_dim, kb_dtype *dt, char **err)
{
    const char *fn = kb_mop_info_of(op)->name;
    *dt = t->dtype;
    if (op == KB_OP_SUM && !kb_dtype_is_float(*dt))
        *dt = KB_I32;
    if (op == KB_OP_MEAN && !kb_dtype_is_float(*dt))
        return kb_tensor_fail(err, "mean: needs a floating-point tensor, got %s (convert with :float())",
                              kb_dtype_name(*dt));
    if ((op == KB_OP_MAX || op == KB_OP_MIN) && n == 0 && outs > 0) {
        char s[KB_TENSOR_SHAPE_STRLEN];
        return kb_tensor_fail(err, "%s: cannot reduce over %s elements (shape %s)", fn,
                              has_dim ? "a dimension of 0" : "0", kb_tensor_shape_str(t->ndim, t->shape, s));
    }
    return true;
}

bool kb_tensor_reduce_all(kb_mop op, const kb_tensor *t, double *v, kb_dtype *dtype, char **err)
{
    if (!check(op, t, t->numel, 1, false, dtype, err))
        return false;
    *v = lane(op, t, 0, 1, t->numel, NULL);
    return true;
}

bool kb_tensor_reduce_shape(kb_mop op, const kb_tensor *t, int dim, bool keepdim, kb_tensor *vals, kb_tensor *idx,
                            char **err)
{
    kb_dtype dt;
    int64_t outs = kb_tensor_prod(t->shape, 0, dim) * kb_tensor_prod(t->shape, dim + 1, t->ndim);
    if (!check(op, t, t->shape[dim], outs, true, &dt, err))
        return false;
    int nd = 0;
    int64_t shape[MAXD];
    for (int d = 0; d < t->ndim; d++)
        if (d != dim)
            shape[nd++] = t->shape[d];
        else if (keepdim)
            shape[nd++] = 1;
    if (!kb_tensor_init(vals, dt, nd, shape, err))
        return false;
    if ((op == KB_OP_MAX || op == KB_OP_MIN) && !kb_tensor_init(idx, KB_I32, nd, shape, err))
        return false;
    return true;
}

void kb_tensor_reduce(kb_mop op, const kb_tensor *t, int dim, const kb_tensor *vals, const kb_tensor *idx)
{
    int64_t outer = kb_tensor_prod(t->shape, 0, dim), n = t->shape[dim];
    int64_t inner = kb_tensor_prod(t->shape, dim + 1, t->ndim);
    bool arg = op == KB_OP_MAX || op == KB_OP_MIN;
    if (vals->numel == 0)
        return; /* an empty result: with an empty dimension after dim, outer may still be 2^31 lanes of nothing */
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best;
            kb_tensor_set(vals, o * inner + i, lane(op, t, o * n * inner + i, inner, n, &best));
            if (arg && idx)
                kb_tensor_set(idx, o * inner + i, (double)best);
        }
}

void kb_tensor_softmax_shape(const kb_tensor *t, kb_tensor *out)
{
    *out = *t;
    out->data = NULL;
    if (!kb_dtype_is_float(t->dtype))
        out->dtype = KB_F32;
}

void kb_tensor_softmax(const kb_tensor *t, int dim, const kb_tensor *out)
{
    int64_t outer = kb_tensor_prod(t->shape, 0, dim), n = t->shape[dim];
    int64_t inner = kb_tensor_prod(t->shape, dim + 1, t->ndim);
    double buf[RUN];
    if (t->numel == 0)
        return; /* an empty result: its other dimensions may still make 2^31 lanes of nothing */
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double m = lane(KB_OP_MAX, t, base, inner, n, NULL), sum = 0;
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                kb_compute_load_run(t->dtype, kb_tensor_eptr(t, base + s * inner), inner, buf, c);
                sum = kb_compute_softmax_sum(sum, buf, 1, c, m);
            }
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                kb_compute_load_run(t->dtype, kb_tensor_eptr(t, base + s * inner), inner, buf, c);
                kb_compute_softmax_apply(buf, 1, c, m, sum, buf, 1);
                kb_compute_store_run(out->dtype, kb_tensor_eptr(out, base + s * inner), inner, buf, c);
            }
        }
}
