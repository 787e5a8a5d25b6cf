/* `kernbench.tensor_c`: C-backed host tensors for the torch-like runtime.
 *
 * A tensor that owns its data is one userdata block: the ltensor header,
 * then the elements at DATA_OFFSET (so Lua's collector sees the real size
 * and frees header and bytes together). A view (t[i], reshape, view,
 * flatten) is a header-only userdata whose data points into its owner's
 * block; the owner is the view's user value. Every other operation makes a
 * new tensor.
 *
 * Arithmetic runs in double over chunks of RUN elements and rounds once per
 * element when the result is stored in the result's dtype (kb_dtype_store).
 * Indices and dimensions are 0-based; negative ones count from the end.
 * Reference: docs/torch.md, "Host tensors". */
#include "lua/ltensor.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TENSOR_MT "kernbench.tensor"
#define GEN_MT "kernbench.generator"
#define MAXD LTENSOR_MAXDIM
/* Elements start 16-byte aligned after the header. */
#define DATA_OFFSET ((sizeof(ltensor) + 15) & ~(size_t)15)
/* Shapes beyond 64 TiB are refused before asking the allocator. */
#define MAX_BYTES (INT64_C(1) << 46)
/* Elements per chunk of the double-precision loops (a few chunks live on the C stack). */
#define RUN 512
/* torch's default print options. */
#define PRINT_THRESHOLD 1000
#define PRINT_EDGE 3
#define PRINT_LINEWIDTH 80

/* ==== basics ==== */

ltensor *ltensor_test(lua_State *L, int idx) { return luaL_testudata(L, idx, TENSOR_MT); }
ltensor *ltensor_check(lua_State *L, int idx) { return luaL_checkudata(L, idx, TENSOR_MT); }

static int64_t esize(kb_dtype t) { return (int64_t)kb_dtype_size(t); }
static char *eptr(const ltensor *t, int64_t off) { return (char *)t->data + off * esize(t->dtype); }
static size_t nbytes_of(const ltensor *t) { return (size_t)t->numel * kb_dtype_size(t->dtype); }

static int64_t prod(const int64_t *shape, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= shape[d];
    return n;
}

/* Row-major element strides of a contiguous tensor. */
static void strides_of(int ndim, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

static bool same_shape(const ltensor *a, const ltensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* Pushes "[2, 3]" and returns it (for messages). */
static const char *shape_str(lua_State *L, int ndim, const int64_t *shape)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '[');
    for (int d = 0; d < ndim; d++) {
        char num[32];
        snprintf(num, sizeof num, d ? ", %" PRId64 : "%" PRId64, shape[d]);
        luaL_addstring(&b, num);
    }
    luaL_addchar(&b, ']');
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

static const char *tshape(lua_State *L, const ltensor *t) { return shape_str(L, t->ndim, t->shape); }

static const char *torch_name(kb_dtype t)
{
    static const char *const n[KB_NDTYPES] = {"float32", "float16", "bfloat16", "int32",
                                              "int16",   "int8",    "uint8",    "bool"};
    return n[t];
}

/* ==== argument helpers ==== */

static lua_Integer check_int(lua_State *L, int idx, const char *fn, const char *what)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "%s: %s must be an integer, got %s", fn, what, luaL_tolstring(L, idx, NULL));
    return v;
}

static double check_num(lua_State *L, int idx, const char *fn, const char *what)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: %s must be a number, got %s", fn, what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* A number or a boolean (stored as 1 / 0). */
static bool to_scalar(lua_State *L, int idx, double *v)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        *v = lua_tonumber(L, idx);
    else if (lua_type(L, idx) == LUA_TBOOLEAN)
        *v = lua_toboolean(L, idx);
    else
        return false;
    return true;
}

static kb_dtype parse_dtype(lua_State *L, int idx, const char *fn)
{
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_error(L, "%s: dtype must be a name such as \"f16\", got %s", fn, luaL_typename(L, idx));
    const char *s = lua_tostring(L, idx);
    kb_dtype t;
    if (!kb_dtype_parse(strncmp(s, "torch.", 6) == 0 ? s + 6 : s, &t))
        luaL_error(L, "%s: unknown dtype '%s' (expected f32, f16, bf16, i32, i16, i8, u8 or bool, or a torch "
                      "name such as float16)", fn, s);
    return t;
}

/* Options at idx: none, nil, a dtype name or a table {dtype = name}. */
static kb_dtype opt_dtype(lua_State *L, int idx, const char *fn, kb_dtype def)
{
    switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return def;
    case LUA_TSTRING: return parse_dtype(L, idx, fn);
    case LUA_TTABLE:
        if (lua_getfield(L, idx, "dtype") != LUA_TNIL)
            def = parse_dtype(L, -1, fn);
        lua_pop(L, 1);
        return def;
    default:
        luaL_error(L, "%s: options must be a table such as {dtype = \"f16\"}, got %s", fn, luaL_typename(L, idx));
        return def;
    }
}

static int64_t shape_entry(lua_State *L, int idx, const char *fn, int d, bool allow_infer)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok || v < (allow_infer ? -1 : 0))
        luaL_error(L, "%s: size %d of the shape must be a non-negative integer%s, got %s", fn, d,
                   allow_infer ? " (or -1)" : "", luaL_tolstring(L, idx, NULL));
    return v;
}

/* A shape given as a table at idx, or as integer arguments from idx on.
 * Returns the index of the first argument after it. */
static int read_shape_ex(lua_State *L, int idx, const char *fn, int *ndim, int64_t *shape, bool allow_infer)
{
    if (lua_type(L, idx) == LUA_TTABLE) {
        if (lua_getfield(L, idx, "dtype") != LUA_TNIL)
            luaL_error(L, "%s: the shape comes first (a table of sizes, or sizes as arguments), got an options "
                          "table", fn);
        lua_pop(L, 1);
        lua_Unsigned n = lua_rawlen(L, idx);
        if (n > MAXD)
            luaL_error(L, "%s: the shape has %I sizes (at most %d)", fn, (lua_Integer)n, MAXD);
        for (int d = 0; d < (int)n; d++) {
            lua_rawgeti(L, idx, d + 1);
            shape[d] = shape_entry(L, -1, fn, d, allow_infer);
            lua_pop(L, 1);
        }
        *ndim = (int)n;
        return idx + 1;
    }
    int n = 0;
    while (lua_type(L, idx + n) == LUA_TNUMBER) {
        if (n == MAXD)
            luaL_error(L, "%s: the shape has more than %d sizes", fn, MAXD);
        shape[n] = shape_entry(L, idx + n, fn, n, allow_infer);
        n++;
    }
    if (n == 0)
        luaL_error(L, "%s: expected a shape (a table of sizes, or sizes as arguments), got %s", fn,
                   luaL_typename(L, idx));
    *ndim = n;
    return idx + n;
}

static int read_shape(lua_State *L, int idx, const char *fn, int *ndim, int64_t *shape)
{
    return read_shape_ex(L, idx, fn, ndim, shape, false);
}

static int64_t check_index(lua_State *L, const char *fn, lua_Integer i, int dim, int64_t size)
{
    if (i < -size || i >= size)
        luaL_error(L, "%s: index %I is out of bounds for dimension %d with size %I", fn, i, dim, (lua_Integer)size);
    return i < 0 ? i + size : i;
}

static int check_dim(lua_State *L, const char *fn, lua_Integer d, int ndim)
{
    if (d < -ndim || d >= ndim) {
        if (ndim == 0)
            luaL_error(L, "%s: dim %I is out of range for a 0-d tensor", fn, d);
        luaL_error(L, "%s: dim %I is out of range for a %d-d tensor (expected %d .. %d)", fn, d, ndim, -ndim,
                   ndim - 1);
    }
    return (int)(d < 0 ? d + ndim : d);
}

/* ==== creation ==== */

/* The number of elements of a shape, or an error if it is too large. */
static int64_t checked_numel(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > MAXD)
        luaL_error(L, "tensor: %d dimensions (at most %d)", ndim, MAXD);
    int64_t n = 1, es = esize(dt);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            luaL_error(L, "tensor: negative size in shape %s", shape_str(L, ndim, shape));
        if (shape[d] > 0 && n > MAX_BYTES / es / shape[d])
            luaL_error(L, "tensor: shape %s of %s is too large (more than %I bytes)", shape_str(L, ndim, shape),
                       kb_dtype_name(dt), (lua_Integer)MAX_BYTES);
        n *= shape[d];
    }
    return n;
}

