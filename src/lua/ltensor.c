/* `kernbench.tensor_c`: the tensor userdata (owners and views), argument
 * helpers, indexing and element access, sizes, and the module's
 * registration. ltensor_make.c has the constructors, conversions and shape
 * operations, ltensor_lib.c raw bytes, math, reductions, random numbers and
 * printing. The work is done by src/tensor/; these files check
 * arguments and make userdata. */
#include "lua/ltensor.h"

#include "luasim/lbind.h"

#include <string.h>

#define TENSOR_MT "kernbench.tensor"
#define MAXD KB_TENSOR_MAXDIM
/* Elements start 16-byte aligned after the header. */
#define DATA_OFFSET ((sizeof(kb_tensor) + 15) & ~(size_t)15)

/* ==== the userdata ==== */

kb_tensor *ltensor_test(lua_State *L, int idx) { return lbind_testudata(L, idx, TENSOR_MT); }
kb_tensor *ltensor_check(lua_State *L, int idx)
{
    kb_tensor *t = lbind_testudata(L, idx, TENSOR_MT);
    if (t)
        return t;
    int mt = luaL_getmetafield(L, idx, "__name"); /* the runtime's device tensors are tables named so */
    if (mt == LUA_TSTRING && strcmp(lua_tostring(L, -1), "DeviceTensor") == 0)
        luaL_argerror(L, idx, "a host tensor expected, got a device tensor (read it back with d:cpu() first)");
    if (mt != LUA_TNIL)
        lua_pop(L, 1);
    luaL_typeerror(L, idx, "kernbench.tensor");
    return NULL;
}

kb_tensor *ltensor_push(lua_State *L, const kb_tensor *desc, bool zero)
{
    size_t nbytes = kb_tensor_nbytes(desc);
    char *block = lua_newuserdatauv(L, DATA_OFFSET + nbytes, 1);
    kb_tensor *t = (kb_tensor *)(void *)block;
    *t = *desc;
    t->data = block + DATA_OFFSET;
    if (zero)
        memset(t->data, 0, nbytes);
    luaL_setmetatable(L, TENSOR_MT);
    return t;
}

kb_tensor *ltensor_new(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape, bool zero)
{
    kb_tensor desc;
    char *err;
    if (!kb_tensor_init(&desc, dt, ndim, shape, &err))
        lbind_raise_where(L, err);
    return ltensor_push(L, &desc, zero);
}

/* ==== tensors a host memory operation holds ==== */

static const char BUSY_KEY; /* registry: owner userdata -> operations holding it (weak keys) */

/* Pushes the owner of the tensor at idx (itself, or a view's owner). */
static void push_owner(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_getiuservalue(L, idx, 1) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
    }
}

static void push_busy_table(lua_State *L) { lbind_push_weak_keyed(L, &BUSY_KEY); }

void ltensor_hold(lua_State *L, int idx, int delta)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 4, "ltensor_hold");
    push_busy_table(L);
    push_owner(L, idx);
    lua_pushvalue(L, -1);
    lua_rawget(L, -3);
    lua_Integer n = lua_tointeger(L, -1) + delta;
    lua_pop(L, 1);
    if (n > 0)
        lua_pushinteger(L, n);
    else
        lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

void ltensor_check_writable(lua_State *L, int idx, const char *fn)
{
    push_busy_table(L);
    push_owner(L, idx);
    lua_rawget(L, -2);
    lua_Integer n = lua_tointeger(L, -1);
    lua_pop(L, 2);
    if (n > 0)
        luaL_error(L,
                   "%s: this host tensor (or the tensor it is a view of) is held by %d host memory operation(s) "
                   "not yet served: the source of a device write (d:copy_(t) reads it when its writes are "
                   "served) or the destination of a read; wait for it (torch.wait(h)) before changing it",
                   fn, (int)n);
}

