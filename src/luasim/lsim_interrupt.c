/* Interrupts: p:interrupt(cause), SimPy's Process.interrupt.
 *
 * The call schedules an interruption now, URGENT (before ordinary events
 * of the instant, after the start-up of processes already spawned). When it
 * is processed, a process that has ended meanwhile is left alone (SimPy
 * ignores it); otherwise the process is withdrawn from what it waits on, as
 * SimPy removes its resume callback from its target:
 *   - a sleep: the timeout stays queued and is processed, waking nobody;
 *   - an event, process, condition or request: it just stops waiting;
 *   - a blocking put, get or acquire: the request goes on without it, as a
 *     request nobody holds (lsim_request_adopt): it keeps its place in the
 *     queue, is served in turn, and a slot it is granted stays taken;
 * and resumed at once with an interrupt error raised by its blocking call.
 * The error is a table {cause, process, by, time_ns, text} that
 * sim.is_interrupt recognises; uncaught, it fails the process. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"

#include <stdlib.h>
#include <string.h>

#define LINTR_MT "kernbench.interrupt"

/* A scheduled interruption: anchored in the simulation's process table
 * until processed. User values: the cause, the process, the interrupter. */
typedef struct lintr {
    lsim *S;
    lproc *p;
} lintr;

enum { LINTR_UV_CAUSE = 1, LINTR_UV_PROC, LINTR_UV_BY, LINTR_NUV = LINTR_UV_BY };

int lsim_raise_interrupt(lua_State *L, lproc *p)
{
    p->interrupted = false;
    return lua_error(L); /* the error object the interruption pushed */
}

static int cause_tostring(lua_State *L)
{
    luaL_tolstring(L, 1, NULL);
    return 1;
}

/* Builds the error object on L's top for process p (its userdata at
 * proc_idx), interrupted by `by_idx` (nil: from outside any process). */
static void push_interrupt(lua_State *L, lintr *it, int rec_idx)
{
    lsim *S = it->S;
    lua_createtable(L, 0, 5);
    int t = lua_gettop(L);
    lua_getiuservalue(L, rec_idx, LINTR_UV_CAUSE);
    int cause = lua_gettop(L);
    lua_pushvalue(L, cause);
    lua_setfield(L, t, "cause");
    lua_pushstring(L, it->p->name);
    lua_setfield(L, t, "process");
    lbind_push_time(L, kb_sim_now(S->sim));
    lua_setfield(L, t, "time_ns");
    lua_getiuservalue(L, rec_idx, LINTR_UV_BY);
    const char *by = NULL;
    if (!lua_isnil(L, -1))
        by = ((lproc *)lua_touserdata(L, -1))->name;
    lua_setfield(L, t, "by");
    lua_pushcfunction(L, cause_tostring); /* a cause's __tostring may raise: then its type */
    lua_pushvalue(L, cause);
    const char *why = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isstring(L, -1)
                          ? lua_tostring(L, -1)
                          : luaL_typename(L, cause);
    char now[KB_TIME_STRLEN];
    kb_time_format(kb_sim_now(S->sim), now);
    char *text = kb_asprintf("interrupt of process '%s' at t=%s%s%s%s: %s", it->p->name, now,
                             by ? " by process '" : "", by ? by : "", by ? "'" : "", why);
    lua_pushstring(L, text);
    free(text);
    lua_setfield(L, t, "text");
    lua_settop(L, t);
    luaL_setmetatable(L, LINTR_MT);
}

/* Withdraws p from what it waits on (the header comment). */
static void withdraw(lua_State *L, lsim *S, lproc *p)
{
    switch (p->blocked) {
    case LSIM_BLOCK_SLEEP:
        lsim_proc_cancel_sleep(S->sim, p);
        return;
    case LSIM_BLOCK_WAIT:
        kb_waiter_cancel(&p->waiter);
        return;
    case LSIM_BLOCK_PUT:
    case LSIM_BLOCK_GET:
    case LSIM_BLOCK_ACQUIRE: {
        static const levent_kind kinds[] = {[LSIM_BLOCK_PUT] = LEV_PUT, [LSIM_BLOCK_GET] = LEV_GET,
                                            [LSIM_BLOCK_ACQUIRE] = LEV_ACQUIRE};
        lsim_proc_push_blocked_self(L, p);
        lsim_request_adopt(L, S, p, -1, kinds[p->blocked]);
        lua_pop(L, 1);
        return;
    }
    }
}

