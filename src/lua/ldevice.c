/* Device control from Lua: the host's messages that IO_CPU and M_CPU carry
 * to PEs (src/comp/device/control.h).
 *
 *   s:mmu_map{targets = {{sip=, cube=, pe=}, ...}, entries = {{va=, pa=, size=}, ...}}   -> event
 *   s:mmu_unmap{targets = {...}, entries = {{va=, size=}, ...}}                          -> event
 *
 * Each sends one operation from the PCIe endpoint of the targets' SIP(s)
 * now and returns an event that succeeds (with true) when its completion is
 * back at the host. Until then a small record, listed on the simulation so
 * that closing it frees everything, holds the event. */
#include "lua/lsim.h"

#include "comp/device/control.h"
#include "core/util.h"
#include "lua/lbind.h"
#include "machine/machine.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct lctrl {
    struct lctrl *prev, *next;
    lsim *S;
    int ref;          /* registry reference to the event userdata */
    kb_ctrl_op *op;
    kb_time start;
} lctrl;

static void unlink_rec(lctrl *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        r->S->ctrls = r->next;
    if (r->next)
        r->next->prev = r->prev;
}

void ldevice_close(lua_State *L, lsim *S)
{
    while (S->ctrls) {
        lctrl *r = S->ctrls;
        unlink_rec(r);
        luaL_unref(L, LUA_REGISTRYINDEX, r->ref);
        kb_ctrl_abandon(r->op);
        free(r);
    }
}

/* The completion is back at the host: the event succeeds. */
static void ctrl_done(kb_ctrl_op *op, void *arg)
{
    lctrl *r = arg;
    lsim *S = r->S;
    lua_State *L = S->L ? S->L : S->opL;
    kb_machine_completed(S->m, kb_ctrl_kind(op)->name, 0, r->start, kb_sim_now(S->sim));
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->ref);
    levent *e = lua_touserdata(L, -1);
    lua_pushboolean(L, 1);
    lua_setiuservalue(L, -2, LEV_UV_VALUE);
    lua_pop(L, 1);
    kb_event_succeed(e->ev, KB_ITEM_NONE);
    unlink_rec(r);
    luaL_unref(L, LUA_REGISTRYINDEX, r->ref);
    free(r);
}

static int field_int(lua_State *L, int t, const char *k, const char *call, lua_Integer *out)
{
    lua_getfield(L, t, k);
    int ok;
    *out = lua_tointegerx(L, -1, &ok);
    bool absent = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!ok && !absent)
        luaL_error(L, "%s: field '%s' must be an integer", call, k);
    if (ok && *out < 0)
        luaL_error(L, "%s: field '%s' must be >= 0, got %I", call, k, *out);
    return ok;
}

/* The list at field k of the table at 2 (a non-empty table of tables). */
static int check_list(lua_State *L, const char *k, const char *call)
{
    lua_getfield(L, 2, k);
    if (!lua_istable(L, -1) || lua_rawlen(L, -1) == 0)
        luaL_error(L, "%s: field '%s' must be a non-empty list", call, k);
    return (int)lua_rawlen(L, -1);
}

static kb_ctrl_target *read_targets(lua_State *L, const char *call, size_t *n)
{
    int len = check_list(L, "targets", call);
    kb_ctrl_target *tg = lua_newuserdatauv(L, (size_t)len * sizeof *tg, 0); /* freed by the collector */
    for (int i = 0; i < len; i++) {
        lua_rawgeti(L, -2, i + 1);
        if (!lua_istable(L, -1))
            luaL_error(L, "%s: targets[%d] must be a table {sip =, cube =, pe =}", call, i + 1);
        lua_Integer v[3];
        static const char *const keys[3] = {"sip", "cube", "pe"};
        for (int k = 0; k < 3; k++)
            if (!field_int(L, lua_gettop(L), keys[k], call, &v[k]))
                luaL_error(L, "%s: targets[%d] has no '%s'", call, i + 1, keys[k]);
        tg[i] = (kb_ctrl_target){(int)v[0], (int)v[1], (int)v[2]};
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return tg;
}

static kb_mmu_entry *read_entries(lua_State *L, const char *call, bool map, size_t *n)
{
    int len = check_list(L, "entries", call);
    kb_mmu_entry *e = lua_newuserdatauv(L, (size_t)len * sizeof *e, 0);
    for (int i = 0; i < len; i++) {
        lua_rawgeti(L, -2, i + 1);
        int t = lua_gettop(L);
        lua_Integer va, pa = 0, size;
        if (!lua_istable(L, t) || !field_int(L, t, "va", call, &va) || !field_int(L, t, "size", call, &size) ||
            (map && !field_int(L, t, "pa", call, &pa)))
            luaL_error(L, "%s: entries[%d] must be a table {va =, %ssize =}", call, i + 1, map ? "pa =, " : "");
        e[i] = (kb_mmu_entry){(uint64_t)va, (uint64_t)pa, (uint64_t)size};
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return e;
}

/* Submits op; pushes the event that its completion succeeds. */
static int submit(lua_State *L, lsim *S, kb_ctrl_op *op, const char *name)
{
    kb_event *ev = kb_event_new(S->sim);
    kb_event_set_name(ev, name);
    lsim_push_event(L, 1, S, ev, LEV_PLAIN);
    lctrl *r = kb_xcalloc(1, sizeof *r);
    r->S = S;
    r->op = op;
    r->start = kb_sim_now(S->sim);
    lua_pushvalue(L, -1);
    r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    kb_ctrl_on_done(op, ctrl_done, r);
    S->opL = L;
    kb_machine_submitted(S->m, name, 0);
    char *err = NULL;
    if (!kb_ctrl_submit(S->fab, op, &err)) {
        luaL_unref(L, LUA_REGISTRYINDEX, r->ref);
        free(r);
        return lbind_raise(L, err);
    }
    r->next = S->ctrls;
    if (S->ctrls)
        S->ctrls->prev = r;
    S->ctrls = r;
    return 1;
}

static int mmu(lua_State *L, bool map)
{
    const char *call = map ? "s:mmu_map{}" : "s:mmu_unmap{}";
    lsim *S = lsim_check(L, 1);
    if (!S->fab)
        return luaL_error(L, "%s: this simulation has no topology", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t nt, ne;
    kb_ctrl_target *tg = read_targets(L, call, &nt);
    kb_mmu_entry *e = read_entries(L, call, map, &ne);
    kb_ctrl_op *op = kb_ctrl_new(map ? &kb_msg_mmu_map : &kb_msg_mmu_unmap, tg, nt);
    kb_ctrl_set_entries(op, e, ne);
    lua_settop(L, 1);
    return submit(L, S, op, map ? "mmu map" : "mmu unmap");
}

static int l_mmu_map(lua_State *L) { return mmu(L, true); }
static int l_mmu_unmap(lua_State *L) { return mmu(L, false); }

const luaL_Reg ldevice_methods[] = {{"mmu_map", l_mmu_map}, {"mmu_unmap", l_mmu_unmap}, {NULL, NULL}};
