/* Components written in Lua (`impl: lua:MODULE` or a name registered with
 * kb.components.register; lua/kernbench/components.lua, docs/extending.md):
 * the binding of scripted components (comp/scripted.h), whose inbox, held
 * count, forwarding, finishing and sending are C. The Lua side is a
 * process per node, running the implementation's run(self) on its own
 * coroutine:
 *
 *   local msg = self:receive()   -- blocks until something arrives
 *   self:sleep(ns)               -- spends modelled time (s:sleep)
 *   msg:forward()                -- on to the next node of its path, now
 *   msg:finish()                 -- at the end of its path: served (a memory
 *                                -- target moves the data and answers)
 *   self:send{kind =, dst =, ...} -- a new message of a kind the definition
 *                                -- declares (`messages = {"Ping"}`)
 *
 * An instance is a userdata holding a weak reference to its scripted
 * state (cleared when the simulation closes); a message is a userdata
 * holding a kb_scripted_msg and keeping its instance alive. */
#include "lua/lcomponent.h"

#include "comp/mem_access.h"
#include "comp/scripted.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "lua/lmachine.h"
#include "lua/ltopo.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define LINST_MT "kernbench.component"
#define LMSG_MT "kernbench.msg"

static const char MSG_KEY; /* the message metatable's registry key */

/* ---- instances ---- */

static kb_scripted *check_inst(lua_State *L, int idx)
{
    kb_scripted **u = lbind_checkudata(L, idx, LINST_MT);
    if (!*u)
        luaL_error(L, "the component's simulation is closed");
    return *u;
}

/* A message userdata for m, keeping the instance at index 1 alive. */
static void push_msg(lua_State *L, const kb_scripted_msg *m)
{
    kb_scripted_msg *u = lua_newuserdatauv(L, sizeof *u, 1);
    *u = *m;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
}

static int receive_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    lproc *p = (lproc *)ctx;
    kb_scripted_msg m;
    if (!kb_scripted_received(check_inst(L, 1), p->waiter.item, &m))
        return 0;
    push_msg(L, &m);
    return 1;
}

/* self:poll() -> msg | nil: what has arrived, without blocking */
static int inst_poll(lua_State *L)
{
    kb_scripted *s = check_inst(L, 1);
    lua_settop(L, 1);
    kb_scripted_msg m;
    if (!kb_scripted_take(s, &m))
        return 0;
    push_msg(L, &m);
    return 1;
}

/* self:receive([timeout_ns]) -> msg, or nil when the timeout passes first */
static int inst_receive(lua_State *L)
{
    kb_scripted *s = check_inst(L, 1);
    lsim *S = *(lsim **)lua_touserdata(L, lua_upvalueindex(1));
    kb_time timeout = lua_isnoneornil(L, 2) ? -1 : lsim_check_delay(L, S, 2, "self:receive(timeout_ns)");
    lua_settop(L, 1);
    lproc *p = lsim_current(L, S, "self:receive()");
    if (!p)
        return luaL_error(L, "self:receive(): only the component's own process may receive");
    kb_scripted_set_proc(s, &p->proc);
    kb_scripted_msg m;
    if (timeout != 0)
        lsim_prepare_block(L, p, "self:receive()");
    if (kb_scripted_receive(s, &m, timeout != 0 ? &p->waiter : NULL, timeout)) {
        push_msg(L, &m);
        return 1;
    }
    if (timeout == 0)
        return 0;
    return lsim_block(L, p, receive_k);
}

/* self:send{kind = "Ping", dst = id, nbytes = 0, view = "data", tag = 0} ->
 * transaction id: a new message of one of the implementation's kinds, from
 * this node to dst, leaving now (the component already handled it). It
 * completes where it ends: a Lua component there finishes it. */
