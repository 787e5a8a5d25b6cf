/* The `kernbench.pe_c` module: a kernel instance's context, and the tl.*
 * commands that run on its PE.
 *
 *   ctx = pe_c.context(s, {sip=, cube=, pe=, scratch_base=, scratch_size=, data=, pa_fallback=, name=})
 *   load, store = ctx:tl_functions([on_write])  -- tl.load / tl.store bound to ctx:
 *     h = load(va, shape, dtype) / load(ref)    -- blocking: PE_MMU, DMA into TCM scratch
 *     store(va, h)                              -- blocking: TCM -> memory
 *   c = ctx:dot(a, b[, out_dtype])               -- blocking: fetch, GEMM, write back
 *   y = ctx:math(op, axis, x[, y[, z]])          -- blocking: fetch, MATH, write back
 *   y = ctx:cast(x, dtype)                       -- blocking: math, the values as dtype
 *   ctx:cycles(n)                                -- blocking: PE_CPU busy
 *   h = ctx:full(shape, dtype, v[, zeros]) / ctx:arange(start, stop, dtype)  -- no time
 *   t = ctx:trans(h)                             -- a view: last two dims swapped
 *   ctx:stats() -> {dma_ns, compute_ns, calls, scratch_bytes}
 *   ctx:span(name, start_ps)                     -- a trace slice on PE_CPU until now
 *   ctx:finish()                                 -- the body has returned (a launched instance)
 *   ctx:composite{...}, ctx:wait([h])            -- ltl_composite.c
 *   ctx:send(dir, h), ctx:recv(...) ...          -- ltl_ipcq.c (PE-to-PE queues)
 *
 * The context holds a reference to the kernel instance (kb_kernel, machine
 * state in src/comp/pe/kernel.c); these functions convert Lua values to C
 * ones, have the PE wing build the instance's command from them (its rules
 * and messages: kb_pe_op_* in src/comp/pe/ops.c), place the result in
 * scratch and yield until the instance's wake function resumes the
 * kernel's process. Addresses are passed on as
 * virtual addresses: PE_MMU translates them in the command's mmu stage, so
 * a fault is raised when the kernel resumes, at the tl call. Operators on
 * handles are PE_MATH commands too (ltl_tensor.c). */
#include "lua/ltl.h"
#include "lua/ltl_internal.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "lua/lmachine.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LTL_MT "kernbench.pe_context"

/* Registry key of the context metatable (besides its name): checking a
 * userdata by pointer key avoids interning the name on every call. */
static const char CTX_KEY;

void *ltl_test_ud(lua_State *L, int idx, const void *key)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, key);
    bool same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}

/* ---- contexts ---- */

/* A context whose simulation is open (its instance may have ended). */
ltl_ctx *ltl_check_open_ctx(lua_State *L, int idx)
{
    ltl_ctx *c = ltl_test_ud(L, idx, &CTX_KEY);
    if (!c)
        luaL_typeerror(L, idx, "PE context");
    if (!c->k || !kb_kernel_pe(c->k))
        luaL_error(L, "PE context is closed");
    return c;
}

ltl_ctx *ltl_check_ctx(lua_State *L, int idx)
{
    ltl_ctx *c = ltl_check_open_ctx(L, idx);
    if (kb_kernel_ended(c->k))
        luaL_error(L,
                   "tl: kernel '%s' on %s has ended: its tl functions and tensor handles cannot be used after "
                   "its body returns (its TCM scratch is reused); keep values in memory with tl.store",
                   kb_kernel_name(c->k), kb_kernel_where(c->k));
    return c;
}

/* The instance calls back when its command completes or a wait is
 * satisfied: the kernel's process resumes. */
static void ctx_wake(kb_kernel *k, void *arg)
{
    (void)k;
    ltl_ctx *c = arg;
    lproc *p = c->waiting;
    c->waiting = NULL;
    if (p)
        p->waiter.wake(c->S->sim, &p->waiter);
}

/* Commands and composites in flight keep the instance alive without us. */
static int ctx_gc(lua_State *L)
{
    ltl_ctx *c = lbind_checkudata(L, 1, LTL_MT);
    if (c->k) {
        kb_kernel_set_wake(c->k, NULL, NULL);
        kb_kernel_unref(c->k);
        c->k = NULL;
    }
    return 0;
}

