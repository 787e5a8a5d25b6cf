/* The `kernbench.pe_c` module: a kernel instance's view of its PE, and the
 * tensor handles its tl.* calls return.
 *
 *   ctx = pe_c.context(s, {sip=, cube=, pe=, scratch_base=, scratch_size=, data=, pa_fallback=})
 *   load, store = ctx:tl_functions()            -- tl.load / tl.store bound to ctx:
 *     h = load(va, shape, dtype) / load(ref)    -- blocking: translate, DMA into TCM scratch
 *     store(va, h)                              -- blocking: TCM -> memory
 *   c = ctx:dot(a, b[, out_dtype])               -- blocking: fetch, GEMM, write back
 *   y = ctx:math(op, axis, x[, y[, z]])          -- blocking: fetch, MATH, write back
 *   ctx:cycles(n)                                -- blocking: PE_CPU busy
 *   h = ctx:full(shape, dtype, v) / ctx:arange(start, stop, dtype)  -- no time
 *   t = ctx:trans(h)                             -- a view: last two dims swapped
 *   ctx:stats() -> {dma_ns, compute_ns, calls, scratch_bytes}
 *   ctx:span(name, start_ps)                     -- a trace slice on PE_CPU until now
 *
 * Blocking calls must be made by the kernel's process: they start the
 * command on the PE's engines (src/comp/pe.h) and yield; the process is
 * resumed when the command completes. Operators + - * / and unary minus on
 * handles are PE_MATH commands too (metamethods may yield in Lua 5.4).
 *
 * Scratch (the TCM region for results) is a ring: results take space in
 * order and wrap around; a handle whose bytes a later result has reused
 * can no longer be used (a clear error), so loops run in constant space.
 *
 * Page tables: pe_c.mmu_map(s, sip, cube, pe, va, pa, size), mmu_unmap(s,
 * sip, cube, pe, va, size), mmu_translate(s, sip, cube, pe, va) -> pa|nil,
 * mmu_regions(s, sip, cube, pe): each PE_MMU's own table (src/mem/pagetable.h).
 *
 * Values: with data on (--data), handles can be read (h[i], h:tolist(),
 * h:item()); without, reading is an error. Indices are 0-based. */
#include "lua/ltl.h"
#include "lua/ltl_internal.h"

#include "comp/entry.h"
#include "comp/pe/pe.h"
#include "core/util.h"
#include "lua/lsim.h"
#include "mem/memstore.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LPE_MT "kernbench.pe_context"
#define LTEN_MT "kernbench.tl_tensor"



/* Registry keys of the two metatables (besides their names): checking a
 * userdata by pointer key avoids interning the name on every call. */
static const char CTX_KEY, TENSOR_KEY;

static void *test_ud(lua_State *L, int idx, const void *key)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, key);
    bool same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}

static void *check_ud(lua_State *L, int idx, const void *key, const char *what)
{
    void *p = test_ud(L, idx, key);
    if (!p)
        luaL_typeerror(L, idx, what);
    return p;
}

static void set_tensor_mt(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &TENSOR_KEY);
    lua_setmetatable(L, -2);
}

typedef struct ctx_ud {
    pe_ctx *c;
} ctx_ud;



/* ---- contexts ---- */

pe_ctx *lpe_check_ctx(lua_State *L, int idx)
{
    ctx_ud *u = check_ud(L, idx, &CTX_KEY, "PE context");
    if (!u->c)
        luaL_error(L, "PE context is closed");
    return u->c;
}

/* A command in flight still points at the context: with its simulation
 * open, the completion frees it; with the simulation closed (its events
 * gone) nothing will, so it is freed here. */
static int ctx_gc(lua_State *L)
{
    ctx_ud *u = luaL_checkudata(L, 1, LPE_MT);
    if (u->c) {
        lcomposite_release(u->c);
        if (u->c->busy && u->c->S->sim) {
            u->c->orphan = true;
        } else {
            free(u->c->op.error);
            free(u->c->op.buf);
            free(u->c);
        }
        u->c = NULL;
    }
    return 0;
}

static lua_Integer field_int(lua_State *L, int t, const char *k, bool required, lua_Integer dflt)
{
    lua_getfield(L, t, k);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if (required)
            luaL_error(L, "pe_c.context: missing field '%s'", k);
        return dflt;
    }
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 0)
        luaL_error(L, "pe_c.context: field '%s' must be an integer >= 0", k);
    lua_pop(L, 1);
    return v;
}