static ltensor *new_tensor(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape, bool zero)
{
    int64_t n = checked_numel(L, dt, ndim, shape);
    size_t nbytes = (size_t)(n * esize(dt));
    char *block = lua_newuserdatauv(L, DATA_OFFSET + nbytes, 1);
    ltensor *t = (ltensor *)(void *)block;
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim > 0)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = n;
    t->data = block + DATA_OFFSET;
    if (zero)
        memset(t->data, 0, nbytes);
    luaL_setmetatable(L, TENSOR_MT);
    return t;
}

ltensor *ltensor_push_new(lua_State *L, kb_dtype dtype, int ndim, const int64_t *shape)
{
    return new_tensor(L, dtype, ndim, shape, true);
}

/* Pushes a view of the tensor at src_idx: ndim/shape starting at element off. */
static ltensor *push_view(lua_State *L, int src_idx, const ltensor *src, int64_t off, int ndim, const int64_t *shape)
{
    src_idx = lua_absindex(L, src_idx);
    ltensor *v = lua_newuserdatauv(L, sizeof *v, 1);
    memset(v, 0, sizeof *v);
    v->dtype = src->dtype;
    v->ndim = ndim;
    if (ndim > 0)
        memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
    v->numel = prod(shape, 0, ndim);
    v->data = eptr(src, off);
    luaL_setmetatable(L, TENSOR_MT);
    if (lua_getiuservalue(L, src_idx, 1) == LUA_TNIL) { /* src owns its data */
        lua_pop(L, 1);
        lua_pushvalue(L, src_idx);
    }
    lua_setiuservalue(L, -2, 1);
    return v;
}

/* A header (not a Lua value) describing a region of t. */
static ltensor sub_of(const ltensor *t, int64_t off, int ndim, const int64_t *shape)
{
    ltensor s;
    memset(&s, 0, sizeof s);
    s.dtype = t->dtype;
    s.ndim = ndim;
    if (ndim > 0)
        memcpy(s.shape, shape, (size_t)ndim * sizeof *shape);
    s.numel = prod(shape, 0, ndim);
    s.data = eptr(t, off);
    return s;
}

static void fill(const ltensor *t, double v)
{
    size_t es = kb_dtype_size(t->dtype), n = nbytes_of(t);
    if (n == 0)
        return;
    kb_dtype_store(t->dtype, t->data, v);
    for (size_t done = es; done < n;) { /* doubling copies of the first element */
        size_t c = done < n - done ? done : n - done;
        memcpy((char *)t->data + done, t->data, c);
        done += c;
    }
}

/* ==== element runs: loads to and stores from double ==== */

static void load_run(const ltensor *t, int64_t off, int64_t stride, double *dst, int64_t n)
{
    const char *p = eptr(t, off);
    if (stride == 0) {
        double v = kb_dtype_load(t->dtype, p);
        for (int64_t i = 0; i < n; i++)
            dst[i] = v;
        return;
    }
    switch (t->dtype) {
    case KB_F32: {
        const float *f = (const float *)(const void *)p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = f[i * stride];
        break;
    }
    case KB_F16: {
        const uint16_t *h = (const uint16_t *)(const void *)p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_f16_to_f32(h[i * stride]);
        break;
    }
    case KB_BF16: {
        const uint16_t *h = (const uint16_t *)(const void *)p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_bf16_to_f32(h[i * stride]);
        break;
    }
    default: {
        int64_t step = stride * esize(t->dtype);
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_dtype_load(t->dtype, p + i * step);
    }
    }
}

/* The same rounding as kb_dtype_store, with the type switch out of the loop. */
static void store_run(const ltensor *t, int64_t off, int64_t stride, const double *src, int64_t n)
{
    char *p = eptr(t, off);
    switch (t->dtype) {
    case KB_F32: {
        float *f = (float *)(void *)p;
        for (int64_t i = 0; i < n; i++)
            f[i * stride] = (float)src[i];
        break;
    }
    case KB_F16: {
        uint16_t *h = (uint16_t *)(void *)p;
        for (int64_t i = 0; i < n; i++)
            h[i * stride] = kb_f32_to_f16((float)src[i]);
        break;
    }
    case KB_BF16: {
        uint16_t *h = (uint16_t *)(void *)p;
        for (int64_t i = 0; i < n; i++)
            h[i * stride] = kb_f32_to_bf16((float)src[i]);
        break;
    }
    default: {
        int64_t step = stride * esize(t->dtype);
        for (int64_t i = 0; i < n; i++)
            kb_dtype_store(t->dtype, p + i * step, src[i]);
    }
    }
}

static void push_elem(lua_State *L, const ltensor *t, int64_t off)
{
    double v = kb_dtype_load(t->dtype, eptr(t, off));
    if (t->dtype == KB_BOOL)
        lua_pushboolean(L, v != 0);
    else if (kb_dtype_is_float(t->dtype))
        lua_pushnumber(L, v);
    else
        lua_pushinteger(L, (lua_Integer)v);
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
    strides_of(t->ndim, t->shape, st);
    int lead = ndim - t->ndim;
    for (int d = lead < 0 ? 0 : lead; d < ndim; d++)
        o->stride[d] = t->shape[d - lead] == 1 ? 0 : st[d - lead];
}

