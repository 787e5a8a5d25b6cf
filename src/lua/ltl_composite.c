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
 * the table becomes a kb_composite, which the kernel instance submits
 * (base addresses are checked by PE_MMU there, the error raised here). */
#include "core/util.h"
#include "lua/lbind.h"
#include "lua/ltl_internal.h"

#include <stdlib.h>
#include <string.h>

#define LCOMP_MT "kernbench.tl_composite"

typedef struct comp_ud {
    kb_composite *c;
} comp_ud;

static comp_ud *check_comp(lua_State *L, int idx) { return luaL_checkudata(L, idx, LCOMP_MT); }

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
            return luaL_error(L, "tl.wait: the handle belongs to another PE's kernel");
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

static int field(lua_State *L, int t, const char *k) { return lua_getfield(L, t, k); }

/* Operand `name` (a or b) of the table at t into o; pinned tensors carry
 * their view, references their address. Leaves nothing on the stack. */
static void operand(lua_State *L, ltl_ctx *x, int t, const char *name, kb_operand *o)
{
    field(L, t, name);
    int idx = lua_gettop(L);
    ltl_tensor *h = ltl_test_tensor(L, idx);
    if (h) {
        ltl_check_tensor(L, idx, "tl.composite", 0, x);
        if (h->v.ndim != 2)
            luaL_error(L, "tl.composite: %s must be 2-D", name);
        o->pinned = true;
        o->v = h->v;
        o->rows = h->v.shape[0], o->cols = h->v.shape[1];
        o->dtype = h->v.dtype;
    } else if (lua_istable(L, idx)) {
        field(L, idx, "ptr");
        o->va = ltl_check_ptr(L, lua_gettop(L), "tl.composite");
        lua_pop(L, 1);
        field(L, idx, "shape");
        int64_t shape[KB_VIEW_MAXDIM];
        int nd = ltl_parse_shape(L, lua_gettop(L), "tl.composite", shape);
        lua_pop(L, 1);
        if (nd != 2)
            luaL_error(L, "tl.composite: %s must be 2-D", name);
        o->rows = shape[0], o->cols = shape[1];
        field(L, idx, "dtype");
        o->dtype = ltl_parse_dtype(L, lua_gettop(L), "tl.composite", "f16");
        lua_pop(L, 1);
        o->pinned = false;
    } else {
        luaL_error(L, "tl.composite: %s must be a tensor handle (tl.load) or a tl.ref", name);
    }
    lua_pop(L, 1);
}

static void shape_error(lua_State *L, const char *what, const kb_operand *a, const kb_operand *b)
{
    luaL_error(L, "tl.composite: %s: shapes [%I, %I] and [%I, %I]", what, (lua_Integer)a->rows,
               (lua_Integer)a->cols, (lua_Integer)b->rows, (lua_Integer)b->cols);
}

static kb_epi_operand epi_operand_of(const kb_tview *v, int64_t M, int64_t N)
{
    int64_t r = v->ndim >= 2 ? v->shape[v->ndim - 2] : 1, c = v->shape[v->ndim - 1];
    if (r == M && c == N && M * N > 1)
        return KB_EPI_TILE;
    if (c == N && N > 1)
        return KB_EPI_COLS;
    if (r == M && M > 1)
        return KB_EPI_ROWS;
    return KB_EPI_NONE;
}

static void epilogue(lua_State *L, ltl_ctx *x, int t, kb_composite *c)
{
    if (field(L, t, "epilogue") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    int e = lua_gettop(L);
    int n = (int)lua_rawlen(L, e);
    if (n > KB_MAX_EPILOGUE)
        luaL_error(L, "tl.composite: at most %d epilogue ops (got %d)", KB_MAX_EPILOGUE, n);
    int64_t out[2] = {c->plan.M, c->plan.N};
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, e, i + 1);
        int op = lua_gettop(L);
        kb_epilogue *ep = &c->epi[i];
        field(L, op, "kind");
        const char *kind = lua_tostring(L, -1);
        int k = 0;
        while (k < KB_EPI_KINDS && (!kind || strcmp(kind, kb_epi_name((kb_epi_kind)k)) != 0))
            k++;
        if (k == KB_EPI_KINDS)
            luaL_error(L, "tl.composite: unknown epilogue op '%s'", kind ? kind : "?");
        ep->kind = (kb_epi_kind)k;
        field(L, op, "scope");
        c->plan.scope[i] = strcmp(luaL_optstring(L, -1, "output_tile"), "k_tile") == 0 ? KB_SCOPE_K_TILE
                                                                                      : KB_SCOPE_OUTPUT_TILE;
        field(L, op, "view");
        ltl_tensor *h = ltl_test_tensor(L, -1);
        if (h) {
            ltl_check_tensor(L, lua_gettop(L), "tl.composite", 0, x);
            kb_tview b;
            if (!kb_tview_broadcast(&h->v, 2, out, &b)) {
                char s[96];
                luaL_error(L, "tl.composite: the %s operand of shape %s does not broadcast to the output [%I, %I]",
                           kind, kb_shape_str(h->v.ndim, h->v.shape, s, sizeof s), (lua_Integer)out[0],
                           (lua_Integer)out[1]);
            }
            ep->has_view = true;
            ep->v = h->v;
            c->plan.epi_operand[i] = epi_operand_of(&h->v, out[0], out[1]);
            c->plan.epi_size[i] = (uint32_t)kb_dtype_size(h->v.dtype);
        }
        field(L, op, "value");
        ep->value = luaL_optnumber(L, -1, 1.0);
        lua_settop(L, e);
        c->plan.nepi = i + 1;
    }
    lua_pop(L, 1);
}

