/* Composite commands from Lua (tl.composite / tl.wait; PE_SCHEDULER and
 * the pipeline are src/comp/pe/scheduler.c and pipeline.c):
 *
 *   h = ctx:composite{op = "gemm" | "math", a = A, b = B, out_ptr = va,
 *                     math_op = "exp", out_dtype = "f16", tile = {tm, tk, tn},
 *                     epilogue = {{kind =, scope = "k_tile" | "output_tile",
 *                                  view = tensor | nil, value = number | nil}, ...}}
 *   ctx:wait(h)     -- blocks until h's tiles are done
 *   ctx:wait()      -- blocks until every composite of this kernel is done
 *   h:done(), h:stats()
 *
 * A and B are tensor handles (pinned: already in TCM) or references
 * {ptr =, shape =, dtype =} streamed tile by tile from memory. Issuing costs
 * the PE_CPU its dispatch (the call blocks that long) and returns the
 * handle; the tiles then flow while the kernel goes on. lua/kernbench/tl.lua
 * checks the user's table (ops, fields, scopes) before it gets here; here
 * its values become kb_composite_args, the PE wing plans the composite
 * (kb_composite_plan: shapes, dtypes, tiles, epilogues) and the kernel
 * instance submits it (base addresses are checked by PE_MMU there); their
 * errors are raised here. */
#include "core/util.h"
#include "luasim/lbind.h"
#include "lua/ltl_internal.h"

#include <stdlib.h>
#include <string.h>

#define LCOMP_MT "kernbench.tl_composite"

typedef struct comp_ud {
    kb_composite *c;
} comp_ud;

static comp_ud *check_comp(lua_State *L, int idx) { return luaL_checkudata(L, idx, LCOMP_MT); }

bool ltl_test_composite(lua_State *L, int idx) { return luaL_testudata(L, idx, LCOMP_MT) != NULL; }

static int comp_gc(lua_State *L)
{
    comp_ud *u = check_comp(L, 1);
    if (u->c)
        kb_composite_unref(u->c);
    u->c = NULL;
    return 0;
}

/* ---- waiting ---- */

/* Raises the first failed composite's error, once. */
static void raise_failure(lua_State *L, ltl_ctx *x)
{
    char *err = kb_kernel_take_composite_error(x->k);
    if (err)
        lbind_raise(L, err);
}

static int after_wait(lua_State *L, int status, lua_KContext k)
{
    (void)status;
    (void)k;
    raise_failure(L, ltl_check_ctx(L, 1));
    return 0;
}

/* ctx:wait([h]) */
static int ctx_wait(lua_State *L)
{
    ltl_ctx *x = ltl_check_ctx(L, 1);
    kb_composite *c = NULL;
    if (!lua_isnoneornil(L, 2)) {
        c = check_comp(L, 2)->c;
        if (c->kernel != x->k)
            return luaL_error(L,
                              "tl.wait: the composite handle belongs to kernel '%s' on %s, %s (this one is '%s' "
                              "on %s): a kernel waits only for its own composites",
                              kb_kernel_name(c->kernel), kb_kernel_where(c->kernel),
                              kb_kernel_ended(c->kernel) ? "which has ended" : "another kernel instance",
                              kb_kernel_name(x->k), kb_kernel_where(x->k));
    }
    lua_settop(L, 1);
    if (kb_kernel_done(x->k, c)) {
        raise_failure(L, x);
        return 0;
    }
    lproc *p = lsim_current(L, x->S, "tl.wait");
    if (!p)
        return lsim_would_block(L, "tl.wait", "composite commands are still running");
    lsim_prepare_block(L, p, "tl.wait");
    x->waiting = p;
    kb_kernel_wait(x->k, c);
    return lsim_block(L, p, after_wait);
}

/* ---- issuing ---- */

/* Operand `name` (a or b) of the table at t into o: a tensor handle is
 * pinned, a reference {ptr =, shape =, dtype =} streamed. Leaves nothing on
 * the stack. */
