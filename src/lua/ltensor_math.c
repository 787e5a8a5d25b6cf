/* Arithmetic of `kernbench.tensor_c`: the elementwise engine (broadcasting,
 * strided runs in double), dtype promotion, the binary and unary operators,
 * the comparisons allclose, isclose and equal, and matmul. */
#include "lua/ltensor_internal.h"

#include <math.h>
#include <string.h>

/* ==== helpers ==== */

static bool same_shape(const ltensor *a, const ltensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static double check_num(lua_State *L, int idx, const char *fn, const char *what)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: %s must be a number, got %s", fn, what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* ==== elementwise engine ==== */

/* One input of an elementwise loop: a tensor read with per-dimension
 * strides over the iteration shape (0 where it is broadcast), or a constant. */
typedef struct operand {
    const ltensor *t; /* NULL: the constant `scalar` */
    double scalar;
    int64_t base;
    int64_t stride[MAXD];
} operand;

static void op_scalar(operand *o, double v)
{
    memset(o, 0, sizeof *o);
    o->scalar = v;
}

/* t read over an iteration shape of ndim dimensions, broadcast numpy-style
 * (trailing dimensions aligned; missing and size-1 dimensions repeat). */
static void op_tensor(operand *o, const ltensor *t, int ndim)
{
    int64_t st[MAXD];
    memset(o, 0, sizeof *o);
    o->t = t;
    ltensor_strides(t->ndim, t->shape, st);
    int lead = ndim - t->ndim;
    for (int d = lead < 0 ? 0 : lead; d < ndim; d++)
        o->stride[d] = t->shape[d - lead] == 1 ? 0 : st[d - lead];
}

static void load_operand(const operand *o, int64_t off, int64_t stride, double *dst, int64_t n)
{
    if (o->t) {
        ltensor_load_run(o->t, off, stride, dst, n);
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = o->scalar;
    }
}

typedef enum ew_op {
    EW_COPY, EW_NEG, EW_EXP, EW_LOG, EW_SQRT, EW_ABS, EW_RELU, EW_SIGMOID, EW_TANH, /* unary */
    EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_ISCLOSE, EW_EQ                               /* binary */
} ew_op;

typedef struct ew {
    ew_op op;
    double rtol, atol; /* isclose */
    bool equal_nan;
} ew;

/* torch.isclose: equal values (infinities included) are close; NaN only to
 * NaN with equal_nan; otherwise |a - b| <= atol + rtol * |b|. */
static bool isclose1(const ew *e, double a, double b)
{
    if (a == b)
        return true;
    if (isnan(a) || isnan(b))
        return e->equal_nan && isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return false;
    return fabs(a - b) <= e->atol + e->rtol * fabs(b);
}

static void ew_compute(const ew *e, const double *x, const double *y, double *z, int64_t n)
{
    int64_t i;
    switch (e->op) {
    case EW_COPY: memcpy(z, x, (size_t)n * sizeof *z); break;
    case EW_NEG: for (i = 0; i < n; i++) z[i] = -x[i]; break;
    case EW_EXP: for (i = 0; i < n; i++) z[i] = exp(x[i]); break;
    case EW_LOG: for (i = 0; i < n; i++) z[i] = log(x[i]); break;
    case EW_SQRT: for (i = 0; i < n; i++) z[i] = sqrt(x[i]); break;
    case EW_ABS: for (i = 0; i < n; i++) z[i] = fabs(x[i]); break;
    case EW_RELU: for (i = 0; i < n; i++) z[i] = x[i] < 0 ? 0.0 : x[i]; break; /* NaN stays NaN */
    case EW_SIGMOID: for (i = 0; i < n; i++) z[i] = 1.0 / (1.0 + exp(-x[i])); break;
    case EW_TANH: for (i = 0; i < n; i++) z[i] = tanh(x[i]); break;
    case EW_ADD: for (i = 0; i < n; i++) z[i] = x[i] + y[i]; break;
    case EW_SUB: for (i = 0; i < n; i++) z[i] = x[i] - y[i]; break;
    case EW_MUL: for (i = 0; i < n; i++) z[i] = x[i] * y[i]; break;
    case EW_DIV: for (i = 0; i < n; i++) z[i] = x[i] / y[i]; break;
    case EW_ISCLOSE: for (i = 0; i < n; i++) z[i] = isclose1(e, x[i], y[i]); break;
    case EW_EQ: for (i = 0; i < n; i++) z[i] = x[i] == y[i]; break;
    }
}

/* Where results go: stored into a contiguous tensor, or checked all-nonzero. */
typedef struct sink {
    const ltensor *out; /* NULL: only check */
    bool all;
} sink;

static void sink_put(sink *k, int64_t off, const double *v, int64_t n)
{
    if (k->out) {
        ltensor_store_run(k->out, off, 1, v, n);
        return;
    }
    for (int64_t i = 0; i < n && k->all; i++)
        k->all = v[i] != 0;
}

/* Runs e over the iteration shape with 1 or 2 operands; results are sunk in
 * row-major order. Dimensions of size 1 are dropped and adjacent dimensions
 * that every operand walks contiguously are merged, so equal shapes and
 * tensor-scalar pairs run as one flat loop. */
static void ew_run(const ew *e, const operand *ops, int nops, int ndim, const int64_t *shape, sink *k)
{
    int64_t total = ltensor_prod(shape, 0, ndim);
    if (total == 0)
        return;
    int64_t sh[MAXD], st[2][MAXD] = {{0}};
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
        st[0][0] = st[1][0] = 0;
        nd = 1;
    }
    int64_t inner = sh[nd - 1], outer = total / inner, idx[MAXD] = {0}, out = 0;
    int64_t off[2] = {ops[0].base, nops > 1 ? ops[1].base : 0};
    double x[RUN], y[RUN], z[RUN];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t s = 0; s < inner; s += RUN) {
            int64_t n = inner - s < RUN ? inner - s : RUN;
            load_operand(&ops[0], off[0] + s * st[0][nd - 1], st[0][nd - 1], x, n);
            if (nops > 1)
                load_operand(&ops[1], off[1] + s * st[1][nd - 1], st[1][nd - 1], y, n);
            ew_compute(e, x, nops > 1 ? y : x, z, n);
            sink_put(k, out + s, z, n);
        }
        out += inner;
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
}

