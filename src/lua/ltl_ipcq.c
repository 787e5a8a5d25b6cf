/* The PE-to-PE queue calls of a kernel context (`kernbench.pe_c`), the C
 * side of tl.send / tl.recv (lua/kernbench/tl.lua, docs/tl.md):
 *
 *   ctx:send(dir, h)                                  -- blocking until the message has left
 *   h = ctx:recv(dir | nil, shape, dtype, consume[, seq]) -- blocking until the credit is back
 *   seq = ctx:recv_claim(dir)                         -- the next message, for a future
 *   dir = ctx:recv_dir()                              -- the last recv's direction
 *   ctx:ipcq() -> {rank =, world =, neighbors = {dir = peer rank}} | nil
 *
 * The rules of the commands are PE_IPCQ's (src/comp/pe/ipcq.c); here only
 * the arguments: an installed direction, a contiguous source of at most
 * slot_size bytes, a result that fits a slot. */
#include "lua/ltl_internal.h"

#include "comp/pe/ipcq.h"
#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* The direction at idx of the context's PE (raises naming what is installed). */
static int check_dir(lua_State *L, ltl_ctx *c, int idx, const char *call)
{
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_error(L, "%s: the direction must be a string (\"E\", \"global_W\", ...), got %s", call,
                   luaL_typename(L, idx));
    size_t len;
    const char *name = lua_tolstring(L, idx, &len);
    if (strlen(name) != len)
        luaL_error(L, "%s: a direction name has no NUL byte in it", call);
    char *err = NULL;
    int d = kb_ipcq_dir(kb_kernel_pe(c->k), name, call, &err);
    if (d < 0)
        lbind_raise(L, err);
    return d;
}

static void check_fits(lua_State *L, ltl_ctx *c, const char *call, uint64_t n, const char *what)
{
    uint64_t slot = kb_ipcq_slot_size(kb_kernel_pe(c->k));
    if (n > slot)
        luaL_error(L, "%s on %s: %s is %d bytes, larger than a slot (slot_size %d bytes): split it, or install "
                      "with a larger slot_size",
                   call, kb_kernel_where(c->k), what, (int)n, (int)slot);
}

static int ctx_send(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    int d = check_dir(L, c, 2, "tl.send");
    ltl_tensor *t = ltl_check_tensor(L, 3, "tl.send", 2, c);
    if (!kb_tview_contiguous(&t->v))
        return luaL_error(L, "tl.send: the source must be contiguous (a tl.trans view is not): copy it first");
    check_fits(L, c, "tl.send", kb_tview_nbytes(&t->v), "the message");
    kb_pe_op_send(ltl_command(L, c, "tl.send"), d, &t->v);
    lua_settop(L, 1);
    return ltl_start_command(L, c, "tl.send");
}

static int ctx_recv(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    const char *call = lua_toboolean(L, 5) ? "tl.recv" : "tl.recv_no_consume";
    int d = lua_isnil(L, 2) ? -1 : check_dir(L, c, 2, call);
    if (d < 0 && kb_ipcq_slot_size(kb_kernel_pe(c->k)) == 0)
        check_dir(L, c, 2, call); /* the error: nothing installed */
    int64_t shape[KB_VIEW_MAXDIM];
    int nd = ltl_parse_shape(L, 3, call, shape);
    kb_dtype dt = ltl_parse_dtype(L, 4, call, "f16");
    uint64_t n;
    if (!kb_shape_nbytes(nd, shape, kb_dtype_size(dt), &n))
        return luaL_error(L, "%s: the shape is larger than any memory", call);
    check_fits(L, c, call, n, "the result");
    bool consume = lua_toboolean(L, 5);
    bool claimed = !lua_isnoneornil(L, 6);
    uint64_t seq = claimed ? (uint64_t)luaL_checkinteger(L, 6) : 0;
    kb_pe_op *op = ltl_command(L, c, call);
    lua_settop(L, 1);
    ltl_tensor *t = ltl_push_result(L, 1, c, call, dt, nd, shape);
    kb_pe_op_recv(op, d, &t->v, consume, claimed ? &seq : NULL);
    c->recv = op;
    return ltl_start_command(L, c, call);
}

static int ctx_recv_claim(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    int d = check_dir(L, c, 2, "tl.recv_async");
    lua_pushinteger(L, (lua_Integer)kb_ipcq_claim(kb_kernel_pe(c->k), d));
    return 1;
}

static int ctx_recv_dir(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    const char *dirs[KB_IPCQ_MAX_DIRS];
    uint32_t peers[KB_IPCQ_MAX_DIRS];
    int n = kb_ipcq_neighbors(kb_kernel_pe(c->k), dirs, peers);
    int d = c->recv ? kb_ipcq_op_dir(c->recv) : -1;
    if (d < 0 || d >= n)
        return 0;
    lua_pushstring(L, dirs[d]);
    return 1;
}

static int ctx_ipcq(lua_State *L)
{
    ltl_ctx *c = ltl_check_ctx(L, 1);
    kb_pe *p = kb_kernel_pe(c->k);
    uint32_t rank, world;
    if (!kb_ipcq_rank(p, &rank, &world))
        return 0;
    const char *dirs[KB_IPCQ_MAX_DIRS];
    uint32_t peers[KB_IPCQ_MAX_DIRS];
    int n = kb_ipcq_neighbors(p, dirs, peers);
    lua_createtable(L, 0, 3);
    lbind_set_int(L, "rank", rank);
    lbind_set_int(L, "world", world);
    lua_createtable(L, 0, n);
    for (int i = 0; i < n; i++) {
        lua_pushinteger(L, peers[i]);
        lua_setfield(L, -2, dirs[i]);
    }
    lua_setfield(L, -2, "neighbors");
    return 1;
}

const luaL_Reg ltl_ipcq_methods[] = {{"send", ctx_send},         {"recv", ctx_recv},
                                     {"recv_claim", ctx_recv_claim}, {"recv_dir", ctx_recv_dir},
                                     {"ipcq", ctx_ipcq},         {NULL, NULL}};
