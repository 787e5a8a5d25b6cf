/* `kernbench.tensor_c`: constructors, conversions and shape operations
 * (see ltensor.c). */
#include "lua/ltensor.h"

#include "luasim/lbind.h"

#include <stdio.h>
#include <string.h>

#define MAXD KB_TENSOR_MAXDIM

/* ==== constructors ==== */

/* Shape, then options: (shape..., opts) -> tensor. */
static kb_tensor *ctor(lua_State *L, const char *fn, bool zero)
{
    int nd;
    int64_t shape[MAXD];
    int next = ltensor_read_shape(L, 1, fn, &nd, shape, false);
    return ltensor_new(L, ltensor_opt_dtype(L, next, fn, KB_F32), nd, shape, zero);
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
    kb_tensor_fill(ctor(L, "ones", false), 1.0);
    return 1;
}

static int l_full(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TTABLE)
        return luaL_error(L, "full: the shape must be a table of sizes, got %s", luaL_typename(L, 1));
    int nd;
    int64_t shape[MAXD];
    ltensor_read_shape(L, 1, "full", &nd, shape, false);
    double v;
    if (!ltensor_to_scalar(L, 2, &v))
        return luaL_error(L, "full: the fill value must be a number or a boolean, got %s", luaL_typename(L, 2));
    kb_dtype dt = ltensor_opt_dtype(L, 3, "full", lua_type(L, 2) == LUA_TBOOLEAN ? KB_BOOL : KB_F32);
    kb_tensor_fill(ltensor_new(L, dt, nd, shape, false), v);
    return 1;
}

static int like(lua_State *L, const char *fn, double v)
{
    const kb_tensor *t = ltensor_check(L, 1);
    kb_tensor *r = ltensor_new(L, ltensor_opt_dtype(L, 2, fn, t->dtype), t->ndim, t->shape, true);
    if (v != 0)
        kb_tensor_fill(r, v);
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
    double start = nargs == 1 ? 0 : lua_tonumber(L, 1), stop = lua_tonumber(L, nargs == 1 ? 1 : 2);
    double step = nargs == 3 ? lua_tonumber(L, 3) : 1;
    bool ints = true;
    for (int i = 1; i <= nargs; i++)
        ints = ints && lua_isinteger(L, i);
    kb_dtype dt = ltensor_opt_dtype(L, nargs + 1, "arange", ints ? KB_I32 : KB_F32);
    int64_t n;
    char *err;
    if (!kb_tensor_arange_numel(start, stop, step, &n, &err))
        return lbind_raise_where(L, err);
    kb_tensor_arange(ltensor_new(L, dt, 1, &n, false), start, step);
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

/* Checks the table on top of the stack (nesting depth dim) against the
 * shape taken from the first elements. */
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
            luaL_error(L, "tensor: %s is a %s; elements must be numbers or booleans", nest_path(L, ns, dim + 1, false),
                       lua_typename(L, ty));
        }
        lua_pop(L, 1);
    }
}

static void nest_fill(lua_State *L, const nest *ns, int dim, const kb_tensor *t, int64_t *off)
{
    for (lua_Integer i = 1; i <= ns->shape[dim]; i++) {
        lua_rawgeti(L, -1, i);
        if (dim + 1 < ns->ndim) {
            nest_fill(L, ns, dim + 1, t, off);
        } else {
            double v = 0;
            ltensor_to_scalar(L, -1, &v); /* checked by nest_scan */
            kb_tensor_set(t, (*off)++, v);
        }
        lua_pop(L, 1);
    }
}

/* tensor(data[, opts]): data is a number, a boolean, a tensor (copied) or a
 * nested table. Default dtype: bool when every element is a boolean, else f32. */
