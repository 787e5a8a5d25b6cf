/* Tensor handles of the `kernbench.pe_c` module: what tl.* calls return.
 * A handle is a view (kb_tview) of its kernel instance's TCM scratch, valid
 * while the scratch ring has not come round to its bytes:
 *
 *   h.shape, h.dtype, h.ndim, h.space ("tcm"), h.addr, #h, tostring(h)
 *   h:numel(), h:nbytes()
 *   h[i], h:tolist(), h:item()      -- values, in data mode only (0-based)
 *   h + x, h - x, h * x, h / x, -h  -- PE_MATH commands of the handle's kernel
 *
 * Indices are 0-based; h[i] is a row view while dimensions remain. */
#include "lua/ltl_internal.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "mem/memstore.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define LTEN_MT "kernbench.tl_tensor"

static const char TENSOR_KEY; /* registry key of the metatable */

/* Argument 1 of the method or metamethod `call`, which must be a handle. */
static ltl_tensor *check_handle(lua_State *L, const char *call)
{
    ltl_tensor *t = ltl_test_ud(L, 1, &TENSOR_KEY);
    if (!t)
        lbind_bad_self(L, call, "tl.tensor handle");
    return t;
}

ltl_tensor *ltl_test_tensor(lua_State *L, int idx) { return ltl_test_ud(L, idx, &TENSOR_KEY); }

/* The context of the tensor at idx (its user value). */
static ltl_ctx *tensor_ctx(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    ltl_ctx *c = ltl_check_open_ctx(L, -1);
    lua_pop(L, 1);
    return c;
}

/* The checks of ltl_check_tensor, with the call named prefix + call (so
 * that "tl." + an op's name is formatted only for an error). */
static ltl_tensor *check_tensor(lua_State *L, int idx, const char *prefix, const char *call, int argn, ltl_ctx *c)
{
    ltl_tensor *t = ltl_test_tensor(L, idx);
    if (!t)
        luaL_error(L, "%s%s: argument %d must be a tensor handle (got %s)", prefix, call, argn,
                   luaL_typename(L, idx));
    ltl_ctx *own = tensor_ctx(L, idx);
    if (kb_kernel_ended(own->k))
        luaL_error(L,
                   "%s%s: argument %d (a %s result) is a handle of kernel '%s' on %s, which has ended: a handle "
                   "lives only while its kernel instance runs (its TCM scratch is freed and reused when the "
                   "kernel returns); pass values between kernels through memory (tl.store, then tl.load)",
                   prefix, call, argn, t->made_by, kb_kernel_name(own->k), kb_kernel_where(own->k));
    if (c && own != c)
        luaL_error(L,
                   "%s%s: argument %d (a %s result) belongs to kernel '%s' on %s, another kernel instance "
                   "(this one is '%s' on %s): handles cannot pass between kernel instances (other PEs, other "
                   "launches); pass values through memory or tl.send",
                   prefix, call, argn, t->made_by, kb_kernel_name(own->k), kb_kernel_where(own->k),
                   kb_kernel_name(c->k), kb_kernel_where(c->k));
    if (!kb_kernel_live(own->k, t->stamp))
        luaL_error(L,
                   "%s%s: argument %d (a %s result) was overwritten: %s's scratch (%d KiB) has wrapped "
                   "around since it was made (scratch overflow); keep fewer results alive or raise "
                   "pe_cpu.attrs.scratch_kb",
                   prefix, call, argn, t->made_by, kb_kernel_where(own->k),
                   (int)(kb_kernel_scratch_size(own->k) / 1024));
    return t;
}

ltl_tensor *ltl_check_tensor(lua_State *L, int idx, const char *call, int argn, ltl_ctx *c)
{
    return check_tensor(L, idx, "", call, argn, c);
}

ltl_tensor *ltl_check_operand(lua_State *L, int idx, const char *op, int argn, ltl_ctx *c)
{
    return check_tensor(L, idx, "tl.", op, argn, c);
}

ltl_tensor *ltl_new_tensor(lua_State *L, int ctx_idx)
{
    ctx_idx = lua_absindex(L, ctx_idx);
    ltl_tensor *t = lua_newuserdatauv(L, sizeof *t, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &TENSOR_KEY);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, ctx_idx);
    lua_setiuservalue(L, -2, 1);
    return t;
}

ltl_tensor *ltl_push_result(lua_State *L, int ctx_idx, ltl_ctx *c, const char *call, kb_dtype dt, int ndim,
                            const int64_t *shape)
{
    kb_tview v;
    uint64_t stamp;
    char *err = NULL;
    if (!kb_kernel_alloc(c->k, call, dt, ndim, shape, &v, &stamp, &err))
        lbind_raise(L, err);
    ltl_tensor *t = ltl_new_tensor(L, ctx_idx);
    t->v = v;
    t->stamp = stamp;
    t->made_by = call;
    return t;
}

