/* `kernbench.alloc_c`: first-fit allocators (src/mem/alloc.h) for the Lua
 * runtime.
 *
 *   a = alloc_c.new(base, size[, granule])      -- granule: 1, or a page size
 *   off, err = a:alloc(nbytes[, align])         -- nil + message on failure
 *   ok, err = a:free(off)
 *   a:is_pristine(), a:free_bytes(), a:largest_free(), a:live(), a:reset() */
#include "lua/lalloc.h"

#include "mem/alloc.h"

#include <lauxlib.h>
#include <stdlib.h>

#define LALLOC_MT "kernbench.alloc"

static kb_alloc *check(lua_State *L) { return luaL_checkudata(L, 1, LALLOC_MT); }

static uint64_t check_u64(lua_State *L, int idx, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, idx);
    if (v < 0)
        luaL_error(L, "alloc: %s must be >= 0, got %I", what, v);
    return (uint64_t)v;
}

static int l_new(lua_State *L)
{
    uint64_t base = check_u64(L, 1, "base"), size = check_u64(L, 2, "size");
    uint64_t granule = lua_isnoneornil(L, 3) ? 1 : check_u64(L, 3, "granule");
    if (granule == 0 || (granule & (granule - 1)) || base % granule)
        return luaL_error(L, "alloc: granule %I must be a power of two dividing the base",
                          (lua_Integer)granule);
    kb_alloc *a = lua_newuserdatauv(L, sizeof *a, 0);
    kb_alloc_init(a, base, size, granule);
    luaL_setmetatable(L, LALLOC_MT);
    return 1;
}

static int l_gc(lua_State *L)
{
    kb_alloc_fini(check(L));
    return 0;
}

static int l_alloc(lua_State *L)
{
    kb_alloc *a = check(L);
    uint64_t n = check_u64(L, 2, "nbytes");
    uint64_t align = lua_isnoneornil(L, 3) ? 1 : check_u64(L, 3, "align");
    uint64_t off;
    char *err = NULL;
    if (!kb_alloc_alloc(a, n, align, &off, &err)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        free(err);
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)off);
    return 1;
}

static int l_free(lua_State *L)
{
    kb_alloc *a = check(L);
    char *err = NULL;
    if (!kb_alloc_free(a, check_u64(L, 2, "address"), &err)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        free(err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_pristine(lua_State *L)
{
    lua_pushboolean(L, kb_alloc_is_pristine(check(L)));
    return 1;
}

static int l_free_bytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_alloc_free_bytes(check(L)));
    return 1;
}

static int l_largest(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_alloc_largest_free(check(L)));
    return 1;
}

static int l_live(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check(L)->nlive);
    return 1;
}

static int l_reset(lua_State *L)
{
    kb_alloc_reset(check(L));
    return 0;
}

int luaopen_kb_alloc(lua_State *L)
{
    static const luaL_Reg methods[] = {{"alloc", l_alloc},           {"free", l_free},
                                       {"is_pristine", l_pristine},  {"free_bytes", l_free_bytes},
                                       {"largest_free", l_largest},  {"live", l_live},
                                       {"reset", l_reset},           {NULL, NULL}};
    luaL_newmetatable(L, LALLOC_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    static const luaL_Reg lib[] = {{"new", l_new}, {NULL, NULL}};
    luaL_newlib(L, lib);
    return 1;
}