static void load_operand(const operand *o, int64_t off, int64_t stride, double *dst, int64_t n)
{
    if (o->t) {
        load_run(o->t, off, stride, dst, n);
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
        store_run(k->out, off, 1, v, n);
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
    int64_t total = prod(shape, 0, ndim);
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
            const char *sa = tshape(L, a), *sb = tshape(L, b);
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
    ltensor *out = new_tensor(L, dt, a->ndim, a->shape, false);
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

/* dst = src broadcast to dst's shape (dtype converted). */
static void copy_into(lua_State *L, const char *fn, const ltensor *dst, const ltensor *src)
{
    bool ok = src->ndim <= dst->ndim;
    for (int d = 0; ok && d < src->ndim; d++) {
        int64_t s = src->shape[d], t = dst->shape[d + dst->ndim - src->ndim];
        ok = s == t || s == 1;
    }
    if (!ok) {
        const char *ss = tshape(L, src), *ds = tshape(L, dst);
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
static void assign(lua_State *L, const char *fn, const ltensor *dst, int vidx)
{
    double v;
    if (to_scalar(L, vidx, &v)) {
        fill(dst, v);
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

static kb_dtype promote(kb_dtype a, kb_dtype b)
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

/* ==== constructors ==== */

/* Shape, then options: (shape..., opts) -> tensor. */
static ltensor *ctor(lua_State *L, const char *fn, bool zero)
{
    int nd;
    int64_t shape[MAXD];
    int next = read_shape(L, 1, fn, &nd, shape);
    kb_dtype dt = opt_dtype(L, next, fn, KB_F32);
    return new_tensor(L, dt, nd, shape, zero);
}

static int l_empty(lua_State *L)
{
    ctor(L, "empty", true); /* zeroed: runs stay deterministic */
    return 1;
}

static int l_zeros(lua_State *L)
{
    ctor(L, "zeros", true);
    return 1;
}

static int l_ones(lua_State *L)
{
    fill(ctor(L, "ones", false), 1.0);
    return 1;
}

static int l_full(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TTABLE)
        return luaL_error(L, "full: the shape must be a table of sizes, got %s", luaL_typename(L, 1));
    int nd;
    int64_t shape[MAXD];
    read_shape(L, 1, "full", &nd, shape);
    double v;
    if (!to_scalar(L, 2, &v))
        return luaL_error(L, "full: the fill value must be a number or a boolean, got %s", luaL_typename(L, 2));
    kb_dtype dt = opt_dtype(L, 3, "full", lua_type(L, 2) == LUA_TBOOLEAN ? KB_BOOL : KB_F32);
    fill(new_tensor(L, dt, nd, shape, false), v);
    return 1;
}

static int like(lua_State *L, const char *fn, double v)
{
    const ltensor *t = ltensor_check(L, 1);
    kb_dtype dt = opt_dtype(L, 2, fn, t->dtype);
    ltensor *r = new_tensor(L, dt, t->ndim, t->shape, true);
    if (v != 0)
        fill(r, v);
    return 1;
}

static int l_zeros_like(lua_State *L) { return like(L, "zeros_like", 0); }
static int l_ones_like(lua_State *L) { return like(L, "ones_like", 1); }

/* arange(stop), arange(start, stop[, step]); options last. Integer
 * arguments give i32 (torch gives int64), any float gives f32. */
static int l_arange(lua_State *L)
{
    int nargs = 0;
    while (nargs < 3 && lua_type(L, nargs + 1) == LUA_TNUMBER)
        nargs++;
    if (nargs == 0)
        return luaL_error(L, "arange: expected arange(stop) or arange(start, stop[, step]), got %s",
                          luaL_typename(L, 1));
    double start = 0, stop, step = 1;
    if (nargs == 1) {
        stop = lua_tonumber(L, 1);
    } else {
        start = lua_tonumber(L, 1);
        stop = lua_tonumber(L, 2);
        if (nargs == 3)
            step = lua_tonumber(L, 3);
    }
    bool ints = true;
    for (int i = 1; i <= nargs; i++)
        ints = ints && lua_isinteger(L, i);
    kb_dtype dt = opt_dtype(L, nargs + 1, "arange", ints ? KB_I32 : KB_F32);
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
        return luaL_error(L, "arange: start, stop and step must be finite");
    if (step == 0)
        return luaL_error(L, "arange: step must be nonzero");
    if ((step > 0 && stop < start) || (step < 0 && stop > start))
        return luaL_error(L, "arange: the bounds %f .. %f are inconsistent with the sign of step %f", start, stop,
                          step);
    double count = ceil((stop - start) / step);
    if (count > 9007199254740992.0) /* 2^53 */
        return luaL_error(L, "arange: %f elements is too many", count);
    int64_t n = (int64_t)count;
    ltensor *t = new_tensor(L, dt, 1, &n, false);
    double buf[RUN];
    for (int64_t s = 0; s < n; s += RUN) {
        int64_t m = n - s < RUN ? n - s : RUN;
        for (int64_t i = 0; i < m; i++)
            buf[i] = start + (double)(s + i) * step;
        store_run(t, s, 1, buf, m);
    }
    return 1;
}

/* ---- tensor(nested table) ---- */

typedef struct nest {
    int ndim;
    int64_t shape[MAXD];
    lua_Integer path[MAXD]; /* 1-based Lua positions of the element being read */
    bool any_number;
} nest;

/* Pushes "data[2][1]" for the first `depth` positions of the current path,
 * or of the first element (all 1s) when `first`. */
static const char *nest_path(lua_State *L, const nest *ns, int depth, bool first)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "data");
    for (int d = 0; d < depth; d++) {
        char num[32];
        snprintf(num, sizeof num, "[%lld]", first ? 1LL : (long long)ns->path[d]);
        luaL_addstring(&b, num);
    }
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* Checks the table on top of the stack (nesting depth dim) against the shape
 * taken from the first elements. */
static void nest_scan(lua_State *L, nest *ns, int dim)
{
    lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
    if (len != ns->shape[dim]) {
        const char *here = nest_path(L, ns, dim, false), *first = nest_path(L, ns, dim, true);
        luaL_error(L, "tensor: ragged nested table at dimension %d: %s has length %I but %s has length %I", dim,
                   here, len, first, (lua_Integer)ns->shape[dim]);
    }
    luaL_checkstack(L, 4, "tensor: nesting too deep");
    for (lua_Integer i = 1; i <= len; i++) {
        ns->path[dim] = i;
        int ty = lua_rawgeti(L, -1, i);
        if (dim + 1 < ns->ndim) {
            if (ty != LUA_TTABLE) {
                const char *here = nest_path(L, ns, dim + 1, false), *first = nest_path(L, ns, dim + 1, true);
                luaL_error(L, "tensor: ragged nested table at dimension %d: %s is a %s but %s is a table", dim + 1,
                           here, lua_typename(L, ty), first);
            }
            nest_scan(L, ns, dim + 1);
        } else if (ty == LUA_TTABLE) {
            const char *here = nest_path(L, ns, dim + 1, false), *first = nest_path(L, ns, dim + 1, true);
            luaL_error(L, "tensor: ragged nested table at dimension %d: %s is a table but %s is not", dim + 1, here,
                       first);
        } else if (ty == LUA_TNUMBER) {
            ns->any_number = true;
        } else if (ty != LUA_TBOOLEAN) {
            const char *here = nest_path(L, ns, dim + 1, false);
            luaL_error(L, "tensor: %s is a %s; elements must be numbers or booleans", here, lua_typename(L, ty));
        }
        lua_pop(L, 1);
    }
}

static void nest_fill(lua_State *L, const nest *ns, int dim, const ltensor *t, int64_t *off)
{
    for (lua_Integer i = 1; i <= ns->shape[dim]; i++) {
        lua_rawgeti(L, -1, i);
        if (dim + 1 < ns->ndim) {
            nest_fill(L, ns, dim + 1, t, off);
        } else {
            double v = 0;
            to_scalar(L, -1, &v); /* checked by nest_scan */
            kb_dtype_store(t->dtype, eptr(t, (*off)++), v);
        }
        lua_pop(L, 1);
    }
}

/* tensor(data[, opts]): data is a number, a boolean, a tensor (copied) or a
 * nested table. Default dtype: bool when every element is a boolean, else f32. */
static int l_tensor(lua_State *L)
{
    double v;
    const ltensor *src = ltensor_test(L, 1);
    if (src) {
        unary_new(L, src, opt_dtype(L, 2, "tensor", src->dtype), EW_COPY);
        return 1;
    }
    if (to_scalar(L, 1, &v)) {
        kb_dtype dt = opt_dtype(L, 2, "tensor", lua_type(L, 1) == LUA_TBOOLEAN ? KB_BOOL : KB_F32);
        kb_dtype_store(dt, new_tensor(L, dt, 0, NULL, false)->data, v);
        return 1;
    }
    if (lua_type(L, 1) != LUA_TTABLE)
        return luaL_error(L, "tensor: data must be a number, a boolean, a tensor or a nested table, got %s",
                          luaL_typename(L, 1));
    nest ns;
    memset(&ns, 0, sizeof ns);
    int base = lua_gettop(L);
    lua_pushvalue(L, 1);
    while (lua_type(L, -1) == LUA_TTABLE) { /* the shape, from the first elements */
        if (ns.ndim == MAXD)
            return luaL_error(L, "tensor: more than %d levels of nesting", MAXD);
        int64_t len = (int64_t)lua_rawlen(L, -1);
        ns.shape[ns.ndim++] = len;
        if (len == 0)
            break;
        luaL_checkstack(L, 1, NULL);
        lua_rawgeti(L, -1, 1);
    }
    lua_settop(L, base);
    lua_pushvalue(L, 1);
    nest_scan(L, &ns, 0);
    kb_dtype dt = opt_dtype(L, 2, "tensor", ns.any_number || prod(ns.shape, 0, ns.ndim) == 0 ? KB_F32 : KB_BOOL);
    ltensor *t = new_tensor(L, dt, ns.ndim, ns.shape, false);
    lua_pushvalue(L, 1);
    int64_t off = 0;
    if (t->numel > 0)
        nest_fill(L, &ns, 0, t, &off);
    lua_pop(L, 1);
    return 1;
}

static int l_from_bytes(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int nd;
    int64_t shape[MAXD];
    int next = read_shape(L, 2, "from_bytes", &nd, shape);
    kb_dtype dt = opt_dtype(L, next, "from_bytes", KB_F32);
    int64_t need = checked_numel(L, dt, nd, shape) * esize(dt);
    if ((int64_t)len != need)
        return luaL_error(L, "from_bytes: %I bytes given, a %s tensor of shape %s holds %I", (lua_Integer)len,
                          kb_dtype_name(dt), shape_str(L, nd, shape), (lua_Integer)need);
    ltensor *t = new_tensor(L, dt, nd, shape, false);
    memcpy(t->data, s, len);
    return 1;
}

/* ==== random numbers ====
 * xoshiro256** (Blackman and Vigna), its 256-bit state seeded with four
 * successive outputs of splitmix64 started at the seed. */

typedef struct lgen {
    uint64_t s[4];
    uint64_t seed;
} lgen;

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro_next(uint64_t *s)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static void gen_seed(lgen *g, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        g->s[i] = z ^ (z >> 31);
    }
    g->seed = seed;
}

static lgen *check_gen(lua_State *L, int idx) { return luaL_checkudata(L, idx, GEN_MT); }

static int l_new_generator(lua_State *L)
{
    lua_Integer seed = lua_isnoneornil(L, 1) ? 0 : check_int(L, 1, "new_generator", "seed");
    lgen *g = lua_newuserdatauv(L, sizeof *g, 0);
    gen_seed(g, (uint64_t)seed);
    luaL_setmetatable(L, GEN_MT);
    return 1;
}

static int g_manual_seed(lua_State *L)
{
    gen_seed(check_gen(L, 1), (uint64_t)check_int(L, 2, "manual_seed", "seed"));
    lua_settop(L, 1);
    return 1;
}

static int g_initial_seed(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

/* The state as 32 bytes: s[0] .. s[3], each little-endian. */
static int g_get_state(lua_State *L)
{
    lgen *g = check_gen(L, 1);
    char b[32];
    for (int i = 0; i < 32; i++)
        b[i] = (char)(g->s[i / 8] >> (8 * (i % 8)));
    lua_pushlstring(L, b, sizeof b);
    return 1;
}

static int g_set_state(lua_State *L)
{
    lgen *g = check_gen(L, 1);
    size_t len;
    const unsigned char *b = (const unsigned char *)luaL_checklstring(L, 2, &len);
    if (len != 32)
        return luaL_error(L, "set_state: a state is 32 bytes, got %I", (lua_Integer)len);
    uint64_t s[4] = {0};
    for (int i = 0; i < 32; i++)
        s[i / 8] |= (uint64_t)b[i] << (8 * (i % 8));
    if (!(s[0] | s[1] | s[2] | s[3]))
        return luaL_error(L, "set_state: the all-zero state is not valid for xoshiro256**");
    memcpy(g->s, s, sizeof s);
    lua_settop(L, 1);
    return 1;
}

static int g_tostring(lua_State *L)
{
    lua_pushfstring(L, "Generator(seed=%I)", (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

/* Uniform [0, 1): one 64-bit output per element, its top bits scaled to the
 * dtype's significand (24 bits for f32, 11 for f16, 8 for bf16), so every
 * value is exact in the dtype and 1.0 never occurs. */
static void gen_uniform(lgen *g, const ltensor *t)
{
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    int64_t n = t->numel;
    if (t->dtype == KB_F32) {
        float *p = t->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(xoshiro_next(s) >> 40) * 0x1p-24f;
    } else if (t->dtype == KB_F16) {
        uint16_t tab[2048], *p = t->data;
        for (int k = 0; k < 2048; k++)
            tab[k] = kb_f32_to_f16((float)k * 0x1p-11f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[xoshiro_next(s) >> 53];
    } else {
        uint16_t tab[256], *p = t->data;
        for (int k = 0; k < 256; k++)
            tab[k] = kb_f32_to_bf16((float)k * 0x1p-8f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[xoshiro_next(s) >> 56];
    }
    memcpy(g->s, s, sizeof s);
}

/* Standard normal by Marsaglia's polar method: a pair of outputs gives
 * u, v uniform in [-1, 1) (53 bits: (x >> 11) * 2^-52 - 1); pairs with
 * q = u^2 + v^2 outside (0, 1) are rejected and the next pair is drawn;
 * otherwise elements 2j and 2j+1 are u*f and v*f with f = sqrt(-2 ln q / q),
 * rounded to the dtype. An odd count drops the last v*f. */
static void gen_normal(lgen *g, const ltensor *t)
{
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    double buf[RUN]; /* RUN is even: pairs never straddle chunks */
    for (int64_t c = 0; c < t->numel; c += RUN) {
        int64_t m = t->numel - c < RUN ? t->numel - c : RUN;
        for (int64_t i = 0; i < m; i += 2) {
            double u, v, q;
            do {
                u = (double)(xoshiro_next(s) >> 11) * 0x1p-52 - 1.0;
                v = (double)(xoshiro_next(s) >> 11) * 0x1p-52 - 1.0;
                q = u * u + v * v;
            } while (q >= 1.0 || q == 0.0);
            double f = sqrt(-2.0 * log(q) / q);
            buf[i] = u * f;
            if (i + 1 < m)
                buf[i + 1] = v * f;
        }
        store_run(t, c, 1, buf, m);
    }
    memcpy(g->s, s, sizeof s);
}

/* rand(shape..., [opts,] generator): the generator follows the shape and the
 * (optional, possibly nil) options, or is opts.generator. */
static int random_tensor(lua_State *L, bool normal)
{
    const char *fn = normal ? "randn" : "rand";
    int nd;
    int64_t shape[MAXD];
    int next = read_shape(L, 1, fn, &nd, shape);
    kb_dtype dt = KB_F32;
    lgen *g = luaL_testudata(L, next, GEN_MT);
    if (!g) {
        dt = opt_dtype(L, next, fn, KB_F32);
        g = luaL_testudata(L, next + 1, GEN_MT);
        if (!g && lua_type(L, next) == LUA_TTABLE) {
            lua_getfield(L, next, "generator");
            g = luaL_testudata(L, -1, GEN_MT);
            lua_pop(L, 1); /* still referenced by the options table */
        }
    }
    if (!g)
        return luaL_error(L, "%s: needs a generator (new_generator(seed)) after the shape and options", fn);
    if (!kb_dtype_is_float(dt))
        return luaL_error(L, "%s: dtype %s is not a floating-point type", fn, kb_dtype_name(dt));
    ltensor *t = new_tensor(L, dt, nd, shape, false);
    if (normal)
        gen_normal(g, t);
    else
        gen_uniform(g, t);
    return 1;
}

static int l_rand(lua_State *L) { return random_tensor(L, false); }
static int l_randn(lua_State *L) { return random_tensor(L, true); }

/* ==== dtypes ==== */

/* itemsize(dtype) -> bytes per element, canonical name */
static int l_itemsize(lua_State *L)
{
    kb_dtype t = parse_dtype(L, 1, "itemsize");
    lua_pushinteger(L, (lua_Integer)kb_dtype_size(t));
    lua_pushstring(L, kb_dtype_name(t));
    return 2;
}

static int l_is_tensor(lua_State *L)
{
    lua_pushboolean(L, ltensor_test(L, 1) != NULL);
    return 1;
}

/* ==== indexing ==== */

/* The element offset of t[idx[0]]...[idx[n-1]]. */
static int64_t prefix_offset(lua_State *L, const char *fn, const ltensor *t, int n, const lua_Integer *idx)
{
    if (n > t->ndim)
        luaL_error(L, "%s: too many indices (%d) for a %d-d tensor", fn, n, t->ndim);
    int64_t st[MAXD], off = 0;
    strides_of(t->ndim, t->shape, st);
    for (int d = 0; d < n; d++)
        off += check_index(L, fn, idx[d], d, t->shape[d]) * st[d];
    return off;
}

/* Reads the index key at idx (an integer or a table of integers). */
static int read_key(lua_State *L, int idx, lua_Integer *out)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = check_int(L, idx, "index", "an index");
        return 1;
    }
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n > MAXD)
        luaL_error(L, "index: %I indices (at most %d)", (lua_Integer)n, MAXD);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        out[i] = check_int(L, -1, "index", "an index");
        lua_pop(L, 1);
    }
    return (int)n;
}

/* t[key]: with as many indices as dimensions an element, else a view. */
static int index_get(lua_State *L, const ltensor *t)
{
    lua_Integer idx[MAXD];
    int n = read_key(L, 2, idx);
    int64_t off = prefix_offset(L, "index", t, n, idx);
    if (n == t->ndim)
        push_elem(L, t, off);
    else
        push_view(L, 1, t, off, t->ndim - n, t->shape + n);
    return 1;
}

static void push_shape(lua_State *L, const ltensor *t)
{
    lua_createtable(L, t->ndim, 0);
    for (int d = 0; d < t->ndim; d++) {
        lua_pushinteger(L, (lua_Integer)t->shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
}

/* __index: integers and index tables select; strings are methods or the
 * fields shape, dtype, ndim. Upvalue 1: the method table. */
static int t_index(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int ty = lua_type(L, 2);
    if (ty == LUA_TNUMBER || ty == LUA_TTABLE)
        return index_get(L, t);
    if (ty != LUA_TSTRING) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    const char *k = lua_tostring(L, 2);
    if (strcmp(k, "shape") == 0)
        push_shape(L, t);
    else if (strcmp(k, "dtype") == 0)
        lua_pushstring(L, kb_dtype_name(t->dtype));
    else if (strcmp(k, "ndim") == 0)
        lua_pushinteger(L, t->ndim);
    else
        lua_pushnil(L);
    return 1;
}

static int t_newindex(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int ty = lua_type(L, 2);
    if (ty != LUA_TNUMBER && ty != LUA_TTABLE)
        return luaL_error(L, "tensor: cannot set field '%s' (only elements and sub-tensors can be assigned)",
                          luaL_tolstring(L, 2, NULL));
    lua_Integer idx[MAXD];
    int n = read_key(L, 2, idx);
    int64_t off = prefix_offset(L, "index", t, n, idx);
    ltensor sub = sub_of(t, off, t->ndim - n, t->shape + n);
    assign(L, "index", &sub, 3);
    return 0;
}

static int t_len(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->ndim == 0)
        return luaL_error(L, "len() of a 0-d tensor");
    lua_pushinteger(L, (lua_Integer)t->shape[0]);
    return 1;
}

/* t:get(i, j, ...): one index per dimension. */
static int m_get(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int n = lua_gettop(L) - 1;
    if (n != t->ndim)
        return luaL_error(L, "get: a %d-d tensor needs %d indices, got %d", t->ndim, t->ndim, n);
    lua_Integer idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = check_int(L, d + 2, "get", "an index");
    push_elem(L, t, prefix_offset(L, "get", t, n, idx));
    return 1;
}

/* t:set(i, j, ..., v) */
static int m_set(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int top = lua_gettop(L), n = top - 2;
    if (n != t->ndim)
        return luaL_error(L, "set: a %d-d tensor needs %d indices and a value, got %d arguments", t->ndim, t->ndim,
                          top - 1);
    double v;
    if (!to_scalar(L, top, &v))
        return luaL_error(L, "set: the value must be a number or a boolean, got %s", luaL_typename(L, top));
    lua_Integer idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = check_int(L, d + 2, "set", "an index");
    kb_dtype_store(t->dtype, eptr(t, prefix_offset(L, "set", t, n, idx)), v);
    return 0;
}

static int m_item(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->numel != 1)
        return luaL_error(L, "item: a tensor of shape %s has %I elements, not 1", tshape(L, t),
                          (lua_Integer)t->numel);
    push_elem(L, t, 0);
    return 1;
}

static void push_list(lua_State *L, const ltensor *t, const int64_t *st, int dim, int64_t off)
{
    if (dim == t->ndim) {
        push_elem(L, t, off);
        return;
    }
    luaL_checkstack(L, 3, "tolist");
    int64_t n = t->shape[dim];
    lua_createtable(L, n < 0x7fffffff ? (int)n : 0, 0);
    for (int64_t i = 0; i < n; i++) {
        push_list(L, t, st, dim + 1, off + i * st[dim]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int m_tolist(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t st[MAXD];
    strides_of(t->ndim, t->shape, st);
    push_list(L, t, st, 0, 0);
    return 1;
}

/* ==== shape and size ==== */

static int m_numel(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ltensor_check(L, 1)->numel);
    return 1;
}

static int m_dim(lua_State *L)
{
    lua_pushinteger(L, ltensor_check(L, 1)->ndim);
    return 1;
}

/* t:size() -> shape table; t:size(d) -> size of dimension d */
static int m_size(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2)) {
        push_shape(L, t);
        return 1;
    }
    int d = check_dim(L, "size", check_int(L, 2, "size", "dim"), t->ndim);
    lua_pushinteger(L, (lua_Integer)t->shape[d]);
    return 1;
}

static int m_nbytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)nbytes_of(ltensor_check(L, 1)));
    return 1;
}

static int m_element_size(lua_State *L)
{
    lua_pushinteger(L, esize(ltensor_check(L, 1)->dtype));
    return 1;
}

static int m_self(lua_State *L)
{
    ltensor_check(L, 1);
    lua_settop(L, 1);
    return 1;
}

/* reshape(t, shape...) / view: same elements, shared data; one size may be -1. */
static int l_reshape(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int nd, infer = -1;
    int64_t shape[MAXD];
    read_shape_ex(L, 2, "reshape", &nd, shape, true);
    int64_t known = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == -1) {
            if (infer >= 0)
                return luaL_error(L, "reshape: only one size may be -1, got %s", shape_str(L, nd, shape));
            infer = d;
        } else {
            known *= shape[d];
        }
    }
    if (infer >= 0 && known != 0 && t->numel % known == 0)
        shape[infer] = t->numel / known;
    if ((infer >= 0 && shape[infer] == -1) || prod(shape, 0, nd) != t->numel) {
        const char *want = shape_str(L, nd, shape), *have = tshape(L, t);
        return luaL_error(L, "reshape: shape %s is invalid for a tensor of %I elements (shape %s)", want,
                          (lua_Integer)t->numel, have);
    }
    push_view(L, 1, t, 0, nd, shape);
    return 1;
}