void ltensor_push_view(lua_State *L, int src_idx, const kb_tensor *src, int64_t off, int ndim, const int64_t *shape)
{
    src_idx = lua_absindex(L, src_idx);
    kb_tensor *v = lua_newuserdatauv(L, sizeof *v, 1);
    kb_tensor_view(src, off, ndim, shape, v);
    luaL_setmetatable(L, TENSOR_MT);
    if (lua_getiuservalue(L, src_idx, 1) == LUA_TNIL) { /* src owns its data */
        lua_pop(L, 1);
        lua_pushvalue(L, src_idx);
    }
    lua_setiuservalue(L, -2, 1);
}

/* ==== argument helpers ==== */

lua_Integer ltensor_check_int(lua_State *L, int idx, const char *fn, const char *what)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "%s: %s must be an integer, got %s", fn, what, luaL_tolstring(L, idx, NULL));
    return v;
}

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
    const char *s = lbind_tostr(L, idx, fn, "dtype");
    kb_dtype t;
    if (!kb_dtype_parse(strncmp(s, "torch.", 6) == 0 ? s + 6 : s, &t))
        luaL_error(L, "%s: unknown dtype '%s' (expected f32, f16, bf16, i32, i16, i8, u8 or bool, or a torch "
                      "name such as float16)", fn, s);
    return t;
}

/* Refuses any key of the options table at idx that `known` (NULL-ended) does
 * not list: a mistyped key ({dtpye = "f16"}) would quietly give the default. */
kb_dtype ltensor_opt_dtype_of(lua_State *L, int idx, const char *fn, kb_dtype def, const char *const *known)
{
    switch (lua_type(L, idx)) {
    case LUA_TNONE:
    case LUA_TNIL: return def;
    case LUA_TSTRING: return ltensor_parse_dtype(L, idx, fn);
    case LUA_TTABLE:
        idx = lua_absindex(L, idx);
        lbind_check_keys(L, idx, fn, "a host tensor's options", known);
        if (lua_getfield(L, idx, "dtype") != LUA_TNIL)
            def = ltensor_parse_dtype(L, -1, fn);
        lua_pop(L, 1);
        return def;
    default:
        luaL_error(L, "%s: options must be a table such as {dtype = \"f16\"}, got %s", fn, luaL_typename(L, idx));
        return def;
    }
}

kb_dtype ltensor_opt_dtype(lua_State *L, int idx, const char *fn, kb_dtype def)
{
    static const char *const known[] = {"dtype", NULL};
    return ltensor_opt_dtype_of(L, idx, fn, def, known);
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
    int dim;
    char *err;
    if (!kb_tensor_dim(fn, d, ndim, &dim, &err))
        lbind_raise_where(L, err);
    return dim;
}

/* ==== indexing and elements ==== */

/* An element's value as Lua has it: a boolean, a float or an integer. */
static void push_value(lua_State *L, kb_dtype dt, double v)
{
    if (dt == KB_BOOL)
        lua_pushboolean(L, v != 0);
    else if (kb_dtype_is_float(dt))
        lua_pushnumber(L, v);
    else
        lua_pushinteger(L, (lua_Integer)v);
}

static void push_elem(lua_State *L, const kb_tensor *t, int64_t off)
{
    push_value(L, t->dtype, kb_tensor_get(t, off));
}

static int64_t offset_of(lua_State *L, const char *fn, const kb_tensor *t, int n, const int64_t *idx)
{
    int64_t off;
    char *err;
    if (!kb_tensor_offset(t, fn, n, idx, &off, &err))
        lbind_raise_where(L, err);
    return off;
}

/* The index key at idx: an integer or a table of integers. */
static int read_key(lua_State *L, int idx, int64_t *out)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = ltensor_check_int(L, idx, "index", "an index");
        return 1;
    }
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n > MAXD)
        luaL_error(L, "index: %I indices (at most %d)", (lua_Integer)n, MAXD);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        out[i] = ltensor_check_int(L, -1, "index", "an index");
        lua_pop(L, 1);
    }
    return (int)n;
}