static int l_tensor(lua_State *L)
{
    double v;
    lua_settop(L, 2); /* the options stay at 2 (nil if none) above what the scan pushes */
    const kb_tensor *src = ltensor_test(L, 1);
    if (src) {
        kb_tensor desc = *src;
        desc.dtype = ltensor_opt_dtype(L, 2, "tensor", src->dtype);
        kb_tensor_convert(src, ltensor_push(L, &desc, false));
        return 1;
    }
    if (ltensor_to_scalar(L, 1, &v)) {
        kb_dtype dt = ltensor_opt_dtype(L, 2, "tensor", lua_type(L, 1) == LUA_TBOOLEAN ? KB_BOOL : KB_F32);
        kb_tensor_set(ltensor_new(L, dt, 0, NULL, false), 0, v);
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
    bool empty = kb_tensor_prod(ns.shape, 0, ns.ndim) == 0;
    kb_tensor *t = ltensor_new(L, ltensor_opt_dtype(L, 2, "tensor", ns.any_number || empty ? KB_F32 : KB_BOOL),
                               ns.ndim, ns.shape, false);
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
    int next = ltensor_read_shape(L, 2, "from_bytes", &nd, shape, false);
    kb_tensor desc;
    char *err;
    if (!kb_tensor_init(&desc, ltensor_opt_dtype(L, next, "from_bytes", KB_F32), nd, shape, &err) ||
        !kb_tensor_check_bytes(&desc, len, &err))
        return lbind_raise_where(L, err);
    memcpy(ltensor_push(L, &desc, false)->data, s, len);
    return 1;
}

/* itemsize(dtype) -> bytes per element, canonical name */
static int l_itemsize(lua_State *L)
{
    kb_dtype t = ltensor_parse_dtype(L, 1, "itemsize");
    lua_pushinteger(L, (lua_Integer)kb_dtype_size(t));
    lua_pushstring(L, kb_dtype_name(t));
    return 2;
}

static int l_is_tensor(lua_State *L)
{
    lua_pushboolean(L, ltensor_test(L, 1) != NULL);
    return 1;
}

/* ==== copies, conversions, bytes ==== */

static int convert_to(lua_State *L, const kb_tensor *t, kb_dtype dt)
{
    if (t->dtype == dt) { /* torch: to() returns the tensor itself */
        lua_settop(L, 1);
        return 1;
    }
    kb_tensor desc = *t;
    desc.dtype = dt;
    kb_tensor_convert(t, ltensor_push(L, &desc, false));
    return 1;
}

static int l_clone(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    kb_tensor_convert(t, ltensor_push(L, t, false));
    return 1;
}

/* t:to(dtype) or t:to{dtype = ...}; t:to("cpu") is t. */
static int m_to(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "cpu") == 0) {
        lua_settop(L, 1);
        return 1;
    }
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "to: expected a dtype such as \"f16\"");
    return convert_to(L, t, ltensor_opt_dtype(L, 2, "to", KB_F32));
}

#define CONVERTER(name, dt)                                                                                        \
    static int name(lua_State *L) { return convert_to(L, ltensor_check(L, 1), dt); }
CONVERTER(m_float, KB_F32)
CONVERTER(m_half, KB_F16)
CONVERTER(m_bfloat16, KB_BF16)
CONVERTER(m_int, KB_I32)
CONVERTER(m_short, KB_I16)
CONVERTER(m_char, KB_I8)
CONVERTER(m_byte, KB_U8)
CONVERTER(m_bool, KB_BOOL)
#undef CONVERTER

/* ==== shape operations ==== */

/* reshape(t, shape...) / view: the same elements, shared; one size may be -1. */
static int l_reshape(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int nd;
    int64_t shape[MAXD];
    char *err;
    ltensor_read_shape(L, 2, "reshape", &nd, shape, true);
    if (!kb_tensor_reshape(t, nd, shape, &err))
        return lbind_raise_where(L, err);
    ltensor_push_view(L, 1, t, 0, nd, shape);
    return 1;
}

static int m_flatten(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    ltensor_push_view(L, 1, t, 0, 1, &t->numel);
    return 1;
}