static int l_context(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        return luaL_error(L, "pe_c.context: this simulation has no topology");
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *call = "pe_c.context";
    static const char *const known[] = {"sip", "cube", "pe", "scratch_base", "scratch_size", "data", "pa_fallback",
                                        "name", NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    int sip = (int)lbind_need_int(L, 2, call, "sip", 0, INT_MAX);
    int cube = (int)lbind_need_int(L, 2, call, "cube", 0, INT_MAX);
    int pe = (int)lbind_need_int(L, 2, call, "pe", 0, INT_MAX);
    uint64_t base = (uint64_t)lbind_need_int(L, 2, call, "scratch_base", 0, LUA_MAXINTEGER);
    uint64_t size = (uint64_t)lbind_need_int(L, 2, call, "scratch_size", 0, LUA_MAXINTEGER);
    bool data = lbind_field_bool(L, 2, call, "data", false);
    bool pa_fallback = lbind_field_bool(L, 2, call, "pa_fallback", false);
    lua_getfield(L, 2, "name");
    const char *name = lua_isnil(L, -1) ? "kernel" : lbind_tostr(L, -1, call, "field 'name'");
    char *err = NULL;
    kb_pe *p = kb_pe_find(S->mach->fab, sip, cube, pe, &err);
    if (!p)
        return lbind_raise(L, err);
    kb_kernel *k = kb_kernel_new(p, name, base, size, data, pa_fallback);
    ltl_push_context(L, 1, S, k);
    kb_kernel_unref(k); /* the context's reference remains */
    return 1;
}

void ltl_push_context(lua_State *L, int sim_idx, lsim *S, kb_kernel *k)
{
    sim_idx = lua_absindex(L, sim_idx);
    ltl_ctx *c = lua_newuserdatauv(L, sizeof *c, 1);
    memset(c, 0, sizeof *c);
    luaL_setmetatable(L, LTL_MT);
    lua_pushvalue(L, sim_idx); /* keep the simulation alive */
    lua_setiuservalue(L, -2, 1);
    c->S = S;
    c->k = k;
    kb_kernel_ref(k);
    kb_kernel_set_wake(k, ctx_wake, c);
}

/* ---- arguments ---- */

uint64_t ltl_check_ptr(lua_State *L, int idx, const char *call)
{
    int ok;
    lua_Integer va = lua_tointegerx(L, idx, &ok);
    if (!ok)
        luaL_error(L, "%s: the pointer must be an integer address (a tensor argument plus a byte offset), "
                      "got %s", call, lua_type(L, idx) == LUA_TNUMBER ? "a float" : luaL_typename(L, idx));
    return (uint64_t)va;
}

lua_Integer ltl_check_int(lua_State *L, int idx, const char *call, const char *what)
{
    int ok = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    if (!ok)
        luaL_error(L, "%s: %s must be an integer, got %s", call, what,
                   lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx));
    return v;
}

/* ---- blocking commands ---- */

kb_pe_op *ltl_command(lua_State *L, ltl_ctx *c, const char *call)
{
    char *err = NULL;
    kb_pe_op *op = kb_kernel_command(c->k, call, &err);
    if (!op)
        lbind_raise(L, err);
    return op;
}

/* The continuation: the context is at 1, the result (if any) above it. */
static int after_command(lua_State *L, int status, lua_KContext k)
{
    (void)status;
    (void)k;
    ltl_ctx *c = ltl_check_ctx(L, 1);
    char *err = kb_kernel_take_error(c->k);
    if (err)
        return lbind_raise(L, err);
    return c->nret;
}

lproc *ltl_command_process(lua_State *L, ltl_ctx *c, const char *call)
{
    lproc *p = lsim_current(L, c->S, call);
    if (!p)
        lsim_would_block(L, call, "it runs on the PE's engines");
    lsim_prepare_block(L, p, call);
    return p;
}

int ltl_submit_command(lua_State *L, ltl_ctx *c, lproc *p)
{
    c->nret = lua_gettop(L) > 1; /* the result, if any, sits above the context */
    c->waiting = p;
    kb_kernel_submit(c->k);
    return lsim_block(L, p, after_command);
}