/* ctx:composite(table) -> handle */
static int ctx_composite(lua_State *L)
{
    ltl_ctx *x = ltl_check_ctx(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    kb_composite spec; /* checked here, copied to the heap once nothing can raise */
    memset(&spec, 0, sizeof spec);
    kb_composite *c = &spec;
    field(L, 2, "op");
    c->plan.gemm = strcmp(luaL_checkstring(L, -1), "gemm") == 0;
    lua_pop(L, 1);
    operand(L, x, 2, "a", &c->in[0]);
    bool has_b = field(L, 2, "b") != LUA_TNIL;
    lua_pop(L, 1);
    if (has_b)
        operand(L, x, 2, "b", &c->in[1]);
    const kb_operand *a = &c->in[0], *b = &c->in[1];
    if (c->plan.gemm) {
        if (!has_b)
            luaL_error(L, "tl.composite: a gemm needs b");
        if (a->cols != b->rows)
            shape_error(L, "cannot be multiplied", a, b);
        if (a->dtype != b->dtype)
            luaL_error(L, "tl.composite: operand dtypes differ (%s and %s)", kb_dtype_name(a->dtype),
                       kb_dtype_name(b->dtype));
        c->plan.M = a->rows, c->plan.K = a->cols, c->plan.N = b->cols;
    } else {
        if (has_b && (a->rows != b->rows || a->cols != b->cols))
            shape_error(L, "must be the same", a, b);
        c->plan.M = a->rows, c->plan.N = a->cols;
        field(L, 2, "math_op");
        if (!kb_mop_parse(luaL_checkstring(L, -1), &c->mop) || kb_mop_info_of(c->mop)->axis ||
            kb_mop_info_of(c->mop)->arity != (has_b ? 2 : 1))
            luaL_error(L, "tl.composite: math_op '%s' is not an element-wise op taking %d operand(s)",
                       lua_tostring(L, -1), has_b ? 2 : 1);
        lua_pop(L, 1);
    }
    c->plan.has[0] = true;
    c->plan.has[1] = has_b;
    c->plan.pinned[0] = a->pinned, c->plan.pinned[1] = b->pinned;
    c->plan.in_size[0] = (uint32_t)kb_dtype_size(a->dtype);
    c->plan.in_size[1] = has_b ? (uint32_t)kb_dtype_size(b->dtype) : 0;
    c->plan.acc_size = 4; /* f32 accumulation */
    field(L, 2, "out_dtype");
    c->out_dtype = lua_isnil(L, -1) ? a->dtype : ltl_parse_dtype(L, lua_gettop(L), "tl.composite", NULL);
    lua_pop(L, 1);
    c->plan.out_size = (uint32_t)kb_dtype_size(c->out_dtype);
    /* tile sizes: the call's; 0 leaves PE_SCHEDULER's */
    int64_t tile[3] = {0, 0, 0};
    if (field(L, 2, "tile") != LUA_TNIL) {
        for (int i = 0; i < 3; i++) {
            lua_rawgeti(L, -1, i + 1);
            tile[i] = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
            if (!lua_isnil(L, -1) && tile[i] < 1)
                luaL_error(L, "tl.composite: tile sizes must be >= 1");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    c->plan.tm = tile[0], c->plan.tk = tile[1], c->plan.tn = tile[2];
    epilogue(L, x, 2, c);
    field(L, 2, "out_ptr");
    c->out_va = ltl_check_ptr(L, lua_gettop(L), "tl.composite");
    lua_pop(L, 1);
    c = kb_xmalloc(sizeof *c);
    *c = spec;
    char *err = NULL;
    if (!kb_kernel_composite(x->k, c, &err)) {
        free(c);
        return lbind_raise(L, err);
    }
    /* the handle (the submitter's reference), then the PE_CPU's dispatch of the call */
    lua_settop(L, 1);
    comp_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->c = c;
    luaL_setmetatable(L, LCOMP_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    kb_pe_op *op = ltl_command(L, x, "tl.composite");
    op->kind = KB_PE_CYCLES;
    return ltl_start_command(L, x, "tl.composite");
}

/* ---- handle methods ---- */

static int comp_done(lua_State *L)
{
    lua_pushboolean(L, check_comp(L, 1)->c->finished);
    return 1;
}

/* h:stats() -> {tiles, submit_ns, first_ns, done_ns, stage_ns = {DMA_READ = ...}, stage_counts = {...}} */
static int comp_stats(lua_State *L)
{
    kb_composite *c = check_comp(L, 1)->c;
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, (lua_Integer)c->ntiles);
    lua_setfield(L, -2, "tiles");
    lsim_push_time(L, c->t_submit);
    lua_setfield(L, -2, "submit_ns");
    lsim_push_time(L, c->t_first);
    lua_setfield(L, -2, "first_ns");
    if (c->finished) {
        lsim_push_time(L, c->t_done);
        lua_setfield(L, -2, "done_ns");
    }
    lua_createtable(L, 0, KB_ST_COUNT);
    lua_createtable(L, 0, KB_ST_COUNT);
    for (int i = 0; i < KB_ST_COUNT; i++) {
        lsim_push_time(L, c->stage_ps[i]);
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