static int inst_send(lua_State *L)
{
    kb_scripted *s = check_inst(L, 1);
    const kb_comp *c = kb_scripted_comp(s);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"kind", "dst", "nbytes", "view", "tag", NULL};
    lbind_check_keys(L, 2, "self:send{}", NULL, known);
    lua_getfield(L, 2, "kind");
    const char *k = lbind_tostr(L, -1, "self:send", "field 'kind'");
    const kb_msg_kind *kind = kb_scripted_impl_kind(c->n->spec->impl, k);
    if (!kind)
        return luaL_error(L,
                          "self:send{}: %s (%s) declares no message kind '%s' (its definition's `messages` list)",
                          c->n->id, c->n->spec->impl->name, k);
    lua_getfield(L, 2, "dst");
    uint32_t dst = ltopo_check_node(L, kb_fabric_topo(c->fab), lua_gettop(L));
    lua_getfield(L, 2, "nbytes");
    lua_Integer nbytes = luaL_optinteger(L, -1, 0);
    if (nbytes < 0)
        return luaL_error(L, "self:send{}: nbytes must be >= 0, got %I", nbytes);
    lua_getfield(L, 2, "view");
    kb_view view = ltopo_check_view(L, lua_gettop(L), KB_VIEW_DATA);
    lua_getfield(L, 2, "tag");
    lua_Integer tag = luaL_optinteger(L, -1, 0);
    char *err = NULL;
    kb_txn *x = kb_scripted_send(s, kind, dst, view, (uint64_t)nbytes, tag, &err);
    if (!x) {
        char *msg = kb_asprintf("self:send{}: %s", err);
        free(err);
        return lbind_raise_where(L, msg);
    }
    lua_pushinteger(L, (lua_Integer)x->id);
    return 1;
}

static int inst_busy(lua_State *L)
{
    kb_scripted *s = check_inst(L, 1);
    kb_time a = lsim_check_duration(L, 2, "self:busy"), b = lsim_check_duration(L, 3, "self:busy");
    kb_comp_busy(kb_scripted_comp(s), a, b);
    return 0;
}

static int inst_span(lua_State *L)
{
    kb_comp *c = kb_scripted_comp(check_inst(L, 1));
    const char *name = lbind_checkstr(L, 2, "self:span", "name");
    kb_time a = lsim_check_duration(L, 3, "self:span"), b = lsim_check_duration(L, 4, "self:span");
    kb_tracer *tr = kb_fabric_tracer(c->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(c->fab, c->node), name, a, b > a ? b : a, NULL, 0, 0, KB_FLOW_NONE);
    return 0;
}

static int inst_index(lua_State *L)
{
    kb_scripted *s = check_inst(L, 1);
    const kb_comp *c = kb_scripted_comp(s);
    const char *k = lbind_checkstr(L, 2, "self[key]", "key");
    if (strcmp(k, "id") == 0) {
        lua_pushstring(L, c->n->id);
    } else if (strcmp(k, "impl") == 0) {
        lua_pushstring(L, c->n->spec->impl->name);
    } else if (strcmp(k, "queued") == 0) {
        lua_pushinteger(L, (lua_Integer)kb_scripted_queued(s));
    } else if (strcmp(k, "current") == 0) {
        char buf[160];
        kb_scripted_describe(s, buf, sizeof buf);
        lua_pushstring(L, buf);
    } else if (strcmp(k, "held") == 0) {
        lua_pushinteger(L, kb_scripted_held(s));
    } else if (strcmp(k, "attrs") == 0) {
        const kb_comp_spec *sp = c->n->spec;
        lua_createtable(L, 0, (int)sp->impl->nattrs);
        for (size_t i = 0; i < sp->impl->nattrs; i++) {
            lua_pushnumber(L, sp->vals[i]);
            lua_setfield(L, -2, sp->impl->attrs[i].name);
        }
    } else {
        lua_getiuservalue(L, 1, 1); /* the methods table */
        lua_getfield(L, -1, k);
    }
    return 1;
}

/* ---- messages ---- */

static kb_scripted_msg *test_msg(lua_State *L, int idx)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    bool same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}

static kb_scripted_msg *check_msg_any(lua_State *L)
{
    kb_scripted_msg *m = test_msg(L, 1);
    if (!m)
        luaL_typeerror(L, 1, "message");
    return m;
}

static kb_scripted_msg *check_msg(lua_State *L, const char *call)
{
    kb_scripted_msg *m = check_msg_any(L);
    if (m->done)
        luaL_error(L, "%s: this message was already forwarded or finished", call);
    return m;
}

static int msg_forward(lua_State *L)
{
    kb_scripted_msg *m = check_msg(L, "msg:forward()");
    if (kb_scripted_forward(m) == KB_SCRIPTED_ENDS_HERE)
        return luaL_error(L, "msg:forward(): the message ends here (at %s): finish it",
                          kb_scripted_comp(m->s)->n->id);
    return 0;
}

static int msg_finish(lua_State *L)
{
    kb_scripted_msg *m = check_msg(L, "msg:finish()");
    if (kb_scripted_finish(m) == KB_SCRIPTED_GOES_ON)
        return luaL_error(L, "msg:finish(): the message goes on past %s: forward it",
                          kb_scripted_comp(m->s)->n->id);
    return 0;
}