int ltl_start_command(lua_State *L, ltl_ctx *c, const char *call)
{
    return ltl_submit_command(L, c, ltl_command_process(L, c, call));
}

/* A tl.ref table at idx: replaces it by its pointer and fills shape and
 * dtype at idx+1, idx+2 (a load of a reference loads what it names). */
static void unref(lua_State *L, int idx, bool all)
{
    if (!lua_istable(L, idx))
        return;
    static const char *const known[] = {"ptr", "shape", "dtype", NULL};
    lbind_check_keys(L, idx, all ? "tl.load" : "tl.store", "a tl.ref's fields", known);
    lua_getfield(L, idx, "ptr");
    if (all) {
        lua_getfield(L, idx, "shape");
        lua_replace(L, idx + 1);
        lua_getfield(L, idx, "dtype");
        lua_replace(L, idx + 2);
    }
    lua_replace(L, idx);
}

/* tl.load(ptr, shape, dtype="f16") or tl.load(ref): upvalue 1 is the context. */
static int tl_load(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, lua_upvalueindex(1));
    lua_settop(L, 3);
    unref(L, 1, true);
    uint64_t va = ltl_check_ptr(L, 1, "tl.load");
    int64_t shape[KB_VIEW_MAXDIM];
    int nd = ltl_parse_shape(L, 2, "tl.load", shape);
    kb_dtype dt = ltl_parse_dtype(L, 3, "tl.load", "f16");
    kb_pe_op *op = ltl_command(L, c, "tl.load");
    kb_pe_op_load(op, va, dt, nd, shape);
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    ltl_place_result(L, 1, c, "tl.load", &op->out);
    return ltl_start_command(L, c, "tl.load");
}

/* tl.store(ptr, handle): upvalue 1 is the context. */
static int tl_store(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, lua_upvalueindex(1));
    lua_settop(L, 2);
    unref(L, 1, false);
    uint64_t va = ltl_check_ptr(L, 1, "tl.store");
    if (!ltl_test_tensor(L, 2))
        return luaL_error(L, "tl.store: the value must be a tensor handle (from tl.load, tl.dot, math ...), got %s",
                          lua_istable(L, 2) ? "a table (a tl.ref? load it first)" : luaL_typename(L, 2));
    ltl_tensor *t = ltl_check_tensor(L, 2, "tl.store", 2, c);
    char *err = NULL;
    if (!kb_pe_op_store(ltl_command(L, c, "tl.store"), va, &t->v, &err))
        return lbind_raise_where(L, err);
    if (lua_type(L, lua_upvalueindex(2)) == LUA_TFUNCTION) { /* the runtime's on_write(va) */
        lua_pushvalue(L, lua_upvalueindex(2));
        lua_pushvalue(L, 1);
        lua_call(L, 1, 0);
    }
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    return ltl_start_command(L, c, "tl.store");
}

/* ctx:tl_functions([on_write]) -> load, store: the two C closures bound to
 * ctx; store calls on_write(va) (if given) once its command is built. */
static int ctx_tl_functions(lua_State *L)
{
    ltl_check_ctx(L, 1);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, tl_load, 1);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, tl_store, 2);
    return 2;
}

static int ctx_cycles(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    char *err = NULL;
    if (!kb_pe_op_cycles(ltl_command(L, c, "tl.cycles"), n, &err))
        return lbind_raise_where(L, err);
    lua_settop(L, 1);
    return ltl_start_command(L, c, "tl.cycles");
}

/* ctx:dot(a, b[, out_dtype]) */
static int ctx_dot(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    ltl_tensor *a = ltl_check_tensor(L, 2, "tl.dot", 1, c), *b = ltl_check_tensor(L, 3, "tl.dot", 2, c);
    kb_dtype out;
    bool has_out = !lua_isnoneornil(L, 4);
    if (has_out)
        out = ltl_parse_dtype(L, 4, "tl.dot", NULL);
    kb_pe_op *op = ltl_command(L, c, "tl.dot");
    char *err = NULL;
    if (!kb_pe_op_dot(op, &a->v, &b->v, has_out ? &out : NULL, &err))
        return lbind_raise_where(L, err);
    lua_settop(L, 1);
    ltl_place_result(L, 1, c, "tl.dot", &op->out);
    return ltl_start_command(L, c, "tl.dot");
}