static int l_context(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    if (!S->fab)
        return luaL_error(L, "pe_c.context: this simulation has no topology");
    luaL_checktype(L, 2, LUA_TTABLE);
    int sip = (int)field_int(L, 2, "sip", true, 0), cube = (int)field_int(L, 2, "cube", true, 0),
        pe = (int)field_int(L, 2, "pe", true, 0);
    char *err = NULL;
    kb_pe *p = kb_pe_find(S->fab, sip, cube, pe, &err);
    if (!p) {
        lua_pushstring(L, err);
        free(err);
        return lua_error(L);
    }
    ctx_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->c = NULL;
    luaL_setmetatable(L, LPE_MT);
    lua_pushvalue(L, 1); /* keep the simulation alive */
    lua_setiuservalue(L, -2, 1);
    pe_ctx *c = kb_xcalloc(1, sizeof *c);
    u->c = c;
    c->S = S;
    c->pe = p;
    c->scratch_base = (uint64_t)field_int(L, 2, "scratch_base", true, 0);
    c->scratch_size = (uint64_t)field_int(L, 2, "scratch_size", true, 0);
    lua_getfield(L, 2, "data");
    c->data = lua_toboolean(L, -1);
    lua_getfield(L, 2, "pa_fallback");
    c->pa_fallback = lua_toboolean(L, -1);
    lua_pop(L, 2);
    snprintf(c->where, sizeof c->where, "sip%d.cube%d.pe%d", sip, cube, pe);
    return 1;
}

/* ---- tensors ---- */

tensor_ud *lpe_test_tensor(lua_State *L, int idx) { return test_ud(L, idx, &TENSOR_KEY); }

static bool tensor_live(const pe_ctx *c, const tensor_ud *t)
{
    return c->vcur - t->vstart <= c->scratch_size;
}

/* The context of the tensor at idx (its user value). */
static pe_ctx *tensor_ctx(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    pe_ctx *c = lpe_check_ctx(L, -1);
    lua_pop(L, 1);
    return c;
}

tensor_ud *lpe_check_tensor(lua_State *L, int idx, const char *call, int argn, pe_ctx *c)
{
    tensor_ud *t = lpe_test_tensor(L, idx);
    if (!t)
        luaL_error(L, "%s: argument %d must be a tensor handle (got %s)", call, argn, luaL_typename(L, idx));
    if (c && tensor_ctx(L, idx) != c)
        luaL_error(L, "%s: argument %d belongs to another PE's kernel", call, argn);
    pe_ctx *own = c ? c : tensor_ctx(L, idx);
    if (!tensor_live(own, t))
        luaL_error(L,
                   "%s: argument %d (a %s result) was overwritten: %s's scratch (%d KiB) has wrapped "
                   "around since it was made (scratch overflow); keep fewer results alive or raise "
                   "pe_cpu.attrs.scratch_kb",
                   call, argn, t->made_by, own->where, (int)(own->scratch_size / 1024));
    return t;
}

/* A new result tensor of shape/dtype in scratch, pushed. ctx at ctx_idx. */
static tensor_ud *push_result(lua_State *L, int ctx_idx, pe_ctx *c, const char *call, kb_dtype dt, int ndim,
                              const int64_t *shape)
{
    kb_tview v;
    kb_tview_init(&v, c->pe->tcm, 0, dt, ndim, shape);
    uint64_t n = (kb_tview_nbytes(&v) + 15) & ~(uint64_t)15;
    if (n == 0)
        n = 16;
    if (n > c->scratch_size)
        luaL_error(L, "%s: scratch overflow on %s: the result needs %I bytes, the kernel's scratch is "
                      "%I bytes (pe_cpu.attrs.scratch_kb)",
                   call, c->where, (lua_Integer)n, (lua_Integer)c->scratch_size);
    uint64_t phys = c->vcur % c->scratch_size;
    if (phys + n > c->scratch_size) /* no straddling: skip to the start */
        c->vcur += c->scratch_size - phys;
    tensor_ud *t = lua_newuserdatauv(L, sizeof *t, 1);
    t->vstart = c->vcur;
    v.offset = c->scratch_base + c->vcur % c->scratch_size;
    c->vcur += n;
    t->v = v;
    t->made_by = call;
    set_tensor_mt(L);
    lua_pushvalue(L, ctx_idx);
    lua_setiuservalue(L, -2, 1);
    return t;
}

int lpe_parse_shape(lua_State *L, int idx, const char *call, int64_t *shape)
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