void ltl_place_result(lua_State *L, int ctx_idx, ltl_ctx *c, const char *call, kb_tview *v)
{
    *v = ltl_push_result(L, ctx_idx, c, call, v->dtype, v->ndim, v->shape)->v;
}

int ltl_parse_shape(lua_State *L, int idx, const char *call, int64_t *shape)
{
    if (lua_isinteger(L, idx)) {
        shape[0] = lua_tointeger(L, idx);
        if (shape[0] < 1)
            luaL_error(L, "%s: shape sizes must be >= 1", call);
        return 1;
    }
    if (!lua_istable(L, idx))
        luaL_error(L, "%s: shape must be a table of sizes like {64, 128} (got %s)", call,
                   luaL_typename(L, idx));
    int n = (int)lua_rawlen(L, idx);
    if (n < 1 || n > KB_VIEW_MAXDIM)
        luaL_error(L, "%s: shape must have 1 to %d sizes (got %d)", call, KB_VIEW_MAXDIM, n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        int ok;
        lua_Integer d = lua_tointegerx(L, -1, &ok);
        if (!ok || d < 1)
            luaL_error(L, "%s: shape size %d must be an integer >= 1", call, i + 1);
        shape[i] = d;
        lua_pop(L, 1);
    }
    return n;
}

kb_dtype ltl_parse_dtype(lua_State *L, int idx, const char *call, const char *dflt)
{
    const char *name = lbind_optstr(L, idx, call, "dtype", dflt);
    kb_dtype t;
    if (!kb_dtype_parse(name, &t))
        luaL_error(L, "%s: unknown dtype '%s' (f32, f16, bf16, i32, i16, i8, u8, bool)", call, name);
    return t;
}

static kb_memstore *memstore(ltl_ctx *c) { return kb_fabric_memstore(kb_kernel_pe(c->k)->fab); }

static void need_data(lua_State *L, ltl_ctx *c, const char *what)
{
    if (!kb_kernel_data(c->k))
        luaL_error(L, "%s: tensor values exist only in data mode: run with --data (or --verify-data); "
                      "timing-only runs skip all arithmetic", what);
}

