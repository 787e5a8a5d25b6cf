/* Shape operations of host tensors (tensor.h): narrow, transpose, T and
 * cat, all copies. */
#include "tensor/tensor_internal.h"

#include <inttypes.h>
#include <string.h>

/* ==== narrow ==== */

static int64_t narrow_start(const kb_tensor *t, int dim, int64_t start)
{
    return start < 0 && start >= -t->shape[dim] ? start + t->shape[dim] : start;
}

bool kb_tensor_narrow_shape(const kb_tensor *t, int dim, int64_t start, int64_t len, kb_tensor *out, char **err)
{
    int64_t size = t->shape[dim], s = narrow_start(t, dim, start);
    if (s < 0 || len < 0 || s > size || len > size - s) {
        char sh[KB_TENSOR_SHAPE_STRLEN];
        return kb_tensor_fail(err,
                              "narrow: start %" PRId64 " and length %" PRId64 " do not fit dimension %d of size %" PRId64
                              " (shape %s)",
                              start, len, dim, size, kb_tensor_shape_str(t->ndim, t->shape, sh));
    }
    int64_t shape[MAXD];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = len;
    return kb_tensor_init(out, t->dtype, t->ndim, shape, err);
}

void kb_tensor_narrow(const kb_tensor *t, int dim, int64_t start, const kb_tensor *out)
{
    int64_t len = out->shape[dim], size = t->shape[dim], s = narrow_start(t, dim, start);
    int64_t outer = kb_tensor_prod(t->shape, 0, dim), inner = kb_tensor_prod(t->shape, dim + 1, t->ndim);
    size_t chunk = (size_t)(len * inner * kb_tensor_esize(t));
    if (chunk == 0)
        return; /* an empty result (outer may still be 2^31) */
    for (int64_t o = 0; o < outer; o++)
        memcpy(kb_tensor_eptr(out, o * len * inner), kb_tensor_eptr(t, (o * size + s) * inner), chunk);
}

/* ==== transposition ==== */

void kb_tensor_transpose_shape(const kb_tensor *t, int d0, int d1, kb_tensor *out)
{
    *out = *t;
    out->data = NULL;
    out->shape[d0] = t->shape[d1];
    out->shape[d1] = t->shape[d0];
}

void kb_tensor_transpose(const kb_tensor *t, int d0, int d1, const kb_tensor *out)
{
    int64_t st[MAXD];
    kb_tensor_strides(t, st);
    kb_ew_operand o;
    kb_ew_tensor(&o, t, t->ndim);
    o.stride[d0] = st[d1];
    o.stride[d1] = st[d0];
    kb_ew_kernel k = {.kind = KB_EW_COPY};
    kb_ew_run(&k, &o, 1, out->ndim, out->shape, out);
}

bool kb_tensor_T_shape(const kb_tensor *t, kb_tensor *out, char **err)
{
    if (t->ndim > 2) {
        char s[KB_TENSOR_SHAPE_STRLEN];
        return kb_tensor_fail(err, "T: expects a tensor of at most 2 dimensions, got shape %s (use transpose(d0, d1))",
                              kb_tensor_shape_str(t->ndim, t->shape, s));
    }
    if (t->ndim < 2) {
        *out = *t;
        out->data = NULL;
    } else {
        kb_tensor_transpose_shape(t, 0, 1, out);
    }
    return true;
}

void kb_tensor_T(const kb_tensor *t, const kb_tensor *out)
{
    if (t->ndim < 2)
        kb_tensor_convert(t, out);
    else
        kb_tensor_transpose(t, 0, 1, out);
}

/* ==== concatenation ==== */

bool kb_tensor_cat_shape(const kb_tensor *const *list, int64_t n, int64_t dim, kb_tensor *out, int *dim_out,
                         char **err)
{
    if (n == 0)
        return kb_tensor_fail(err, "cat: expected a non-empty list of tensors");
    const kb_tensor *first = list[0];
    if (first->ndim == 0)
        return kb_tensor_fail(err, "cat: list[1] is a 0-d tensor and cannot be concatenated");
    int d;
    if (!kb_tensor_dim("cat", dim, first->ndim, &d, err))
        return false;
    int64_t shape[MAXD];
    memcpy(shape, first->shape, sizeof shape);
    shape[d] = 0;
    kb_dtype dt = first->dtype;
    for (int64_t i = 0; i < n; i++) {
        const kb_tensor *t = list[i];
        bool ok = t->ndim == first->ndim;
        for (int e = 0; ok && e < t->ndim; e++)
            ok = e == d || t->shape[e] == first->shape[e];
        if (!ok) {
            char s1[KB_TENSOR_SHAPE_STRLEN], s2[KB_TENSOR_SHAPE_STRLEN];
            return kb_tensor_fail(err,
                                  "cat: list[1] has shape %s and list[%" PRId64 "] has shape %s; they may differ only "
                                  "in dimension %d",
                                  kb_tensor_shape_str(first->ndim, first->shape, s1), i + 1,
                                  kb_tensor_shape_str(t->ndim, t->shape, s2), d);
        }
        shape[d] += t->shape[d];
        dt = kb_tensor_promote(dt, t->dtype);
    }
    *dim_out = d;
    return kb_tensor_init(out, dt, first->ndim, shape, err);
}

void kb_tensor_cat(const kb_tensor *const *list, int64_t n, int dim, const kb_tensor *out)
{
    int64_t outer = kb_tensor_prod(out->shape, 0, dim), inner = kb_tensor_prod(out->shape, dim + 1, out->ndim);
    int64_t col = 0;
    double buf[RUN];
    for (int64_t i = 0; i < n; i++) {
        const kb_tensor *t = list[i];
        int64_t run = t->shape[dim] * inner;
        for (int64_t o = 0; run > 0 && o < outer; o++) {
            int64_t src = o * run, dst = (o * out->shape[dim] + col) * inner;
            if (t->dtype == out->dtype) {
                memcpy(kb_tensor_eptr(out, dst), kb_tensor_eptr(t, src), (size_t)(run * kb_tensor_esize(t)));
                continue;
            }
            for (int64_t s = 0; s < run; s += RUN) {
                int64_t m = run - s < RUN ? run - s : RUN;
                kb_compute_load_run(t->dtype, kb_tensor_eptr(t, src + s), 1, buf, m);
                kb_compute_store_run(out->dtype, kb_tensor_eptr(out, dst + s), 1, buf, m);
            }
        }
        col += t->shape[dim];
    }
}
