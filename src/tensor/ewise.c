/* Element-wise work on host tensors (tensor.h, tensor_internal.h): the
 * broadcasting runner over strided operands, dtype promotion, element-wise
 * math and the comparisons. The values come from engine.h's kernels. */
#include "tensor/tensor_internal.h"

#include <inttypes.h>
#include <string.h>

/* ==== the runner ==== */

bool kb_tensor_broadcast(const char *fn, int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                         int64_t *out, char **err)
{
    int n = na > nb ? na : nb;
    int64_t shape[MAXD];
    for (int d = 0; d < n; d++) {
        int da = d - (n - na), db = d - (n - nb);
        int64_t x = da >= 0 ? a[da] : 1, y = db >= 0 ? b[db] : 1;
        if (x != y && x != 1 && y != 1) {
            char s1[KB_TENSOR_SHAPE_STRLEN], s2[KB_TENSOR_SHAPE_STRLEN];
            return kb_tensor_fail(err,
                                  "%s: shapes %s and %s cannot be broadcast together (%" PRId64 " vs %" PRId64
                                  " at dimension %d of the result)",
                                  fn, kb_tensor_shape_str(na, a, s1), kb_tensor_shape_str(nb, b, s2), x, y, d);
        }
        shape[d] = x == 1 ? y : x;
    }
    memcpy(out, shape, (size_t)n * sizeof *shape);
    *nout = n;
    return true;
}

void kb_ew_tensor(kb_ew_operand *o, const kb_tensor *t, int ndim)
{
    int64_t st[MAXD];
    memset(o, 0, sizeof *o);
    o->t = t;
    kb_tensor_strides(t, st);
    int lead = ndim - t->ndim;
    for (int d = lead < 0 ? 0 : lead; d < ndim; d++)
        o->stride[d] = t->shape[d - lead] == 1 ? 0 : st[d - lead];
}

void kb_ew_number(kb_ew_operand *o, double v)
{
    memset(o, 0, sizeof *o);
    o->v = v;
}

static void load(const kb_ew_operand *o, int64_t off, int64_t stride, double *dst, int64_t n)
{
    if (o->t) {
        kb_compute_load_run(o->t->dtype, kb_tensor_eptr(o->t, off), stride, dst, n);
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = o->v;
    }
}

static void apply(const kb_ew_kernel *k, double in[][RUN], double *z, int64_t n)
{
    switch (k->kind) {
    case KB_EW_COPY: memcpy(z, in[0], (size_t)n * sizeof *z); break;
    case KB_EW_MOP: kb_compute_ewise(k->op, (const double *const[]){in[0], in[1], in[2]}, z, n); break;
    case KB_EW_ISCLOSE: kb_compute_isclose(k->close, in[0], in[1], z, n); break;
    case KB_EW_EQUAL: kb_compute_equal(in[0], in[1], z, n); break;
    }
}

/* Dimensions of size 1 are dropped and adjacent dimensions that every
 * operand walks contiguously are merged, so equal shapes and tensor-number
 * pairs run as one flat loop; the innermost dimension is cut in chunks. */
bool kb_ew_run(const kb_ew_kernel *k, const kb_ew_operand *ops, int nops, int ndim, const int64_t *shape,
               const kb_tensor *out)
{
    int64_t total = kb_tensor_prod(shape, 0, ndim);
    if (total == 0)
        return true;
    int64_t sh[MAXD], st[3][MAXD] = {{0}};
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        bool merge = nd > 0;
        for (int j = 0; j < nops && merge; j++)
            merge = st[j][nd - 1] == ops[j].stride[d] * shape[d];
        if (merge) {
            sh[nd - 1] *= shape[d];
        } else {
            sh[nd] = shape[d];
            nd++;
        }
        for (int j = 0; j < nops; j++)
            st[j][nd - 1] = ops[j].stride[d];
    }
    if (nd == 0) {
        sh[0] = 1;
        nd = 1;
    }
    int64_t inner = sh[nd - 1], outer = total / inner, idx[MAXD] = {0}, pos = 0, off[3] = {0, 0, 0};
    double in[3][RUN], z[RUN];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t s = 0; s < inner; s += RUN) {
            int64_t n = inner - s < RUN ? inner - s : RUN;
            for (int j = 0; j < nops; j++)
                load(&ops[j], off[j] + s * st[j][nd - 1], st[j][nd - 1], in[j], n);
            apply(k, in, z, n);
            if (out) {
                kb_compute_store_run(out->dtype, kb_tensor_eptr(out, pos + s), 1, z, n);
                continue;
            }
            for (int64_t i = 0; i < n; i++)
                if (z[i] == 0)
                    return false;
        }
        pos += inner;
        for (int d = nd - 2; d >= 0; d--) {
            for (int j = 0; j < nops; j++)
                off[j] += st[j][d];
            if (++idx[d] < sh[d])
                break;
            for (int j = 0; j < nops; j++)
                off[j] -= st[j][d] * sh[d];
            idx[d] = 0;
        }
    }
    return true;
}

/* ==== dtype promotion (torch's categories: bool < integer < floating) ==== */

static int category(kb_dtype t) { return t == KB_BOOL ? 0 : kb_dtype_is_float(t) ? 2 : 1; }

