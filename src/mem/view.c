/* Tensor views over the memory store (view.h). */
#include "mem/view.h"

#include "core/util.h"

#include <stdio.h>
#include <string.h>

bool kb_shape_nbytes(int ndim, const int64_t *shape, uint64_t elem_size, uint64_t *nbytes)
{
    uint64_t all = elem_size, nonzero = elem_size;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return false;
        all *= (uint64_t)shape[d]; /* <= nonzero, which is checked */
        if (shape[d] > 0 && (!kb_mul_u64(nonzero, (uint64_t)shape[d], &nonzero) || nonzero > KB_VIEW_MAX_BYTES))
            return false;
    }
    *nbytes = all;
    return true;
}

void kb_tview_init(kb_tview *v, uint64_t domain, uint64_t offset, kb_dtype dtype, int ndim,
                   const int64_t *shape)
{
    memset(v, 0, sizeof *v);
    v->domain = domain;
    v->offset = offset;
    v->dtype = dtype;
    v->ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        v->shape[d] = shape[d];
        v->stride[d] = s;
        s *= shape[d];
    }
}

int64_t kb_tview_numel(const kb_tview *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

uint64_t kb_tview_nbytes(const kb_tview *v)
{
    return (uint64_t)kb_tview_numel(v) * kb_dtype_size(v->dtype);
}

bool kb_tview_contiguous(const kb_tview *v)
{
    int64_t s = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->stride[d] != s)
            return false;
        s *= v->shape[d];
    }
    return true;
}

uint64_t kb_tview_elem_offset(const kb_tview *v, const int64_t *idx)
{
    int64_t e = 0;
    for (int d = 0; d < v->ndim; d++)
        e += idx[d] * v->stride[d];
    return v->offset + (uint64_t)e * kb_dtype_size(v->dtype);
}

/* Calls row(base byte offset of the row's first element, values) for each
 * row of the last dimension, in row-major order. */
typedef void (*row_fn)(void *ctx, uint64_t base, double *vals, int64_t n, int64_t stride);

static void for_rows(const kb_tview *v, double *vals, row_fn fn, void *ctx)
{
    int64_t idx[KB_VIEW_MAXDIM] = {0};
    int last = v->ndim - 1;
    int64_t n = v->shape[last];
    int64_t rows = n ? kb_tview_numel(v) / n : 0;
    for (int64_t r = 0; r < rows; r++) {
        fn(ctx, kb_tview_elem_offset(v, idx), vals + r * n, n, v->stride[last]);
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < v->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

typedef struct rw_ctx {
    kb_memstore *m;
    const kb_tview *v;
} rw_ctx;

static void read_row(void *ctx, uint64_t base, double *vals, int64_t n, int64_t stride)
{
    rw_ctx *c = ctx;
    size_t sz = kb_dtype_size(c->v->dtype);
    if (stride == 1) {
        kb_memstore_read_elems(c->m, c->v->domain, base, c->v->dtype, vals, (size_t)n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        kb_memstore_read_elems(c->m, c->v->domain, base + (uint64_t)(i * stride) * sz, c->v->dtype,
                               vals + i, 1);
}

static void write_row(void *ctx, uint64_t base, double *vals, int64_t n, int64_t stride)
{
    rw_ctx *c = ctx;
    size_t sz = kb_dtype_size(c->v->dtype);
    if (stride == 1) {
        kb_memstore_write_elems(c->m, c->v->domain, base, c->v->dtype, vals, (size_t)n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        kb_memstore_write_elems(c->m, c->v->domain, base + (uint64_t)(i * stride) * sz, c->v->dtype,
                                vals + i, 1);
}

void kb_tview_read(const kb_memstore *m, const kb_tview *v, double *out)
{
    rw_ctx c = {(kb_memstore *)m, v}; /* read_row only reads through it */
    for_rows(v, out, read_row, &c);
}

void kb_tview_write(kb_memstore *m, const kb_tview *v, const double *vals)
{
    rw_ctx c = {m, v};
    for_rows(v, (double *)vals, write_row, &c); /* write_row only reads vals */
}

bool kb_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    if (n > KB_VIEW_MAXDIM)
        return false;
    /* from the last dimension: out may be a or b (a running result), and
     * out[i] is then written after every a[j], b[j] with j >= i - (n - na) is read */
    for (int i = n - 1; i >= 0; i--) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        out[i] = da == 1 ? db : da;
    }
    *nout = n;
    return true;
}

bool kb_tview_broadcast(const kb_tview *v, int ndim, const int64_t *shape, kb_tview *out)
{
    if (ndim < v->ndim)
        return false;
    kb_tview r = *v;
    r.ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        int iv = v->ndim - ndim + i;
        int64_t dv = iv >= 0 ? v->shape[iv] : 1;
        if (dv != shape[i] && dv != 1)
            return false;
        r.shape[i] = shape[i];
        r.stride[i] = (iv < 0 || (dv == 1 && shape[i] != 1)) ? 0 : v->stride[iv];
    }
    *out = r;
    return true;
}

const char *kb_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, n - len, "[");
    for (int d = 0; d < ndim && len < n; d++)
        len += (size_t)snprintf(buf + len, n - len, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (len < n)
        snprintf(buf + len, n - len, "]");
    return buf;
}
