/* The `sim` Lua module: simulation objects and run control.
 * Processes are in lsim_proc.c, events in lsim_event.c, stores and
 * resources in lsim_store.c. Reference: docs/lua-api.md. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/session.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char LSIM_TAG; /* its address tags sim userdata */

lsim *lsim_check_any(lua_State *L, int idx)
{
    lsim *S = lbind_test_tagged(L, idx, &LSIM_TAG, sizeof *S);
    return S ? S : lbind_checkudata(L, idx, LSIM_MT);
}

_Noreturn void lsim_closed(lua_State *L, const lsim *S)
{
    luaL_error(L, "%s: simulation #%d is closed", lbind_fname(L), S->serial);
    abort(); /* not reached: luaL_error does not return */
}

lsim *lsim_check(lua_State *L, int idx)
{
    lsim *S = lsim_check_any(L, idx);
    lsim_check_open(L, S);
    return S;
}

/* The simulated range, for messages: int64 picoseconds as ns. */
#define RANGE "0 .. 9223372036854775.807 ns (int64 picoseconds)"

kb_time lsim_check_duration(lua_State *L, int idx, const char *what)
{
    if (lua_isinteger(L, idx)) {
        lua_Integer ns = lua_tointeger(L, idx);
        if (ns < 0)
            luaL_error(L, "%s: time must be >= 0 ns (got %I); times are " RANGE, what, ns);
        if (ns > KB_TIME_MAX / KB_PS_PER_NS)
            luaL_error(L, "%s: time %I ns is beyond the simulated range, " RANGE, what, ns);
        return (kb_time)ns * KB_PS_PER_NS;
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: time in ns must be a number (got %s)", what, luaL_typename(L, idx));
    lua_Number ns = lua_tonumber(L, idx);
    if (!(ns >= 0)) /* NaN too */
        luaL_error(L, "%s: time must be >= 0 ns (got %s); times are " RANGE, what, luaL_tolstring(L, idx, NULL));
    double ps = (double)ns * (double)KB_PS_PER_NS;
    if (!(ps < 9223372036854775808.0)) /* 2^63: every double below rounds into int64 */
        luaL_error(L, "%s: time %s ns is beyond the simulated range, " RANGE, what, luaL_tolstring(L, idx, NULL));
    return (kb_time)llround(ps); /* resolution: 1 ps */
}

kb_time lsim_check_delay(lua_State *L, const lsim *S, int idx, const char *what)
{
    lsim_check_open(L, S);
    kb_time d = lsim_check_duration(L, idx, what), now = kb_sim_now(S->sim);
    if (d > KB_TIME_MAX - now) {
        char t[KB_TIME_STRLEN];
        luaL_error(L, "%s: %s ns from now (t=%s) ends beyond the simulated range, " RANGE, what,
                   luaL_tolstring(L, idx, NULL), kb_time_format(now, t));
    }
    return d;
}

void lsim_set_error(lua_State *L, lsim *S, int err_idx)
{
    /* S->L holds this simulation's userdata while it runs. */
    err_idx = lua_absindex(L, err_idx);
    if (lua_getiuservalue(L, S->sim_idx, LSIM_UV_ERROR) == LUA_TNIL) {
        lua_pushvalue(L, err_idx);
        lua_setiuservalue(L, S->sim_idx, LSIM_UV_ERROR);
    }
    lua_pop(L, 1);
}

void lsim_new_meta(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *meta)
{
    luaL_newmetatable(L, name);
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

/* ---- what a layer above adds ---- */

static const char EXT_KEY; /* registry: the state's lsim_ext */

void lsim_extend(lua_State *L, const lsim_ext *ext)
{
    lua_pushlightuserdata(L, (void *)ext);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &EXT_KEY);
}

static const lsim_ext *ext_of(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &EXT_KEY);
    const lsim_ext *ext = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return ext;
}

void lsim_add_methods(lua_State *L, const luaL_Reg *methods)
{
    luaL_getmetatable(L, LSIM_MT);
    lua_getfield(L, -1, "__index");
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 2);
}

/* ---- construction and teardown ---- */