kb_dtype kb_tensor_promote(kb_dtype a, kb_dtype b)
{
    if (a == b)
        return a;
    int ca = category(a), cb = category(b);
    if (ca != cb)
        return ca > cb ? a : b;
    if (ca == 2) /* f16 with bf16, or either with f32 */
        return KB_F32;
    if (a == KB_I32 || b == KB_I32)
        return KB_I32;
    return KB_I16; /* i16 with i8/u8, or i8 with u8 */
}

/* A number next to tensors of dtype t: it only lifts the category. */
static kb_dtype promote_number(kb_dtype t, bool v_int)
{
    int cs = v_int ? 1 : 2;
    if (cs <= category(t))
        return t;
    return cs == 2 ? KB_F32 : KB_I32;
}

/* ==== element-wise math ==== */

bool kb_tensor_ewise_shape(kb_mop op, const kb_operand *args, kb_tensor *out, char **err)
{
    const kb_mop_info *info = kb_mop_info_of(op);
    if (!info || info->axis)
        return kb_tensor_fail(err, "%s: not an element-wise op", info ? info->name : "ewise");
    const char *fn = info->name;
    int n = info->arity, first = op == KB_OP_WHERE ? 1 : 0; /* where's condition has no say in the dtype */
    bool any = false, typed = false;
    kb_dtype dt = KB_BOOL;
    for (int i = 0; i < n; i++) {
        if (!args[i].t)
            continue;
        any = true;
        if (i >= first) {
            dt = typed ? kb_tensor_promote(dt, args[i].t->dtype) : args[i].t->dtype;
            typed = true;
        }
    }
    if (!any)
        return kb_tensor_fail(err, "%s: at least one argument must be a tensor", fn);
    for (int i = first; i < n; i++)
        if (!args[i].t)
            dt = promote_number(dt, args[i].v_int);
    if (!kb_dtype_is_float(dt) &&
        (op == KB_OP_DIV || (n == 1 && op != KB_OP_NEG && op != KB_OP_ABS && op != KB_OP_RELU)))
        dt = KB_F32; /* true division; transcendental functions */
    if (op == KB_OP_NEG && dt == KB_BOOL)
        return kb_tensor_fail(err, "%s: negation of a bool tensor is not supported", fn);
    int nd = 0;
    int64_t shape[MAXD];
    bool started = false;
    for (int i = 0; i < n; i++) {
        const kb_tensor *t = args[i].t;
        if (!t)
            continue;
        if (!started) {
            nd = t->ndim;
            memcpy(shape, t->shape, (size_t)nd * sizeof *shape);
            started = true;
        } else if (!kb_tensor_broadcast(fn, nd, shape, t->ndim, t->shape, &nd, shape, err)) {
            return false;
        }
    }
    return kb_tensor_init(out, dt, nd, shape, err);
}

void kb_tensor_ewise(kb_mop op, const kb_operand *args, const kb_tensor *out)
{
    int n = kb_mop_info_of(op)->arity;
    kb_ew_operand ops[3];
    for (int i = 0; i < n; i++) {
        if (args[i].t)
            kb_ew_tensor(&ops[i], args[i].t, out->ndim);
        else
            kb_ew_number(&ops[i], args[i].v);
    }
    kb_ew_kernel k = {.kind = KB_EW_MOP, .op = op};
    kb_ew_run(&k, ops, n, out->ndim, out->shape, out);
}

/* ==== comparisons ==== */

bool kb_tensor_compare_shape(const char *fn, const kb_tensor *a, const kb_tensor *b, kb_tensor *out, char **err)
{
    int nd;
    int64_t shape[MAXD];
    if (!kb_tensor_broadcast(fn, a->ndim, a->shape, b->ndim, b->shape, &nd, shape, err))
        return false;
    return kb_tensor_init(out, KB_BOOL, nd, shape, err);
}

/* Runs a two-tensor comparison over the broadcast shape of out (or, out
 * NULL, of a and b) and returns whether it held everywhere. */
static bool compare(const kb_ew_kernel *k, const kb_tensor *a, const kb_tensor *b, int nd, const int64_t *shape,
                    const kb_tensor *out)
{
    kb_ew_operand ops[2];
    kb_ew_tensor(&ops[0], a, nd);
    kb_ew_tensor(&ops[1], b, nd);
    return kb_ew_run(k, ops, 2, nd, shape, out);
}

void kb_tensor_isclose(const kb_close *c, const kb_tensor *a, const kb_tensor *b, const kb_tensor *out)
{
    kb_ew_kernel k = {.kind = KB_EW_ISCLOSE, .close = c};
    compare(&k, a, b, out->ndim, out->shape, out);
}

bool kb_tensor_allclose(const kb_close *c, const kb_tensor *a, const kb_tensor *b, bool *all, char **err)
{
    int nd;
    int64_t shape[MAXD];
    if (!kb_tensor_broadcast("allclose", a->ndim, a->shape, b->ndim, b->shape, &nd, shape, err))
        return false;
    kb_ew_kernel k = {.kind = KB_EW_ISCLOSE, .close = c};
    *all = compare(&k, a, b, nd, shape, NULL);
    return true;
}

bool kb_tensor_equal(const kb_tensor *a, const kb_tensor *b)
{
    kb_ew_kernel k = {.kind = KB_EW_EQUAL};
    return kb_tensor_same_shape(a, b) && compare(&k, a, b, a->ndim, a->shape, NULL);
}