static void push_shape(lua_State *L, const kb_tensor *t)
{
    lua_createtable(L, t->ndim, 0);
    for (int d = 0; d < t->ndim; d++) {
        lua_pushinteger(L, (lua_Integer)t->shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
}

/* __index: t[i], t[{i, j}] (an element with all indices, else a view);
 * strings are methods (upvalue 1) or the fields shape, dtype, ndim. */
static int t_index(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int ty = lua_type(L, 2);
    if (ty == LUA_TNUMBER || ty == LUA_TTABLE) {
        int64_t idx[MAXD];
        int n = read_key(L, 2, idx);
        int64_t off = offset_of(L, "index", t, n, idx);
        if (n == t->ndim)
            push_elem(L, t, off);
        else
            ltensor_push_view(L, 1, t, off, t->ndim - n, t->shape + n);
        return 1;
    }
    if (ty != LUA_TSTRING) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    const char *k = lbind_tostr(L, 2, "tensor[key]", "key");
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

/* dst = the value at vidx: a number or boolean fills, a tensor is copied
 * (broadcast, converted). */
static void assign(lua_State *L, const char *fn, const kb_tensor *dst, int vidx)
{
    double v;
    if (ltensor_to_scalar(L, vidx, &v)) {
        kb_tensor_fill(dst, v);
        return;
    }
    const kb_tensor *src = ltensor_test(L, vidx);
    if (!src)
        luaL_error(L, "%s: cannot assign a %s to a tensor (expected a number, a boolean or a tensor)", fn,
                   luaL_typename(L, vidx));
    char *err;
    if (!kb_tensor_copy(dst, src, fn, &err))
        lbind_raise_where(L, err);
}

static int t_newindex(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    ltensor_check_writable(L, 1, "index");
    int ty = lua_type(L, 2);
    if (ty != LUA_TNUMBER && ty != LUA_TTABLE)
        return luaL_error(L, "tensor: cannot set field '%s' (only elements and sub-tensors can be assigned)",
                          luaL_tolstring(L, 2, NULL));
    int64_t idx[MAXD];
    int n = read_key(L, 2, idx);
    kb_tensor sub;
    kb_tensor_view(t, offset_of(L, "index", t, n, idx), t->ndim - n, t->shape + n, &sub);
    assign(L, "index", &sub, 3);
    return 0;
}

static int t_len(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    if (t->ndim == 0)
        return luaL_error(L, "len() of a 0-d tensor");
    lua_pushinteger(L, (lua_Integer)t->shape[0]);
    return 1;
}

/* t:get(i, j, ...) and t:set(i, j, ..., v): one index per dimension. */
static int m_get(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int n = lua_gettop(L) - 1;
    if (n != t->ndim)
        return luaL_error(L, "get: a %d-d tensor needs %d indices, got %d", t->ndim, t->ndim, n);
    int64_t idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = ltensor_check_int(L, d + 2, "get", "an index");
    push_elem(L, t, offset_of(L, "get", t, n, idx));
    return 1;
}

static int m_set(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int top = lua_gettop(L), n = top - 2;
    if (n != t->ndim)
        return luaL_error(L, "set: a %d-d tensor needs %d indices and a value, got %d arguments", t->ndim, t->ndim,
                          top - 1);
    double v;
    if (!ltensor_to_scalar(L, top, &v))
        return luaL_error(L, "set: the value must be a number or a boolean, got %s", luaL_typename(L, top));
    ltensor_check_writable(L, 1, "set");
    int64_t idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = ltensor_check_int(L, d + 2, "set", "an index");
    kb_tensor_set(t, offset_of(L, "set", t, n, idx), v);
    return 0;
}

static int m_item(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    double v;
    char *err;
    if (!kb_tensor_item(t, &v, &err))
        return lbind_raise_where(L, err);
    push_value(L, t->dtype, v);
    return 1;
}

static void push_list(lua_State *L, const kb_tensor *t, const int64_t *st, int dim, int64_t off)
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
    const kb_tensor *t = ltensor_check(L, 1);
    int64_t st[MAXD];
    kb_tensor_strides(t, st);
    push_list(L, t, st, 0, 0);
    return 1;
}

/* ==== sizes ==== */

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

/* t:size() -> the shape table; t:size(d) -> the size of dimension d */
static int m_size(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2)) {
        push_shape(L, t);
        return 1;
    }
    int d = ltensor_check_dim(L, "size", ltensor_check_int(L, 2, "size", "dim"), t->ndim);
    lua_pushinteger(L, (lua_Integer)t->shape[d]);
    return 1;
}