static void interruption_run(kb_sim *sim, void *arg)
{
    lintr *it = arg;
    lsim *S = it->S;
    lua_State *L = S->L; /* inside s:run / s:step */
    if (!L || !lua_checkstack(L, 12)) {
        kb_sim_fail(sim, "an interruption of process '%s' could not run (no Lua stack)", it->p->name);
        return;
    }
    int top = lua_gettop(L);
    lua_getiuservalue(L, S->sim_idx, LSIM_UV_PROCS);
    lua_rawgetp(L, -1, it);
    int rec = lua_gettop(L);
    lua_pushnil(L);
    lua_rawsetp(L, rec - 1, it); /* no longer anchored: rec keeps it on the stack */
    lproc *p = it->p;
    if (!p->co || !kb_proc_live(&p->proc)) { /* ended meanwhile: SimPy ignores it */
        lua_settop(L, top);
        return;
    }
    if (p->blocked < LSIM_BLOCK_SLEEP) {
        kb_sim_fail(sim, "process '%s' was interrupted while blocked in %s, which cannot be interrupted "
                         "(only the sim module's own blocking calls can)",
                    p->name, p->call ? p->call : "a call of another module");
        lua_settop(L, top);
        return;
    }
    withdraw(L, S, p);
    push_interrupt(L, it, rec);
    lua_xmove(L, p->co, 1);
    p->interrupted = true;
    kb_sim_resuming_last(sim, &p->proc); /* SimPy resumes it inside the interruption's processing */
    lsim_proc_resume(p, 1);
    lua_settop(L, top);
}

int lsim_interrupt(lua_State *L)
{
    lproc *p = lbind_testudata(L, 1, LPROC_MT);
    if (!p)
        return lbind_bad_self(L, "p:interrupt()", "process");
    lsim *S = p->hdr.S;
    lsim_check_open(L, S);
    if (!p->co || !kb_proc_live(&p->proc))
        return luaL_error(L, "p:interrupt(): process '%s' has ended and cannot be interrupted", p->name);
    if (S->running == p)
        return luaL_error(L, "p:interrupt(): process '%s' cannot interrupt itself", p->name);
    if (p->blocked == LSIM_BLOCK_OTHER)
        return luaL_error(L, "p:interrupt(): process '%s' is blocked in %s, which cannot be interrupted "
                             "(only the sim module's own blocking calls can)",
                          p->name, p->call ? p->call : "a call of another module");
    lua_settop(L, 2);
    lua_getiuservalue(L, 1, LEV_UV_SIM); /* 3 */
    lua_getiuservalue(L, 3, LSIM_UV_PROCS);
    if (S->running) /* the interrupter */
        lua_rawgetp(L, -1, S->running);
    else
        lua_pushnil(L);
    lsim_interrupt_schedule(L, p, 1, 2, 5, 3);
    return 0;
}

void lsim_interrupt_schedule(lua_State *L, lproc *p, int proc_idx, int cause_idx, int by_idx, int sim_idx)
{
    proc_idx = lua_absindex(L, proc_idx);
    cause_idx = lua_absindex(L, cause_idx);
    by_idx = lua_absindex(L, by_idx);
    sim_idx = lua_absindex(L, sim_idx);
    lsim *S = p->hdr.S;
    lintr *it = lua_newuserdatauv(L, sizeof *it, LINTR_NUV);
    it->S = S;
    it->p = p;
    lua_pushvalue(L, cause_idx);
    lua_setiuservalue(L, -2, LINTR_UV_CAUSE);
    lua_pushvalue(L, proc_idx);
    lua_setiuservalue(L, -2, LINTR_UV_PROC);
    lua_pushvalue(L, by_idx);
    lua_setiuservalue(L, -2, LINTR_UV_BY);
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    lua_pushvalue(L, -2);
    lua_rawsetp(L, -2, it);
    lua_pop(L, 2);
    kb_sim_at(S->sim, kb_sim_now(S->sim), KB_PRIO_URGENT, interruption_run, it);
}

int lsim_is_interrupt(lua_State *L)
{
    bool yes = false;
    if (lua_istable(L, 1) && lua_getmetatable(L, 1)) {
        luaL_getmetatable(L, LINTR_MT);
        yes = lua_rawequal(L, -1, -2);
    }
    lua_pushboolean(L, yes);
    return 1;
}

static int intr_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "text");
    if (!lua_isstring(L, -1))
        lua_pushliteral(L, "interrupt");
    return 1;
}

void lsim_open_interrupt(lua_State *L)
{
    luaL_newmetatable(L, LINTR_MT);
    lua_pushcfunction(L, intr_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}