kb_dtype lpe_parse_dtype(lua_State *L, int idx, const char *call, const char *dflt)
{
    const char *name = luaL_optstring(L, idx, dflt);
    kb_dtype t;
    if (!kb_dtype_parse(name, &t))
        luaL_error(L, "%s: unknown dtype '%s' (f32, f16, bf16, i32, i16, i8, u8, bool)", call, name);
    return t;
}

/* ---- blocking commands ---- */

static void op_done(kb_pe_op *op)
{
    pe_ctx *c = op->arg;
    c->busy = false;
    c->dma_ps += op->dma_ps;
    c->compute_ps += op->compute_ps;
    if (c->orphan) {
        free(op->error);
        free(c);
        return;
    }
    lproc *p = c->waiting;
    c->waiting = NULL;
    if (!p)
        return;
    /* From an event callback the kernel resumes at once (as any woken
     * process would); from within the submitting call it must yield first. */
    if (op->submitting)
        kb_sim_at(c->S->sim, kb_sim_now(c->S->sim), KB_PRIO_NORMAL, p->waiter.wake, &p->waiter);
    else
        p->waiter.wake(c->S->sim, &p->waiter);
}

/* The continuation: the context is at 1, the result (if any) above it. */
static int after_command(lua_State *L, int status, lua_KContext k)
{
    (void)status;
    (void)k;
    pe_ctx *c = lpe_check_ctx(L, 1);
    if (c->op.error) {
        lua_pushstring(L, c->op.error);
        free(c->op.error);
        c->op.error = NULL;
        return lua_error(L);
    }
    return c->nret;
}

/* Starts c->op (filled by the caller) and yields until it completes; the
 * result handle, if any, is on the top of the stack. */
int lpe_start_command(lua_State *L, pe_ctx *c, const char *call)
{
    lproc *p = lsim_current(L, c->S, call);
    if (!p)
        return lsim_would_block(L, call, "it runs on the PE's engines");
    if (c->busy)
        return luaL_error(L, "%s: %s already has a command in flight", call, c->where);
    lsim_prepare_block(L, p, call);
    c->nret = lua_gettop(L) > 1; /* the result, if any, sits above the context */
    c->op.pe = c->pe;
    c->op.what = call;
    c->op.data = c->data;
    c->op.done = op_done;
    c->op.arg = c;
    c->calls++;
    c->busy = true;
    c->waiting = p;
    kb_pe_submit(&c->op, NULL);
    return lsim_block(L, p, after_command);
}

/* The memory side of a load or store: a physical address. */
static void memory_side(lua_State *L, pe_ctx *c, kb_pa pa, const char *call)
{
    if (pa >= c->pa_lo && pa < c->pa_hi) { /* the same HBM slice as last time */
        c->op.target = c->pa_node;
        c->op.target_off = c->off_lo + (pa - c->pa_lo);
        return;
    }
    const kb_topo *t = kb_fabric_topo(c->S->fab);
    kb_target tg;
    char *err = NULL;
    if (!kb_resolve_data_target(t, pa, &tg, call, &err)) {
        lua_pushstring(L, err);
        free(err);
        lua_error(L);
    }
    c->op.target = tg.node;
    c->op.target_off = tg.offset;
    c->pa_lo = tg.pa_lo; /* remember the slice (empty for other targets) */
    c->pa_hi = tg.pa_hi;
    c->pa_node = tg.node;
    c->off_lo = tg.offset - (pa - tg.pa_lo);
}

/* A kernel's pointer through the PE's MMU: the physical address. */
kb_pa lpe_translate(lua_State *L, pe_ctx *c, int idx, const char *call)
{
    int ok;
    lua_Integer va = lua_tointegerx(L, idx, &ok);
    if (!ok)
        luaL_error(L, "%s: the pointer must be an integer address (a tensor argument plus a byte offset), "
                      "got %s", call, lua_type(L, idx) == LUA_TNUMBER ? "a float" : luaL_typename(L, idx));
    kb_pagetable *pt = kb_pe_pagetable(c->pe);
    uint64_t pa;
    if (pt && kb_pt_translate(pt, (uint64_t)va, &pa))
        return (kb_pa)pa;
    if (c->pa_fallback)
        return (kb_pa)va;
    char hex[24]; /* lua_pushfstring has no hexadecimal conversion */
    snprintf(hex, sizeof hex, "%llx", (unsigned long long)va);
    luaL_error(L, "%s: virtual address 0x%s is not mapped on %s (not inside any tensor placed for this PE)",
               call, hex, c->where);
    return 0;
}

/* A tl.ref table at idx: replaces it by its pointer and fills shape and
 * dtype at idx+1, idx+2 (a load of a reference loads what it names). */
