/* `kernbench.tensor_c`: raw bytes and blocks, element-wise math, matmul,
 * comparisons, reductions, softmax, generators and random tensors, and
 * __tostring (see ltensor.c). */
#include "lua/ltensor.h"

#include "luasim/lbind.h"
#include "tensor/random.h"

#include <stdlib.h>
#include <string.h>

#define MAXD KB_TENSOR_MAXDIM
#define GEN_MT "kernbench.generator"

/* ==== raw bytes, filling, blocks ==== */

static int m_bytes(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    lua_pushlstring(L, t->data, kb_tensor_nbytes(t));
    return 1;
}

/* t:hash() -> 64-bit FNV-1a of the bytes (an integer), to compare large
 * tensors without keeping both. */
static int m_hash(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_tensor_hash(ltensor_check(L, 1)));
    return 1;
}

static int m_fill(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    double v;
    if (!ltensor_to_scalar(L, 2, &v))
        return luaL_error(L, "fill_: the value must be a number or a boolean, got %s", luaL_typename(L, 2));
    ltensor_check_writable(L, 1, "fill_");
    kb_tensor_fill(t, v);
    lua_settop(L, 1);
    return 1;
}

static int m_zero(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    ltensor_check_writable(L, 1, "zero_");
    memset(t->data, 0, kb_tensor_nbytes(t));
    lua_settop(L, 1);
    return 1;
}

/* Blocks of the 2-D view: t:block(row0, rows, col0, cols) -> bytes;
 * t:set_block(row0, rows, col0, cols, bytes). */
static void block_args(lua_State *L, const char *fn, int64_t *b)
{
    for (int i = 0; i < 4; i++)
        b[i] = ltensor_check_int(L, i + 2, fn, "a block bound");
}

static int m_block(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int64_t b[4];
    char *err;
    block_args(L, "block", b);
    if (!kb_tensor_block_check(t, "block", b, &err))
        return lbind_raise_where(L, err);
    size_t n = (size_t)(b[1] * b[3]) * kb_dtype_size(t->dtype);
    luaL_Buffer buf;
    kb_tensor_block_read(t, b, luaL_buffinitsize(L, &buf, n));
    luaL_pushresultsize(&buf, n);
    return 1;
}

static int m_set_block(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    int64_t b[4];
    char *err;
    block_args(L, "set_block", b);
    size_t len;
    const char *src = luaL_checklstring(L, 6, &len);
    ltensor_check_writable(L, 1, "set_block");
    if (!kb_tensor_block_check(t, "set_block", b, &err) || !kb_tensor_block_write(t, b, src, len, &err))
        return lbind_raise_where(L, err);
    return 0;
}

/* ==== element-wise math ==== */

static void operand(lua_State *L, int idx, const char *fn, kb_operand *o)
{
    memset(o, 0, sizeof *o);
    o->t = ltensor_test(L, idx);
    if (o->t)
        return;
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: argument %d must be a tensor or a number, got %s", fn, idx, luaL_typename(L, idx));
    o->v = lua_tonumber(L, idx);
    o->v_int = lua_isinteger(L, idx);
}

/* Pushes op over args (checked) as a new tensor. */
static int ewise(lua_State *L, kb_mop op, const kb_operand *args)
{
    kb_tensor desc;
    char *err;
    if (!kb_tensor_ewise_shape(op, args, &desc, &err))
        return lbind_raise_where(L, err);
    kb_tensor_ewise(op, args, ltensor_push(L, &desc, false));
    return 1;
}

/* An element-wise op, the closure's upvalue: a unary op takes a tensor, a
 * binary one a tensor or a number on either side. */
static int l_ewise(lua_State *L)
{
    kb_mop op = (kb_mop)lua_tointeger(L, lua_upvalueindex(1));
    const kb_mop_info *info = kb_mop_info_of(op);
    kb_operand args[2];
    if (info->arity == 1) {
        args[0] = (kb_operand){.t = ltensor_check(L, 1)};
    } else {
        operand(L, 1, info->name, &args[0]);
        operand(L, 2, info->name, &args[1]);
    }
    return ewise(L, op, args);
}

