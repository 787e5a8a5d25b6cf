/* The PE page tables from Lua (`kernbench.pe_c`): thin calls into PE_MMU
 * (src/comp/pe/mmu.c), which owns the tables and every translation. The
 * runtime installs a map message's entries when the message arrives at
 * the PE_MMU, and asks for translations (torch.translate):
 *
 *   pe_c.mmu_map(s, sip, cube, pe, va, pa, size)
 *   pe_c.mmu_unmap(s, sip, cube, pe, va, size)
 *   pe_c.mmu_translate(s, sip, cube, pe, va[, pa_fallback[, call]]) -> pa | nil, message
 *   pe_c.mmu_regions(s, sip, cube, pe) -> count */
#include "lua/ltl.h"
#include "lua/ltl_internal.h"

#include "lua/lbind.h"

#include <lauxlib.h>
#include <stdlib.h>

kb_pe *ltl_check_pe(lua_State *L, lsim *S, int idx)
{
    int sip = (int)luaL_checkinteger(L, idx), cube = (int)luaL_checkinteger(L, idx + 1),
        pe = (int)luaL_checkinteger(L, idx + 2);
    char *err = NULL;
    kb_pe *p = kb_pe_find(S->fab, sip, cube, pe, &err);
    if (!p)
        lbind_raise(L, err);
    return p;
}

/* The PE of the arguments s, sip, cube, pe (the rest start at 5). */
static kb_pe *check_mmu_pe(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    if (!S->fab)
        luaL_error(L, "pe_c: this simulation has no topology");
    return ltl_check_pe(L, S, 2);
}

static uint64_t check_u64(lua_State *L, int idx)
{
    lua_Integer v = luaL_checkinteger(L, idx);
    luaL_argcheck(L, v >= 0, idx, "must be >= 0");
    return (uint64_t)v;
}

static int l_mmu_map(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    char *err = NULL;
    if (!kb_mmu_map(p, check_u64(L, 5), check_u64(L, 6), check_u64(L, 7), &err))
        return lbind_raise(L, err);
    return 0;
}

static int l_mmu_unmap(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    char *err = NULL;
    if (!kb_mmu_unmap(p, check_u64(L, 5), check_u64(L, 6), &err))
        return lbind_raise(L, err);
    return 0;
}

static int l_mmu_translate(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    uint64_t va = check_u64(L, 5), pa;
    bool fallback = lua_toboolean(L, 6);
    const char *call = luaL_optstring(L, 7, "pe_c.mmu_translate");
    char *err = NULL;
    if (!kb_mmu_table(p, &err))
        return lbind_raise(L, err);
    if (kb_mmu_translate(p, va, fallback, &pa)) {
        lua_pushinteger(L, (lua_Integer)pa);
        return 1;
    }
    char *msg = kb_mmu_fault(p, va, call, NULL);
    lua_pushnil(L);
    lua_pushstring(L, msg);
    free(msg);
    return 2;
}

static int l_mmu_regions(lua_State *L)
{
    char *err = NULL;
    kb_pagetable *pt = kb_mmu_table(check_mmu_pe(L), &err);
    if (!pt)
        return lbind_raise(L, err);
    lua_pushinteger(L, (lua_Integer)kb_pt_regions(pt));
    return 1;
}

const luaL_Reg ltl_mmu_funcs[] = {{"mmu_map", l_mmu_map},
                                  {"mmu_unmap", l_mmu_unmap},
                                  {"mmu_translate", l_mmu_translate},
                                  {"mmu_regions", l_mmu_regions},
                                  {NULL, NULL}};
