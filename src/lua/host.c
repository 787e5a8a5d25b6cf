#include "lua/host.h"

#include "lua/laddr.h"
#include "lua/lalloc.h"
#include "lua/ltl.h"
#include "lua/ltensor.h"
#include "lua/ltopo.h"

#include "core/util.h"
#include "trace/val.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

/* The registry key under which the state's host lives. */
static const char HOST_KEY = 'h';

kb_host *kb_host_of(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &HOST_KEY);
    kb_host *h = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return h;
}

int kb_host_next_sim_serial(lua_State *L)
{
    kb_host *h = kb_host_of(L);
    return h ? ++h->sims_created : 0;
}

void kb_host_sim_closed(lua_State *L, int serial, const kb_sim_stats *st, uint64_t resumes)
{
    kb_host *h = kb_host_of(L);
    if (!h || !h->print_stats)
        return;
    char now[KB_TIME_STRLEN];
    fprintf(h->stats_out ? h->stats_out : stderr,
            "[stats] sim #%d: events=%" PRIu64 " sim_time=%s wall_s=%.6f events_per_s=%.0f "
            "resumes=%" PRIu64 "\n",
            serial, st->events, kb_time_format(st->now, now), st->wall_s, st->events_per_s, resumes);
}

void kb_host_dump_config(kb_host *h, const char *yaml)
{
    for (size_t i = 0; i < h->nconfigs; i++)
        if (strcmp(h->configs_written[i], yaml) == 0)
            return;
    h->configs_written = kb_xrealloc(h->configs_written, (h->nconfigs + 1) * sizeof(char *));
    h->configs_written[h->nconfigs++] = kb_xstrdup(yaml);
    fprintf(h->config_out, "%s%s", h->nconfigs > 1 ? "---\n" : "", yaml);
}

void kb_host_add_run(lua_State *L, struct kb_val *stats)
{
    kb_host *h = kb_host_of(L);
    if (!h) {
        kb_val_free(stats);
        return;
    }
    if (!h->runs)
        h->runs = kb_val_arr();
    kb_arr_push(h->runs, stats);
}

static int open_state(lua_State *L)
{
    const char *lua_dir = lua_touserdata(L, 1);
    luaL_openlibs(L);
    luaL_requiref(L, "sim", luaopen_sim, 1);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.topology_c", luaopen_kb_topology, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.addr", kb_lua_open_addr, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.alloc_c", luaopen_kb_alloc, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.tensor_c", luaopen_kb_tensor, 0);
    lua_pop(L, 1);
    luaL_requiref(L, "kernbench.pe_c", luaopen_kb_pe, 0);
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
    return 0;
}

lua_State *kb_host_open(kb_host *host, const char *lua_dir, char *err, size_t errn)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errn, "cannot create a Lua state (out of memory)");
        return NULL;
    }
    lua_pushlightuserdata(L, host);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &HOST_KEY);
    lua_pushcfunction(L, open_state);
    lua_pushlightuserdata(L, (void *)lua_dir);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        snprintf(err, errn, "%s", lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

void kb_host_close(lua_State *L) { lua_close(L); }