/* narrow(t, dim, start, length): a copy of entries start .. start+length-1 of dim. */
static int l_narrow(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int dim = ltensor_check_dim(L, "narrow", ltensor_check_int(L, 2, "narrow", "dim"), t->ndim);
    lua_Integer start = ltensor_check_int(L, 3, "narrow", "start"), len = ltensor_check_int(L, 4, "narrow", "length");
    kb_tensor desc;
    char *err;
    if (!kb_tensor_narrow_shape(t, dim, start, len, &desc, &err))
        return lbind_raise_where(L, err);
    kb_tensor_narrow(t, dim, start, ltensor_push(L, &desc, false));
    return 1;
}

static int l_transpose(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int d0 = ltensor_check_dim(L, "transpose", ltensor_check_int(L, 2, "transpose", "dim0"), t->ndim);
    int d1 = ltensor_check_dim(L, "transpose", ltensor_check_int(L, 3, "transpose", "dim1"), t->ndim);
    kb_tensor desc;
    kb_tensor_transpose_shape(t, d0, d1, &desc);
    kb_tensor_transpose(t, d0, d1, ltensor_push(L, &desc, false));
    return 1;
}

static int m_T(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    kb_tensor desc;
    char *err;
    if (!kb_tensor_T_shape(t, &desc, &err))
        return lbind_raise_where(L, err);
    kb_tensor_T(t, ltensor_push(L, &desc, false));
    return 1;
}

/* cat(list, dim=0). The list's tensors are checked in order, so a shape
 * error before a non-tensor element is reported first. */
static int l_cat(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    lua_Integer cnt = luaL_len(L, 1), n = 0;
    const kb_tensor **list = lua_newuserdatauv(L, (size_t)(cnt > 0 ? cnt : 1) * sizeof *list, 0);
    for (; n < cnt; n++) { /* the list keeps its tensors alive */
        lua_geti(L, 1, n + 1);
        list[n] = ltensor_test(L, -1);
        lua_pop(L, 1);
        if (!list[n])
            break;
    }
    lua_Integer dim = 0;
    if (n > 0 && list[0]->ndim > 0 && !lua_isnoneornil(L, 2)) /* after the 0-d check, as before */
        dim = ltensor_check_int(L, 2, "cat", "dim");
    kb_tensor desc;
    int d;
    char *err;
    if ((n > 0 || cnt == 0) && !kb_tensor_cat_shape(list, n, dim, &desc, &d, &err))
        return lbind_raise_where(L, err);
    if (n < cnt) {
        lua_geti(L, 1, n + 1);
        return luaL_error(L, "cat: list[%I] is a %s, expected a tensor", n + 1, luaL_typename(L, -1));
    }
    kb_tensor_cat(list, n, d, ltensor_push(L, &desc, false));
    return 1;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_make_funcs[] = {
    {"empty", l_empty},   {"zeros", l_zeros},           {"ones", l_ones},           {"full", l_full},
    {"zeros_like", l_zeros_like},                       {"ones_like", l_ones_like}, {"arange", l_arange},
    {"tensor", l_tensor}, {"from_bytes", l_from_bytes}, {"itemsize", l_itemsize},   {"is_tensor", l_is_tensor},
    {"cat", l_cat},       {NULL, NULL}};

const luaL_Reg ltensor_make_methods[] = {
    {"to", m_to},     {"float", m_float},  {"half", m_half},       {"bfloat16", m_bfloat16},
    {"int", m_int},   {"short", m_short},  {"char", m_char},       {"byte", m_byte},
    {"bool", m_bool}, {"view", l_reshape}, {"flatten", m_flatten}, {"T", m_T},
    {NULL, NULL}};

const luaL_Reg ltensor_make_both[] = {
    {"clone", l_clone}, {"reshape", l_reshape}, {"narrow", l_narrow}, {"transpose", l_transpose}, {NULL, NULL}};
