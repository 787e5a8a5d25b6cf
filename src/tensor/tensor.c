/* Host tensors (tensor.h): headers and shapes, elements and views,
 * creation helpers, copies, conversions and blocks of the 2-D view. */
#include "tensor/tensor_internal.h"

#include "core/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Shapes beyond 64 TiB are refused before anyone asks an allocator (the
 * limit of every shape, src/mem/view.h). */
#define MAX_BYTES ((int64_t)KB_VIEW_MAX_BYTES)

bool kb_tensor_fail(char **err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        *err = kb_vasprintf(fmt, ap);
        va_end(ap);
    }
    return false;
}

const char *kb_tensor_numstr(double v, char *buf)
{
    snprintf(buf, 48, "%.14g", v);
    if (buf[strspn(buf, "-0123456789")] == '\0')
        strcat(buf, ".0");
    return buf;
}

/* ==== headers, shapes, dimensions ==== */

int64_t kb_tensor_prod(const int64_t *shape, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= shape[d];
    return n;
}

bool kb_tensor_init(kb_tensor *t, kb_dtype dtype, int ndim, const int64_t *shape, char **err)
{
    char s[KB_TENSOR_SHAPE_STRLEN];
    if (ndim < 0 || ndim > MAXD)
        return kb_tensor_fail(err, "tensor: %d dimensions (at most %d)", ndim, MAXD);
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0)
            return kb_tensor_fail(err, "tensor: negative size in shape %s", kb_tensor_shape_str(ndim, shape, s));
    /* the sizes other than 0 count too: an empty tensor's strides must fit */
    uint64_t nbytes;
    if (!kb_shape_nbytes(ndim, shape, kb_dtype_size(dtype), &nbytes))
        return kb_tensor_fail(err, "tensor: shape %s of %s is too large (more than %" PRId64 " bytes)",
                              kb_tensor_shape_str(ndim, shape, s), kb_dtype_name(dtype), MAX_BYTES);
    int64_t n = (int64_t)(nbytes / kb_dtype_size(dtype));
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim > 0)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = n;
    return true;
}

size_t kb_tensor_nbytes(const kb_tensor *t) { return (size_t)t->numel * kb_dtype_size(t->dtype); }

void kb_tensor_strides(const kb_tensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->shape[d];
    }
}

