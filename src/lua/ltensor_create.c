/* Tensor constructors of `kernbench.tensor_c`: empty, zeros, ones, full,
 * zeros_like, ones_like, arange, tensor (from numbers, booleans, tensors or
 * nested tables), from_bytes; and the dtype queries itemsize, is_tensor. */
#include "lua/ltensor_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Shape, then options: (shape..., opts) -> tensor. */
static ltensor *ctor(lua_State *L, const char *fn, bool zero)
{
    int nd;
    int64_t shape[MAXD];
    int next = ltensor_read_shape(L, 1, fn, &nd, shape, false);
    kb_dtype dt = ltensor_opt_dtype(L, next, fn, KB_F32);
    return ltensor_new(L, dt, nd, shape, zero);
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
    ltensor_fill(ctor(L, "ones", false), 1.0);
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
    ltensor_fill(ltensor_new(L, dt, nd, shape, false), v);
    return 1;
}

static int like(lua_State *L, const char *fn, double v)
{
    const ltensor *t = ltensor_check(L, 1);
    kb_dtype dt = ltensor_opt_dtype(L, 2, fn, t->dtype);
    ltensor *r = ltensor_new(L, dt, t->ndim, t->shape, true);
    if (v != 0)
        ltensor_fill(r, v);
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
    kb_dtype dt = ltensor_opt_dtype(L, nargs + 1, "arange", ints ? KB_I32 : KB_F32);
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
    ltensor *t = ltensor_new(L, dt, 1, &n, false);
    double buf[RUN];
    for (int64_t s = 0; s < n; s += RUN) {
        int64_t m = n - s < RUN ? n - s : RUN;
        for (int64_t i = 0; i < m; i++)
            buf[i] = start + (double)(s + i) * step;
        ltensor_store_run(t, s, 1, buf, m);
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
            ltensor_to_scalar(L, -1, &v); /* checked by nest_scan */
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
        ltensor_push_copy(L, src, ltensor_opt_dtype(L, 2, "tensor", src->dtype));
        return 1;
    }
    if (ltensor_to_scalar(L, 1, &v)) {
        kb_dtype dt = ltensor_opt_dtype(L, 2, "tensor", lua_type(L, 1) == LUA_TBOOLEAN ? KB_BOOL : KB_F32);
        kb_dtype_store(dt, ltensor_new(L, dt, 0, NULL, false)->data, v);
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
    kb_dtype dt =
        ltensor_opt_dtype(L, 2, "tensor", ns.any_number || ltensor_prod(ns.shape, 0, ns.ndim) == 0 ? KB_F32 : KB_BOOL);
    ltensor *t = ltensor_new(L, dt, ns.ndim, ns.shape, false);
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
    kb_dtype dt = ltensor_opt_dtype(L, next, "from_bytes", KB_F32);
    int64_t need = ltensor_checked_numel(L, dt, nd, shape) * esize(dt);
    if ((int64_t)len != need)
        return luaL_error(L, "from_bytes: %I bytes given, a %s tensor of shape %s holds %I", (lua_Integer)len,
                          kb_dtype_name(dt), ltensor_shape_str(L, nd, shape), (lua_Integer)need);
    ltensor *t = ltensor_new(L, dt, nd, shape, false);
    memcpy(t->data, s, len);
    return 1;
}

/* ==== dtypes ==== */

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

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_create_funcs[] = {
    {"empty", l_empty},       {"zeros", l_zeros},         {"ones", l_ones},           {"full", l_full},
    {"zeros_like", l_zeros_like},                         {"ones_like", l_ones_like}, {"arange", l_arange},
    {"tensor", l_tensor},     {"from_bytes", l_from_bytes}, {"itemsize", l_itemsize}, {"is_tensor", l_is_tensor},
    {NULL, NULL}};