/* The broadcast shape of a and b, or an error naming both shapes. */
static void broadcast_shapes(lua_State *L, const char *fn, const ltensor *a, const ltensor *b, int *nd,
                             int64_t *shape)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int d = 0; d < n; d++) {
        int da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t x = da >= 0 ? a->shape[da] : 1, y = db >= 0 ? b->shape[db] : 1;
        if (x != y && x != 1 && y != 1) {
            const char *sa = ltensor_tshape(L, a), *sb = ltensor_tshape(L, b);
            luaL_error(L, "%s: shapes %s and %s cannot be broadcast together (%I vs %I at dimension %d of the "
                          "result)", fn, sa, sb, (lua_Integer)x, (lua_Integer)y, d);
        }
        shape[d] = x == 1 ? y : x;
    }
    *nd = n;
}

/* Pushes a new tensor of dtype dt: op applied to a (same shape). */
static ltensor *unary_new(lua_State *L, const ltensor *a, kb_dtype dt, ew_op op)
{
    ltensor *out = ltensor_new(L, dt, a->ndim, a->shape, false);
    if (op == EW_COPY && dt == a->dtype) {
        memcpy(out->data, a->data, nbytes_of(a));
        return out;
    }
    operand o;
    op_tensor(&o, a, a->ndim);
    ew e = {.op = op};
    sink k = {.out = out};
    ew_run(&e, &o, 1, a->ndim, a->shape, &k);
    return out;
}

ltensor *ltensor_push_copy(lua_State *L, const ltensor *a, kb_dtype dt) { return unary_new(L, a, dt, EW_COPY); }

void ltensor_push_transposed(lua_State *L, const ltensor *t, int d0, int d1)
{
    int64_t shape[MAXD], st[MAXD];
    memcpy(shape, t->shape, sizeof shape);
    shape[d0] = t->shape[d1];
    shape[d1] = t->shape[d0];
    ltensor_strides(t->ndim, t->shape, st);
    ltensor *out = ltensor_new(L, t->dtype, t->ndim, shape, false);
    operand o;
    op_tensor(&o, t, t->ndim);
    o.stride[d0] = st[d1];
    o.stride[d1] = st[d0];
    ew e = {.op = EW_COPY};
    sink k = {.out = out};
    ew_run(&e, &o, 1, t->ndim, shape, &k);
}