static int l_matmul(lua_State *L)
{
    const kb_tensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    kb_tensor desc;
    char *err;
    if (!kb_tensor_matmul_shape(a, b, &desc, &err) || !kb_tensor_matmul(a, b, ltensor_push(L, &desc, false), &err))
        return lbind_raise_where(L, err);
    return 1;
}

/* ==== comparisons ==== */

static double check_num(lua_State *L, int idx, const char *fn, const char *what)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: %s must be a number, got %s", fn, what, luaL_typename(L, idx));
    return lua_tonumber(L, idx);
}

/* (a, b[, rtol[, atol[, equal_nan]]]) or (a, b, {rtol=, atol=, equal_nan=}) */
static kb_close close_args(lua_State *L, const char *fn)
{
    kb_close c = {.rtol = 1e-5, .atol = 1e-8, .equal_nan = false};
    if (lua_type(L, 3) == LUA_TTABLE) {
        static const char *const known[] = {"rtol", "atol", "equal_nan", NULL};
        lbind_check_keys(L, 3, fn, NULL, known);
        if (lua_getfield(L, 3, "rtol") != LUA_TNIL)
            c.rtol = check_num(L, -1, fn, "rtol");
        if (lua_getfield(L, 3, "atol") != LUA_TNIL)
            c.atol = check_num(L, -1, fn, "atol");
        c.equal_nan = lbind_field_bool(L, 3, fn, "equal_nan", false);
        lua_pop(L, 2);
        return c;
    }
    if (!lua_isnoneornil(L, 3))
        c.rtol = check_num(L, 3, fn, "rtol");
    if (!lua_isnoneornil(L, 4))
        c.atol = check_num(L, 4, fn, "atol");
    c.equal_nan = lua_toboolean(L, 5);
    return c;
}

static int l_allclose(lua_State *L)
{
    const kb_tensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    kb_close c = close_args(L, "allclose");
    bool all;
    char *err;
    if (!kb_tensor_allclose(&c, a, b, &all, &err))
        return lbind_raise_where(L, err);
    lua_pushboolean(L, all);
    return 1;
}

static int l_isclose(lua_State *L)
{
    const kb_tensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    kb_close c = close_args(L, "isclose");
    kb_tensor desc;
    char *err;
    if (!kb_tensor_compare_shape("isclose", a, b, &desc, &err))
        return lbind_raise_where(L, err);
    kb_tensor_isclose(&c, a, b, ltensor_push(L, &desc, false));
    return 1;
}

static int l_equal(lua_State *L)
{
    const kb_tensor *a = ltensor_check(L, 1), *b = ltensor_check(L, 2);
    lua_pushboolean(L, kb_tensor_equal(a, b));
    return 1;
}

/* ==== reductions and softmax ==== */

/* (t) or (t, dim[, keepdim]) or (t, {dim=, keepdim=}); true if a dim is given. */
static bool red_args(lua_State *L, const char *fn, const kb_tensor *t, int *dim, bool *keepdim)
{
    bool has = false;
    if (lua_type(L, 2) == LUA_TTABLE) {
        static const char *const known[] = {"dim", "keepdim", NULL};
        lbind_check_keys(L, 2, fn, NULL, known);
        if (lua_getfield(L, 2, "dim") != LUA_TNIL) {
            has = true;
            *dim = ltensor_check_dim(L, fn, ltensor_check_int(L, -1, fn, "dim"), t->ndim);
        }
        *keepdim = lbind_field_bool(L, 2, fn, "keepdim", false);
        lua_pop(L, 1);
        return has;
    }
    if (!lua_isnoneornil(L, 2)) {
        has = true;
        *dim = ltensor_check_dim(L, fn, ltensor_check_int(L, 2, fn, "dim"), t->ndim);
    }
    *keepdim = lua_toboolean(L, 3);
    return has;
}