static void unref(lua_State *L, int idx, bool all)
{
    if (!lua_istable(L, idx))
        return;
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
    pe_ctx *c = lpe_check_ctx(L, lua_upvalueindex(1));
    lua_settop(L, 3);
    unref(L, 1, true);
    kb_pa pa = lpe_translate(L, c, 1, "tl.load");
    int64_t shape[KB_VIEW_MAXDIM];
    int nd = lpe_parse_shape(L, 2, "tl.load", shape);
    kb_dtype dt = lpe_parse_dtype(L, 3, "tl.load", "f16");
    memset(&c->op, 0, sizeof c->op);
    memory_side(L, c, pa, "tl.load");
    c->op.kind = KB_PE_LOAD;
    c->op.translated = true;
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    tensor_ud *t = push_result(L, 1, c, "tl.load", dt, nd, shape);
    c->op.tcm = t->v;
    return lpe_start_command(L, c, "tl.load");
}

/* tl.store(ptr, handle): upvalue 1 is the context. */
static int tl_store(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, lua_upvalueindex(1));
    lua_settop(L, 2);
    unref(L, 1, false);
    kb_pa pa = lpe_translate(L, c, 1, "tl.store");
    if (!lpe_test_tensor(L, 2))
        return luaL_error(L, "tl.store: the value must be a tensor handle (from tl.load, tl.dot, math ...), got %s",
                          lua_istable(L, 2) ? "a table (a tl.ref? load it first)" : luaL_typename(L, 2));
    tensor_ud *t = lpe_check_tensor(L, 2, "tl.store", 2, c);
    if (!kb_tview_contiguous(&t->v))
        return luaL_error(L, "tl.store: the handle is a transposed view (tl.trans); a store moves "
                             "contiguous bytes: compute a contiguous result first");
    memset(&c->op, 0, sizeof c->op);
    memory_side(L, c, pa, "tl.store");
    c->op.kind = KB_PE_STORE;
    c->op.tcm = t->v;
    c->op.translated = true;
    lua_settop(L, 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    return lpe_start_command(L, c, "tl.store");
}

/* ctx:tl_functions() -> load, store: the two C closures bound to ctx. */
static int ctx_tl_functions(lua_State *L)
{
    lpe_check_ctx(L, 1);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, tl_load, 1);
    lua_pushvalue(L, 1);
    lua_pushcclosure(L, tl_store, 1);
    return 2;
}

/* ---- page tables (the PE_MMU components') ---- */

kb_pe *lpe_check_pe(lua_State *L, lsim *S, int idx)
{
    int sip = (int)luaL_checkinteger(L, idx), cube = (int)luaL_checkinteger(L, idx + 1),
        pe = (int)luaL_checkinteger(L, idx + 2);
    char *err = NULL;
    kb_pe *p = kb_pe_find(S->fab, sip, cube, pe, &err);
    if (!p) {
        lua_pushstring(L, err);
        free(err);
        lua_error(L);
    }
    return p;
}

static kb_pagetable *check_pt(lua_State *L, int *argn)
{
    lsim *S = lsim_check(L, 1);
    if (!S->fab)
        luaL_error(L, "pe_c: this simulation has no topology");
    kb_pe *p = lpe_check_pe(L, S, 2);
    kb_pagetable *pt = kb_pe_pagetable(p);
    if (!pt)
        luaL_error(L, "sip%d.cube%d.pe%d: its PE_MMU is not builtin.pe_mmu (no page table)", p->sip, p->cube, p->pe);
    *argn = 5;
    return pt;
}

static uint64_t check_u64(lua_State *L, int idx)
{
    lua_Integer v = luaL_checkinteger(L, idx);
    luaL_argcheck(L, v >= 0, idx, "must be >= 0");
    return (uint64_t)v;
}

/* pe_c.mmu_map(s, sip, cube, pe, va, pa, size) */
static int l_mmu_map(lua_State *L)
{
    int a;
    kb_pagetable *pt = check_pt(L, &a);
    kb_pt_map(pt, check_u64(L, a), check_u64(L, a + 1), check_u64(L, a + 2));
    return 0;
}

/* pe_c.mmu_unmap(s, sip, cube, pe, va, size) */
static int l_mmu_unmap(lua_State *L)
{
    int a;
    kb_pagetable *pt = check_pt(L, &a);
    kb_pt_unmap(pt, check_u64(L, a), check_u64(L, a + 1));
    return 0;
}