/* dst = src broadcast to dst's shape (dtype converted). */
static void copy_into(lua_State *L, const char *fn, const ltensor *dst, const ltensor *src)
{
    bool ok = src->ndim <= dst->ndim;
    for (int d = 0; ok && d < src->ndim; d++) {
        int64_t s = src->shape[d], t = dst->shape[d + dst->ndim - src->ndim];
        ok = s == t || s == 1;
    }
    if (!ok) {
        const char *ss = ltensor_tshape(L, src), *ds = ltensor_tshape(L, dst);
        luaL_error(L, "%s: a tensor of shape %s cannot be copied into one of shape %s", fn, ss, ds);
    }
    if (src->dtype == dst->dtype && same_shape(src, dst)) {
        memmove(dst->data, src->data, nbytes_of(src));
        return;
    }
    operand o;
    op_tensor(&o, src, dst->ndim);
    ew e = {.op = EW_COPY};
    sink k = {.out = dst};
    ew_run(&e, &o, 1, dst->ndim, dst->shape, &k);
}

/* dst = value at vidx: a number or boolean fills, a tensor is copied. */
void ltensor_assign(lua_State *L, const char *fn, const ltensor *dst, int vidx)
{
    double v;
    if (ltensor_to_scalar(L, vidx, &v)) {
        ltensor_fill(dst, v);
        return;
    }
    const ltensor *src = ltensor_test(L, vidx);
    if (!src)
        luaL_error(L, "%s: cannot assign a %s to a tensor (expected a number, a boolean or a tensor)", fn,
                   luaL_typename(L, vidx));
    copy_into(L, fn, dst, src);
}

/* ==== dtype promotion (torch's categories: bool < integer < floating) ==== */

static int category(kb_dtype t) { return t == KB_BOOL ? 0 : kb_dtype_is_float(t) ? 2 : 1; }

kb_dtype ltensor_promote(kb_dtype a, kb_dtype b)
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

/* A Lua number next to a tensor of dtype t: it only promotes the category. */
static kb_dtype promote_scalar(kb_dtype t, lua_State *L, int idx)
{
    int cs = lua_isinteger(L, idx) ? 1 : 2;
    if (cs <= category(t))
        return t;
    return cs == 2 ? KB_F32 : KB_I32;
}

/* ==== elementwise math ==== */

static const ltensor *tensor_or_number(lua_State *L, int idx, const char *fn, double *v)
{
    const ltensor *t = ltensor_test(L, idx);
    if (t)
        return t;
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: argument %d must be a tensor or a number, got %s", fn, idx, luaL_typename(L, idx));
    *v = lua_tonumber(L, idx);
    return NULL;
}

static int binary(lua_State *L, ew_op op, const char *fn)
{
    double va = 0, vb = 0;
    const ltensor *a = tensor_or_number(L, 1, fn, &va), *b = tensor_or_number(L, 2, fn, &vb);
    if (!a && !b)
        return luaL_error(L, "%s: at least one argument must be a tensor", fn);
    kb_dtype dt = a && b ? ltensor_promote(a->dtype, b->dtype) : a ? promote_scalar(a->dtype, L, 2)
                                                           : promote_scalar(b->dtype, L, 1);
    if (op == EW_DIV && !kb_dtype_is_float(dt)) /* true division */
        dt = KB_F32;
    int nd;
    int64_t shape[MAXD];
    if (a && b) {
        broadcast_shapes(L, fn, a, b, &nd, shape);
    } else {
        const ltensor *t = a ? a : b;
        nd = t->ndim;
        memcpy(shape, t->shape, sizeof shape);
    }
    ltensor *out = ltensor_new(L, dt, nd, shape, false);
    operand ops[2];
    if (a)
        op_tensor(&ops[0], a, nd);
    else
        op_scalar(&ops[0], va);
    if (b)
        op_tensor(&ops[1], b, nd);
    else
        op_scalar(&ops[1], vb);
    ew e = {.op = op};
    sink k = {.out = out};
    ew_run(&e, ops, 2, nd, shape, &k);
    return 1;
}

static int l_add(lua_State *L) { return binary(L, EW_ADD, "add"); }
static int l_sub(lua_State *L) { return binary(L, EW_SUB, "sub"); }
static int l_mul(lua_State *L) { return binary(L, EW_MUL, "mul"); }
static int l_div(lua_State *L) { return binary(L, EW_DIV, "div"); }

