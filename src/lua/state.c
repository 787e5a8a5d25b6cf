/* A Lua state with everything kernbench preloads (state.h). */
#include "lua/state.h"

#include "luasim/lbind.h"

#include "lua/laddr.h"
#include "lua/lalloc.h"
#include "lua/lmachine.h"
#include "lua/ltensor.h"
#include "lua/ltl.h"
#include "lua/ltopo.h"
#include "lua/lyaml.h"
#include "luasim/loutput.h"
#include "luasim/lprocpool.h"
#include "luasim/lsim.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>

static int open_state(lua_State *L)
{
    const char *lua_dir = lua_touserdata(L, 1);
    luaL_openlibs(L);
    luaL_requiref(L, "sim", luaopen_sim, 1);
    lua_pop(L, 1);
    lmachine_open(L); /* simulations built on a topology */
    luaL_requiref(L, "kernbench.topology_c", luaopen_kb_topology, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.addr", luaopen_kb_addr, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.alloc_c", luaopen_kb_alloc, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.tensor_c", luaopen_kb_tensor, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.pe_c", luaopen_kb_pe, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.yaml_c", luaopen_kb_yaml, 0); /* ccl.yaml */
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.output_c", luaopen_kb_output, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.progress_c", luaopen_kb_progress, 0); /* kb.progress */
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.procpool", luaopen_kb_procpool, 0); /* child processes */
    lua_pop(L, 1);
    if (lua_dir) {
        lua_getglobal(L, "package");
        /* lua_dir/.. holds kernels/: require "kernels.NAME" */
        lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s/../?.lua;", lua_dir, lua_dir, lua_dir);
        lua_getfield(L, -2, "path");
        lua_concat(L, 2);
        lua_setfield(L, -2, "path");
        lua_pop(L, 1);
        lua_getglobal(L, "require");
        lua_pushliteral(L, "kernbench");
        lua_call(L, 1, 1);
        lua_pushstring(L, lua_dir);
        lua_setfield(L, -2, "lua_dir");
        lua_setglobal(L, "kb");
    }
    lbind_name_metatables(L); /* argument errors of methods called from C name them */
    lbind_hide_finalizers(L);
    return 0;
}

lua_State *kb_lua_open(kb_session *session, const char *lua_dir, char *err, size_t errn)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errn, "cannot create a Lua state (out of memory)");
        return NULL;
    }
    lbind_init_state(L); /* before any coroutine: they inherit it */
    kb_session_attach(L, session);
    lua_pushcfunction(L, open_state);
    lua_pushlightuserdata(L, (void *)lua_dir);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        snprintf(err, errn, "%s", lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

void kb_lua_close(lua_State *L) { lua_close(L); }