static void push_shape(lua_State *L, const kb_tview *v)
{
    lua_createtable(L, v->ndim, 0);
    for (int d = 0; d < v->ndim; d++) {
        lua_pushinteger(L, v->shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
}

static void push_value(lua_State *L, kb_dtype t, double x)
{
    if (t == KB_BOOL)
        lua_pushboolean(L, x != 0);
    else if (!kb_dtype_is_float(t))
        lua_pushinteger(L, (lua_Integer)x);
    else
        lua_pushnumber(L, x);
}

/* Nested tables of the view's values (the value itself for 0 dims). */
static void push_list(lua_State *L, const double *x, const kb_tview *v, int dim, int64_t *pos)
{
    if (dim == v->ndim) {
        push_value(L, v->dtype, x[(*pos)++]);
        return;
    }
    luaL_checkstack(L, 4, "tolist");
    lua_createtable(L, (int)v->shape[dim], 0);
    for (int64_t i = 0; i < v->shape[dim]; i++) {
        push_list(L, x, v, dim + 1, pos);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int t_tolist(lua_State *L)
{
    check_handle(L, "h:tolist");
    ltl_ctx *c = tensor_ctx(L, 1);
    ltl_tensor *t = ltl_check_tensor(L, 1, "tolist", 1, NULL);
    need_data(L, c, "tolist");
    int64_t n = kb_tview_numel(&t->v), pos = 0;
    double *x = kb_xmalloc((size_t)n * sizeof *x);
    kb_tview_read(memstore(c), &t->v, x);
    push_list(L, x, &t->v, 0, &pos);
    free(x);
    return 1;
}

static int t_item(lua_State *L)
{
    check_handle(L, "h:item");
    ltl_ctx *c = tensor_ctx(L, 1);
    ltl_tensor *t = ltl_check_tensor(L, 1, "item", 1, NULL);
    need_data(L, c, "item");
    if (kb_tview_numel(&t->v) != 1)
        return luaL_error(L, "item: the tensor has %I elements, not 1", (lua_Integer)kb_tview_numel(&t->v));
    double x;
    kb_tview_read(memstore(c), &t->v, &x);
    push_value(L, t->v.dtype, x);
    return 1;
}

static int t_numel(lua_State *L)
{
    lua_pushinteger(L, kb_tview_numel(&check_handle(L, "h:numel")->v));
    return 1;
}

static int t_nbytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_tview_nbytes(&check_handle(L, "h:nbytes")->v));
    return 1;
}

static const luaL_Reg tensor_methods[] = {
    {"tolist", t_tolist}, {"item", t_item}, {"numel", t_numel}, {"nbytes", t_nbytes}, {NULL, NULL}};

/* h[i]: a view of row i (0-based), or the value when one dimension is left. */
static int t_index(lua_State *L)
{
    ltl_tensor *t = check_handle(L, "h[i]");
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lbind_tostr(L, 2, "tl.tensor h[key]", "the key");
        if (strcmp(k, "shape") == 0)
            push_shape(L, &t->v);
        else if (strcmp(k, "dtype") == 0)
            lua_pushstring(L, kb_dtype_name(t->v.dtype));
        else if (strcmp(k, "ndim") == 0)
            lua_pushinteger(L, t->v.ndim);
        else if (strcmp(k, "space") == 0)
            lua_pushliteral(L, "tcm");
        else if (strcmp(k, "addr") == 0)
            lua_pushinteger(L, (lua_Integer)t->v.offset);
        else {
            luaL_getmetafield(L, 1, "methods");
            lua_getfield(L, -1, k);
        }
        return 1;
    }
    int ok;
    lua_Integer i = lua_tointegerx(L, 2, &ok);
    if (!ok)
        return luaL_error(L, "tensor index must be an integer (0-based) or a field name");
    ltl_ctx *c = tensor_ctx(L, 1);
    ltl_check_tensor(L, 1, "index", 1, NULL);
    need_data(L, c, "reading a tensor element");
    if (i < 0)
        i += t->v.shape[0];
    if (i < 0 || i >= t->v.shape[0])
        return luaL_error(L, "index %I is out of bounds for dimension 0 with size %I", lua_tointeger(L, 2),
                          (lua_Integer)t->v.shape[0]);
    uint64_t off = t->v.offset + (uint64_t)(i * t->v.stride[0]) * kb_dtype_size(t->v.dtype);
    if (t->v.ndim == 1) {
        double x;
        kb_memstore_read_elems(memstore(c), t->v.domain, off, t->v.dtype, &x, 1);
        push_value(L, t->v.dtype, x);
        return 1;
    }
    lua_getiuservalue(L, 1, 1);
    ltl_tensor *r = ltl_new_tensor(L, -1);
    *r = *t;
    r->v.offset = off;
    r->v.ndim--;
    memmove(r->v.shape, r->v.shape + 1, (size_t)r->v.ndim * sizeof r->v.shape[0]);
    memmove(r->v.stride, r->v.stride + 1, (size_t)r->v.ndim * sizeof r->v.stride[0]);
    return 1;
}

static int t_newindex(lua_State *L)
{
    return luaL_error(L, "tl.tensor handles are read-only in kernels (h[k] = v): compute a new result with tl.* calls");
}

static int t_len(lua_State *L)
{
    lua_pushinteger(L, check_handle(L, "#h")->v.shape[0]);
    return 1;
}

static int t_tostring(lua_State *L)
{
    ltl_tensor *t = check_handle(L, "tostring(h)");
    char s[128];
    lua_pushfstring(L, "tl.tensor(shape=%s, dtype=%s, tcm+0x%I)",
                    kb_shape_str(t->v.ndim, t->v.shape, s, sizeof s), kb_dtype_name(t->v.dtype),
                    (lua_Integer)t->v.offset);
    return 1;
}

/* Operators: the handle's context issues a PE_MATH command. */
static int arith(lua_State *L, kb_mop op, const char *call)
{
    int h = ltl_test_tensor(L, 1) ? 1 : op != KB_OP_NEG && ltl_test_tensor(L, 2) ? 2 : 0;
    if (!h)
        return luaL_error(L, "%s: one operand must be a tl.tensor handle (got %s and %s)", call, luaL_typename(L, 1),
                          op == KB_OP_NEG ? "nothing" : luaL_typename(L, 2));
    lua_getiuservalue(L, h, 1);
    ltl_ctx *c = ltl_check_ctx(L, -1);
    /* stack: a, b, ctx -> ctx, a, b */
    lua_insert(L, 1);
    int nargs = op == KB_OP_NEG ? 1 : 2;
    lua_settop(L, 1 + nargs);
    return ltl_math_command(L, c, op, 2, nargs, 0);
}

static int t_add(lua_State *L) { return arith(L, KB_OP_ADD, "h + x (__add)"); }
static int t_sub(lua_State *L) { return arith(L, KB_OP_SUB, "h - x (__sub)"); }
static int t_mul(lua_State *L) { return arith(L, KB_OP_MUL, "h * x (__mul)"); }
static int t_div(lua_State *L) { return arith(L, KB_OP_DIV, "h / x (__div)"); }
static int t_unm(lua_State *L) { return arith(L, KB_OP_NEG, "-h (__unm)"); }

static const luaL_Reg tensor_meta[] = {
    {"__index", t_index}, {"__newindex", t_newindex}, {"__len", t_len}, {"__tostring", t_tostring},
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
    {NULL, NULL}};


void ltl_open_tensor(lua_State *L)
{
    luaL_newmetatable(L, LTEN_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &TENSOR_KEY);
    luaL_setfuncs(L, tensor_meta, 0);
    luaL_newlib(L, tensor_methods);
    lua_setfield(L, -2, "methods");
    lua_pushliteral(L, "tl.tensor");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
}
