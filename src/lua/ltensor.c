/* `kernbench.tensor_c`: C-backed host tensors for the torch-like runtime.
 * This file holds the tensor userdata (owners and views), the shape and
 * argument helpers, the element runs every operation loads and stores
 * through, and the module's registration; the operations live in the other
 * ltensor_*.c files (see ltensor_internal.h). */
#include "lua/ltensor_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TENSOR_MT "kernbench.tensor"
/* Elements start 16-byte aligned after the header. */
#define DATA_OFFSET ((sizeof(ltensor) + 15) & ~(size_t)15)
/* Shapes beyond 64 TiB are refused before asking the allocator. */
#define MAX_BYTES (INT64_C(1) << 46)

/* ==== the userdata type and shapes ==== */

ltensor *ltensor_test(lua_State *L, int idx) { return luaL_testudata(L, idx, TENSOR_MT); }
ltensor *ltensor_check(lua_State *L, int idx) { return luaL_checkudata(L, idx, TENSOR_MT); }

int64_t ltensor_prod(const int64_t *shape, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= shape[d];
    return n;
}

/* Row-major element strides of a contiguous tensor. */
void ltensor_strides(int ndim, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

/* Pushes "[2, 3]" and returns it (for messages). */
const char *ltensor_shape_str(lua_State *L, int ndim, const int64_t *shape)
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

const char *ltensor_tshape(lua_State *L, const ltensor *t) { return ltensor_shape_str(L, t->ndim, t->shape); }

/* ==== argument helpers ==== */

lua_Integer ltensor_check_int(lua_State *L, int idx, const char *fn, const char *what)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "%s: %s must be an integer, got %s", fn, what, luaL_tolstring(L, idx, NULL));
    return v;
}

/* A number or a boolean (stored as 1 / 0). */
bool ltensor_to_scalar(lua_State *L, int idx, double *v)
{
    if (lua_type(L, idx) == LUA_TNUMBER)
        *v = lua_tonumber(L, idx);
    else if (lua_type(L, idx) == LUA_TBOOLEAN)
        *v = lua_toboolean(L, idx);
    else
        return false;
    return true;
}

kb_dtype ltensor_parse_dtype(lua_State *L, int idx, const char *fn)
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
kb_dtype ltensor_opt_dtype(lua_State *L, int idx, const char *fn, kb_dtype def)
{
    switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return def;
    case LUA_TSTRING: return ltensor_parse_dtype(L, idx, fn);
    case LUA_TTABLE:
        if (lua_getfield(L, idx, "dtype") != LUA_TNIL)
            def = ltensor_parse_dtype(L, -1, fn);
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
int ltensor_read_shape(lua_State *L, int idx, const char *fn, int *ndim, int64_t *shape, bool allow_infer)
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

int ltensor_check_dim(lua_State *L, const char *fn, lua_Integer d, int ndim)
{
    if (d < -ndim || d >= ndim) {
        if (ndim == 0)
            luaL_error(L, "%s: dim %I is out of range for a 0-d tensor", fn, d);
        luaL_error(L, "%s: dim %I is out of range for a %d-d tensor (expected %d .. %d)", fn, d, ndim, -ndim,
                   ndim - 1);
    }
    return (int)(d < 0 ? d + ndim : d);
}

/* ==== owners and views ==== */

/* The number of elements of a shape, or an error if it is too large. */
int64_t ltensor_checked_numel(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > MAXD)
        luaL_error(L, "tensor: %d dimensions (at most %d)", ndim, MAXD);
    int64_t n = 1, es = esize(dt);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            luaL_error(L, "tensor: negative size in shape %s", ltensor_shape_str(L, ndim, shape));
        if (shape[d] > 0 && n > MAX_BYTES / es / shape[d])
            luaL_error(L, "tensor: shape %s of %s is too large (more than %I bytes)", ltensor_shape_str(L, ndim, shape),
                       kb_dtype_name(dt), (lua_Integer)MAX_BYTES);
        n *= shape[d];
    }
    return n;
}

ltensor *ltensor_new(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape, bool zero)
{
    int64_t n = ltensor_checked_numel(L, dt, ndim, shape);
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
    return ltensor_new(L, dtype, ndim, shape, true);
}

/* Pushes a view of the tensor at src_idx: ndim/shape starting at element off. */
ltensor *ltensor_push_view(lua_State *L, int src_idx, const ltensor *src, int64_t off, int ndim, const int64_t *shape)
{
    src_idx = lua_absindex(L, src_idx);
    ltensor *v = lua_newuserdatauv(L, sizeof *v, 1);
    memset(v, 0, sizeof *v);
    v->dtype = src->dtype;
    v->ndim = ndim;
    if (ndim > 0)
        memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
    v->numel = ltensor_prod(shape, 0, ndim);
    v->data = eptr(src, off);
    luaL_setmetatable(L, TENSOR_MT);
    if (lua_getiuservalue(L, src_idx, 1) == LUA_TNIL) { /* src owns its data */
        lua_pop(L, 1);
        lua_pushvalue(L, src_idx);
    }
    lua_setiuservalue(L, -2, 1);
    return v;
}

void ltensor_fill(const ltensor *t, double v)
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

void ltensor_load_run(const ltensor *t, int64_t off, int64_t stride, double *dst, int64_t n)
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
void ltensor_store_run(const ltensor *t, int64_t off, int64_t stride, const double *src, int64_t n)
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

/* ==== module ==== */

static const luaL_Reg *const meta_sets[] = {ltensor_access_meta, ltensor_math_meta, ltensor_print_meta, NULL};
static const luaL_Reg *const method_sets[] = {ltensor_access_methods, ltensor_shape_methods, ltensor_math_funcs,
                                              ltensor_reduce_funcs, NULL};
static const luaL_Reg *const lib_sets[] = {ltensor_create_funcs, ltensor_random_funcs, ltensor_access_funcs,
                                           ltensor_shape_funcs,  ltensor_math_funcs,   ltensor_reduce_funcs,
                                           NULL};

static void set_all(lua_State *L, const luaL_Reg *const *sets)
{
    for (; *sets; sets++)
        luaL_setfuncs(L, *sets, 0);
}

int luaopen_kb_tensor(lua_State *L)
{
    luaL_checkversion(L);
    luaL_newmetatable(L, TENSOR_MT);
    set_all(L, meta_sets);
    lua_newtable(L);
    set_all(L, method_sets);
    lua_pushcclosure(L, ltensor_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    ltensor_open_random(L);
    lua_newtable(L);
    set_all(L, lib_sets);
    lua_createtable(L, KB_NDTYPES, 0);
    for (int i = 0; i < KB_NDTYPES; i++) {
        lua_pushstring(L, kb_dtype_name((kb_dtype)i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "dtypes");
    return 1;
}