bool kb_tensor_same_shape(const kb_tensor *a, const kb_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

bool kb_tensor_dim(const char *fn, int64_t d, int ndim, int *out, char **err)
{
    if (d < -ndim || d >= ndim) {
        if (ndim == 0)
            return kb_tensor_fail(err, "%s: dim %" PRId64 " is out of range for a 0-d tensor", fn, d);
        return kb_tensor_fail(err, "%s: dim %" PRId64 " is out of range for a %d-d tensor (expected %d .. %d)", fn, d,
                              ndim, -ndim, ndim - 1);
    }
    *out = (int)(d < 0 ? d + ndim : d);
    return true;
}

void kb_tensor_rows_cols(const kb_tensor *t, int64_t *rows, int64_t *cols)
{
    *cols = t->ndim ? t->shape[t->ndim - 1] : 1;
    *rows = *cols ? t->numel / *cols : 0;
}

/* ==== elements and views ==== */

bool kb_tensor_offset(const kb_tensor *t, const char *fn, int n, const int64_t *idx, int64_t *off, char **err)
{
    if (n > t->ndim)
        return kb_tensor_fail(err, "%s: too many indices (%d) for a %d-d tensor", fn, n, t->ndim);
    int64_t st[MAXD], o = 0;
    kb_tensor_strides(t, st);
    for (int d = 0; d < n; d++) {
        int64_t i = idx[d], size = t->shape[d];
        if (i < -size || i >= size)
            return kb_tensor_fail(err, "%s: index %" PRId64 " is out of bounds for dimension %d with size %" PRId64,
                                  fn, i, d, size);
        o += (i < 0 ? i + size : i) * st[d];
    }
    *off = o;
    return true;
}

void kb_tensor_view(const kb_tensor *src, int64_t off, int ndim, const int64_t *shape, kb_tensor *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = src->dtype;
    out->ndim = ndim;
    if (ndim > 0)
        memcpy(out->shape, shape, (size_t)ndim * sizeof *shape);
    out->numel = kb_tensor_prod(shape, 0, ndim);
    out->data = kb_tensor_eptr(src, off);
}

bool kb_tensor_reshape(const kb_tensor *t, int nd, int64_t *shape, char **err)
{
    char s1[KB_TENSOR_SHAPE_STRLEN], s2[KB_TENSOR_SHAPE_STRLEN];
    int infer = -1;
    uint64_t known = 1;
    bool fits = true; /* the product of the sizes given, checked */
    for (int d = 0; d < nd; d++) {
        if (shape[d] == -1) {
            if (infer >= 0)
                return kb_tensor_fail(err, "reshape: only one size may be -1, got %s",
                                      kb_tensor_shape_str(nd, shape, s1));
            infer = d;
        } else if (shape[d] < 0) {
            return kb_tensor_fail(err, "reshape: negative size in shape %s (only -1, once, is inferred)",
                                  kb_tensor_shape_str(nd, shape, s1));
        } else {
            fits = fits && kb_mul_u64(known, (uint64_t)shape[d], &known);
        }
    }
    uint64_t numel = (uint64_t)t->numel;
    if (fits && infer >= 0 && known != 0 && numel % known == 0)
        shape[infer] = (int64_t)(numel / known);
    if (!fits || (infer >= 0 && shape[infer] == -1) || (infer >= 0 ? known * (uint64_t)shape[infer] : known) != numel)
        return kb_tensor_fail(err, "reshape: shape %s is invalid for a tensor of %" PRId64 " elements (shape %s)",
                              kb_tensor_shape_str(nd, shape, s1), t->numel,
                              kb_tensor_shape_str(t->ndim, t->shape, s2));
    /* an empty tensor's other sizes must fit too, as at creation (kb_tensor_init):
     * its strides and element counts are products of them */
    uint64_t nbytes;
    if (!kb_shape_nbytes(nd, shape, kb_dtype_size(t->dtype), &nbytes))
        return kb_tensor_fail(err, "reshape: shape %s of %s is too large (more than %" PRId64 " bytes, counting the "
                              "sizes other than 0)", kb_tensor_shape_str(nd, shape, s1), kb_dtype_name(t->dtype),
                              MAX_BYTES);
    return true;
}

double kb_tensor_get(const kb_tensor *t, int64_t off) { return kb_dtype_load(t->dtype, kb_tensor_eptr(t, off)); }
void kb_tensor_set(const kb_tensor *t, int64_t off, double v) { kb_dtype_store(t->dtype, kb_tensor_eptr(t, off), v); }

bool kb_tensor_item(const kb_tensor *t, double *v, char **err)
{
    char s[KB_TENSOR_SHAPE_STRLEN];
    if (t->numel != 1)
        return kb_tensor_fail(err, "item: a tensor of shape %s has %" PRId64 " elements, not 1",
                              kb_tensor_shape_str(t->ndim, t->shape, s), t->numel);
    *v = kb_tensor_get(t, 0);
    return true;
}

void kb_tensor_fill(const kb_tensor *t, double v)
{
    size_t es = kb_dtype_size(t->dtype), n = kb_tensor_nbytes(t);
    if (n == 0)
        return;
    kb_dtype_store(t->dtype, t->data, v);
    for (size_t done = es; done < n;) { /* doubling copies of the first element */
        size_t c = done < n - done ? done : n - done;
        memcpy((char *)t->data + done, t->data, c);
        done += c;
    }
}

uint64_t kb_tensor_hash(const kb_tensor *t)
{
    const unsigned char *p = t->data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0, n = kb_tensor_nbytes(t); i < n; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h;
}

/* ==== creation ==== */

bool kb_tensor_arange_numel(double start, double stop, double step, int64_t *n, char **err)
{
    char a[48], b[48], c[48];
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
        return kb_tensor_fail(err, "arange: start, stop and step must be finite");
    if (step == 0)
        return kb_tensor_fail(err, "arange: step must be nonzero");
    if ((step > 0 && stop < start) || (step < 0 && stop > start))
        return kb_tensor_fail(err, "arange: the bounds %s .. %s are inconsistent with the sign of step %s",
                              kb_tensor_numstr(start, a), kb_tensor_numstr(stop, b), kb_tensor_numstr(step, c));
    double count = ceil((stop - start) / step);
    if (count > 9007199254740992.0) /* 2^53 */
        return kb_tensor_fail(err, "arange: %s elements is too many", kb_tensor_numstr(count, a));
    *n = (int64_t)count;
    return true;
}

void kb_tensor_arange(const kb_tensor *out, double start, double step)
{
    double buf[RUN];
    for (int64_t s = 0; s < out->numel; s += RUN) {
        int64_t m = out->numel - s < RUN ? out->numel - s : RUN;
        for (int64_t i = 0; i < m; i++)
            buf[i] = start + (double)(s + i) * step;
        kb_compute_store_run(out->dtype, kb_tensor_eptr(out, s), 1, buf, m);
    }
}

bool kb_tensor_check_bytes(const kb_tensor *t, size_t len, char **err)
{
    char s[KB_TENSOR_SHAPE_STRLEN];
    size_t need = kb_tensor_nbytes(t);
    if (len != need)
        return kb_tensor_fail(err, "from_bytes: %zu bytes given, a %s tensor of shape %s holds %zu", len,
                              kb_dtype_name(t->dtype), kb_tensor_shape_str(t->ndim, t->shape, s), need);
    return true;
}

/* ==== copies and conversions ==== */

void kb_tensor_convert(const kb_tensor *src, const kb_tensor *out)
{
    if (src->dtype == out->dtype) {
        memcpy(out->data, src->data, kb_tensor_nbytes(src));
        return;
    }
    kb_ew_operand o;
    kb_ew_tensor(&o, src, src->ndim);
    kb_ew_kernel k = {.kind = KB_EW_COPY};
    kb_ew_run(&k, &o, 1, src->ndim, src->shape, out);
}

bool kb_tensor_copy(const kb_tensor *dst, const kb_tensor *src, const char *fn, char **err)
{
    bool ok = src->ndim <= dst->ndim;
    for (int d = 0; ok && d < src->ndim; d++) {
        int64_t s = src->shape[d], t = dst->shape[d + dst->ndim - src->ndim];
        ok = s == t || s == 1;
    }
    if (!ok) {
        char s1[KB_TENSOR_SHAPE_STRLEN], s2[KB_TENSOR_SHAPE_STRLEN];
        return kb_tensor_fail(err, "%s: a tensor of shape %s cannot be copied into one of shape %s", fn,
                              kb_tensor_shape_str(src->ndim, src->shape, s1),
                              kb_tensor_shape_str(dst->ndim, dst->shape, s2));
    }
    if (src->dtype == dst->dtype && kb_tensor_same_shape(src, dst)) {
        memmove(dst->data, src->data, kb_tensor_nbytes(src));
        return true;
    }
    kb_ew_operand o;
    kb_ew_tensor(&o, src, dst->ndim);
    kb_ew_kernel k = {.kind = KB_EW_COPY};
    kb_ew_run(&k, &o, 1, dst->ndim, dst->shape, dst);
    return true;
}

/* ==== blocks of the 2-D view ==== */

bool kb_tensor_block_check(const kb_tensor *t, const char *fn, const int64_t *b, char **err)
{
    int64_t rows, cols;
    kb_tensor_rows_cols(t, &rows, &cols);
    /* b[1] > rows - b[0] rather than b[0] + b[1] > rows: no overflow for any int64 */
    if (b[0] < 0 || b[1] < 0 || b[2] < 0 || b[3] < 0 || b[0] > rows || b[1] > rows - b[0] || b[2] > cols ||
        b[3] > cols - b[2]) {
        char s[KB_TENSOR_SHAPE_STRLEN];
        return kb_tensor_fail(err,
                              "%s: block rows %" PRId64 "+%" PRId64 ", cols %" PRId64 "+%" PRId64
                              " outside the %" PRId64 " x %" PRId64 " view of %s",
                              fn, b[0], b[1], b[2], b[3], rows, cols, kb_tensor_shape_str(t->ndim, t->shape, s));
    }
    return true;
}

void kb_tensor_block_read(const kb_tensor *t, const int64_t *b, void *out)
{
    int64_t rows, cols;
    kb_tensor_rows_cols(t, &rows, &cols);
    size_t rowb = (size_t)(b[3] * kb_tensor_esize(t));
    for (int64_t r = 0; r < b[1]; r++)
        memcpy((char *)out + (size_t)r * rowb, kb_tensor_eptr(t, (b[0] + r) * cols + b[2]), rowb);
}

bool kb_tensor_block_write(const kb_tensor *t, const int64_t *b, const void *src, size_t len, char **err)
{
    int64_t rows, cols;
    kb_tensor_rows_cols(t, &rows, &cols);
    size_t rowb = (size_t)(b[3] * kb_tensor_esize(t));
    if (len != (size_t)b[1] * rowb)
        return kb_tensor_fail(err, "set_block: %zu bytes for a %" PRId64 " x %" PRId64 " block of %s", len, b[1],
                              b[3], kb_dtype_name(t->dtype));
    for (int64_t r = 0; r < b[1]; r++)
        memcpy(kb_tensor_eptr(t, (b[0] + r) * cols + b[2]), (const char *)src + (size_t)r * rowb, rowb);
    return true;
}
