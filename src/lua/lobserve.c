/* What a simulation lets its user see: s:stats(), s:op_log(), and the
 * statistics and op log the command line asked the host for
 * (docs/tracing.md); the machine (src/machine) keeps them. */
#include "lua/lmachine.h"

#include "core/util.h"
#include "fabric/fabric.h"
#include "machine/machine.h"
#include "luasim/session.h"
#include "luasim/lbind.h"
#include "trace/oplog.h"
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

/* The statistics of S now: simulation-wide figures, then (with a
 * topology, unless `totals` only) components, links, request latencies
 * (and, when `requests`, every request) and op counts. */
static kb_val *stats_of(lsim *S, bool totals, bool requests)
{
    kb_sim_stats st;
    kb_sim_get_stats(S->sim, &st);
    kb_val *v = kb_val_obj();
    kb_obj_int(v, "sim", S->serial);
    if (S->mach)
        kb_obj_str(v, "topology", kb_topo_name(kb_fabric_topo(S->mach->fab)));
    kb_obj_num(v, "sim_ns", kb_ps_to_ns((double)st.now));
    kb_obj_int(v, "events", (int64_t)st.events);
    kb_obj_num(v, "wall_s", st.wall_s);
    kb_obj_num(v, "events_per_s", st.events_per_s);
    kb_obj_int(v, "pending", (int64_t)st.pending);
    kb_obj_int(v, "processes", (int64_t)st.procs);
    kb_obj_int(v, "waiting", (int64_t)st.waiting);
    kb_obj_int(v, "resumes", (int64_t)S->resumes);
    kb_obj_num(v, "resumes_per_s", st.wall_s > 0 ? (double)S->resumes / st.wall_s : 0.0);
    if (!S->mach || totals)
        return v;
    kb_machine_stats(S->mach->m, v, requests);
    return v;
}

static int l_stats(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    bool requests = false, totals = false;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"requests", "totals", NULL};
        lbind_check_keys(L, 2, "s:stats", NULL, known);
        requests = lbind_field_bool(L, 2, "s:stats", "requests", false);
        totals = lbind_field_bool(L, 2, "s:stats", "totals", false);
    }
    kb_val *v = stats_of(S, totals, requests);
    lbind_push_val(L, v);
    kb_val_free(v);
    return 1;
}

/* s:op_log() -> {records = {...}, counts = {name = n}} */
static int l_op_log(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lua_createtable(L, 0, 2);
    if (!S->mach) {
        lua_newtable(L);
        lua_setfield(L, -2, "records");
        lua_newtable(L);
        lua_setfield(L, -2, "counts");
        return 1;
    }
    kb_oplog *log = kb_fabric_oplog(S->mach->fab);
    if (log->stream && !log->keep)
        return luaL_error(L, "s:op_log(): simulation #%d streams its op-log records to --op-log and "
                             "does not hold them; make it with sim.new{topology = t, op_log = true} "
                             "(kb.torch{op_log = true}) to read them here", S->serial);
    size_t n;
    const kb_oprec *r = kb_oplog_records(log, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 6);
        lbind_set_ns(L, "t_start_ns", r[i].t_start);
        lbind_set_ns(L, "t_end_ns", r[i].t_end);
        lbind_set_str(L, "component", r[i].component);
        lbind_set_str(L, "op_kind", r[i].kind);
        lbind_set_str(L, "op_name", r[i].name);
        lbind_push_val(L, r[i].params);
        lua_setfield(L, -2, "params");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "records");
    kb_val *counts = kb_machine_op_counts(S->mach->m);
    lbind_push_val(L, counts);
    kb_val_free(counts);
    lua_setfield(L, -2, "counts");
    return 1;
}

void lobserve_close(lua_State *L, lsim *S)
{
    kb_session *session = S->session;
    if (!S->mach)
        return;
    char *err = NULL;
    if (!kb_machine_finish_oplog(S->mach->m, &err)) /* the streamed records, to --op-log */
        kb_session_oplog_error(session, err);
    /* every request only if a file will hold them; the summary needs less, and
     * with neither (-q, no --stats-json) nothing is kept */
    if (session && session->keep_runs)
        kb_session_add_run(L, stats_of(S, false, session->keep_requests));
}

const luaL_Reg lobserve_methods[] = {{"stats", l_stats}, {"op_log", l_op_log}, {NULL, NULL}};