/* pe_c.mmu_translate(s, sip, cube, pe, va) -> pa | nil */
static int l_mmu_translate(lua_State *L)
{
    int a;
    kb_pagetable *pt = check_pt(L, &a);
    uint64_t pa;
    if (kb_pt_translate(pt, check_u64(L, a), &pa))
        lua_pushinteger(L, (lua_Integer)pa);
    else
        lua_pushnil(L);
    return 1;
}

/* pe_c.mmu_regions(s, sip, cube, pe) -> count */
static int l_mmu_regions(lua_State *L)
{
    int a;
    lua_pushinteger(L, (lua_Integer)kb_pt_regions(check_pt(L, &a)));
    return 1;
}

static int ctx_cycles(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 0)
        return luaL_error(L, "tl.cycles: the count must be >= 0 (got %I)", n);
    memset(&c->op, 0, sizeof c->op);
    c->op.kind = KB_PE_CYCLES;
    c->op.cycles = n;
    lua_settop(L, 1);
    return lpe_start_command(L, c, "tl.cycles");
}

static int ctx_dot(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    tensor_ud *a = lpe_check_tensor(L, 2, "tl.dot", 1, c), *b = lpe_check_tensor(L, 3, "tl.dot", 2, c);
    char sa[96], sb[96];
    kb_shape_str(a->v.ndim, a->v.shape, sa, sizeof sa);
    kb_shape_str(b->v.ndim, b->v.shape, sb, sizeof sb);
    if (a->v.ndim != 2 || b->v.ndim != 2)
        return luaL_error(L, "tl.dot: operands must be 2-D (got shapes %s and %s)", sa, sb);
    if (a->v.shape[1] != b->v.shape[0])
        return luaL_error(L, "tl.dot: shapes %s and %s cannot be multiplied (%d != %d)", sa, sb,
                          (int)a->v.shape[1], (int)b->v.shape[0]);
    if (a->v.dtype != b->v.dtype)
        return luaL_error(L, "tl.dot: operand dtypes differ (%s and %s)", kb_dtype_name(a->v.dtype),
                          kb_dtype_name(b->v.dtype));
    kb_dtype out = lua_isnoneornil(L, 4) ? a->v.dtype : lpe_parse_dtype(L, 4, "tl.dot", NULL);
    memset(&c->op, 0, sizeof c->op);
    c->op.kind = KB_PE_GEMM;
    c->op.nin = 2;
    c->op.in[0].v = a->v;
    c->op.in[1].v = b->v;
    int64_t shape[2] = {a->v.shape[0], b->v.shape[1]};
    lua_settop(L, 1);
    c->op.out = push_result(L, 1, c, "tl.dot", out, 2, shape)->v;
    return lpe_start_command(L, c, "tl.dot");
}

/* Result dtype of math over operands: their common dtype; mixed float
 * dtypes give f32, mixed integer ones i32. */
static kb_dtype common_dtype(kb_dtype a, kb_dtype b)
{
    if (a == b)
        return a;
    if (kb_dtype_is_float(a) || kb_dtype_is_float(b))
        return KB_F32;
    return KB_I32;
}

/* ctx:math(op, axis, x[, y[, z]]) with the context at 1. Operands are
 * tensors or numbers; math on tensors broadcasts them (numpy rules). */