/* Without dim: a Lua number (an integer for integer and bool tensors,
 * except mean; a boolean for bool max/min). With dim: a tensor (max/min
 * also return the indices, as i32). */
static int reduce(lua_State *L, kb_mop op)
{
    const char *fn = kb_mop_info_of(op)->name;
    const kb_tensor *t = ltensor_check(L, 1);
    int dim = 0;
    bool keepdim;
    char *err;
    if (!red_args(L, fn, t, &dim, &keepdim)) {
        double v;
        kb_dtype dt;
        if (!kb_tensor_reduce_all(op, t, &v, &dt, &err))
            return lbind_raise_where(L, err);
        if (dt == KB_BOOL)
            lua_pushboolean(L, v != 0);
        else if (kb_dtype_is_float(dt))
            lua_pushnumber(L, v);
        else
            lua_pushinteger(L, (lua_Integer)v);
        return 1;
    }
    kb_tensor vals, idx;
    if (!kb_tensor_reduce_shape(op, t, dim, keepdim, &vals, &idx, &err))
        return lbind_raise_where(L, err);
    bool arg = op == KB_OP_MAX || op == KB_OP_MIN;
    const kb_tensor *v = ltensor_push(L, &vals, false), *i = arg ? ltensor_push(L, &idx, false) : NULL;
    kb_tensor_reduce(op, t, dim, v, i);
    return arg ? 2 : 1;
}

static int l_sum(lua_State *L) { return reduce(L, KB_OP_SUM); }
static int l_mean(lua_State *L) { return reduce(L, KB_OP_MEAN); }
static int l_max(lua_State *L) { return reduce(L, KB_OP_MAX); }
static int l_min(lua_State *L) { return reduce(L, KB_OP_MIN); }

static int l_softmax(lua_State *L)
{
    const kb_tensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "softmax: dim is required");
    int dim = ltensor_check_dim(L, "softmax", ltensor_check_int(L, 2, "softmax", "dim"), t->ndim);
    kb_tensor desc;
    kb_tensor_softmax_shape(t, &desc);
    kb_tensor_softmax(t, dim, ltensor_push(L, &desc, false));
    return 1;
}

/* ==== generators and random tensors ==== */

static kb_rng *check_gen(lua_State *L, int idx) { return luaL_checkudata(L, idx, GEN_MT); }

static int l_new_generator(lua_State *L)
{
    lua_Integer seed = lua_isnoneornil(L, 1) ? 0 : ltensor_check_int(L, 1, "new_generator", "seed");
    kb_rng *g = lua_newuserdatauv(L, sizeof *g, 0);
    kb_rng_seed(g, (uint64_t)seed);
    luaL_setmetatable(L, GEN_MT);
    return 1;
}

static int g_manual_seed(lua_State *L)
{
    kb_rng_seed(check_gen(L, 1), (uint64_t)ltensor_check_int(L, 2, "manual_seed", "seed"));
    lua_settop(L, 1);
    return 1;
}