static int m_nbytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_tensor_nbytes(ltensor_check(L, 1)));
    return 1;
}

static int m_element_size(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_dtype_size(ltensor_check(L, 1)->dtype));
    return 1;
}

static int m_self(lua_State *L)
{
    ltensor_check(L, 1);
    lua_settop(L, 1);
    return 1;
}

/* ==== copy_ ==== */

/* t:copy_(src): src (a tensor broadcastable to t, or a number) into t. */
static int m_copy(lua_State *L)
{
    kb_tensor *t = ltensor_check(L, 1);
    ltensor_check_writable(L, 1, "copy_");
    assign(L, "copy_", t, 2);
    lua_settop(L, 1);
    return 1;
}

/* ==== module ==== */

static const luaL_Reg methods[] = {
    {"numel", m_numel},   {"dim", m_dim},       {"size", m_size},     {"nbytes", m_nbytes},
    {"element_size", m_element_size},           {"item", m_item},     {"get", m_get},
    {"set", m_set},       {"tolist", m_tolist}, {"contiguous", m_self}, {"cpu", m_self},
    {"copy_", m_copy},    {NULL, NULL}};

static const luaL_Reg meta[] = {{"__newindex", t_newindex}, {"__len", t_len}, {NULL, NULL}};

/* tensor_c.hold(t, delta): the runtime takes (1) or lets go of (-1) t for a
 * host memory operation it has queued but not yet started (torch's copy_). */
static int l_hold(lua_State *L)
{
    ltensor_check(L, 1);
    lua_Integer d = luaL_checkinteger(L, 2);
    luaL_argcheck(L, d == 1 || d == -1, 2, "1 or -1");
    ltensor_hold(L, 1, (int)d);
    return 0;
}

int luaopen_kb_tensor(lua_State *L)
{
    luaL_checkversion(L);
    luaL_newmetatable(L, TENSOR_MT);
    luaL_setfuncs(L, meta, 0);
    luaL_setfuncs(L, ltensor_lib_meta, 0);
    lua_newtable(L); /* methods: also every math function */
    luaL_setfuncs(L, methods, 0);
    luaL_setfuncs(L, ltensor_make_methods, 0);
    luaL_setfuncs(L, ltensor_make_both, 0);
    luaL_setfuncs(L, ltensor_lib_methods, 0);
    luaL_setfuncs(L, ltensor_math_funcs, 0);
    ltensor_set_ewise(L, -1, -2);
    lua_pushcclosure(L, t_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    ltensor_open_random(L);
    lua_newtable(L);
    luaL_setfuncs(L, ltensor_make_funcs, 0);
    luaL_setfuncs(L, ltensor_make_both, 0);
    luaL_setfuncs(L, ltensor_lib_funcs, 0);
    luaL_setfuncs(L, ltensor_math_funcs, 0);
    ltensor_set_ewise(L, -1, 0);
    lua_createtable(L, KB_NDTYPES, 0);
    for (int i = 0; i < KB_NDTYPES; i++) {
        lua_pushstring(L, kb_dtype_name((kb_dtype)i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "dtypes");
    lua_pushcfunction(L, l_hold);
    lua_setfield(L, -2, "hold");
    return 1;
}