static void operand(lua_State *L, ltl_ctx *x, int t, const char *name, kb_composite_arg *o)
{
    lua_getfield(L, t, name);
    int idx = lua_gettop(L);
    if (ltl_test_tensor(L, idx)) {
        o->pinned = true;
        o->v = ltl_check_tensor(L, idx, "tl.composite", 0, x)->v;
    } else if (lua_istable(L, idx)) {
        static const char *const known[] = {"ptr", "shape", "dtype", NULL};
        lbind_check_keys(L, idx, "tl.composite", "a tl.ref's fields", known);
        lua_getfield(L, idx, "ptr");
        o->va = ltl_check_ptr(L, lua_gettop(L), "tl.composite");
        lua_getfield(L, idx, "shape");
        int64_t shape[KB_VIEW_MAXDIM];
        int nd = ltl_parse_shape(L, lua_gettop(L), "tl.composite", shape);
        lua_getfield(L, idx, "dtype");
        /* its shape and dtype only (kb_composite_plan checks the sizes) */
        memset(&o->v, 0, sizeof o->v);
        o->v.dtype = ltl_parse_dtype(L, lua_gettop(L), "tl.composite", "f16");
        o->v.ndim = nd;
        memcpy(o->v.shape, shape, (size_t)nd * sizeof *shape);
        o->pinned = false;
    } else {
        luaL_error(L, "tl.composite: %s must be a tensor handle (tl.load) or a tl.ref", name);
    }
    lua_settop(L, idx - 1);
}

/* The epilogue list of the table at t into a. Its names stay on the stack
 * (their strings must outlive the planning). */
static void epilogue(lua_State *L, ltl_ctx *x, int t, kb_composite_args *a)
{
    if (lua_getfield(L, t, "epilogue") == LUA_TNIL)
        return;
    int e = lua_gettop(L);
    a->nepi = (int)lua_rawlen(L, e);
    luaL_checkstack(L, 3 * KB_MAX_EPILOGUE + 4, "tl.composite");
    for (int i = 0; i < a->nepi && i < KB_MAX_EPILOGUE; i++) {
        kb_epilogue_arg *ep = &a->epi[i];
        lua_rawgeti(L, e, i + 1);
        int op = lua_gettop(L);
        static const char *const known[] = {"kind", "scope", "view", "value", NULL};
        if (lua_istable(L, op))
            lbind_check_keys(L, op, "tl.composite", "an epilogue's fields", known);
        lua_getfield(L, op, "kind");
        ep->op = lua_isnil(L, -1) ? NULL : lbind_tostr(L, -1, "tl.composite", "an epilogue's kind");
        lua_getfield(L, op, "scope");
        ep->scope = lua_isnil(L, -1) ? NULL : lbind_tostr(L, -1, "tl.composite", "an epilogue's scope");
        lua_getfield(L, op, "view");
        if (ltl_test_tensor(L, -1)) {
            ep->has_view = true;
            ep->v = ltl_check_tensor(L, lua_gettop(L), "tl.composite", 0, x)->v;
        }
        lua_getfield(L, op, "value");
        ep->value = luaL_optnumber(L, -1, 1.0); /* tl.lua insists on a value where an op uses one */
        lua_pop(L, 2);
    }
}

