/* Simulations on a topology: the machine, attached and released with the
 * simulation (lmachine.h). */
#include "lua/lmachine.h"

#include "core/util.h"
#include "lua/lcomponent.h"
#include "lua/linspect.h"
#include "lua/lmodels.h"
#include "lua/ltopo.h"
#include "luasim/lbind.h"
#include "luasim/session.h"
#include "machine/machine.h"

#include <stdlib.h>

/* sim.new{topology = t, op_log = bool}: the machine of t on the new simulation. */
static void attach(lua_State *L, lsim *S, int sim_idx, int opts_idx)
{
    if (lua_getfield(L, opts_idx, "topology") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    ltopo *t = ltopo_check(L, -1);
    kb_session *ss = S->session;
    /* op-log records: asked for here or by --op-log (counts are always kept) */
    lua_getfield(L, opts_idx, "op_log");
    kb_machine_opts o = {.keep_oplog = lua_toboolean(L, -1) || (ss && ss->oplog_out),
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
}

static void close_machine(lua_State *L, lsim *S)
{
    if (!S->mach)
        return;
    lobserve_close(L, S);
    ldevice_close(L, S);
    lmodels_close(L, S);
    lfabric_close(L, S);
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