/* exp, log, sqrt, sigmoid and tanh give f32 for integer inputs. */
static int unary(lua_State *L, ew_op op, const char *fn)
{
    const ltensor *a = ltensor_check(L, 1);
    kb_dtype dt = a->dtype;
    if (op != EW_NEG && op != EW_ABS && op != EW_RELU && !kb_dtype_is_float(dt))
        dt = KB_F32;
    if (op == EW_NEG && dt == KB_BOOL)
        return luaL_error(L, "%s: negation of a bool tensor is not supported", fn);
    unary_new(L, a, dt, op);
    return 1;
}

static int l_neg(lua_State *L) { return unary(L, EW_NEG, "neg"); }
static int l_exp(lua_State *L) { return unary(L, EW_EXP, "exp"); }
static int l_log(lua_State *L) { return unary(L, EW_LOG, "log"); }
static int l_sqrt(lua_State *L) { return unary(L, EW_SQRT, "sqrt"); }
static int l_abs(lua_State *L) { return unary(L, EW_ABS, "abs"); }
static int l_relu(lua_State *L) { return unary(L, EW_RELU, "relu"); }
static int l_sigmoid(lua_State *L) { return unary(L, EW_SIGMOID, "sigmoid"); }
static int l_tanh(lua_State *L) { return unary(L, EW_TANH, "tanh"); }

/* ==== comparisons ==== */

/* (a, b[, rtol[, atol[, equal_nan]]]) or (a, b, {rtol=, atol=, equal_nan=}) */
static void close_args(lua_State *L, const char *fn, ew *e)
{
    e->op = EW_ISCLOSE;
    e->rtol = 1e-5;
    e->atol = 1e-8;
    e->equal_nan = false;
    if (lua_type(L, 3) == LUA_TTABLE) {
        if (lua_getfield(L, 3, "rtol") != LUA_TNIL)
            e->rtol = check_num(L, -1, fn, "rtol");
        if (lua_getfield(L, 3, "atol") != LUA_TNIL)
            e->atol = check_num(L, -1, fn, "atol");
        lua_getfield(L, 3, "equal_nan");
        e->equal_nan = lua_toboolean(L, -1);
        lua_pop(L, 3);
        return;
    }
    if (!lua_isnoneornil(L, 3))
        e->rtol = check_num(L, 3, fn, "rtol");
    if (!lua_isnoneornil(L, 4))
        e->atol = check_num(L, 4, fn, "atol");
    e->equal_nan = lua_toboolean(L, 5);
}

/* Runs a two-tensor comparison over the broadcast shape; out NULL: all-true check. */
static bool compare(lua_State *L, const char *fn, const ew *e, const ltensor *a, const ltensor *b, bool make)
{
    int nd;
    int64_t shape[MAXD];
    broadcast_shapes(L, fn, a, b, &nd, shape);
    operand ops[2];
    op_tensor(&ops[0], a, nd);
    op_tensor(&ops[1], b, nd);
    sink k = {.out = make ? ltensor_new(L, KB_BOOL, nd, shape, false) : NULL, .all = true};
    ew_run(e, ops, 2, nd, shape, &k);
    return k.all;
}

static int l_allclose(lua_State *L)
{
    const ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    ew e;
    close_args(L, "allclose", &e);
    lua_pushboolean(L, compare(L, "allclose", &e, a, b, false));
    return 1;
}

static int l_isclose(lua_State *L)
{
    const ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    ew e;
    close_args(L, "isclose", &e);
    compare(L, "isclose", &e, a, b, true);
    return 1;
}

/* equal(a, b): same shape and equal values (NaN is unequal; dtypes may differ). */
static int l_equal(lua_State *L)
{
    const ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    ew e = {.op = EW_EQ};
    lua_pushboolean(L, same_shape(a, b) && compare(L, "equal", &e, a, b, false));
    return 1;
}

/* ==== matmul ==== */

/* matmul(a, b) with torch's rules: 1-D operands become a row (a) or a
 * column (b) and that dimension is dropped from the result; leading (batch)
 * dimensions broadcast. Accumulates in double over k in order; the result
 * has the inputs' dtype. */