static int m_flatten(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    push_view(L, 1, t, 0, 1, &t->numel);
    return 1;
}

/* ==== copies and conversions ==== */

static int l_clone(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    unary_new(L, t, t->dtype, EW_COPY);
    return 1;
}

static int convert_to(lua_State *L, kb_dtype dt)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->dtype == dt) { /* torch: to() returns the tensor itself */
        lua_settop(L, 1);
        return 1;
    }
    unary_new(L, t, dt, EW_COPY);
    return 1;
}

/* t:to(dtype) or t:to{dtype = ...}; t:to("cpu") is t. */
static int m_to(lua_State *L)
{
    ltensor_check(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "cpu") == 0) {
        lua_settop(L, 1);
        return 1;
    }
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "to: expected a dtype such as \"f16\"");
    return convert_to(L, opt_dtype(L, 2, "to", KB_F32));
}

static int m_float(lua_State *L) { return convert_to(L, KB_F32); }
static int m_half(lua_State *L) { return convert_to(L, KB_F16); }
static int m_bfloat16(lua_State *L) { return convert_to(L, KB_BF16); }
static int m_int(lua_State *L) { return convert_to(L, KB_I32); }
static int m_short(lua_State *L) { return convert_to(L, KB_I16); }
static int m_char(lua_State *L) { return convert_to(L, KB_I8); }
static int m_byte(lua_State *L) { return convert_to(L, KB_U8); }
static int m_bool(lua_State *L) { return convert_to(L, KB_BOOL); }