/* Operands at first .. first+nargs-1 are tensor handles or numbers (and
 * booleans, as 0 and 1); the axis, if axis_idx > 0, is there. The command
 * (and the result handle) are named after the op. */
int ltl_math_command(lua_State *L, ltl_ctx *c, kb_mop mop, int first, int nargs, int axis_idx)
{
    const char *name = kb_mop_info_of(mop)->name;
    kb_pe_operand in[3];
    for (int i = 0; i < nargs && i < 3; i++) {
        int idx = first + i;
        if (lua_type(L, idx) == LUA_TNUMBER || lua_isboolean(L, idx))
            in[i] = (kb_pe_operand){.is_imm = true,
                                    .imm = lua_isboolean(L, idx) ? lua_toboolean(L, idx) : lua_tonumber(L, idx)};
        else
            in[i] = (kb_pe_operand){.v = ltl_check_operand(L, idx, name, i + 1, c)->v};
    }
    int64_t axis;
    bool has_axis = axis_idx > 0 && !lua_isnoneornil(L, axis_idx);
    if (has_axis) {
        char call[48];
        snprintf(call, sizeof call, "tl.%s", name);
        axis = ltl_check_int(L, axis_idx, call, "the axis");
    }
    kb_pe_op *op = ltl_command(L, c, name);
    char *err = NULL;
    if (!kb_pe_op_math(op, mop, nargs, in, has_axis ? &axis : NULL, &err))
        return lbind_raise_where(L, err);
    lua_settop(L, 1);
    ltl_place_result(L, 1, c, name, &op->out);
    return ltl_start_command(L, c, name);
}

static int ctx_math(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    const char *name = lbind_checkstr(L, 2, "ctx:math", "op");
    kb_mop op;
    if (!kb_mop_parse(name, &op))
        return luaL_error(L, "tl: unknown math operation '%s'", name);
    int nargs = lua_gettop(L) - 3;
    return ltl_math_command(L, c, op, 4, nargs, 3);
}

/* ctx:cast(x, dtype) */
static int ctx_cast(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    kb_pe_operand x = {.v = ltl_check_operand(L, 2, "cast", 1, c)->v};
    lbind_checkstr(L, 3, "tl.cast", "dtype");
    kb_dtype dt = ltl_parse_dtype(L, 3, "tl.cast", NULL);
    kb_pe_op *op = ltl_command(L, c, "cast");
    char *err = NULL;
    if (!kb_pe_op_cast(op, &x, dt, &err))
        return lbind_raise_where(L, err);
    lua_settop(L, 1);
    ltl_place_result(L, 1, c, "cast", &op->out);
    return ltl_start_command(L, c, "cast");
}

/* ---- no-time tensors: constants, ranges, views ---- */

static int ctx_full(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    const char *call = lua_toboolean(L, 5) ? "tl.zeros" : "tl.full"; /* 5: called as tl.zeros */
    int64_t shape[KB_VIEW_MAXDIM];
    int nd = ltl_parse_shape(L, 2, call, shape);
    kb_dtype dt = ltl_parse_dtype(L, 3, call, "f16");
    if (!lua_isboolean(L, 4) && lua_type(L, 4) != LUA_TNUMBER)
        return luaL_error(L, "%s: the value must be a number or a boolean, got %s", call, luaL_typename(L, 4));
    double v = lua_isboolean(L, 4) ? lua_toboolean(L, 4) : lua_tonumber(L, 4);
    lua_settop(L, 1);
    ltl_tensor *t = ltl_push_result(L, 1, c, call, dt, nd, shape);
    kb_kernel_fill(c->k, &t->v, v, 0);
    return 1;
}

static int ctx_arange(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    lua_Integer a = ltl_check_int(L, 2, "tl.arange", "start"), b = ltl_check_int(L, 3, "tl.arange", "stop");
    if (b <= a)
        return luaL_error(L, "tl.arange: end (%I) must be greater than start (%I)", b, a);
    kb_dtype dt = ltl_parse_dtype(L, 4, "tl.arange", "i32");
    int64_t n;
    if (!kb_sub_i64(b, a, &n))
        return luaL_error(L, "tl.arange: %I .. %I has more than 2^63 values", a, b);
    lua_settop(L, 1);
    ltl_tensor *t = ltl_push_result(L, 1, c, "tl.arange", dt, 1, &n);
    kb_kernel_fill(c->k, &t->v, (double)a, 1);
    return 1;
}