static int msg_index(lua_State *L)
{
    kb_scripted_msg *m = check_msg_any(L);
    lua_pushvalue(L, 2); /* methods first: forward and finish are the hot keys */
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    lua_settop(L, 2);
    const char *k = lbind_checkstr(L, 2, "msg[key]", "key");
    if (m->done)
        return luaL_error(L, "msg.%s: the message was already forwarded or finished", k);
    kb_txn *t = kb_scripted_msg_txn(m);
    const kb_flit *f = m->flit ? m->ptr : NULL;
    const kb_topo *topo = kb_fabric_topo(t->fab);
    kb_mem_req *r = kb_mem_req_of(t);
    int64_t tag;
    if (strcmp(k, "kind") == 0)
        lua_pushstring(L, t->kind->name);
    else if (strcmp(k, "id") == 0)
        lua_pushinteger(L, (lua_Integer)t->id);
    else if (strcmp(k, "bytes") == 0)
        lua_pushinteger(L, f ? f->bytes : (lua_Integer)t->nbytes);
    else if (strcmp(k, "nbytes") == 0)
        lua_pushinteger(L, (lua_Integer)t->nbytes);
    else if (strcmp(k, "req_bytes") == 0)
        lua_pushinteger(L, (lua_Integer)(r ? r->nbytes : t->nbytes));
    else if (strcmp(k, "addr") == 0)
        lua_pushinteger(L, (lua_Integer)(r ? r->addr : 0));
    else if (strcmp(k, "write") == 0)
        lua_pushboolean(L, r && kb_mem_writes(t));
    else if (strcmp(k, "first") == 0)
        lua_pushboolean(L, !f || f->idx == 0);
    else if (strcmp(k, "last") == 0)
        lua_pushboolean(L, !f || f->idx + 1 == t->nflits);
    else if (strcmp(k, "at_end") == 0)
        lua_pushboolean(L, kb_scripted_msg_at_end(m));
    else if (strcmp(k, "src") == 0)
        lua_pushstring(L, kb_topo_node(topo, t->path->nodes[0])->id);
    else if (strcmp(k, "dst") == 0)
        lua_pushstring(L, kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id);
    else if (strcmp(k, "done") == 0)
        lua_pushboolean(L, m->done);
    else if (strcmp(k, "tag") == 0 && kb_scripted_tag(t, &tag))
        lua_pushinteger(L, tag);
    else
        lua_pushnil(L);
    return 1;
}

static int msg_tostring(lua_State *L)
{
    kb_scripted_msg *m = check_msg_any(L);
    if (m->done) {
        lua_pushliteral(L, "message (forwarded or finished)");
        return 1;
    }
    char buf[160];
    kb_scripted_msg_describe(m, buf, sizeof buf);
    lua_pushstring(L, buf);
    return 1;
}

/* ---- attaching to a simulation ---- */

static int inst_gc(lua_State *L)
{
    kb_scripted **u = luaL_checkudata(L, 1, LINST_MT);
    if (*u)
        kb_scripted_set_ref(*u, NULL);
    return 0;
}

/* The methods every instance shares, C ones here (receive, busy, span);
 * components.start adds the Lua ones. */
static void push_methods(lua_State *L, lsim *S)
{
    lua_newtable(L);
    lsim **up = lua_newuserdatauv(L, sizeof *up, 0);
    *up = S;
    lua_pushcclosure(L, inst_receive, 1);
    lua_setfield(L, -2, "receive");
    lua_pushcfunction(L, inst_poll);
    lua_setfield(L, -2, "poll");
    lua_pushcfunction(L, inst_send);
    lua_setfield(L, -2, "send");
    lua_pushcfunction(L, inst_busy);
    lua_setfield(L, -2, "busy");
    lua_pushcfunction(L, inst_span);
    lua_setfield(L, -2, "span");
}

