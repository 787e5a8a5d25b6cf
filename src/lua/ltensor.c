/* `kernbench.tensor_c`: C-backed host tensors (see ltensor.h).
 *
 * Constructors take a shape (a table {d0, d1, ...}) and an options table
 * {dtype = "f32"|"f16"|"bf16"|"i32"|"i16"|"i8"|"u8"|"bool" or a torch
 * alias}. Indices are 0-based, as in torch. Values computed here go
 * through double and are rounded to the tensor's dtype when stored. */
#include "lua/ltensor.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LTENSOR_MT "kernbench.tensor"
#define LGEN_MT "kernbench.generator"

/* ---- basics ---- */

ltensor *ltensor_test(lua_State *L, int idx) { return luaL_testudata(L, idx, LTENSOR_MT); }
ltensor *ltensor_check(lua_State *L, int idx) { return luaL_checkudata(L, idx, LTENSOR_MT); }

static size_t elem(const ltensor *t) { return kb_dtype_size(t->dtype); }

ltensor *ltensor_push_new(lua_State *L, kb_dtype dtype, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            luaL_error(L, "tensor: negative dimension %d", (int)shape[i]);
        n *= shape[i];
    }
    size_t bytes = (size_t)n * kb_dtype_size(dtype);
    ltensor *t = lua_newuserdatauv(L, sizeof *t, 0);
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    t->numel = n;
    t->data = calloc(bytes ? bytes : 1, 1);
    if (!t->data)
        luaL_error(L, "tensor: out of memory for %d bytes", (int)bytes);
    luaL_setmetatable(L, LTENSOR_MT);
    return t;
}

static int t_gc(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    free(t->data);
    t->data = NULL;
    return 0;
}

static double get(const ltensor *t, int64_t i) { return kb_dtype_load(t->dtype, (char *)t->data + i * elem(t)); }
static void set(ltensor *t, int64_t i, double v) { kb_dtype_store(t->dtype, (char *)t->data + i * elem(t), v); }

static kb_dtype dtype_opt(lua_State *L, int idx, kb_dtype dflt)
{
    if (!lua_istable(L, idx))
        return dflt;
    lua_getfield(L, idx, "dtype");
    kb_dtype d = dflt;
    if (!lua_isnil(L, -1)) {
        const char *name = luaL_checkstring(L, -1);
        if (!kb_dtype_parse(name, &d))
            luaL_error(L, "tensor: unknown dtype '%s' (f32, f16, bf16, i32, i16, i8, u8, bool)", name);
    }
    lua_pop(L, 1);
    return d;
}

static int read_shape(lua_State *L, int idx, int64_t *shape)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)lua_rawlen(L, idx);
    if (n > LTENSOR_MAXDIM)
        luaL_error(L, "tensor: %d dimensions (at most %d)", n, LTENSOR_MAXDIM);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 0)
            luaL_error(L, "tensor: shape[%d] must be a non-negative integer", i + 1);
        shape[i] = v;
        lua_pop(L, 1);
    }
    return n;
}

static void shape_str(luaL_Buffer *b, const ltensor *t)
{
    luaL_addchar(b, '[');
    for (int i = 0; i < t->ndim; i++) {
        if (i)
            luaL_addstring(b, ", ");
        lua_pushfstring(b->L, "%I", (lua_Integer)t->shape[i]);
        luaL_addvalue(b);
    }
    luaL_addchar(b, ']');
}

static const char *shape_of(lua_State *L, const ltensor *t)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    shape_str(&b, t);
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* ---- random numbers: xoshiro256** seeded by splitmix64 ---- */

typedef struct lgen {
    uint64_t s[4];
} lgen;

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t gen_next(lgen *g)
{
    uint64_t *s = g->s, r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in [0, 1) with 53 random bits. */
static double gen_uniform(lgen *g) { return (double)(gen_next(g) >> 11) * 0x1p-53; }

static int l_new_generator(lua_State *L)
{
    uint64_t x = (uint64_t)luaL_optinteger(L, 1, 0);
    lgen *g = lua_newuserdatauv(L, sizeof *g, 0);
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        g->s[i] = z ^ (z >> 31);
    }
    luaL_setmetatable(L, LGEN_MT);
    return 1;
}