static int ctx_trans(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    ltl_tensor *t = ltl_check_tensor(L, 2, "tl.trans", 1, c);
    kb_tview v;
    char *err = NULL;
    if (!kb_pe_trans(&t->v, &v, &err))
        return lbind_raise_where(L, err);
    ltl_tensor *r = ltl_new_tensor(L, 1);
    *r = *t;
    r->v = v;
    return 1;
}

static int ctx_stats(lua_State *L)
{
    ltl_ctx *c = ltl_check_open_ctx(L, 1);
    kb_kernel_stats st;
    kb_kernel_stats_of(c->k, &st);
    lua_createtable(L, 0, 4);
    lbind_set_time(L, "dma_ns", st.dma_ps);
    lbind_set_time(L, "compute_ns", st.compute_ps);
    lbind_set_int(L, "calls", (lua_Integer)st.calls);
    lbind_set_int(L, "scratch_bytes", (lua_Integer)st.scratch_bytes);
    return 1;
}

/* ctx:span(name, start_ps): a slice on the PE_CPU track from start to now. */
static int ctx_span(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    const char *name = lbind_checkstr(L, 2, "ctx:span", "name");
    kb_time start = (kb_time)luaL_checkinteger(L, 3);
    kb_pe_cpu_span(kb_kernel_pe(c->k), name, start, kb_sim_now(c->S->sim));
    return 0;
}

/* ctx:finish(): the kernel's body has returned (after ctx:wait()); its
 * launcher (PE_CPU) answers. */
static int ctx_finish(lua_State *L)
{
    char *err = NULL;
    if (!kb_kernel_finish(ltl_check_open_ctx(L, 1)->k, &err))
        return lbind_raise(L, err);
    return 0;
}

/* ctx:abandon(): the kernel's body has failed (called as its to-be-closed
 * guard closes; a no-op once it has finished): the instance ends when its
 * commands in flight have, so its scratch goes back to the PE and PE_CPU
 * answers the launch. */
static int ctx_abandon(lua_State *L)
{
    ltl_ctx *c = ltl_test_ud(L, 1, &CTX_KEY);
    if (!c)
        return luaL_typeerror(L, 1, "PE context");
    if (c->k && kb_kernel_pe(c->k))
        kb_kernel_abandon(c->k);
    return 0;
}

static int ctx_is_data(lua_State *L)
{
    lua_pushboolean(L, kb_kernel_data(ltl_check_open_ctx(L, 1)->k));
    return 1;
}

/* ---- the module ---- */

static const luaL_Reg ctx_methods[] = {
    {"tl_functions", ctx_tl_functions}, {"dot", ctx_dot}, {"math", ctx_math}, {"cast", ctx_cast},
    {"cycles", ctx_cycles}, {"full", ctx_full}, {"arange", ctx_arange}, {"trans", ctx_trans},
    {"stats", ctx_stats}, {"is_data", ctx_is_data}, {"span", ctx_span}, {"finish", ctx_finish}, {"abandon", ctx_abandon},
    {NULL, NULL}};

static int l_is_tensor(lua_State *L)
{
    lua_pushboolean(L, ltl_test_tensor(L, 1) != NULL);
    return 1;
}

static int l_is_composite(lua_State *L)
{
    lua_pushboolean(L, ltl_test_composite(L, 1));
    return 1;
}

static const luaL_Reg funcs[] = {
    {"context", l_context}, {"is_tensor", l_is_tensor}, {"is_composite", l_is_composite}, {NULL, NULL}};

int luaopen_kb_pe(lua_State *L)
{
    luaL_newmetatable(L, LTL_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &CTX_KEY);
    luaL_newlib(L, ctx_methods); /* the context's methods: these and the composites' */
    luaL_setfuncs(L, ltl_composite_methods, 0);
    luaL_setfuncs(L, ltl_ipcq_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltl_open_tensor(L);
    ltl_open_composite(L);
    luaL_newlib(L, funcs);
    luaL_setfuncs(L, ltl_pe_funcs, 0);
    return 1;
}