void lcomponent_attach(lua_State *L, lsim *S, int sim_idx)
{
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    int comps = 0, methods = 0;
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        kb_comp *c = kb_fabric_comp(S->mach->fab, i);
        kb_scripted *s = kb_scripted_of(c);
        if (!s)
            continue;
        if (!comps) {
            lua_getglobal(L, "require");
            lua_pushliteral(L, "kernbench.components");
            lua_call(L, 1, 1);
            comps = lua_gettop(L);
            push_methods(L, S);
            methods = lua_gettop(L);
        }
        lua_getfield(L, comps, "start");
        lua_pushvalue(L, sim_idx);
        kb_scripted **u = lua_newuserdatauv(L, sizeof *u, 1);
        *u = s;
        kb_scripted_set_ref(s, u);
        luaL_setmetatable(L, LINST_MT);
        lua_pushvalue(L, methods);
        lua_setiuservalue(L, -2, 1);
        lua_pushstring(L, c->n->spec->impl->name);
        lua_pushvalue(L, methods);
        lua_call(L, 4, 0);
    }
    if (comps)
        lua_settop(L, comps - 1);
}

/* ---- implementations ---- */

/* The string at idx if it is one without NUL bytes (C would read it
 * shorter), else NULL. */
static const char *plain_string(lua_State *L, int idx)
{
    size_t n;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
    return s && strlen(s) == n ? s : NULL;
}

/* The kinds a definition's `messages` list names (at idx), into impl.
 * False with an error message pushed. */
static bool read_messages(lua_State *L, const char *name, int idx, kb_impl *impl)
{
    if (lua_getfield(L, idx, "messages") == LUA_TNIL) {
        lua_pop(L, 1);
        return true;
    }
    int m = lua_gettop(L);
    if (!lua_istable(L, m)) {
        lua_pushfstring(L, "%s: messages must be a list of message kind names", name);
        return false;
    }
    /* the strings stay alive in the table while the C module copies them */
    size_t n = lua_rawlen(L, m), bad = 0;
    const char **names = kb_xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, m, (lua_Integer)i + 1);
        names[i] = plain_string(L, -1);
        lua_pop(L, 1);
    }
    const char *why = NULL;
    bool ok = kb_scripted_impl_set_messages(impl, names, n, &bad, &why);
    free(names);
    if (!ok) {
        lua_pushfstring(L, "%s: messages[%d] %s", name, (int)bad + 1, why);
        return false;
    }
    lua_pop(L, 1);
    return true;
}

kb_impl *lcomponent_new_impl(lua_State *L, const char *name, int idx)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) {
        lua_pushfstring(L, "the definition of %s is not a table", name);
        return NULL;
    }
    lua_getfield(L, idx, "run");
    bool has_run = lua_isfunction(L, -1);
    lua_pop(L, 1);
    if (!has_run) {
        lua_pushfstring(L, "%s has no run(self) function", name);
        return NULL;
    }
    if (lua_getfield(L, idx, "flit_aware") != LUA_TNIL && !lua_isboolean(L, -1)) {
        lua_pushfstring(L, "%s: flit_aware must be a boolean, got %s", name, luaL_typename(L, -1));
        lua_remove(L, -2);
        return NULL;
    }
    bool flits = lua_toboolean(L, -1);
    lua_getfield(L, idx, "kinds");
    const char *kinds = plain_string(L, -1);
    lua_getfield(L, idx, "doc");
    const char *doc = plain_string(L, -1);
    if ((!lua_isnil(L, -2) && !kinds) || (!lua_isnil(L, -1) && !doc)) {
        lua_pop(L, 3);
        lua_pushfstring(L, "%s: kinds and doc must be strings without NUL bytes", name);
        return NULL;
    }
    kb_impl *impl = kb_scripted_impl_new(name, flits, kinds, doc ? doc : "a component written in Lua");
    lua_pop(L, 3);
    if (!read_messages(L, name, idx, impl)) {
        kb_scripted_impl_free(impl);
        return NULL;
    }
    if (lua_getfield(L, idx, "attrs") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (!plain_string(L, -2) || !lua_isnumber(L, -1)) {
                lua_pop(L, 3);
                kb_scripted_impl_free(impl);
                lua_pushfstring(L, "%s: attrs must map names to numbers (their defaults)", name);
                return NULL;
            }
            kb_scripted_impl_add_attr(impl, lua_tostring(L, -2), lua_tonumber(L, -1),
                                      "a Lua component's attribute");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    return impl;
}

void lcomponent_open(lua_State *L)
{
    static const luaL_Reg msg_methods[] = {{"forward", msg_forward}, {"finish", msg_finish}, {NULL, NULL}};
    luaL_newmetatable(L, LMSG_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    luaL_newlib(L, msg_methods);
    lua_pushcclosure(L, msg_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, msg_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    luaL_newmetatable(L, LINST_MT);
    lua_pushcfunction(L, inst_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, inst_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}