static int l_new(lua_State *L)
{
    if (!lua_isnoneornil(L, 1) && !lua_istable(L, 1))
        return luaL_typeerror(L, 1, "table of options ({topology = t})");
    if (lua_istable(L, 1)) {
        static const char *const known[] = {"topology", "op_log", "ipcq_trace", NULL};
        lbind_check_keys(L, 1, "sim.new", NULL, known);
    }
    lua_settop(L, 1);
    lsim *S = lua_newuserdatauv(L, sizeof *S, LSIM_NUV);
    memset(S, 0, sizeof *S);
    S->tag = &LSIM_TAG;
    S->serial = kb_session_next_serial(L);
    luaL_setmetatable(L, LSIM_MT);
    lua_newtable(L);
    lua_setiuservalue(L, -2, LSIM_UV_PROCS);
    lua_newtable(L);
    lua_setiuservalue(L, -2, LSIM_UV_FAILURES);
    S->sim = kb_sim_new();
    kb_event_set_unhandled(S->sim, lsim_unhandled, S);
    S->session = kb_session_of(L);
    kb_session_watch(S->session, S->sim, S->serial);
    const lsim_ext *ext = ext_of(L);
    if (lua_istable(L, 1) && ext)
        ext->attach(L, S, lua_gettop(L), 1);
    else if (lua_istable(L, 1) && lua_getfield(L, 1, "topology") != LUA_TNIL)
        return luaL_error(L, "sim.new{topology = t}: this Lua state has no model bindings (kernbench's C modules)");
    return 1;
}

static void close_sim(lua_State *L, lsim *S)
{
    if (!S->sim)
        return;
    kb_sim_stats st;
    kb_sim_get_stats(S->sim, &st);
    kb_session_sim_closed(L, S->serial, &st, S->resumes);
    const lsim_ext *ext = ext_of(L);
    if (ext)
        ext->close(L, S);
    kb_sim_free(S->sim);
    S->sim = NULL;
}

static int l_gc(lua_State *L)
{
    close_sim(L, lsim_check_any(L, 1));
    return 0;
}

static int l_close(lua_State *L)
{
    lsim *S = lsim_check_any(L, 1);
    if (S->sim && kb_sim_running(S->sim))
        return luaL_error(L, "s:close(): simulation #%d is running", S->serial);
    close_sim(L, S);
    return 0;
}

static int l_tostring(lua_State *L)
{
    lsim *S = lsim_check_any(L, 1);
    if (!S->sim) {
        lua_pushfstring(L, "sim #%d (closed)", S->serial);
        return 1;
    }
    char now[KB_TIME_STRLEN];
    kb_sim_stats st;
    kb_sim_get_stats(S->sim, &st);
    lua_pushfstring(L, "sim #%d (t=%s, %I events processed, %I pending)", S->serial,
                    kb_time_format(st.now, now), (lua_Integer)st.events, (lua_Integer)st.pending);
    return 1;
}

/* ---- clock ---- */

static int l_now(lua_State *L)
{
    lbind_push_time(L, kb_sim_now(lsim_check(L, 1)->sim));
    return 1;
}

static int l_now_ps(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_sim_now(lsim_check(L, 1)->sim));
    return 1;
}

/* ---- run control ---- */

/* Raises the error that ended a run: a process failure (an error object
 * kept in LSIM_UV_ERROR) or a failure recorded by the core. */
static int raise_run_error(lua_State *L, lsim *S)
{
    if (lua_getiuservalue(L, 1, LSIM_UV_ERROR) != LUA_TNIL) {
        lua_pushnil(L);
        lua_setiuservalue(L, 1, LSIM_UV_ERROR);
        kb_sim_clear_error(S->sim);
        return lua_error(L);
    }
    char now[KB_TIME_STRLEN];
    lua_pushfstring(L, "simulation #%d failed at t=%s: %s", S->serial,
                    kb_time_format(kb_sim_now(S->sim), now), kb_sim_error(S->sim));
    kb_sim_clear_error(S->sim);
    return lua_error(L);
}