static int m_bytes(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    lua_pushlstring(L, t->data, nbytes_of(t));
    return 1;
}

/* t:hash() -> 64-bit FNV-1a of the bytes (an integer), to compare large
 * tensors without keeping both. */
static int m_hash(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    const unsigned char *p = t->data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0, n = nbytes_of(t); i < n; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    lua_pushinteger(L, (lua_Integer)h);
    return 1;
}

static int m_fill(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    double v;
    if (!to_scalar(L, 2, &v))
        return luaL_error(L, "fill_: the value must be a number or a boolean, got %s", luaL_typename(L, 2));
    fill(t, v);
    lua_settop(L, 1);
    return 1;
}

static int m_zero(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    memset(t->data, 0, nbytes_of(t));
    lua_settop(L, 1);
    return 1;
}

/* t:copy_(src): src (a tensor broadcastable to t, or a number) into t. */
static int m_copy(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    assign(L, "copy_", t, 2);
    lua_settop(L, 1);
    return 1;
}

/* ---- blocks of the 2-D view (rows = all dimensions but the last) ---- */

static void view_2d(const ltensor *t, int64_t *rows, int64_t *cols)
{
    *cols = t->ndim ? t->shape[t->ndim - 1] : 1;
    *rows = *cols ? t->numel / *cols : 0;
}

static void check_block(lua_State *L, const char *fn, const ltensor *t, const int64_t *b)
{
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    if (b[0] < 0 || b[1] < 0 || b[2] < 0 || b[3] < 0 || b[0] + b[1] > rows || b[2] + b[3] > cols)
        luaL_error(L, "%s: block rows %I+%I, cols %I+%I outside the %I x %I view of %s", fn, (lua_Integer)b[0],
                   (lua_Integer)b[1], (lua_Integer)b[2], (lua_Integer)b[3], (lua_Integer)rows, (lua_Integer)cols,
                   tshape(L, t));
}

/* t:block(row0, rows, col0, cols) -> the block's bytes, row-major. */
static int m_block(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = check_int(L, i + 2, "block", "a block bound");
    check_block(L, "block", t, b);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = kb_dtype_size(t->dtype), rowb = (size_t)b[3] * es;
    luaL_Buffer buf;
    char *out = luaL_buffinitsize(L, &buf, (size_t)b[1] * rowb);
    for (int64_t r = 0; r < b[1]; r++)
        memcpy(out + (size_t)r * rowb, eptr(t, (b[0] + r) * cols + b[2]), rowb);
    luaL_pushresultsize(&buf, (size_t)b[1] * rowb);
    return 1;
}

/* t:set_block(row0, rows, col0, cols, bytes) */
static int m_set_block(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = check_int(L, i + 2, "set_block", "a block bound");
    size_t len;
    const char *src = luaL_checklstring(L, 6, &len);
    check_block(L, "set_block", t, b);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = kb_dtype_size(t->dtype), rowb = (size_t)b[3] * es;
    if (len != (size_t)b[1] * rowb)
        return luaL_error(L, "set_block: %I bytes for a %I x %I block of %s", (lua_Integer)len, (lua_Integer)b[1],
                          (lua_Integer)b[3], kb_dtype_name(t->dtype));
    for (int64_t r = 0; r < b[1]; r++)
        memcpy(eptr(t, (b[0] + r) * cols + b[2]), src + (size_t)r * rowb, rowb);
    return 0;
}