static int math_command(lua_State *L, pe_ctx *c, kb_mop op, int first, int nargs, int axis_idx)
{
    const kb_mop_info *info = kb_mop_info_of(op);
    char call[32];
    snprintf(call, sizeof call, "tl.%s", info->name);
    if (nargs != info->arity)
        return luaL_error(L, "%s: takes %d operand(s), got %d", call, info->arity, nargs);
    memset(&c->op, 0, sizeof c->op);
    c->op.kind = KB_PE_MATH;
    c->op.mop = op;
    c->op.nin = nargs;
    int nd = 0;
    int64_t shape[KB_VIEW_MAXDIM];
    bool have_dtype = false;
    kb_dtype dt = KB_F32;
    char seen[256] = "";
    for (int i = 0; i < nargs; i++) {
        int idx = first + i;
        kb_pe_operand *o = &c->op.in[i];
        if (lua_type(L, idx) == LUA_TNUMBER || lua_isboolean(L, idx)) {
            if (info->axis)
                return luaL_error(L, "%s: the operand must be a tensor handle", call);
            o->is_imm = true;
            o->imm = lua_isboolean(L, idx) ? lua_toboolean(L, idx) : lua_tonumber(L, idx);
            continue;
        }
        tensor_ud *t = lpe_check_tensor(L, idx, call, i + 1, c);
        o->v = t->v;
        char s[96];
        size_t len = strlen(seen);
        snprintf(seen + len, sizeof seen - len, "%s%s", len ? " and " : "", kb_shape_str(t->v.ndim, t->v.shape, s, sizeof s));
        if (nd == 0) {
            nd = t->v.ndim;
            memcpy(shape, t->v.shape, sizeof shape);
        } else if (!kb_broadcast_shapes(nd, shape, t->v.ndim, t->v.shape, &nd, shape)) {
            return luaL_error(L, "%s: shapes %s cannot be broadcast together", call, seen);
        }
        if (op == KB_OP_WHERE && i == 0)
            continue; /* the condition does not set the result dtype */
        dt = have_dtype ? common_dtype(dt, t->v.dtype) : t->v.dtype;
        have_dtype = true;
    }
    if (nd == 0)
        return luaL_error(L, "%s: at least one operand must be a tensor handle", call);
    if (!have_dtype)
        dt = kb_dtype_is_float(c->op.in[0].v.dtype) ? c->op.in[0].v.dtype : KB_F32;
    if (info->axis) {
        const kb_tview *x = &c->op.in[0].v;
        if (lua_isnoneornil(L, axis_idx) && op != KB_OP_SOFTMAX) {
            /* no axis: over every element (a contiguous view as 1-D) */
            if (!kb_tview_contiguous(x))
                return luaL_error(L, "%s: reducing every element of a transposed view: give an axis", call);
            int64_t n = kb_tview_numel(x);
            kb_tview_init(&c->op.in[0].v, x->domain, x->offset, x->dtype, 1, &n);
            c->op.axis = 0;
            nd = 1;
            shape[0] = 1;
        } else {
            lua_Integer ax = luaL_optinteger(L, axis_idx, -1);
            if (ax < -x->ndim || ax >= x->ndim)
                return luaL_error(L, "%s: axis %I is out of range for %d dimension(s)", call, ax, x->ndim);
            c->op.axis = (int)(ax < 0 ? ax + x->ndim : ax);
            if (op != KB_OP_SOFTMAX)
                shape[c->op.axis] = 1;
        }
    }
    lua_settop(L, 1);
    c->op.out = push_result(L, 1, c, info->name, dt, nd, shape)->v;
    return lpe_start_command(L, c, info->name);
}

static int ctx_math(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    const char *name = luaL_checkstring(L, 2);
    kb_mop op;
    if (!kb_mop_parse(name, &op))
        return luaL_error(L, "tl: unknown math operation '%s'", name);
    int nargs = lua_gettop(L) - 3;
    return math_command(L, c, op, 4, nargs, 3);
}

/* ---- no-time tensors: constants, ranges, views ---- */

static int ctx_full(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    int64_t shape[KB_VIEW_MAXDIM];
    int nd = lpe_parse_shape(L, 2, "tl.full", shape);
    kb_dtype dt = lpe_parse_dtype(L, 3, "tl.full", "f16");
    double v = lua_isboolean(L, 4) ? lua_toboolean(L, 4) : luaL_checknumber(L, 4);
    lua_settop(L, 1);
    tensor_ud *t = push_result(L, 1, c, "tl.full", dt, nd, shape);
    if (c->data) {
        int64_t n = kb_tview_numel(&t->v);
        double *x = kb_xmalloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++)
            x[i] = v;
        kb_tview_write(kb_fabric_memstore(c->S->fab), &t->v, x);
        free(x);
    }
    return 1;
}

static int ctx_arange(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    lua_Integer a = luaL_checkinteger(L, 2), b = luaL_checkinteger(L, 3);
    if (b <= a)
        return luaL_error(L, "tl.arange: end (%I) must be greater than start (%I)", b, a);
    kb_dtype dt = lpe_parse_dtype(L, 4, "tl.arange", "i32");
    int64_t n = (int64_t)(b - a);
    lua_settop(L, 1);
    tensor_ud *t = push_result(L, 1, c, "tl.arange", dt, 1, &n);
    if (c->data) {
        double *x = kb_xmalloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++)
            x[i] = (double)(a + i);
        kb_tview_write(kb_fabric_memstore(c->S->fab), &t->v, x);
        free(x);
    }
    return 1;
}

