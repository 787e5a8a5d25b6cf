/* Looking inside a running simulation (the REPL's view, docs/repl.md):
 *
 *   s:in_flight([src, dst]) -> {{id, kind, request, nbytes, req_bytes, src,
 *                               dst, at, start_ns, hops}, ...}
 *       transactions not yet completed, oldest first; with src and dst
 *       (node ids) only those whose path takes the link src -> dst
 *   s:component(id) -> {id, impl, kind, txns, flits, bytes, busy_ns,
 *                       busy_until_ns, queued, held}
 *       a component's counters; queued / held for components written in Lua
 *   s:pe_state(sip, cube, pe) -> {command = {what, since_ns} | nil,
 *       composites, tiles_left, rf_used_bytes, rf_bytes,
 *       lanes = {DMA_READ = {queued, busy}, ...}}
 *       a PE's simple command in flight and its pipeline's queues */
#include "lua/linspect.h"

#include "comp/pe/pe.h"
#include "comp/scripted.h"
#include "lua/ltl.h"
#include "lua/ltopo.h"
#include "lua/lmachine.h"
#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

static lsim *check_fab(lua_State *L, const char *call)
{
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        luaL_error(L, "%s: this simulation has no topology", call);
    return S;
}

static bool takes_link(const kb_path *p, uint32_t a, uint32_t b)
{
    for (uint32_t i = 0; i + 1 < p->n; i++)
        if (p->nodes[i] == a && p->nodes[i + 1] == b)
            return true;
    return false;
}

static int l_in_flight(lua_State *L)
{
    lsim *S = check_fab(L, "s:in_flight");
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    bool filter = !lua_isnoneornil(L, 2);
    uint32_t a = 0, b = 0;
    if (filter) {
        a = ltopo_check_node(L, t, 2);
        b = ltopo_check_node(L, t, 3);
    }
    lua_newtable(L);
    int n = 0;
    for (const kb_txn *x = kb_fabric_next_live(S->mach->fab, NULL); x; x = kb_fabric_next_live(S->mach->fab, x)) {
        if (filter && !takes_link(x->path, a, b))
            continue;
        lua_createtable(L, 0, 10);
        lua_pushinteger(L, (lua_Integer)x->id);
        lua_setfield(L, -2, "id");
        lua_pushstring(L, x->kind->name);
        lua_setfield(L, -2, "kind");
        lua_pushstring(L, x->request->name);
        lua_setfield(L, -2, "request");
        lua_pushinteger(L, (lua_Integer)x->nbytes);
        lua_setfield(L, -2, "nbytes");
        const kb_mem_req *r = kb_mem_req_of((kb_txn *)x);
        lua_pushinteger(L, (lua_Integer)(r ? r->nbytes : x->nbytes));
        lua_setfield(L, -2, "req_bytes");
        lua_pushstring(L, kb_topo_node(t, x->path->nodes[0])->id);
        lua_setfield(L, -2, "src");
        lua_pushstring(L, kb_topo_node(t, x->path->nodes[x->path->n - 1])->id);
        lua_setfield(L, -2, "dst");
        /* a whole transaction knows where it is; flits of one may be spread along the path */
        lua_pushstring(L, kb_topo_node(t, x->path->nodes[x->step])->id);
        lua_setfield(L, -2, "at");
        lua_pushinteger(L, x->path->n - 1);
        lua_setfield(L, -2, "hops");
        lbind_set_time(L, "start_ns", x->t_start);
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

static int l_component(lua_State *L)
{
    lsim *S = check_fab(L, "s:component");
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    kb_comp *c = kb_fabric_comp(S->mach->fab, ltopo_check_node(L, t, 2));
    lua_createtable(L, 0, 10);
    lua_pushstring(L, c->n->id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, c->n->spec->impl->name);
    lua_setfield(L, -2, "impl");
    lua_pushstring(L, c->n->spec->kind);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, (lua_Integer)c->txns);
    lua_setfield(L, -2, "txns");
    lua_pushinteger(L, (lua_Integer)c->flits);
    lua_setfield(L, -2, "flits");
    lua_pushinteger(L, (lua_Integer)c->bytes);
    lua_setfield(L, -2, "bytes");
    lbind_set_time(L, "busy_ns", c->busy_ps);
    lbind_set_time(L, "busy_until_ns", c->busy_until);
    if (c->ops->stats) { /* what the implementation adds: channels, queues ... */
        kb_val *extra = kb_val_obj();
        kb_obj_num(extra, "util", 0);
        c->ops->stats(c, extra, kb_sim_now(S->sim));
        const kb_val *v = extra;
        for (size_t i = 0; i < v->u.c.n; i++) {
            if (strcmp(v->u.c.keys[i], "util") == 0)
                continue;
            lbind_push_val(L, v->u.c.items[i]);
            lua_setfield(L, -2, v->u.c.keys[i]);
        }
        kb_val_free(extra);
    }
    const kb_scripted *sc = kb_scripted_of(c);
    if (sc) {
        lua_pushinteger(L, (lua_Integer)kb_scripted_queued(sc));
        lua_setfield(L, -2, "queued");
        lua_pushinteger(L, kb_scripted_held(sc));
        lua_setfield(L, -2, "held");
    }
    return 1;
}

static int l_pe_state(lua_State *L)
{
    lsim *S = check_fab(L, "s:pe_state");
    kb_pe *p = ltl_check_pe(L, S, 2);
    kb_pipe_state ps;
    kb_pipe_state_of(p, &ps);
    lua_createtable(L, 0, 6);
    if (p->active) {
        lua_createtable(L, 0, 2);
        lua_pushstring(L, p->active->what);
        lua_setfield(L, -2, "what");
        lbind_set_time(L, "since_ns", p->active->t_issue);
        lua_setfield(L, -2, "command");
    }
    lua_pushinteger(L, (lua_Integer)ps.composites);
    lua_setfield(L, -2, "composites");
    lua_pushinteger(L, (lua_Integer)ps.tiles_left);
    lua_setfield(L, -2, "tiles_left");
    lua_pushinteger(L, (lua_Integer)ps.rf_used);
    lua_setfield(L, -2, "rf_used_bytes");
    lua_pushinteger(L, (lua_Integer)ps.rf_cap);
    lua_setfield(L, -2, "rf_bytes");
    lua_createtable(L, 0, KB_ST_COUNT);
    for (int i = 0; i < KB_ST_COUNT; i++) {
        lua_createtable(L, 0, 2);
        lua_pushinteger(L, ps.queued[i]);
        lua_setfield(L, -2, "queued");
        lua_pushboolean(L, ps.busy[i]);
        lua_setfield(L, -2, "busy");
        lua_setfield(L, -2, kb_stage_name((kb_stage_type)i));
    }
    lua_setfield(L, -2, "lanes");
    return 1;
}

const luaL_Reg linspect_methods[] = {
    {"in_flight", l_in_flight}, {"component", l_component}, {"pe_state", l_pe_state}, {NULL, NULL}};
