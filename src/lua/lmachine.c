/* Simulations on a topology: the machine, attached and released with the
 * simulation (lmachine.h). */
#include "lua/lmachine.h"

#include "comp/pe/ipcq.h"
#include "core/util.h"
#include "lua/lcomponent.h"
#include "lua/linspect.h"
#include "lua/lmodels.h"
#include "lua/ltopo.h"
#include "luasim/lbind.h"
#include "luasim/session.h"
#include "machine/machine.h"

#include <stdio.h>
#include <stdlib.h>

/* --ipcq-trace: a line on stderr (after clearing the progress line). */
static void ipcq_log(void *ctx, const char *line)
{
    kb_session_clear_line(ctx);
    fprintf(stderr, "%s\n", line);
}

/* sim.new{topology = t, op_log = bool, ipcq_trace = bool}: the machine of t
 * on the new simulation. */
static void attach(lua_State *L, lsim *S, int sim_idx, int opts_idx)
{
    if (lua_getfield(L, opts_idx, "topology") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    ltopo *t = ltopo_check(L, -1);
    kb_session *ss = S->session;
    /* op-log records: held for s:op_log() when asked for here, streamed to
     * --op-log (counts are always kept) */
    lua_getfield(L, opts_idx, "op_log");
    kb_machine_opts o = {.keep_oplog = lua_toboolean(L, -1),
                         .oplog_out = ss ? ss->oplog_out : NULL,
                         .oplog_spill_dir = ss ? ss->oplog_spill_dir : NULL,
                         .trace = ss ? ss->trace : NULL,
                         .serial = S->serial};
    lua_pop(L, 1);
    char *err = NULL;
    kb_machine *m = kb_machine_new(S->sim, t->topo, &o, &err);
    if (!m)
        lbind_raise(L, err);
    S->mach = kb_xcalloc(1, sizeof *S->mach);
    S->mach->m = m;
    S->mach->fab = kb_machine_fabric(m);
    lua_setiuservalue(L, sim_idx, LSIM_UV_MODEL); /* keeps the topology alive */
    lmodels_attach(L, S);
    lcomponent_attach(L, S, sim_idx);
    lua_getfield(L, opts_idx, "ipcq_trace");
    if (lua_toboolean(L, -1) || (ss && ss->ipcq_trace)) {
        const kb_topo *topo = kb_fabric_topo(S->mach->fab);
        for (uint32_t i = 0; i < kb_topo_node_count(topo); i++) {
            kb_comp *c = kb_fabric_comp(S->mach->fab, i);
            if (c->ops == &kb_pe_ipcq_ops)
                kb_ipcq_set_log(c, ipcq_log, ss);
        }
    }
    lua_pop(L, 1);
}

void lpending_link(lua_State *L, lsim *S, lpending *p, void (*close)(lpending *p))
{
    p->S = S;
    p->close = close;
    lua_pushvalue(L, -1);
    p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    p->prev = NULL;
    p->next = S->mach->pending;
    if (p->next)
        p->next->prev = p;
    S->mach->pending = p;
    S->mach->opL = L;
}

void lpending_unlink(lua_State *L, lpending *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        p->S->mach->pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    luaL_unref(L, LUA_REGISTRYINDEX, p->ref);
}

void lpending_succeed(lua_State *L, lpending *p)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    lua_insert(L, -2);
    lua_setiuservalue(L, -2, LEV_UV_VALUE);
    lua_pop(L, 1);
    lpending_succeed_deferred(L, p, NULL);
}

void lpending_succeed_deferred(lua_State *L, lpending *p, lsim_deferred *d)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    levent *e = lua_touserdata(L, -1);
    lua_pop(L, 1);
    e->deferred = d;
    kb_event_succeed(e->ev, KB_ITEM_NONE);
    lpending_unlink(L, p);
}

lua_State *lpending_state(const lpending *p) { return p->S->L ? p->S->L : p->S->mach->opL; }

/* Operations still in flight when the simulation closes. */
static void close_pending(lua_State *L, lsim *S)
{
    while (S->mach->pending) {
        lpending *p = S->mach->pending;
        lpending_unlink(L, p);
        p->close(p);
    }
}

static void close_machine(lua_State *L, lsim *S)
{
    if (!S->mach)
        return;
    lobserve_close(L, S);
    close_pending(L, S);
    lmodels_close(L, S);
    kb_machine_free(S->mach->m);
    free(S->mach);
    S->mach = NULL;
}

static const lsim_ext ext = {attach, close_machine};

void lmachine_open(lua_State *L)
{
    lsim_extend(L, &ext);
    lsim_add_methods(L, lfabric_methods);
    lsim_add_methods(L, ldevice_methods);
    lsim_add_methods(L, lobserve_methods);
    lsim_add_methods(L, linspect_methods);
}