static int ctx_trans(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    tensor_ud *t = lpe_check_tensor(L, 2, "tl.trans", 1, c);
    if (t->v.ndim < 2)
        return luaL_error(L, "tl.trans: needs at least 2 dimensions (got %d)", t->v.ndim);
    tensor_ud *r = lua_newuserdatauv(L, sizeof *r, 1);
    *r = *t;
    int d = r->v.ndim;
    int64_t s = r->v.shape[d - 1], st = r->v.stride[d - 1];
    r->v.shape[d - 1] = r->v.shape[d - 2];
    r->v.stride[d - 1] = r->v.stride[d - 2];
    r->v.shape[d - 2] = s;
    r->v.stride[d - 2] = st;
    set_tensor_mt(L);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int ctx_stats(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    lua_createtable(L, 0, 4);
    lsim_push_time(L, c->dma_ps);
    lua_setfield(L, -2, "dma_ns");
    lsim_push_time(L, c->compute_ps);
    lua_setfield(L, -2, "compute_ns");
    lua_pushinteger(L, (lua_Integer)c->calls);
    lua_setfield(L, -2, "calls");
    lua_pushinteger(L, (lua_Integer)(c->vcur < c->scratch_size ? c->vcur : c->scratch_size));
    lua_setfield(L, -2, "scratch_bytes");
    return 1;
}

/* ctx:span(name, start_ps): a slice on the PE_CPU track from start to now. */
static int ctx_span(lua_State *L)
{
    pe_ctx *c = lpe_check_ctx(L, 1);
    const char *name = luaL_checkstring(L, 2);
    kb_time start = (kb_time)luaL_checkinteger(L, 3);
    kb_tracer *tr = kb_fabric_tracer(c->S->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(c->S->fab, c->pe->cpu), name, start, kb_sim_now(c->S->sim), NULL, 0,
                      0, KB_FLOW_NONE);
    return 0;
}

static int ctx_is_data(lua_State *L)
{
    lua_pushboolean(L, lpe_check_ctx(L, 1)->data);
    return 1;
}

/* ---- tensor handles: fields, values, operators ---- */

static void need_data(lua_State *L, pe_ctx *c, const char *what)
{
    if (!c->data)
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
    pe_ctx *c = tensor_ctx(L, 1);
    tensor_ud *t = lpe_check_tensor(L, 1, "tolist", 1, NULL);
    need_data(L, c, "tolist");
    int64_t n = kb_tview_numel(&t->v), pos = 0;
    double *x = kb_xmalloc((size_t)n * sizeof *x);
    kb_tview_read(kb_fabric_memstore(c->S->fab), &t->v, x);
    push_list(L, x, &t->v, 0, &pos);
    free(x);
    return 1;
}

static int t_item(lua_State *L)
{
    pe_ctx *c = tensor_ctx(L, 1);
    tensor_ud *t = lpe_check_tensor(L, 1, "item", 1, NULL);
    need_data(L, c, "item");
    if (kb_tview_numel(&t->v) != 1)
        return luaL_error(L, "item: the tensor has %d elements, not 1", (int)kb_tview_numel(&t->v));
    double x;
    kb_tview_read(kb_fabric_memstore(c->S->fab), &t->v, &x);
    push_value(L, t->v.dtype, x);
    return 1;
}

static int t_numel(lua_State *L)
{
    lua_pushinteger(L, kb_tview_numel(&((tensor_ud *)check_ud(L, 1, &TENSOR_KEY, "tl.tensor"))->v));
    return 1;
}

static int t_nbytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_tview_nbytes(&((tensor_ud *)check_ud(L, 1, &TENSOR_KEY, "tl.tensor"))->v));
    return 1;
}

static const luaL_Reg tensor_methods[] = {
    {"tolist", t_tolist}, {"item", t_item}, {"numel", t_numel}, {"nbytes", t_nbytes}, {NULL, NULL}};

