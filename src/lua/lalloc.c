/* `kernbench.alloc_c`: first-fit allocators (src/mem/alloc.h) for the Lua
 * runtime.
 *
 *   a = alloc_c.new(base, size[, granule])      -- granule: 1, or a page size
 *   alloc_c.hbm_slice(slice_bytes), alloc_c.tcm(tcm_bytes, reserved_bytes),
 *   alloc_c.va(page_size)                        -- the named kinds (alloc_kinds.c)
 *   off, err = a:alloc(nbytes[, align])         -- nil + message on failure
 *   ok, err = a:free(off)
 *   a:is_pristine(), a:free_bytes(), a:largest_free(), a:live(), a:reset() */
#include "lua/lalloc.h"

#include "luasim/lbind.h"
#include "mem/alloc.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define LALLOC_MT "kernbench.alloc"

static kb_alloc *check(lua_State *L) { return luaL_checkudata(L, 1, LALLOC_MT); }

static uint64_t check_u64(lua_State *L, int idx, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, idx);
    if (v < 0)
        luaL_error(L, "%s: %s must be >= 0, got %I", lbind_fname(L), what, v);
    return (uint64_t)v;
}

/* A new allocator userdata, initialised by init (false: raise its message). */
static int push_alloc(lua_State *L, bool (*init)(kb_alloc *a, const void *p, char **err), const void *p)
{
    kb_alloc *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    char *err = NULL;
    if (!init(a, p, &err))
        return lbind_raise_prefixed(L, lbind_fname(L), err);
    luaL_setmetatable(L, LALLOC_MT);
    return 1;
}

typedef struct range {
    uint64_t base, size, granule;
} range;

static bool init_range(kb_alloc *a, const void *p, char **err)
{
    const range *r = p;
    if (!kb_alloc_check_range(r->base, r->size, r->granule, err))
        return false;
    kb_alloc_init(a, r->base, r->size, r->granule);
    return true;
}

static bool init_hbm(kb_alloc *a, const void *p, char **err) { return kb_alloc_init_hbm_slice(a, p, err); }
static bool init_tcm(kb_alloc *a, const void *p, char **err) { return kb_alloc_init_tcm(a, p, err); }
static bool init_va(kb_alloc *a, const void *p, char **err) { return kb_alloc_init_va(a, p, err); }

/* alloc_c.new(base, size[, granule]) */
static int l_new(lua_State *L)
{
    range r = {check_u64(L, 1, "base"), check_u64(L, 2, "size"),
               lua_isnoneornil(L, 3) ? 1 : check_u64(L, 3, "granule")};
    return push_alloc(L, init_range, &r);
}

/* alloc_c.hbm_slice(slice_bytes): one PE's HBM slice, PE-local offsets. */
static int l_hbm_slice(lua_State *L)
{
    kb_hbm_slice_params p = KB_HBM_SLICE_PARAMS_DEFAULT;
    p.slice_bytes = check_u64(L, 1, "slice_bytes");
    return push_alloc(L, init_hbm, &p);
}

/* alloc_c.tcm(tcm_bytes, reserved_bytes): the allocatable part of one PE's
 * TCM (the scheduler-reserved region at its start is excluded). */
static int l_tcm(lua_State *L)
{
    kb_tcm_params p = KB_TCM_PARAMS_DEFAULT;
    p.tcm_bytes = check_u64(L, 1, "tcm_bytes");
    p.reserved_bytes = check_u64(L, 2, "reserved_bytes");
    return push_alloc(L, init_tcm, &p);
}

/* alloc_c.va(page_size): the device-wide VA space (default base and size). */
static int l_va(lua_State *L)
{
    kb_va_params p = KB_VA_PARAMS_DEFAULT;
    p.page_size = check_u64(L, 1, "page_size");
    return push_alloc(L, init_va, &p);
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
    if (!kb_alloc_alloc(a, n, align, &off, &err))
        return lbind_fail(L, err);
    lua_pushinteger(L, (lua_Integer)off);
    return 1;
}

static int l_free(lua_State *L)
{
    kb_alloc *a = check(L);
    char *err = NULL;
    if (!kb_alloc_free(a, check_u64(L, 2, "address"), &err))
        return lbind_fail(L, err);
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
    static const luaL_Reg lib[] = {{"new", l_new}, {"hbm_slice", l_hbm_slice}, {"tcm", l_tcm},
                                   {"va", l_va},   {NULL, NULL}};
    luaL_newlib(L, lib);
    return 1;
}