static int g_initial_seed(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

static int g_get_state(lua_State *L)
{
    unsigned char b[32];
    kb_rng_state(check_gen(L, 1), b);
    lua_pushlstring(L, (const char *)b, sizeof b);
    return 1;
}

static int g_set_state(lua_State *L)
{
    kb_rng *g = check_gen(L, 1);
    size_t len;
    const char *b = luaL_checklstring(L, 2, &len);
    char *err;
    if (!kb_rng_set_state(g, (const unsigned char *)b, len, &err))
        return lbind_raise_where(L, err);
    lua_settop(L, 1);
    return 1;
}

static int g_tostring(lua_State *L)
{
    lua_pushfstring(L, "Generator(seed=%I)", (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

/* rand(shape..., [opts,] generator): the generator follows the shape and the
 * (optional, possibly nil) options, or is opts.generator. */
static int random_tensor(lua_State *L, bool normal)
{
    const char *fn = normal ? "randn" : "rand";
    int nd;
    int64_t shape[MAXD];
    int next = ltensor_read_shape(L, 1, fn, &nd, shape, false);
    kb_dtype dt = KB_F32;
    kb_rng *g = luaL_testudata(L, next, GEN_MT);
    if (!g) {
        static const char *const known[] = {"dtype", "generator", NULL};
        dt = ltensor_opt_dtype_of(L, next, fn, KB_F32, known);
        g = luaL_testudata(L, next + 1, GEN_MT);
        if (!g && lua_type(L, next) == LUA_TTABLE) {
            lua_getfield(L, next, "generator");
            g = luaL_testudata(L, -1, GEN_MT);
            lua_pop(L, 1); /* still referenced by the options table */
        }
    }
    if (!g)
        return luaL_error(L, "%s: needs a generator (new_generator(seed)) after the shape and options", fn);
    char *err;
    kb_tensor *t = ltensor_new(L, dt, nd, shape, false);
    if (!(normal ? kb_tensor_randn(g, t, &err) : kb_tensor_rand(g, t, &err)))
        return lbind_raise_where(L, err);
    return 1;
}

static int l_rand(lua_State *L) { return random_tensor(L, false); }
static int l_randn(lua_State *L) { return random_tensor(L, true); }

void ltensor_open_random(lua_State *L)
{
    static const luaL_Reg methods[] = {{"manual_seed", g_manual_seed}, {"initial_seed", g_initial_seed},
                                       {"get_state", g_get_state},     {"set_state", g_set_state},
                                       {NULL, NULL}};
    luaL_newmetatable(L, GEN_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}

/* ==== printing ==== */

static int t_tostring(lua_State *L)
{
    char *s = kb_tensor_format(ltensor_check(L, 1));
    lua_pushstring(L, s);
    free(s);
    return 1;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_lib_methods[] = {
    {"bytes", m_bytes}, {"hash", m_hash},   {"block", m_block}, {"set_block", m_set_block},
    {"fill_", m_fill},  {"zero_", m_zero},  {NULL, NULL}};

const luaL_Reg ltensor_lib_funcs[] = {
    {"rand", l_rand}, {"randn", l_randn}, {"new_generator", l_new_generator}, {NULL, NULL}};

const luaL_Reg ltensor_math_funcs[] = {
    {"matmul", l_matmul},   {"allclose", l_allclose}, {"isclose", l_isclose}, {"equal", l_equal},
    {"sum", l_sum},         {"mean", l_mean},         {"max", l_max},         {"min", l_min},
    {"softmax", l_softmax}, {NULL, NULL}};

const luaL_Reg ltensor_lib_meta[] = {{"__tostring", t_tostring}, {NULL, NULL}};

void ltensor_set_ewise(lua_State *L, int funcs, int meta)
{
    /* the engine's ops host tensors have, and the metamethod of each operator */
    static const struct {
        const char *op, *meta;
    } ops[] = {{"add", "__add"}, {"sub", "__sub"}, {"mul", "__mul"},     {"div", "__div"},
               {"neg", "__unm"}, {"exp", NULL},    {"log", NULL},        {"sqrt", NULL},
               {"abs", NULL},    {"relu", NULL},   {"sigmoid", NULL},    {"tanh", NULL}};
    funcs = lua_absindex(L, funcs);
    meta = meta ? lua_absindex(L, meta) : 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        kb_mop op;
        if (!kb_mop_parse(ops[i].op, &op))
            luaL_error(L, "kernbench.tensor_c: '%s' is not an op of the arithmetic engine", ops[i].op);
        lua_pushinteger(L, op);
        lua_pushcclosure(L, l_ewise, 1);
        if (meta && ops[i].meta) {
            lua_pushvalue(L, -1);
            lua_setfield(L, meta, ops[i].meta);
        }
        lua_setfield(L, funcs, ops[i].op);
    }
}
