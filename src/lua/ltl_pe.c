/* What the runtime asks of a PE (`kernbench.pe_c`), as thin calls into the
 * PE wing: PE_MMU's translations (src/comp/pe/mmu.c, which owns the page
 * tables; MmuMap and MmuUnmap messages change them) and PE_TCM's space
 * (src/comp/pe/tcm.c, which also gives kernels their scratch):
 *
 *   pe_c.mmu_translate(s, sip, cube, pe, va[, pa_fallback[, call]]) -> pa, tlb_ns | nil, message
 *   pe_c.mmu_regions(s, sip, cube, pe) -> count
 *   pe_c.tcm_alloc(s, sip, cube, pe, nbytes) -> offset | nil, message
 *   pe_c.tcm_free(s, sip, cube, pe, offset) -> true | nil, message
 *   pe_c.tcm_pristine(s) -> whether every PE's TCM space is free again */
#include "lua/ltl.h"
#include "lua/ltl_internal.h"

#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdlib.h>

kb_pe *ltl_check_pe(lua_State *L, lsim *S, int idx)
{
    int sip = (int)luaL_checkinteger(L, idx), cube = (int)luaL_checkinteger(L, idx + 1),
        pe = (int)luaL_checkinteger(L, idx + 2);
    char *err = NULL;
    kb_pe *p = kb_pe_find(S->mach->fab, sip, cube, pe, &err);
    if (!p)
        lbind_raise(L, err);
    return p;
}

/* The PE of the arguments s, sip, cube, pe (the rest start at 5). */
static kb_pe *check_mmu_pe(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        luaL_error(L, "pe_c: this simulation has no topology");
    return ltl_check_pe(L, S, 2);
}

static uint64_t check_u64(lua_State *L, int idx)
{
    lua_Integer v = luaL_checkinteger(L, idx);
    luaL_argcheck(L, v >= 0, idx, "must be >= 0");
    return (uint64_t)v;
}

/* The n values pushed, or nil and the message of a failed call (err, freed). */
static int result(lua_State *L, int n, char *err)
{
    return err ? lbind_fail(L, err) : n;
}

/* The PA and the translating PE's cost of a translation (its PE_MMU's
 * tlb_overhead_ns). */
static int l_mmu_translate(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    uint64_t va = check_u64(L, 5), pa;
    bool fallback = lua_toboolean(L, 6);
    const char *call = lbind_optstr(L, 7, "pe_c.mmu_translate", "call", "pe_c.mmu_translate");
    char *err = NULL;
    if (!kb_mmu_table(p, &err))
        return lbind_raise(L, err);
    kb_mmu_va_to_pa(p, va, 0, fallback, call, NULL, &pa, &err);
    lua_pushinteger(L, (lua_Integer)pa);
    lbind_push_time(L, p->tlb_ps);
    return result(L, 2, err);
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

static int l_tcm_alloc(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    uint64_t off = 0;
    char *err = NULL;
    kb_pe_tcm_alloc(p, check_u64(L, 5), &off, &err);
    lua_pushinteger(L, (lua_Integer)off);
    return result(L, 1, err);
}

static int l_tcm_free(lua_State *L)
{
    kb_pe *p = check_mmu_pe(L);
    char *err = NULL;
    kb_pe_tcm_free(p, check_u64(L, 5), &err);
    lua_pushboolean(L, 1);
    return result(L, 1, err);
}

static int l_tcm_pristine(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    bool all = true;
    const kb_topo *t = S->mach ? kb_fabric_topo(S->mach->fab) : NULL;
    for (uint32_t i = 0; t && i < kb_topo_node_count(t) && all; i++) {
        const kb_pe *p = kb_pe_of(S->mach->fab, i);
        all = !p || kb_pe_tcm_pristine(p);
    }
    lua_pushboolean(L, all);
    return 1;
}

const luaL_Reg ltl_pe_funcs[] = {{"mmu_translate", l_mmu_translate}, {"mmu_regions", l_mmu_regions},
                                  {"tcm_alloc", l_tcm_alloc},         {"tcm_free", l_tcm_free},
                                  {"tcm_pristine", l_tcm_pristine},   {NULL, NULL}};