/* ==== slicing, transposition, concatenation (all copies) ==== */

/* narrow(t, dim, start, length): the rows start .. start+length-1 of dim. */
static int l_narrow(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int dim = check_dim(L, "narrow", check_int(L, 2, "narrow", "dim"), t->ndim);
    lua_Integer start = check_int(L, 3, "narrow", "start"), len = check_int(L, 4, "narrow", "length");
    int64_t size = t->shape[dim];
    if (start < 0 && start >= -size)
        start += size;
    if (start < 0 || len < 0 || start > size || len > size - start)
        return luaL_error(L, "narrow: start %I and length %I do not fit dimension %d of size %I (shape %s)",
                          check_int(L, 3, "narrow", "start"), len, dim, (lua_Integer)size, tshape(L, t));
    int64_t shape[MAXD];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = len;
    ltensor *out = new_tensor(L, t->dtype, t->ndim, shape, false);
    int64_t outer = prod(t->shape, 0, dim), inner = prod(t->shape, dim + 1, t->ndim);
    size_t chunk = (size_t)(len * inner * esize(t->dtype));
    for (int64_t o = 0; o < outer; o++)
        memcpy(eptr(out, o * len * inner), eptr(t, (o * size + start) * inner), chunk);
    return 1;
}

static void transpose_push(lua_State *L, const ltensor *t, int d0, int d1)
{
    int64_t shape[MAXD], st[MAXD];
    memcpy(shape, t->shape, sizeof shape);
    shape[d0] = t->shape[d1];
    shape[d1] = t->shape[d0];
    strides_of(t->ndim, t->shape, st);
    ltensor *out = new_tensor(L, t->dtype, t->ndim, shape, false);
    operand o;
    op_tensor(&o, t, t->ndim);
    o.stride[d0] = st[d1];
    o.stride[d1] = st[d0];
    ew e = {.op = EW_COPY};
    sink k = {.out = out};
    ew_run(&e, &o, 1, t->ndim, shape, &k);
}

static int l_transpose(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int d0 = check_dim(L, "transpose", check_int(L, 2, "transpose", "dim0"), t->ndim);
    int d1 = check_dim(L, "transpose", check_int(L, 3, "transpose", "dim1"), t->ndim);
    transpose_push(L, t, d0, d1);
    return 1;
}

/* t:T(): the transpose of a 2-D tensor; 0-d and 1-D tensors are copied. */
static int m_T(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->ndim > 2)
        return luaL_error(L, "T: expects a tensor of at most 2 dimensions, got shape %s (use transpose(d0, d1))",
                          tshape(L, t));
    if (t->ndim < 2)
        unary_new(L, t, t->dtype, EW_COPY);
    else
        transpose_push(L, t, 0, 1);
    return 1;
}

static const ltensor *cat_item(lua_State *L, lua_Integer i)
{
    lua_geti(L, 1, i);
    const ltensor *t = ltensor_test(L, -1);
    if (!t)
        luaL_error(L, "cat: list[%I] is a %s, expected a tensor", i, luaL_typename(L, -1));
    lua_pop(L, 1); /* the list keeps it alive */
    return t;
}

/* cat(list, dim=0): sizes must match except along dim; dtypes promote. */
static int l_cat(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer cnt = luaL_len(L, 1);
    if (cnt == 0)
        return luaL_error(L, "cat: expected a non-empty list of tensors");
    const ltensor *first = cat_item(L, 1);
    if (first->ndim == 0)
        return luaL_error(L, "cat: list[1] is a 0-d tensor and cannot be concatenated");
    int dim = check_dim(L, "cat", lua_isnoneornil(L, 2) ? 0 : check_int(L, 2, "cat", "dim"), first->ndim);
    int64_t shape[MAXD];
    memcpy(shape, first->shape, sizeof shape);
    shape[dim] = 0;
    kb_dtype dt = first->dtype;
    for (lua_Integer i = 1; i <= cnt; i++) {
        const ltensor *t = cat_item(L, i);
        bool ok = t->ndim == first->ndim;
        for (int d = 0; ok && d < t->ndim; d++)
            ok = d == dim || t->shape[d] == first->shape[d];
        if (!ok) {
            const char *s1 = tshape(L, first), *si = tshape(L, t);
            return luaL_error(L, "cat: list[1] has shape %s and list[%I] has shape %s; they may differ only in "
                                 "dimension %d", s1, i, si, dim);
        }
        shape[dim] += t->shape[dim];
        dt = promote(dt, t->dtype);
    }
    ltensor *out = new_tensor(L, dt, first->ndim, shape, false);
    int64_t outer = prod(shape, 0, dim), inner = prod(shape, dim + 1, first->ndim), col = 0;
    double buf[RUN];
    for (lua_Integer i = 1; i <= cnt; i++) {
        const ltensor *t = cat_item(L, i);
        int64_t run = t->shape[dim] * inner;
        for (int64_t o = 0; o < outer; o++) {
            int64_t src = o * run, dst = (o * shape[dim] + col) * inner;
            if (t->dtype == dt) {
                memcpy(eptr(out, dst), eptr(t, src), (size_t)(run * esize(dt)));
                continue;
            }
            for (int64_t s = 0; s < run; s += RUN) {
                int64_t m = run - s < RUN ? run - s : RUN;
                load_run(t, src + s, 1, buf, m);
                store_run(out, dst + s, 1, buf, m);
            }
        }
        col += t->shape[dim];
    }
    return 1;
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
    kb_dtype dt = a && b ? promote(a->dtype, b->dtype) : a ? promote_scalar(a->dtype, L, 2)
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
    ltensor *out = new_tensor(L, dt, nd, shape, false);
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
    sink k = {.out = make ? new_tensor(L, KB_BOOL, nd, shape, false) : NULL, .all = true};
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

/* ==== reductions ==== */

typedef enum red { R_SUM, R_MEAN, R_MAX, R_MIN } red;

/* Reduces the n elements base, base+stride, ...; *arg: index of the max/min
 * (the first one; a NaN wins and propagates, as in torch). */
static double reduce_lane(const ltensor *t, int64_t base, int64_t stride, int64_t n, red r, int64_t *arg)
{
    double buf[RUN], acc = r == R_MAX ? -INFINITY : r == R_MIN ? INFINITY : 0.0;
    int64_t best = 0;
    for (int64_t s = 0; s < n; s += RUN) {
        int64_t m = n - s < RUN ? n - s : RUN;
        load_run(t, base + s * stride, stride, buf, m);
        for (int64_t i = 0; i < m; i++) {
            double v = buf[i];
            if (r == R_SUM || r == R_MEAN)
                acc += v;
            else if (!isnan(acc) && (isnan(v) || (r == R_MAX ? v > acc : v < acc))) {
                acc = v;
                best = s + i;
            }
        }
    }
    if (r == R_MEAN)
        acc /= (double)n;
    if (arg)
        *arg = best;
    return acc;
}

/* (t) or (t, dim[, keepdim]) or (t, {dim=, keepdim=}). */
static bool red_args(lua_State *L, const char *fn, const ltensor *t, int *dim, bool *keepdim)
{
    bool has = false;
    *keepdim = false;
    if (lua_type(L, 2) == LUA_TTABLE) {
        if (lua_getfield(L, 2, "dim") != LUA_TNIL) {
            has = true;
            *dim = check_dim(L, fn, check_int(L, -1, fn, "dim"), t->ndim);
        }
        lua_getfield(L, 2, "keepdim");
        *keepdim = lua_toboolean(L, -1);
        lua_pop(L, 2);
        return has;
    }
    if (!lua_isnoneornil(L, 2)) {
        has = true;
        *dim = check_dim(L, fn, check_int(L, 2, fn, "dim"), t->ndim);
    }
    *keepdim = lua_toboolean(L, 3);
    return has;
}

/* Without dim: a Lua number (integer for integer and bool tensors, except
 * mean). With dim: a tensor (max/min also return the indices, as i32). */
static int reduce(lua_State *L, red r, const char *fn)
{
    const ltensor *t = ltensor_check(L, 1);
    int dim = 0;
    bool keepdim, has_dim = red_args(L, fn, t, &dim, &keepdim);
    bool arg = r == R_MAX || r == R_MIN;
    kb_dtype dt = t->dtype;
    if (r == R_SUM && !kb_dtype_is_float(dt))
        dt = KB_I32;
    if (r == R_MEAN && !kb_dtype_is_float(dt))
        return luaL_error(L, "mean: needs a floating-point tensor, got %s (convert with :float())",
                          kb_dtype_name(dt));
    int64_t outer = 1, n = t->numel, inner = 1;
    if (has_dim) {
        outer = prod(t->shape, 0, dim);
        n = t->shape[dim];
        inner = prod(t->shape, dim + 1, t->ndim);
    }
    if (arg && n == 0 && outer * inner > 0)
        return luaL_error(L, "%s: cannot reduce over %s elements (shape %s)", fn, has_dim ? "a dimension of 0" : "0",
                          tshape(L, t));
    if (!has_dim) {
        double v = reduce_lane(t, 0, 1, n, r, NULL);
        if (dt == KB_BOOL)
            lua_pushboolean(L, v != 0);
        else if (r == R_MEAN || kb_dtype_is_float(dt))
            lua_pushnumber(L, v);
        else
            lua_pushinteger(L, (lua_Integer)v);
        return 1;
    }
    int ond = 0;
    int64_t oshape[MAXD];
    for (int d = 0; d < t->ndim; d++)
        if (d != dim)
            oshape[ond++] = t->shape[d];
        else if (keepdim)
            oshape[ond++] = 1;
    const ltensor *vals = new_tensor(L, dt, ond, oshape, false);
    const ltensor *idx = arg ? new_tensor(L, KB_I32, ond, oshape, false) : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best;
            double v = reduce_lane(t, o * n * inner + i, inner, n, r, &best);
            kb_dtype_store(dt, eptr(vals, o * inner + i), v);
            if (idx)
                kb_dtype_store(KB_I32, eptr(idx, o * inner + i), (double)best);
        }
    return arg ? 2 : 1;
}

