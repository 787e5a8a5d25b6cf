/* Latency models: Lua functions that replace a builtin component's timing
 * formula, named in the topology (`latency_model: lua:MODULE` beside `impl`).
 * The module returns the function (or a table with field `latency`); it is
 * called as fn(q, attrs) with q = {op =, builtin_ns =, <parameters>} (the
 * implementation's registry entry lists them) and attrs = the node's
 * attributes plus `id`, and returns the time in ns. The builtin keeps its
 * queues, channels and data; only the number changes (docs/extending.md).
 *
 * Modules are found on the Lua path with the topology file's directory
 * first. Calls run on a thread of their own (a model may be asked while a
 * kernel's coroutine is running). An error, or a result that is not a
 * finite number >= 0, fails the simulation naming the node, the time, the
 * query and the traceback. */
#include "lua/lmodels.h"

#include "core/util.h"
#include "fabric/fabric.h"
#include "luasim/session.h"
#include "lua/lmachine.h"
#include "luasim/session.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct lmodel {
    lsim *S;
    int fn_ref, attrs_ref;
    char *module;
    struct lmodel *next;
} lmodel;

/* The registry slot of the per-simulation call thread lives in lsim. */

static int traceback(lua_State *L)
{
    luaL_traceback(L, L, luaL_tolstring(L, 1, NULL), 1);
    return 1;
}

static kb_time model_latency(kb_comp *c, const kb_lat_query *q, void *ctx)
{
    lmodel *m = ctx;
    lua_State *T = m->S->mach->model_thread;
    int base = lua_gettop(T);
    luaL_checkstack(T, 8, "latency model");
    lua_pushcfunction(T, traceback);
    lua_rawgeti(T, LUA_REGISTRYINDEX, m->fn_ref);
    lua_createtable(T, 0, q->n + 2);
    lua_pushstring(T, q->op);
    lua_setfield(T, -2, "op");
    lua_pushnumber(T, kb_ps_to_ns((double)q->builtin_ps));
    lua_setfield(T, -2, "builtin_ns");
    for (int i = 0; i < q->n; i++) {
        lua_pushnumber(T, q->vals[i]);
        lua_setfield(T, -2, q->keys[i]);
    }
    lua_rawgeti(T, LUA_REGISTRYINDEX, m->attrs_ref);
    kb_time result = q->builtin_ps;
    lua_State *outer = kb_session_enter(m->S->session, T); /* a stop can end its Lua code */
    int st = lua_pcall(T, 2, 1, base + 1);
    kb_session_leave(m->S->session, outer);
    if (st != LUA_OK) {
        kb_comp_fail(c, "latency model %s failed on %s: %s", m->module, q->op, lua_tostring(T, -1));
    } else {
        int ok;
        double ns = lua_tonumberx(T, -1, &ok);
        if (!ok || !(ns >= 0) || !(ns * (double)KB_PS_PER_NS < 9223372036854775808.0))
            kb_comp_fail(c, "latency model %s returned %s for %s: it must return a number of ns in "
                            "0 .. 9223372036854775.807 (int64 picoseconds)",
                         m->module, luaL_tolstring(T, -1, NULL), q->op);
        else
            result = (kb_time)llround(ns * (double)KB_PS_PER_NS);
    }
    lua_settop(T, base);
    return result;
}

/* Loads module `name` (topology directory first on the path); pushes its
 * function or raises with the path searched and the error. */
static void load_model(lua_State *L, const kb_topo *t, const char *name)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    int saved = lua_gettop(L);
    const char *file = kb_topo_path(t);
    if (file) { /* prepend the topology's directory */
        const char *slash = strrchr(file, '/');
        if (slash)
            lua_pushlstring(L, file, (size_t)(slash - file));
        else
            lua_pushliteral(L, ".");
        const char *dir = lua_tostring(L, -1);
        lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", dir, dir);
        lua_remove(L, -2);
        lua_pushvalue(L, saved);
        lua_concat(L, 2);
        lua_setfield(L, saved - 1, "path");
    }
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    int st = lua_pcall(L, 1, 1, 0);
    lua_pushvalue(L, saved); /* restore package.path */
    lua_setfield(L, saved - 1, "path");
    if (st != LUA_OK)
        luaL_error(L, "latency model '%s' does not load: %s", name, lua_tostring(L, -1));
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "latency");
        lua_remove(L, -2);
    }
    if (!lua_isfunction(L, -1))
        luaL_error(L, "latency model '%s' must return a function (or a table with a function 'latency'), "
                      "got %s", name, luaL_typename(L, -1));
    lua_replace(L, saved - 1);
    lua_settop(L, saved - 1);
}

static void push_attrs(lua_State *L, const kb_node *n)
{
    const kb_impl *impl = n->spec->impl;
    lua_createtable(L, 0, (int)impl->nattrs + 1);
    for (size_t i = 0; i < impl->nattrs; i++) {
        lua_pushnumber(L, n->spec->vals[i]);
        lua_setfield(L, -2, impl->attrs[i].name);
    }
    lua_pushstring(L, n->id);
    lua_setfield(L, -2, "id");
}

void lmodels_attach(lua_State *L, lsim *S)
{
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    lua_newtable(L); /* module -> function, while attaching */
    int cache = lua_gettop(L);
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        const kb_node *n = kb_topo_node(t, i);
        const char *mod = n->spec->latency_model;
        if (!mod)
            continue;
        if (!S->mach->model_thread) {
            S->mach->model_thread = lua_newthread(L);
            kb_session_own_thread(L, 0);
            S->mach->model_thread_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        if (lua_getfield(L, cache, mod) == LUA_TNIL) {
            lua_pop(L, 1);
            load_model(L, t, mod);
            lua_pushvalue(L, -1);
            lua_setfield(L, cache, mod);
        }
        lmodel *m = kb_xcalloc(1, sizeof *m);
        m->S = S;
        m->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        push_attrs(L, n);
        m->attrs_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        m->module = kb_xstrdup(mod);
        m->next = S->mach->models;
        S->mach->models = m;
        kb_comp *c = kb_fabric_comp(S->mach->fab, i);
        c->latency = model_latency;
        c->latency_ctx = m;
    }
    lua_pop(L, 1);
}

void lmodels_close(lua_State *L, lsim *S)
{
    while (S->mach->models) {
        lmodel *m = S->mach->models;
        S->mach->models = m->next;
        luaL_unref(L, LUA_REGISTRYINDEX, m->fn_ref);
        luaL_unref(L, LUA_REGISTRYINDEX, m->attrs_ref);
        free(m->module);
        free(m);
    }
    if (S->mach->model_thread) {
        luaL_unref(L, LUA_REGISTRYINDEX, S->mach->model_thread_ref);
        S->mach->model_thread = NULL;
    }
}