/* ---- constructors ---- */

static ltensor *new_from_args(lua_State *L, int shape_idx, int opt_idx, kb_dtype dflt)
{
    int64_t shape[LTENSOR_MAXDIM];
    int n = read_shape(L, shape_idx, shape);
    return ltensor_push_new(L, dtype_opt(L, opt_idx, dflt), n, shape);
}

static int l_zeros(lua_State *L)
{
    new_from_args(L, 1, 2, KB_F32);
    return 1;
}

static int l_full(lua_State *L)
{
    double v = luaL_checknumber(L, 2);
    ltensor *t = new_from_args(L, 1, 3, KB_F32);
    for (int64_t i = 0; i < t->numel; i++)
        set(t, i, v);
    return 1;
}

static int l_ones(lua_State *L)
{
    ltensor *t = new_from_args(L, 1, 2, KB_F32);
    for (int64_t i = 0; i < t->numel; i++)
        set(t, i, 1.0);
    return 1;
}

static int l_arange(lua_State *L)
{
    int nargs = lua_gettop(L), opt = 0;
    if (nargs > 0 && lua_istable(L, nargs))
        opt = nargs--;
    double start = 0, stop, step = 1;
    if (nargs == 1) {
        stop = luaL_checknumber(L, 1);
    } else {
        start = luaL_checknumber(L, 1);
        stop = luaL_checknumber(L, 2);
        if (nargs >= 3)
            step = luaL_checknumber(L, 3);
    }
    if (step == 0)
        return luaL_error(L, "arange: step must be non-zero");
    bool ints = lua_isinteger(L, 1) && (nargs < 2 || lua_isinteger(L, 2)) && (nargs < 3 || lua_isinteger(L, 3));
    int64_t n = (int64_t)ceil((stop - start) / step);
    if (n < 0)
        n = 0;
    ltensor *t = ltensor_push_new(L, opt ? dtype_opt(L, opt, ints ? KB_I32 : KB_F32) : (ints ? KB_I32 : KB_F32),
                                  1, &n);
    for (int64_t i = 0; i < n; i++)
        set(t, i, start + (double)i * step);
    return 1;
}

static int l_rand(lua_State *L, bool normal)
{
    ltensor *t = new_from_args(L, 1, 2, KB_F32);
    lgen *g = luaL_checkudata(L, 3, LGEN_MT);
    for (int64_t i = 0; i < t->numel; i++) {
        double v;
        if (normal) { /* Box-Muller, one value per pair of uniforms */
            double u1 = gen_uniform(g), u2 = gen_uniform(g);
            v = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
        } else {
            v = gen_uniform(g);
        }
        set(t, i, v);
    }
    return 1;
}

static int l_rand_u(lua_State *L) { return l_rand(L, false); }
static int l_randn(lua_State *L) { return l_rand(L, true); }

/* tensor(nested_table, opts): shape from the nesting; ragged lists are errors. */
static void infer_shape(lua_State *L, int idx, int depth, int64_t *shape, int *ndim)
{
    if (lua_type(L, idx) != LUA_TTABLE) {
        *ndim = depth;
        return;
    }
    if (depth >= LTENSOR_MAXDIM)
        luaL_error(L, "tensor: more than %d nested levels", LTENSOR_MAXDIM);
    shape[depth] = (int64_t)lua_rawlen(L, idx);
    if (shape[depth] == 0) {
        *ndim = depth + 1;
        return;
    }
    lua_rawgeti(L, idx, 1);
    infer_shape(L, lua_gettop(L), depth + 1, shape, ndim);
    lua_pop(L, 1);
}