static int l_matmul(lua_State *L)
{
    const ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    if (a->ndim == 0 || b->ndim == 0) {
        const char *sa = ltensor_tshape(L, a), *sb = ltensor_tshape(L, b);
        return luaL_error(L, "matmul: both arguments need at least 1 dimension, got shapes %s and %s", sa, sb);
    }
    if (a->dtype != b->dtype)
        return luaL_error(L, "matmul: dtypes %s and %s differ (convert one with :to())", kb_dtype_name(a->dtype),
                          kb_dtype_name(b->dtype));
    int64_t m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2], n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (k != kb) {
        const char *sa = ltensor_tshape(L, a), *sb = ltensor_tshape(L, b);
        return luaL_error(L, "matmul: shapes %s and %s cannot be multiplied (%I != %I)", sa, sb, (lua_Integer)k,
                          (lua_Integer)kb);
    }
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0, nbat = na > nb ? na : nb;
    int64_t bshape[MAXD], sa[MAXD], sb[MAXD], ast[MAXD], bst[MAXD];
    ltensor_strides(na, a->shape, ast); /* in matrices */
    ltensor_strides(nb, b->shape, bst);
    for (int d = 0; d < nbat; d++) {
        int da = d - (nbat - na), db = d - (nbat - nb);
        int64_t x = da >= 0 ? a->shape[da] : 1, y = db >= 0 ? b->shape[db] : 1;
        if (x != y && x != 1 && y != 1) {
            const char *s1 = ltensor_tshape(L, a), *s2 = ltensor_tshape(L, b);
            return luaL_error(L, "matmul: the batch dimensions of shapes %s and %s cannot be broadcast together", s1,
                              s2);
        }
        bshape[d] = x == 1 ? y : x;
        sa[d] = da >= 0 && x != 1 ? ast[da] : 0;
        sb[d] = db >= 0 && y != 1 ? bst[db] : 0;
    }
    int ond = nbat;
    int64_t oshape[MAXD];
    memcpy(oshape, bshape, (size_t)nbat * sizeof *bshape);
    if (a->ndim > 1)
        oshape[ond++] = m;
    if (b->ndim > 1)
        oshape[ond++] = n;
    ltensor_checked_numel(L, KB_F32, 2, (int64_t[]){k, n}); /* the scratch below is k*n + k + n doubles */
    double *bd = lua_newuserdatauv(L, (size_t)(k * n + k + n) * sizeof(double), 0);
    double *arow = bd + k * n, *crow = arow + k;
    ltensor *out = ltensor_new(L, a->dtype, ond, oshape, false);
    int64_t nbatch = ltensor_prod(bshape, 0, nbat), idx[MAXD] = {0}, offa = 0, offb = 0, loaded = -1;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        if (offb != loaded) { /* b's matrix, once per distinct matrix */
            ltensor_load_run(b, offb * k * n, 1, bd, k * n);
            loaded = offb;
        }
        for (int64_t i = 0; i < m; i++) {
            ltensor_load_run(a, (offa * m + i) * k, 1, arow, k);
            for (int64_t j = 0; j < n; j++)
                crow[j] = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = arow[p];
                const double *brow = bd + p * n;
                for (int64_t j = 0; j < n; j++)
                    crow[j] += x * brow[j];
            }
            ltensor_store_run(out, (bi * m + i) * n, 1, crow, n);
        }
        for (int d = nbat - 1; d >= 0; d--) {
            offa += sa[d];
            offb += sb[d];
            if (++idx[d] < bshape[d])
                break;
            offa -= sa[d] * bshape[d];
            offb -= sb[d] * bshape[d];
            idx[d] = 0;
        }
    }
    return 1;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_math_funcs[] = {
    {"add", l_add},         {"sub", l_sub},         {"mul", l_mul},           {"div", l_div},
    {"neg", l_neg},         {"exp", l_exp},         {"log", l_log},           {"sqrt", l_sqrt},
    {"abs", l_abs},         {"relu", l_relu},       {"sigmoid", l_sigmoid},   {"tanh", l_tanh},
    {"matmul", l_matmul},   {"allclose", l_allclose}, {"isclose", l_isclose}, {"equal", l_equal},
    {NULL, NULL}};

const luaL_Reg ltensor_math_meta[] = {{"__add", l_add}, {"__sub", l_sub}, {"__mul", l_mul},
                                      {"__div", l_div}, {"__unm", l_neg}, {NULL, NULL}};