static int l_sum(lua_State *L) { return reduce(L, R_SUM, "sum"); }
static int l_mean(lua_State *L) { return reduce(L, R_MEAN, "mean"); }
static int l_max(lua_State *L) { return reduce(L, R_MAX, "max"); }
static int l_min(lua_State *L) { return reduce(L, R_MIN, "min"); }

/* softmax(t, dim): exp(x - max) / sum, per lane along dim, in double. */
static int l_softmax(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "softmax: dim is required");
    int dim = check_dim(L, "softmax", check_int(L, 2, "softmax", "dim"), t->ndim);
    ltensor *out = new_tensor(L, kb_dtype_is_float(t->dtype) ? t->dtype : KB_F32, t->ndim, t->shape, false);
    int64_t outer = prod(t->shape, 0, dim), n = t->shape[dim], inner = prod(t->shape, dim + 1, t->ndim);
    double buf[RUN];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double m = reduce_lane(t, base, inner, n, R_MAX, NULL), sum = 0;
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                load_run(t, base + s * inner, inner, buf, c);
                for (int64_t j = 0; j < c; j++)
                    sum += exp(buf[j] - m);
            }
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                load_run(t, base + s * inner, inner, buf, c);
                for (int64_t j = 0; j < c; j++)
                    buf[j] = exp(buf[j] - m) / sum;
                store_run(out, base + s * inner, inner, buf, c);
            }
        }
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
        const char *sa = tshape(L, a), *sb = tshape(L, b);
        return luaL_error(L, "matmul: both arguments need at least 1 dimension, got shapes %s and %s", sa, sb);
    }
    if (a->dtype != b->dtype)
        return luaL_error(L, "matmul: dtypes %s and %s differ (convert one with :to())", kb_dtype_name(a->dtype),
                          kb_dtype_name(b->dtype));
    int64_t m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2], n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (k != kb) {
        const char *sa = tshape(L, a), *sb = tshape(L, b);
        return luaL_error(L, "matmul: shapes %s and %s cannot be multiplied (%I != %I)", sa, sb, (lua_Integer)k,
                          (lua_Integer)kb);
    }
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0, nbat = na > nb ? na : nb;
    int64_t bshape[MAXD], sa[MAXD], sb[MAXD], ast[MAXD], bst[MAXD];
    strides_of(na, a->shape, ast); /* in matrices */
    strides_of(nb, b->shape, bst);
    for (int d = 0; d < nbat; d++) {
        int da = d - (nbat - na), db = d - (nbat - nb);
        int64_t x = da >= 0 ? a->shape[da] : 1, y = db >= 0 ? b->shape[db] : 1;
        if (x != y && x != 1 && y != 1) {
            const char *s1 = tshape(L, a), *s2 = tshape(L, b);
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
    checked_numel(L, KB_F32, 2, (int64_t[]){k, n}); /* the scratch below is k*n + k + n doubles */
    double *bd = lua_newuserdatauv(L, (size_t)(k * n + k + n) * sizeof(double), 0);
    double *arow = bd + k * n, *crow = arow + k;
    ltensor *out = new_tensor(L, a->dtype, ond, oshape, false);
    int64_t nbatch = prod(bshape, 0, nbat), idx[MAXD] = {0}, offa = 0, offb = 0, loaded = -1;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        if (offb != loaded) { /* b's matrix, once per distinct matrix */
            load_run(b, offb * k * n, 1, bd, k * n);
            loaded = offb;
        }
        for (int64_t i = 0; i < m; i++) {
            load_run(a, (offa * m + i) * k, 1, arow, k);
            for (int64_t j = 0; j < n; j++)
                crow[j] = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = arow[p];
                const double *brow = bd + p * n;
                for (int64_t j = 0; j < n; j++)
                    crow[j] += x * brow[j];
            }
            store_run(out, (bi * m + i) * n, 1, crow, n);
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

/* ==== printing, as torch's repr ====
 * Elements are formatted as torch's _Formatter does: floats whose nonzero
 * finite values are all integral print as "1." (int mode); scientific
 * "%.4e" when max/min of the nonzero finite magnitudes exceeds 1000, the
 * maximum exceeds 1e8 or (outside int mode) the minimum is below 1e-4;
 * else "%.4f"; every element right-aligned to the widest. Above 1000
 * elements each dimension longer than 6 shows its first and last 3 entries
 * around "...", and the width is taken over the shown elements only. */

typedef struct pfmt {
    kb_dtype dt;
    bool floating, int_mode, sci;
    int width;
    /* statistics over the shown nonzero finite values */
    int64_t count;
    double minabs, maxabs;
} pfmt;

static int fmt_plain(const pfmt *f, double v, char *buf, size_t cap)
{
    if (!f->floating) {
        if (f->dt == KB_BOOL)
            return snprintf(buf, cap, "%s", v != 0 ? "True" : "False");
        return snprintf(buf, cap, "%lld", (long long)v);
    }
    if (isnan(v))
        return snprintf(buf, cap, "nan");
    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    if (f->sci)
        return snprintf(buf, cap, "%.4e", v);
    if (f->int_mode)
        return snprintf(buf, cap, "%.0f.", v);
    return snprintf(buf, cap, "%.4f", v);
}

/* Calls fn on every element that will be shown. */
static void visit(const ltensor *t, const int64_t *st, int dim, int64_t off, bool summarize, pfmt *f, int pass)
{
    if (dim == t->ndim) {
        double v = kb_dtype_load(t->dtype, eptr(t, off));
        char buf[64];
        if (!f->floating) {
            int n = fmt_plain(f, v, buf, sizeof buf);
            if (n > f->width)
                f->width = n;
        } else if (isfinite(v) && v != 0) {
            if (pass == 0) {
                double a = fabs(v);
                f->count++;
                f->minabs = a < f->minabs ? a : f->minabs;
                f->maxabs = a > f->maxabs ? a : f->maxabs;
                if (v != ceil(v))
                    f->int_mode = false;
            } else {
                int n = fmt_plain(f, v, buf, sizeof buf);
                if (n > f->width)
                    f->width = n;
            }
        }
        return;
    }
    int64_t n = t->shape[dim];
    for (int64_t i = 0; i < n; i++) {
        if (summarize && n > 2 * PRINT_EDGE && i == PRINT_EDGE)
            i = n - PRINT_EDGE;
        visit(t, st, dim + 1, off + i * st[dim], summarize, f, pass);
    }
}

static void add_spaces(luaL_Buffer *b, int n)
{
    for (; n > 0; n--)
        luaL_addchar(b, ' ');
}

static void add_elem(luaL_Buffer *b, const pfmt *f, double v)
{
    char buf[64];
    int n = fmt_plain(f, v, buf, sizeof buf);
    add_spaces(b, f->width - n);
    luaL_addlstring(b, buf, (size_t)n);
}

static void print_rec(luaL_Buffer *b, const ltensor *t, const int64_t *st, const pfmt *f, int dim, int64_t off,
                      int indent, bool summarize)
{
    int left = t->ndim - dim;
    if (left == 0) {
        add_elem(b, f, kb_dtype_load(t->dtype, eptr(t, off)));
        return;
    }
    int64_t n = t->shape[dim];
    bool cut = summarize && n > 2 * PRINT_EDGE;
    luaL_addchar(b, '[');
    if (left == 1) {
        int per_line = (PRINT_LINEWIDTH - indent) / (f->width + 2);
        if (per_line < 1)
            per_line = 1;
        int64_t item = 0;
        for (int64_t i = 0; i < n; i++, item++) {
            if (item > 0) {
                if (item % per_line == 0) {
                    luaL_addstring(b, ",\n");
                    add_spaces(b, indent + 1);
                } else {
                    luaL_addstring(b, ", ");
                }
            }
            if (cut && i == PRINT_EDGE) {
                luaL_addstring(b, " ...");
                i = n - PRINT_EDGE - 1;
                continue;
            }
            add_elem(b, f, kb_dtype_load(t->dtype, eptr(t, off + i * st[dim])));
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                luaL_addchar(b, ',');
                for (int k = 0; k < left - 1; k++)
                    luaL_addchar(b, '\n');
                add_spaces(b, indent + 1);
            }
            if (cut && i == PRINT_EDGE) {
                luaL_addstring(b, "...");
                i = n - PRINT_EDGE - 1;
                continue;
            }
            print_rec(b, t, st, f, dim + 1, off + i * st[dim], indent + 1, summarize);
        }
    }
    luaL_addchar(b, ']');
}

/* The length torch's _add_suffixes starts from: len(s) - s.rfind("\n") + 1. */
static size_t last_line_len(luaL_Buffer *b)
{
    const char *s = luaL_buffaddr(b);
    size_t len = luaL_bufflen(b), nl = len;
    while (nl > 0 && s[nl - 1] != '\n')
        nl--;
    return nl > 0 ? len - (nl - 1) + 1 : len + 2;
}

static int t_tostring(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    char suffix[2][128];
    int nsuffix = 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "tensor(");
    if (t->numel == 0) {
        luaL_addstring(&b, "[]");
        if (t->ndim != 1) {
            size_t p = (size_t)snprintf(suffix[nsuffix], sizeof suffix[0], "size=(");
            for (int d = 0; d < t->ndim && p < sizeof suffix[0]; d++)
                p += (size_t)snprintf(suffix[nsuffix] + p, sizeof suffix[0] - p, d ? ", %" PRId64 : "%" PRId64,
                                      t->shape[d]);
            if (p < sizeof suffix[0])
                snprintf(suffix[nsuffix] + p, sizeof suffix[0] - p, ")");
            nsuffix++;
        }
        if (t->dtype != KB_F32)
            snprintf(suffix[nsuffix++], sizeof suffix[0], "dtype=torch.%s", torch_name(t->dtype));
    } else {
        if (t->dtype != KB_F32 && t->dtype != KB_BOOL) /* torch omits its default dtypes */
            snprintf(suffix[nsuffix++], sizeof suffix[0], "dtype=torch.%s", torch_name(t->dtype));
        bool summarize = t->numel > PRINT_THRESHOLD;
        int64_t st[MAXD];
        strides_of(t->ndim, t->shape, st);
        pfmt f = {.dt = t->dtype, .floating = kb_dtype_is_float(t->dtype), .int_mode = true, .width = 1,
                  .minabs = INFINITY, .maxabs = 0};
        visit(t, st, 0, 0, summarize, &f, 0);
        if (f.floating && f.count > 0) {
            bool wide = f.maxabs / f.minabs > 1000.0 || f.maxabs > 1.0e8;
            f.sci = f.int_mode ? wide : wide || f.minabs < 1.0e-4;
            visit(t, st, 0, 0, summarize, &f, 1);
        }
        print_rec(&b, t, st, &f, 0, 0, 7, summarize);
    }
    size_t last = last_line_len(&b);
    for (int i = 0; i < nsuffix; i++) { /* ", suffix", or a new line when it would pass the width */
        size_t n = strlen(suffix[i]);
        if (last + n + 2 > PRINT_LINEWIDTH) {
            luaL_addstring(&b, ",\n");
            add_spaces(&b, 7);
            last = 7 + n;
        } else {
            luaL_addstring(&b, ", ");
            last += n + 2;
        }
        luaL_addstring(&b, suffix[i]);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

/* ==== module ==== */

static const luaL_Reg tensor_methods[] = {
    {"numel", m_numel},     {"dim", m_dim},       {"size", m_size},       {"nbytes", m_nbytes},
    {"element_size", m_element_size},             {"item", m_item},       {"get", m_get},
    {"set", m_set},         {"tolist", m_tolist}, {"to", m_to},           {"float", m_float},
    {"half", m_half},       {"bfloat16", m_bfloat16},                     {"int", m_int},
    {"short", m_short},     {"char", m_char},     {"byte", m_byte},       {"bool", m_bool},
    {"clone", l_clone},     {"contiguous", m_self}, {"cpu", m_self},      {"reshape", l_reshape},
    {"view", l_reshape},    {"flatten", m_flatten}, {"narrow", l_narrow}, {"transpose", l_transpose},
    {"T", m_T},             {"bytes", m_bytes},   {"hash", m_hash},       {"block", m_block},
    {"set_block", m_set_block},                   {"fill_", m_fill},      {"zero_", m_zero},
    {"copy_", m_copy},      {"add", l_add},       {"sub", l_sub},         {"mul", l_mul},
    {"div", l_div},         {"neg", l_neg},       {"exp", l_exp},         {"log", l_log},
    {"sqrt", l_sqrt},       {"abs", l_abs},       {"relu", l_relu},       {"sigmoid", l_sigmoid},
    {"tanh", l_tanh},       {"sum", l_sum},       {"mean", l_mean},       {"max", l_max},
    {"min", l_min},         {"softmax", l_softmax}, {"matmul", l_matmul}, {"allclose", l_allclose},
    {"isclose", l_isclose}, {"equal", l_equal},   {NULL, NULL}};

static const luaL_Reg tensor_meta[] = {
    {"__newindex", t_newindex}, {"__tostring", t_tostring}, {"__len", t_len}, {"__add", l_add},
    {"__sub", l_sub},           {"__mul", l_mul},           {"__div", l_div}, {"__unm", l_neg},
    {NULL, NULL}};

static const luaL_Reg gen_methods[] = {{"manual_seed", g_manual_seed}, {"initial_seed", g_initial_seed},
                                       {"get_state", g_get_state},     {"set_state", g_set_state},
                                       {NULL, NULL}};

static const luaL_Reg lib[] = {
    {"empty", l_empty},       {"zeros", l_zeros},         {"ones", l_ones},         {"full", l_full},
    {"zeros_like", l_zeros_like},                         {"ones_like", l_ones_like},
    {"arange", l_arange},     {"tensor", l_tensor},       {"rand", l_rand},         {"randn", l_randn},
    {"new_generator", l_new_generator},                   {"from_bytes", l_from_bytes},
    {"itemsize", l_itemsize}, {"is_tensor", l_is_tensor}, {"clone", l_clone},       {"reshape", l_reshape},
    {"narrow", l_narrow},     {"transpose", l_transpose}, {"cat", l_cat},           {"add", l_add},
    {"sub", l_sub},           {"mul", l_mul},             {"div", l_div},           {"neg", l_neg},
    {"exp", l_exp},           {"log", l_log},             {"sqrt", l_sqrt},         {"abs", l_abs},
    {"relu", l_relu},         {"sigmoid", l_sigmoid},     {"tanh", l_tanh},         {"sum", l_sum},
    {"mean", l_mean},         {"max", l_max},             {"min", l_min},           {"softmax", l_softmax},
    {"matmul", l_matmul},     {"allclose", l_allclose},   {"isclose", l_isclose},   {"equal", l_equal},
    {NULL, NULL}};

int luaopen_kb_tensor(lua_State *L)
{
    luaL_newmetatable(L, TENSOR_MT);
    luaL_setfuncs(L, tensor_meta, 0);
    luaL_newlib(L, tensor_methods);
    lua_pushcclosure(L, t_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newmetatable(L, GEN_MT);
    luaL_newlib(L, gen_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    luaL_newlib(L, lib);
    lua_createtable(L, KB_NDTYPES, 0);
    for (int i = 0; i < KB_NDTYPES; i++) {
        lua_pushstring(L, kb_dtype_name((kb_dtype)i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "dtypes");
    return 1;
}