static void fill_nested(lua_State *L, int idx, int depth, const int64_t *shape, int ndim, ltensor *t,
                        int64_t *pos)
{
    if (depth == ndim) {
        if (!lua_isnumber(L, idx) && !lua_isboolean(L, idx))
            luaL_error(L, "tensor: element %I is a %s, not a number", (lua_Integer)*pos, luaL_typename(L, idx));
        set(t, (*pos)++, lua_isboolean(L, idx) ? lua_toboolean(L, idx) : lua_tonumber(L, idx));
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE || (int64_t)lua_rawlen(L, idx) != shape[depth])
        luaL_error(L, "tensor: ragged nested list at dimension %d (expected %I elements)", depth,
                   (lua_Integer)shape[depth]);
    for (int64_t i = 0; i < shape[depth]; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        fill_nested(L, lua_gettop(L), depth + 1, shape, ndim, t, pos);
        lua_pop(L, 1);
    }
}

static int l_tensor(lua_State *L)
{
    int64_t shape[LTENSOR_MAXDIM];
    int ndim = 0;
    if (lua_isnumber(L, 1)) { /* a scalar: a 0-d tensor */
        ltensor *t = ltensor_push_new(L, dtype_opt(L, 2, KB_F32), 0, shape);
        set(t, 0, lua_tonumber(L, 1));
        return 1;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    infer_shape(L, 1, 0, shape, &ndim);
    ltensor *t = ltensor_push_new(L, dtype_opt(L, 2, KB_F32), ndim, shape);
    int64_t pos = 0;
    fill_nested(L, 1, 0, shape, ndim, t, &pos);
    return 1;
}

static int l_from_bytes(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int64_t shape[LTENSOR_MAXDIM];
    int n = read_shape(L, 2, shape);
    kb_dtype d;
    if (!kb_dtype_parse(luaL_checkstring(L, 3), &d))
        return luaL_error(L, "from_bytes: unknown dtype '%s'", lua_tostring(L, 3));
    ltensor *t = ltensor_push_new(L, d, n, shape);
    if ((size_t)t->numel * elem(t) != len)
        return luaL_error(L, "from_bytes: %d bytes for %d elements of %s", (int)len, (int)t->numel,
                          kb_dtype_name(d));
    memcpy(t->data, s, len);
    return 1;
}

static int l_itemsize(lua_State *L)
{
    kb_dtype d;
    if (!kb_dtype_parse(luaL_checkstring(L, 1), &d))
        return luaL_error(L, "unknown dtype '%s'", lua_tostring(L, 1));
    lua_pushinteger(L, (lua_Integer)kb_dtype_size(d));
    lua_pushstring(L, kb_dtype_name(d));
    return 2;
}

/* ---- element access ---- */

/* The flat index of t[i0, i1, ...] from stack args first..; 0-based. */
static int64_t flat_index(lua_State *L, const ltensor *t, int first, int nidx)
{
    if (nidx != t->ndim)
        luaL_error(L, "tensor: %d indices for a %d-dimensional tensor", nidx, t->ndim);
    int64_t flat = 0;
    for (int i = 0; i < nidx; i++) {
        lua_Integer k = luaL_checkinteger(L, first + i);
        if (k < 0)
            k += t->shape[i];
        if (k < 0 || k >= t->shape[i])
            luaL_error(L, "tensor: index %I out of range for dimension %d of size %I",
                       luaL_checkinteger(L, first + i), i, (lua_Integer)t->shape[i]);
        flat = flat * t->shape[i] + k;
    }
    return flat;
}

static void push_value(lua_State *L, const ltensor *t, int64_t i)
{
    double v = get(t, i);
    if (t->dtype == KB_BOOL)
        lua_pushboolean(L, v != 0);
    else if (!kb_dtype_is_float(t->dtype))
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnumber(L, v);
}

static int m_get(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    push_value(L, t, flat_index(L, t, 2, lua_gettop(L) - 1));
    return 1;
}

static int m_set(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    int top = lua_gettop(L);
    double v = lua_isboolean(L, top) ? lua_toboolean(L, top) : luaL_checknumber(L, top);
    set(t, flat_index(L, t, 2, top - 2), v);
    return 0;
}

static void tolist_rec(lua_State *L, const ltensor *t, int depth, int64_t *pos)
{
    if (depth == t->ndim) {
        push_value(L, t, (*pos)++);
        return;
    }
    lua_createtable(L, (int)t->shape[depth], 0);
    for (int64_t i = 0; i < t->shape[depth]; i++) {
        tolist_rec(L, t, depth + 1, pos);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int m_tolist(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    int64_t pos = 0;
    tolist_rec(L, t, 0, &pos);
    return 1;
}

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

static int m_bytes(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    lua_pushlstring(L, t->data, (size_t)t->numel * elem(t));
    return 1;
}

/* t:hash() -> a 64-bit FNV-1a of the bytes (as an integer), to compare large
 * tensors without keeping both. */
static int m_hash(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    const unsigned char *p = t->data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0, n = (size_t)t->numel * elem(t); i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    lua_pushinteger(L, (lua_Integer)h);
    return 1;
}

static int m_to(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    kb_dtype d;
    if (!kb_dtype_parse(luaL_checkstring(L, 2), &d))
        return luaL_error(L, "to: unknown dtype '%s'", lua_tostring(L, 2));
    ltensor *r = ltensor_push_new(L, d, t->ndim, t->shape);
    for (int64_t i = 0; i < t->numel; i++)
        set(r, i, get(t, i));
    return 1;
}

static int m_clone(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    ltensor *r = ltensor_push_new(L, t->dtype, t->ndim, t->shape);
    memcpy(r->data, t->data, (size_t)t->numel * elem(t));
    return 1;
}

static int m_reshape(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    int64_t shape[LTENSOR_MAXDIM];
    int n = read_shape(L, 2, shape);
    int64_t numel = 1;
    for (int i = 0; i < n; i++)
        numel *= shape[i];
    if (numel != t->numel)
        return luaL_error(L, "reshape: %s has %I elements, shape asks for %I", shape_of(L, t),
                          (lua_Integer)t->numel, (lua_Integer)numel);
    ltensor *r = ltensor_push_new(L, t->dtype, n, shape);
    memcpy(r->data, t->data, (size_t)t->numel * elem(t));
    return 1;
}

/* The 2-D view of t: rows = product of all but the last dimension. */
static void view_2d(const ltensor *t, int64_t *rows, int64_t *cols)
{
    *cols = t->ndim ? t->shape[t->ndim - 1] : 1;
    *rows = *cols ? t->numel / *cols : 0;
}

static void check_block(lua_State *L, const ltensor *t, int64_t r0, int64_t nr, int64_t c0, int64_t nc)
{
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    if (r0 < 0 || nr < 0 || c0 < 0 || nc < 0 || r0 + nr > rows || c0 + nc > cols)
        luaL_error(L, "block rows %I+%I, cols %I+%I outside the %I x %I view of %s", (lua_Integer)r0,
                   (lua_Integer)nr, (lua_Integer)c0, (lua_Integer)nc, (lua_Integer)rows, (lua_Integer)cols,
                   shape_of(L, t));
}

/* t:block(row0, rows, col0, cols) -> the block's bytes, row-major. */
static int m_block(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    int64_t r0 = luaL_checkinteger(L, 2), nr = luaL_checkinteger(L, 3);
    int64_t c0 = luaL_checkinteger(L, 4), nc = luaL_checkinteger(L, 5);
    check_block(L, t, r0, nr, c0, nc);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = elem(t), rowb = (size_t)nc * es;
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, (size_t)nr * rowb);
    for (int64_t r = 0; r < nr; r++)
        memcpy(out + (size_t)r * rowb, (char *)t->data + ((size_t)(r0 + r) * (size_t)cols + (size_t)c0) * es, rowb);
    luaL_pushresultsize(&b, (size_t)nr * rowb);
    return 1;
}

/* t:set_block(row0, rows, col0, cols, bytes) */
static int m_set_block(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    int64_t r0 = luaL_checkinteger(L, 2), nr = luaL_checkinteger(L, 3);
    int64_t c0 = luaL_checkinteger(L, 4), nc = luaL_checkinteger(L, 5);
    size_t len;
    const char *src = luaL_checklstring(L, 6, &len);
    check_block(L, t, r0, nr, c0, nc);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = elem(t), rowb = (size_t)nc * es;
    if (len != (size_t)nr * rowb)
        return luaL_error(L, "set_block: %d bytes for a %I x %I block of %s", (int)len, (lua_Integer)nr,
                          (lua_Integer)nc, kb_dtype_name(t->dtype));
    for (int64_t r = 0; r < nr; r++)
        memcpy((char *)t->data + ((size_t)(r0 + r) * (size_t)cols + (size_t)c0) * es, src + (size_t)r * rowb, rowb);
    return 0;
}

/* ---- printing, like torch ---- */

static const char *torch_dtype(kb_dtype d)
{
    static const char *const n[KB_NDTYPES] = {"torch.float32", "torch.float16", "torch.bfloat16",
                                              "torch.int32",   "torch.int16",   "torch.int8",
                                              "torch.uint8",   "torch.bool"};
    return n[d];
}

typedef struct fmt {
    bool ints;  /* every float value is integral: "1." style */
    bool sci;
    int width;
} fmt;

static void fmt_value(char *buf, size_t n, const ltensor *t, double v, const fmt *f)
{
    if (t->dtype == KB_BOOL)
        snprintf(buf, n, "%s", v != 0 ? "True" : "False");
    else if (!kb_dtype_is_float(t->dtype))
        snprintf(buf, n, "%lld", (long long)v);
    else if (isnan(v))
        snprintf(buf, n, "nan");
    else if (isinf(v))
        snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
    else if (f->sci)
        snprintf(buf, n, "%.4e", v);
    else if (f->ints)
        snprintf(buf, n, "%.0f.", v);
    else
        snprintf(buf, n, "%.4f", v);
}

static void print_rec(luaL_Buffer *b, const ltensor *t, int depth, int64_t base, int64_t stride, bool summarize,
                      const fmt *f, int indent)
{
    if (depth == t->ndim) {
        char buf[64];
        fmt_value(buf, sizeof buf, t, get(t, base), f);
        for (int k = (int)strlen(buf); k < f->width; k++)
            luaL_addchar(b, ' ');
        luaL_addstring(b, buf);
        return;
    }
    int64_t n = t->shape[depth], sub = stride / (n ? n : 1);
    luaL_addchar(b, '[');
    for (int64_t i = 0; i < n; i++) {
        if (summarize && n > 6 && i == 3) {
            luaL_addstring(b, depth + 1 == t->ndim ? "..., " : "...,\n");
            if (depth + 1 < t->ndim)
                for (int k = 0; k < indent + depth + 1; k++)
                    luaL_addchar(b, ' ');
            i = n - 3;
        }
        print_rec(b, t, depth + 1, base + i * sub, sub, summarize, f, indent);
        if (i + 1 < n) {
            luaL_addchar(b, ',');
            if (depth + 1 == t->ndim) {
                luaL_addchar(b, ' ');
            } else {
                for (int k = depth + 1; k < t->ndim; k++)
                    luaL_addchar(b, '\n');
                for (int k = 0; k < indent + depth + 1; k++)
                    luaL_addchar(b, ' ');
            }
        }
    }
    luaL_addchar(b, ']');
}

static int m_tostring(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    bool summarize = t->numel > 1000;
    fmt f = {true, false, 0};
    double maxabs = 0, minabs = INFINITY;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = get(t, i);
        if (!isfinite(v))
            continue;
        if (v != floor(v))
            f.ints = false;
        if (fabs(v) > maxabs)
            maxabs = fabs(v);
        if (v != 0 && fabs(v) < minabs)
            minabs = fabs(v);
    }
    if (kb_dtype_is_float(t->dtype) && !f.ints && (maxabs >= 1e8 || (minabs < 1e-4 && minabs > 0)))
        f.sci = true;
    for (int64_t i = 0; i < t->numel; i++) { /* common width, like torch */
        char buf[64];
        fmt_value(buf, sizeof buf, t, get(t, i), &f);
        if ((int)strlen(buf) > f.width)
            f.width = (int)strlen(buf);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "tensor(");
    if (t->ndim == 0) {
        char buf[64];
        fmt_value(buf, sizeof buf, t, get(t, 0), &f);
        luaL_addstring(&b, buf);
    } else {
        print_rec(&b, t, 0, 0, t->numel, summarize, &f, 7);
    }
    if (t->dtype != KB_F32) {
        luaL_addstring(&b, ", dtype=");
        luaL_addstring(&b, torch_dtype(t->dtype));
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

/* ---- math for checking results ---- */

static void same_shape(lua_State *L, const char *what, const ltensor *a, const ltensor *b)
{
    bool same = a->ndim == b->ndim;
    for (int i = 0; same && i < a->ndim; i++)
        same = a->shape[i] == b->shape[i];
    if (!same) {
        const char *sa = shape_of(L, a), *sb = shape_of(L, b);
        luaL_error(L, "%s: shapes %s and %s differ", what, sa, sb);
    }
}

static int l_allclose(lua_State *L)
{
    ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    double rtol = luaL_optnumber(L, 3, 1e-5), atol = luaL_optnumber(L, 4, 1e-8);
    bool equal_nan = lua_toboolean(L, 5);
    same_shape(L, "allclose", a, b);
    for (int64_t i = 0; i < a->numel; i++) {
        double x = get(a, i), y = get(b, i);
        if (isnan(x) || isnan(y)) {
            if (!(equal_nan && isnan(x) && isnan(y))) {
                lua_pushboolean(L, 0);
                return 1;
            }
            continue;
        }
        if (x == y)
            continue; /* equal infinities */
        if (!(fabs(x - y) <= atol + rtol * fabs(y))) {
            lua_pushboolean(L, 0);
            return 1;
        }
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_equal(lua_State *L)
{
    ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    bool eq = a->dtype == b->dtype && a->ndim == b->ndim;
    for (int i = 0; eq && i < a->ndim; i++)
        eq = a->shape[i] == b->shape[i];
    eq = eq && memcmp(a->data, b->data, (size_t)a->numel * elem(a)) == 0;
    lua_pushboolean(L, eq);
    return 1;
}

/* matmul of 2-D tensors, accumulated in double, result in a's dtype. */
static int l_matmul(lua_State *L)
{
    ltensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    if (a->ndim != 2 || b->ndim != 2)
        return luaL_error(L, "matmul: expected 2-D tensors, got %s and %s", shape_of(L, a), shape_of(L, b));
    if (a->shape[1] != b->shape[0])
        return luaL_error(L, "matmul: shapes %s and %s cannot be multiplied (%I != %I)", shape_of(L, a),
                          shape_of(L, b), (lua_Integer)a->shape[1], (lua_Integer)b->shape[0]);
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    int64_t shape[2] = {m, n};
    ltensor *c = ltensor_push_new(L, a->dtype, 2, shape);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t p = 0; p < k; p++)
                acc += get(a, i * k + p) * get(b, p * n + j);
            set(c, i * n + j, acc);
        }
    return 1;
}

typedef double (*binop)(double, double);
static double op_add(double x, double y) { return x + y; }
static double op_sub(double x, double y) { return x - y; }
static double op_mul(double x, double y) { return x * y; }
static double op_div(double x, double y) { return x / y; }

/* a op b with a tensor-tensor (same shape) or tensor-scalar pairing. */
static int elementwise(lua_State *L, const char *what, binop f)
{
    ltensor *a = ltensor_test(L, 1), *b = ltensor_test(L, 2);
    if (!a && !b)
        return luaL_error(L, "%s: expected a tensor", what);
    const ltensor *like = a ? a : b;
    if (a && b)
        same_shape(L, what, a, b);
    double sa = a ? 0 : luaL_checknumber(L, 1), sb = b ? 0 : luaL_checknumber(L, 2);
    ltensor *r = ltensor_push_new(L, like->dtype, like->ndim, like->shape);
    for (int64_t i = 0; i < r->numel; i++)
        set(r, i, f(a ? get(a, i) : sa, b ? get(b, i) : sb));
    return 1;
}

static int l_add(lua_State *L) { return elementwise(L, "add", op_add); }
static int l_sub(lua_State *L) { return elementwise(L, "sub", op_sub); }
static int l_mul(lua_State *L) { return elementwise(L, "mul", op_mul); }
static int l_div(lua_State *L) { return elementwise(L, "div", op_div); }

static int m_unm(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    ltensor *r = ltensor_push_new(L, t->dtype, t->ndim, t->shape);
    for (int64_t i = 0; i < t->numel; i++)
        set(r, i, -get(t, i));
    return 1;
}

/* Reductions over every element: sum, max, min, mean (as numbers). */
static int reduce(lua_State *L, int kind)
{
    ltensor *t = ltensor_check(L, 1);
    if (t->numel == 0 && kind != 0)
        return luaL_error(L, "reduction of an empty tensor");
    double acc = kind == 0 || kind == 3 ? 0 : get(t, 0);
    for (int64_t i = 0; i < t->numel; i++) {
        double v = get(t, i);
        if (kind == 0 || kind == 3)
            acc += v;
        else if (kind == 1 ? v > acc || isnan(v) : v < acc || isnan(v))
            acc = v;
    }
    lua_pushnumber(L, kind == 3 ? acc / (double)t->numel : acc);
    return 1;
}

static int l_sum(lua_State *L) { return reduce(L, 0); }
static int l_max(lua_State *L) { return reduce(L, 1); }
static int l_min(lua_State *L) { return reduce(L, 2); }
static int l_mean(lua_State *L) { return reduce(L, 3); }

/* ---- fields ---- */

static int t_index(lua_State *L)
{
    ltensor *t = ltensor_check(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "shape") == 0) {
        lua_createtable(L, t->ndim, 0);
        for (int i = 0; i < t->ndim; i++) {
            lua_pushinteger(L, (lua_Integer)t->shape[i]);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    if (strcmp(k, "dtype") == 0) {
        lua_pushstring(L, kb_dtype_name(t->dtype));
        return 1;
    }
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, k);
    return 1;
}

int luaopen_kb_tensor(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"get", m_get},       {"set", m_set},         {"tolist", m_tolist}, {"numel", m_numel},
        {"dim", m_dim},       {"bytes", m_bytes},     {"to", m_to},         {"clone", m_clone},
        {"reshape", m_reshape}, {"view", m_reshape},  {"block", m_block},   {"set_block", m_set_block},
        {"sum", l_sum},       {"max", l_max},         {"min", l_min},       {"mean", l_mean},
        {"hash", m_hash},     {NULL, NULL}};
    luaL_newmetatable(L, LTENSOR_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "methods");
    static const luaL_Reg meta[] = {{"__index", t_index}, {"__gc", t_gc},     {"__tostring", m_tostring},
                                    {"__add", l_add},     {"__sub", l_sub},   {"__mul", l_mul},
                                    {"__div", l_div},     {"__unm", m_unm},   {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lua_pop(L, 1);
    luaL_newmetatable(L, LGEN_MT);
    lua_pop(L, 1);
    static const luaL_Reg lib[] = {
        {"empty", l_zeros},   {"zeros", l_zeros},       {"ones", l_ones},       {"full", l_full},
        {"arange", l_arange}, {"tensor", l_tensor},     {"rand", l_rand_u},     {"randn", l_randn},
        {"new_generator", l_new_generator},             {"from_bytes", l_from_bytes},
        {"itemsize", l_itemsize}, {"allclose", l_allclose}, {"equal", l_equal}, {"matmul", l_matmul},
        {"add", l_add},       {"sub", l_sub},           {"mul", l_mul},         {"div", l_div},
        {"sum", l_sum},       {"max", l_max},           {"min", l_min},         {"mean", l_mean},
        {NULL, NULL}};
    luaL_newlib(L, lib);
    return 1;
}
