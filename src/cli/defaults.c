/* What the options hand to the Lua library (defaults.h). */
#include "cli/defaults.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A --topology that names nothing is a usage error before anything runs,
 * whether or not the script loads a topology. */
bool kb_cli_topology_exists(lua_State *L, const char *topology)
{
    static const char code[] = "local name = ... return kb.topology.find(name)";
    if (!topology || luaL_loadbuffer(L, code, sizeof code - 1, "=(topology)") != LUA_OK) {
        lua_pop(L, topology ? 1 : 0);
        return true;
    }
    lua_pushstring(L, topology);
    if (lua_pcall(L, 1, 0, 0) == LUA_OK)
        return true;
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "kernbench: --topology %s: %s\nusage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n",
            topology, msg ? msg : "not found");
    lua_pop(L, 1);
    return false;
}

/* A --ccl that names no file is a usage error before anything runs, as a
 * --topology is; what is wrong inside the file is said when it is read. */
bool kb_cli_ccl_exists(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) == 0)
        return true;
    fprintf(stderr, "kernbench: --ccl %s: %s (expected a ccl.yaml file: docs/ccl.md)\n"
                    "usage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n",
            path, strerror(errno));
    return false;
}

/* Hands --topology and --set to kb.topology's defaults. */
int kb_cli_set_defaults(lua_State *L, const kb_cli_options *o)
{
    lua_getglobal(L, "kb");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return LUA_OK;
    }
    lua_getfield(L, -1, "topology");
    if (!lua_istable(L, -1)) {
        /* A replaced Lua library without kb.topology: fine unless the user asked for one. */
        lua_pop(L, 2);
        if (o->topology || o->nsets > 0 || o->profile) {
            fprintf(stderr, "kernbench: --topology/--set/--profile given but this Lua library has no "
                            "kb.topology module\n");
            return LUA_ERRRUN;
        }
        return LUA_OK;
    }
    if (o->topology) {
        lua_pushstring(L, o->topology);
        lua_setfield(L, -2, "default_path");
    }
    lua_createtable(L, o->nsets + 1, 0);
    int k = 0;
    if (o->profile) { /* an override like any (src/topo/topo.c applies it before the others) */
        lua_pushfstring(L, "profile=%s", o->profile);
        lua_rawseti(L, -2, ++k);
    }
    for (int i = 0; i < o->nsets; i++) {
        lua_pushstring(L, o->sets[i]);
        lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "default_overrides");
    lua_pop(L, 1);
    if (o->device) { /* for benches: kernbench.bench reads kb.device */
        lua_pushstring(L, o->device);
        lua_setfield(L, -2, "device");
    }
    if (o->data) { /* for runtimes: kernbench.torch reads kb.data_mode */
        lua_pushstring(L, o->data);
        lua_setfield(L, -2, "data_mode");
    }
    if (o->jobs > 0) { /* for benches that run worker processes (kernbench.procpool) */
        lua_pushinteger(L, o->jobs);
        lua_setfield(L, -2, "jobs");
    }
    if (o->ccl) { /* for collectives: kernbench.ccl.config reads kb.ccl_path */
        lua_pushstring(L, o->ccl);
        lua_setfield(L, -2, "ccl_path");
    }
    lua_createtable(L, o->nparams, 0); /* for benches: kernbench.bench reads kb.params */
    for (int i = 0; i < o->nparams; i++) {
        lua_pushstring(L, o->params[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "params");
    lua_pushboolean(L, o->out.results_json != NULL);
    lua_setfield(L, -2, "results_requested");
    lua_pop(L, 1);
    return LUA_OK;
}
