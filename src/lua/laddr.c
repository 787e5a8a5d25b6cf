/* The `addr` Lua module: encode and decode 53-bit physical addresses.
 * Addresses and offsets are Lua integers (64-bit); sub-units are given by
 * name (case-insensitive, e.g. "PE_TCM") or index. Codec errors are raised
 * with the codec's message, which names the offending argument or field. */
#include "lua/laddr.h"

#include "luasim/lbind.h"
#include "mem/addr.h"

#include <lauxlib.h>
#include <limits.h>
#include <lua.h>

#define DEFAULT_SLICE_BYTES (UINT64_C(6) << 30) /* 48 GiB per cube / 8 slices */

typedef struct sub_table {
    const char *what; /* for messages */
    int (*find)(const char *name);
    const char *(*name)(unsigned sub_unit);
} sub_table;

static const sub_table pe_units = {"PE_LOCAL", kb_addr_pe_sub_unit_find, kb_addr_pe_sub_unit_name};
static const sub_table mcpu_units = {"MCPU_LOCAL", kb_addr_mcpu_sub_unit_find, kb_addr_mcpu_sub_unit_name};
static const sub_table iocpu_units = {"IOCPU", kb_addr_iocpu_sub_unit_find, kb_addr_iocpu_sub_unit_name};

/* Argument checks. Each entry point checks its arguments left to right, so
 * the first bad one is reported. An id (sip, die, pe, io_index, sub_unit)
 * only has to fit an unsigned here; its real range is the codec's check. */
static unsigned check_id(lua_State *L, int arg, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, arg);
    if (v < 0 || (lua_Unsigned)v > UINT_MAX)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %I is out of range", what, v));
    return (unsigned)v;
}

static uint64_t check_offset(lua_State *L, int arg, const char *what)
{
    lua_Integer v = luaL_checkinteger(L, arg);
    if (v < 0)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %I is negative", what, v));
    return (uint64_t)v;
}

static unsigned check_sub_unit(lua_State *L, int arg, const sub_table *t)
{
    if (lua_type(L, arg) == LUA_TNUMBER)
        return check_id(L, arg, "sub_unit");
    const char *s = lbind_checkstr(L, arg, "kernbench.addr", "sub_unit");
    int su = t->find(s);
    if (su >= 0)
        return (unsigned)su;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "unknown %s sub-unit '%s' (expected one of", t->what, s);
    luaL_addvalue(&b);
    for (unsigned i = 0; t->name(i); i++) {
        luaL_addchar(&b, ' ');
        luaL_addstring(&b, t->name(i));
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return (unsigned)luaL_argerror(L, arg, lua_tostring(L, -1));
}

static int push_pa(lua_State *L, bool ok, kb_pa pa, const char *err)
{
    if (!ok)
        return luaL_error(L, "%s: %s", lbind_fname(L), err);
    lua_pushinteger(L, (lua_Integer)pa);
    return 1;
}

static int l_decode(lua_State *L)
{
    kb_pa pa = (kb_pa)(lua_Unsigned)luaL_checkinteger(L, 1);
    kb_pa_fields f;
    char err[KB_PA_ERRLEN];
    if (!kb_pa_decode(pa, &f, err, sizeof err))
        return luaL_error(L, "%s: %s", lbind_fname(L), err);
    const sub_table *t = f.kind == KB_PA_PE_LOCAL     ? &pe_units
                         : f.kind == KB_PA_MCPU_LOCAL ? &mcpu_units
                         : f.kind == KB_PA_IOCPU      ? &iocpu_units
                                                      : NULL;
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, f.sip);
    lua_setfield(L, -2, "sip");
    lua_pushinteger(L, f.die);
    lua_setfield(L, -2, "die");
    lua_pushstring(L, kb_pa_kind_name(f.kind));
    lua_setfield(L, -2, "kind");
    if (f.kind == KB_PA_PE_LOCAL) {
        lua_pushinteger(L, f.pe);
        lua_setfield(L, -2, "pe");
    }
    if (t) {
        lua_pushstring(L, t->name(f.sub_unit));
        lua_setfield(L, -2, "sub_unit");
    }
    lua_pushinteger(L, (lua_Integer)f.offset);
    lua_setfield(L, -2, "offset");
    if (f.kind == KB_PA_IOCPU || f.kind == KB_PA_UAL) {
        lua_pushinteger(L, f.io_index);
        lua_setfield(L, -2, "io");
    }
    return 1;
}

static int l_hbm(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die");
    uint64_t off = check_offset(L, 3, "hbm_offset");
    bool ok = kb_pa_hbm(sip, die, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_pe_hbm(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die"), pe = check_id(L, 3, "pe");
    uint64_t off = check_offset(L, 4, "pe_local_offset");
    uint64_t slice = lua_isnoneornil(L, 5) ? DEFAULT_SLICE_BYTES : check_offset(L, 5, "slice_bytes");
    bool ok = kb_pa_pe_hbm(sip, die, pe, off, slice, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_pe_tcm(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die"), pe = check_id(L, 3, "pe");
    uint64_t off = check_offset(L, 4, "tcm_offset");
    bool ok = kb_pa_pe_tcm(sip, die, pe, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_pe_local(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die"), pe = check_id(L, 3, "pe");
    unsigned su = check_sub_unit(L, 4, &pe_units);
    uint64_t off = check_offset(L, 5, "offset");
    bool ok = kb_pa_pe_local(sip, die, pe, su, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_mcpu(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die");
    unsigned su = check_sub_unit(L, 3, &mcpu_units);
    uint64_t off = check_offset(L, 4, "offset");
    bool ok = kb_pa_mcpu(sip, die, su, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_cube_sram(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), die = check_id(L, 2, "die");
    uint64_t off = check_offset(L, 3, "sram_offset");
    bool ok = kb_pa_cube_sram(sip, die, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_iocpu(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), io = check_id(L, 2, "io_index");
    unsigned su = check_sub_unit(L, 3, &iocpu_units);
    uint64_t off = check_offset(L, 4, "offset");
    bool ok = kb_pa_iocpu(sip, io, su, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_ual(lua_State *L)
{
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    unsigned sip = check_id(L, 1, "sip"), io = check_id(L, 2, "io_index");
    uint64_t off = check_offset(L, 3, "chiplet_offset");
    bool ok = kb_pa_ual(sip, io, off, &pa, err, sizeof err);
    return push_pa(L, ok, pa, err);
}

static int l_format(lua_State *L)
{
    kb_pa pa = (kb_pa)(lua_Unsigned)luaL_checkinteger(L, 1);
    char buf[KB_PA_ERRLEN + 16]; /* "invalid " + the longest error */
    kb_pa_format(pa, buf, sizeof buf);
    lua_pushstring(L, buf);
    return 1;
}

static const luaL_Reg addrlib[] = {
    {"decode", l_decode},
    {"hbm", l_hbm},
    {"pe_hbm", l_pe_hbm},
    {"pe_tcm", l_pe_tcm},
    {"pe_local", l_pe_local},
    {"mcpu", l_mcpu},
    {"cube_sram", l_cube_sram},
    {"iocpu", l_iocpu},
    {"ual", l_ual},
    {"format", l_format},
    {NULL, NULL}};

int luaopen_kb_addr(lua_State *L)
{
    luaL_newlib(L, addrlib);
    return 1;
}