static int raise_interrupted(lua_State *L, lsim *S)
{
    /* The hook armed by the stop stays: Lua code that catches this error
     * is stopped too (session.h). */
    char now[KB_TIME_STRLEN];
    return luaL_error(L, "%s: simulation #%d stopped at t=%s",
                      kb_stop_message(S->session ? S->session->ctl.stop : 0), S->serial,
                      kb_time_format(kb_sim_now(S->sim), now));
}

static void enter_run(lua_State *L, lsim *S, const char *call)
{
    if (kb_sim_running(S->sim) || S->running)
        luaL_error(L, "%s: simulation #%d is already running (called from inside a process?)", call,
                   S->serial);
    S->L = L;
    S->sim_idx = 1;
    if (S->session)
        S->session->runs_active++;
}

static void leave_run(lsim *S)
{
    S->L = NULL;
    if (S->session)
        S->session->runs_active--;
}

/* ---- s:run(ev): SimPy's run(until=ev) ---- */

typedef struct until_waiter {
    kb_waiter w;
    kb_event *ev;
    bool hit;
} until_waiter;

/* SimPy's StopSimulation.callback: the run ends with this event, and its
 * failure is the run's to raise (not an unhandled one). */
static void until_hit(kb_sim *sim, void *arg)
{
    until_waiter *u = KB_CONTAINER_OF(arg, until_waiter, w);
    u->hit = true;
    if (!u->w.ok)
        u->ev->defused = true;
    /* SimPy stops by raising from this callback: the event's later
     * callbacks never run. Those waiters are dropped; a process among them
     * stays blocked on the event (its reports say so). */
    kb_link *l;
    while ((l = kb_list_pop_front(&u->ev->waiters)) != NULL)
        ;
    kb_sim_stop(sim);
}

static int run_until_event(lua_State *L, lsim *S, levent *e)
{
    if (e->S != S)
        return luaL_error(L, "s:run(ev): the event belongs to another simulation");
    lua_settop(L, 2);
    bool was_pending = e->ev->state != KB_EVENT_PROCESSED;
    if (was_pending) {
        enter_run(L, S, "s:run(ev)");
        until_waiter u = {.ev = e->ev, .hit = false};
        kb_waiter_init(&u.w, until_hit, NULL);
        kb_event_wait(e->ev, &u.w);
        kb_run_status st = kb_sim_run(S->sim, KB_TIME_MAX);
        leave_run(S);
        kb_waiter_cancel(&u.w);
        if (st == KB_RUN_FAILED)
            return raise_run_error(L, S);
        if (st == KB_RUN_INTERRUPTED)
            return raise_interrupted(L, S);
        if (!u.hit) {
            if (st == KB_RUN_STOPPED || st == KB_RUN_UNTIL) { /* s:stop(); a stale run(until) event */
                lua_pushstring(L, st == KB_RUN_STOPPED ? "stopped" : "until");
                return 1;
            }
            char what[200];
            kb_event_describe(e->ev, what, sizeof what);
            return luaL_error(L, "s:run(ev): no events left but %s was not triggered", what);
        }
    }
    /* Its value, or its failure: raised when this run processed it, returned
     * when it was processed before (SimPy returns until.value then). */
    if (!e->ev->ok && lua_gettop(L) == 2 && e->ev->state == KB_EVENT_PROCESSED && !was_pending) {
        lua_pushcfunction(L, lsim_event_reason);
        lua_pushvalue(L, 2);
        lua_call(L, 1, 1);
        return 1;
    }
    lua_pushcfunction(L, lsim_event_value);
    lua_pushvalue(L, 2);
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L) - 2;
}