/* h[i]: a view of row i (0-based), or the value when one dimension is left. */
static int t_index(lua_State *L)
{
    tensor_ud *t = check_ud(L, 1, &TENSOR_KEY, "tl.tensor");
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tostring(L, 2);
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
    pe_ctx *c = tensor_ctx(L, 1);
    lpe_check_tensor(L, 1, "index", 1, NULL);
    need_data(L, c, "reading a tensor element");
    if (i < 0)
        i += t->v.shape[0];
    if (i < 0 || i >= t->v.shape[0])
        return luaL_error(L, "index %I is out of bounds for dimension 0 with size %I", lua_tointeger(L, 2),
                          (lua_Integer)t->v.shape[0]);
    uint64_t off = t->v.offset + (uint64_t)(i * t->v.stride[0]) * kb_dtype_size(t->v.dtype);
    if (t->v.ndim == 1) {
        double x;
        kb_memstore_read_elems(kb_fabric_memstore(c->S->fab), t->v.domain, off, t->v.dtype, &x, 1);
        push_value(L, t->v.dtype, x);
        return 1;
    }
    tensor_ud *r = lua_newuserdatauv(L, sizeof *r, 1);
    *r = *t;
    r->v.offset = off;
    r->v.ndim--;
    memmove(r->v.shape, r->v.shape + 1, (size_t)r->v.ndim * sizeof r->v.shape[0]);
    memmove(r->v.stride, r->v.stride + 1, (size_t)r->v.ndim * sizeof r->v.stride[0]);
    set_tensor_mt(L);
    lua_getiuservalue(L, 1, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int t_newindex(lua_State *L)
{
    return luaL_error(L, "tensor handles are read-only in kernels: compute a new result with tl.* calls");
}

static int t_len(lua_State *L)
{
    lua_pushinteger(L, ((tensor_ud *)check_ud(L, 1, &TENSOR_KEY, "tl.tensor"))->v.shape[0]);
    return 1;
}

static int t_tostring(lua_State *L)
{
    tensor_ud *t = check_ud(L, 1, &TENSOR_KEY, "tl.tensor");
    char s[128];
    lua_pushfstring(L, "tl.tensor(shape=%s, dtype=%s, tcm+0x%I)",
                    kb_shape_str(t->v.ndim, t->v.shape, s, sizeof s), kb_dtype_name(t->v.dtype),
                    (lua_Integer)t->v.offset);
    return 1;
}

/* Operators: the handle's context issues a PE_MATH command. */
static int arith(lua_State *L, kb_mop op)
{
    int h = lpe_test_tensor(L, 1) ? 1 : 2;
    lua_getiuservalue(L, h, 1);
    pe_ctx *c = lpe_check_ctx(L, -1);
    /* stack: a, b, ctx -> ctx, a, b */
    lua_insert(L, 1);
    int nargs = op == KB_OP_NEG ? 1 : 2;
    lua_settop(L, 1 + nargs);
    return math_command(L, c, op, 2, nargs, 0);
}

static int t_add(lua_State *L) { return arith(L, KB_OP_ADD); }
static int t_sub(lua_State *L) { return arith(L, KB_OP_SUB); }
static int t_mul(lua_State *L) { return arith(L, KB_OP_MUL); }
static int t_div(lua_State *L) { return arith(L, KB_OP_DIV); }
static int t_unm(lua_State *L) { return arith(L, KB_OP_NEG); }

static const luaL_Reg tensor_meta[] = {
    {"__index", t_index}, {"__newindex", t_newindex}, {"__len", t_len}, {"__tostring", t_tostring},
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul}, {"__div", t_div}, {"__unm", t_unm},
    {NULL, NULL}};

static const luaL_Reg ctx_methods[] = {
    {"tl_functions", ctx_tl_functions}, {"dot", ctx_dot}, {"math", ctx_math},
    {"cycles", ctx_cycles}, {"full", ctx_full}, {"arange", ctx_arange}, {"trans", ctx_trans},
    {"stats", ctx_stats}, {"is_data", ctx_is_data}, {"span", ctx_span}, {NULL, NULL}};

/* The context's methods: these and lcomposite.c's. */
static void push_ctx_methods(lua_State *L)
{
    luaL_newlib(L, ctx_methods);
    luaL_setfuncs(L, lcomposite_ctx_methods, 0);
}

static int l_is_tensor(lua_State *L)
{
    lua_pushboolean(L, lpe_test_tensor(L, 1) != NULL);
    return 1;
}

static const luaL_Reg funcs[] = {{"context", l_context},         {"is_tensor", l_is_tensor},
                                 {"mmu_map", l_mmu_map},         {"mmu_unmap", l_mmu_unmap},
                                 {"mmu_translate", l_mmu_translate}, {"mmu_regions", l_mmu_regions},
                                 {NULL, NULL}};

int luaopen_kb_pe(lua_State *L)
{
    luaL_newmetatable(L, LPE_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &CTX_KEY);
    push_ctx_methods(L);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ctx_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, LTEN_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &TENSOR_KEY);
    luaL_setfuncs(L, tensor_meta, 0);
    luaL_newlib(L, tensor_methods);
    lua_setfield(L, -2, "methods");
    lua_pushliteral(L, "tl.tensor");
    lua_setfield(L, -2, "__name");
    lua_pop(L, 1);
    lcomposite_open(L);
    luaL_newlib(L, funcs);
    return 1;
}