/* ctx:composite(table) -> handle */
static int ctx_composite(lua_State *L)
{
    ltl_ctx *x = ltl_check_ctx(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    static const char *const known[] = {"op", "math_op", "a", "b", "out_dtype", "tile", "out_ptr", "epilogue", NULL};
    lbind_check_keys(L, 2, "tl.composite", "the composite's fields", known);
    /* Whatever can raise comes before the composite is submitted, so an
     * error leaves nothing running: the PE_CPU's dispatch of the call (a
     * command of no cycles) and the process that waits for it first. */
    char *err = NULL;
    if (!kb_pe_op_cycles(ltl_command(L, x, "tl.composite"), 0, &err))
        return lbind_raise_where(L, err);
    lproc *p = ltl_command_process(L, x, "tl.composite");
    kb_composite_args a;
    memset(&a, 0, sizeof a);
    lua_getfield(L, 2, "op"); /* names stay on the stack until the plan is made */
    a.op = lua_isnil(L, -1) ? NULL : lbind_tostr(L, -1, "tl.composite", "field 'op'");
    lua_getfield(L, 2, "math_op");
    a.math_op = lua_isnil(L, -1) ? NULL : lbind_tostr(L, -1, "tl.composite", "field 'math_op'");
    operand(L, x, 2, "a", &a.in[0]);
    a.nin = 1;
    if (lua_getfield(L, 2, "b") != LUA_TNIL)
        operand(L, x, 2, "b", &a.in[a.nin++]);
    lua_pop(L, 1);
    lua_getfield(L, 2, "out_dtype");
    kb_dtype out;
    if (!lua_isnil(L, -1)) {
        out = ltl_parse_dtype(L, lua_gettop(L), "tl.composite", NULL);
        a.out_dtype = &out;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "tile") != LUA_TNIL) {
        static const char *const names[3] = {"tile size tm", "tile size tk", "tile size tn"};
        for (int i = 0; i < 3; i++) {
            lua_rawgeti(L, -1, i + 1);
            a.has_tile[i] = !lua_isnil(L, -1);
            a.tile[i] = a.has_tile[i] ? ltl_check_int(L, lua_gettop(L), "tl.composite", names[i]) : 0;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "out_ptr");
    a.out_va = ltl_check_ptr(L, lua_gettop(L), "tl.composite");
    lua_pop(L, 1);
    epilogue(L, x, 2, &a);
    kb_composite *c = kb_xmalloc(sizeof *c);
    if (!kb_composite_plan(&a, c, &err)) {
        free(c);
        return lbind_raise_where(L, err);
    }
    if (!kb_kernel_composite(x->k, c, &err)) { /* a PE_MMU fault names the kernel and the time */
        free(c);
        return lbind_raise(L, err);
    }
    /* the handle (the submitter's reference), then the dispatch */
    lua_settop(L, 1);
    comp_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->c = c;
    luaL_setmetatable(L, LCOMP_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return ltl_submit_command(L, x, p);
}

/* ---- handle methods ---- */

static int comp_done(lua_State *L)
{
    lua_pushboolean(L, check_comp(L, 1)->c->finished);
    return 1;
}

/* h:stats() -> {tiles, submit_ns, first_ns, done_ns, window_ns (done - submit, exact), stage_ns = {DMA_READ = ...}, stage_counts = {...}} */
static int comp_stats(lua_State *L)
{
    kb_composite *c = check_comp(L, 1)->c;
    lua_createtable(L, 0, 6);
    lbind_set_int(L, "tiles", (lua_Integer)c->ntiles);
    lbind_set_time(L, "submit_ns", c->t_submit);
    lbind_set_time(L, "first_ns", c->t_first);
    if (c->finished) {
        lbind_set_time(L, "done_ns", c->t_done);
        lbind_set_time(L, "window_ns", c->t_done - c->t_submit);
    }
    lua_createtable(L, 0, KB_ST_COUNT);
    lua_createtable(L, 0, KB_ST_COUNT);
    for (int i = 0; i < KB_ST_COUNT; i++) {
        lbind_push_time(L, c->stage_ps[i]);
        lua_setfield(L, -3, kb_stage_name((kb_stage_type)i));
        lua_pushinteger(L, (lua_Integer)c->stage_n[i]);
        lua_setfield(L, -2, kb_stage_name((kb_stage_type)i));
    }
    lua_setfield(L, -3, "stage_counts");
    lua_setfield(L, -2, "stage_ns");
    return 1;
}

static int comp_tostring(lua_State *L)
{
    kb_composite *c = check_comp(L, 1)->c;
    lua_pushfstring(L, "tl.composite(%s %Ix%Ix%I, %I tiles, %s)", c->plan.gemm ? "gemm" : "math",
                    (lua_Integer)c->plan.M, (lua_Integer)c->plan.K, (lua_Integer)c->plan.N, (lua_Integer)c->ntiles,
                    c->finished ? "done" : "running");
    return 1;
}

const luaL_Reg ltl_composite_methods[] = {{"composite", ctx_composite}, {"wait", ctx_wait}, {NULL, NULL}};

void ltl_open_composite(lua_State *L)
{
    static const luaL_Reg methods[] = {{"done", comp_done}, {"stats", comp_stats}, {NULL, NULL}};
    luaL_newmetatable(L, LCOMP_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, comp_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, comp_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "tl.composite");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
}