static int l_run(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    levent *until_ev = lsim_test_awaitable(L, 2);
    if (until_ev)
        return run_until_event(L, S, until_ev);
    kb_time until = KB_TIME_MAX;
    if (!lua_isnoneornil(L, 2)) {
        until = lsim_check_duration(L, 2, "s:run(until_ns)");
        if (until < kb_sim_now(S->sim)) {
            char u[KB_TIME_STRLEN], now[KB_TIME_STRLEN];
            return luaL_error(L, "s:run(until_ns): until %s is before the current time t=%s",
                              kb_time_format(until, u), kb_time_format(kb_sim_now(S->sim), now));
        }
    }
    lua_settop(L, 1);
    enter_run(L, S, "s:run()");
    kb_run_status st = kb_sim_run(S->sim, until); /* until: SimPy's until event (sim.h) */
    leave_run(S);
    if (st == KB_RUN_FAILED)
        return raise_run_error(L, S);
    if (st == KB_RUN_INTERRUPTED)
        return raise_interrupted(L, S);
    if (st == KB_RUN_EMPTY && until == KB_TIME_MAX) {
        char *report = kb_sim_quiescence_report(S->sim);
        if (report)
            return lbind_raise_prefixed(L, "deadlock", report);
    }
    static const char *const reasons[] = {"empty", "until", "stopped", "failed", "interrupted"};
    lua_pushstring(L, reasons[st]);
    return 1;
}

static int l_step(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, n >= 0, 2, "step count must be >= 0");
    lua_settop(L, 1);
    enter_run(L, S, "s:step()");
    uint64_t done = 0;
    kb_run_status st = kb_sim_step(S->sim, (uint64_t)n, &done);
    leave_run(S);
    if (st == KB_RUN_FAILED)
        return raise_run_error(L, S);
    if (st == KB_RUN_INTERRUPTED)
        return raise_interrupted(L, S);
    lua_pushinteger(L, (lua_Integer)done);
    return 1;
}

/* s:peek(): the time of the next event in ns, math.huge when none is. */
static int l_peek(lua_State *L)
{
    kb_time t = kb_sim_peek(lsim_check(L, 1)->sim);
    if (t == KB_TIME_MAX)
        lua_pushnumber(L, HUGE_VAL);
    else
        lbind_push_time(L, t);
    return 1;
}

static int l_stop(lua_State *L)
{
    kb_sim_stop(lsim_check(L, 1)->sim);
    return 0;
}

static int l_waiting(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    char *report = kb_sim_quiescence_report(S->sim);
    if (report)
        lua_pushstring(L, report);
    else
        lua_pushnil(L);
    free(report);
    return 1;
}

static const luaL_Reg sim_methods[] = {
    {"now", l_now},
    {"now_ps", l_now_ps},
    {"run", l_run},
    {"step", l_step},
    {"peek", l_peek},
    {"stop", l_stop},
    {"waiting", l_waiting},
    {"close", l_close},
    {"spawn", lsim_spawn},
    {"sleep", lsim_sleep},
    {"current", lsim_current_process},
    {"event", lsim_event_new},
    {"timeout", lsim_timeout},
    {"all_of", lsim_all_of},
    {"any_of", lsim_any_of},
    {"store", lsim_store_new},
    {"resource", lsim_resource_new},
    {"container", lsim_container_new},
    {"priority_store", lsim_priority_store_new},
    {"filter_store", lsim_filter_store_new},
    {"priority_resource", lsim_priority_resource_new},
    {"preemptive_resource", lsim_preemptive_resource_new},
    {NULL, NULL}};

static const luaL_Reg sim_meta[] = {
    {"__gc", l_gc}, {"__close", l_gc}, {"__tostring", l_tostring}, {NULL, NULL}};

static int error_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "text");
    if (!lua_isstring(L, -1))
        lua_pushliteral(L, "kernbench error");
    return 1;
}

static const luaL_Reg lib[] = {{"new", l_new}, {"is_interrupt", lsim_is_interrupt}, {NULL, NULL}};

int luaopen_sim(lua_State *L)
{
    lsim_new_meta(L, LSIM_MT, sim_methods, sim_meta);
    luaL_newmetatable(L, LERROR_MT);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lsim_open_proc(L);
    lsim_open_event(L);
    lsim_open_store(L);
    lsim_open_request(L);
    lsim_open_interrupt(L);
    lsim_open_shared(L);
    luaL_newlib(L, lib);
    lua_pushliteral(L, KB_VERSION);
    lua_setfield(L, -2, "version");
    return 1;
}
