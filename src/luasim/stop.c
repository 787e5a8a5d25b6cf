/* Stopping Lua code when the session's stop flag goes up (session.h).
 *
 * Hooks belong to one Lua thread each, and a thread created before the
 * stop does not inherit one, so the session tracks the coroutine running
 * Lua code: the processes (lsim_proc.c), latency models (lmodels.c) and
 * the user's own coroutines (coroutine.resume and coroutine.wrap are
 * replaced here) enter and leave it around each resume. */
#include "luasim/session.h"

#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdio.h>

static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    kb_session *s = kb_session_of(L);
    if (!s || !s->ctl.stop || !s->in_call) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (L == s->main && s->runs_active)
        return; /* a run on the C stack: it polls the flag and returns first */
    /* Raised again on every tick while the flag is up: a pcall that
     * catches it gets it again at its caller's next instruction. */
    luaL_where(L, 0); /* a hook has no call level of its own: 0 is the code it stopped */
    /* The code that was running when the stop came ("file:line: " ->
     * "file:line"); not the code that runs after a stopped simulation. */
    if (!s->stopped_where[0] && !s->ctl.reached.seen) {
        size_t n;
        const char *w = lua_tolstring(L, -1, &n);
        if (n > 2)
            snprintf(s->stopped_where, sizeof s->stopped_where, "%.*s", (int)(n - 2), w);
    }
    lua_pushstring(L, kb_stop_message(s->ctl.stop));
    lua_concat(L, 2);
    lua_error(L);
}

void kb_session_arm_thread(lua_State *L)
{
    if (L)
        lua_sethook(L, stop_hook, LUA_MASKCOUNT, 1);
}

void kb_session_arm(kb_session *s)
{
    if (!s)
        return;
    kb_session_arm_thread(s->main);
    kb_session_arm_thread(s->current);
}

static const char OWNED_THREADS; /* registry key: thread -> owner (weak keys) */

void kb_session_own_thread(lua_State *L, int owner)
{
    owner = owner ? lua_absindex(L, owner) : 0;
    lbind_push_weak_keyed(L, &OWNED_THREADS);
    lua_pushvalue(L, -2); /* the thread */
    if (owner)
        lua_pushvalue(L, owner);
    else
        lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Raises an error if the coroutine at 1 belongs to a simulation: resuming
 * a process by hand ran it at the wrong simulated time and took the
 * wake-ups its waits expected; closing one left the simulation resuming a
 * dead thread. */
static void refuse_owned(lua_State *L, const char *call)
{
    if (lua_type(L, 1) != LUA_TTHREAD)
        return;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &OWNED_THREADS) != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_pushvalue(L, 1);
    int t = lua_rawget(L, -2);
    if (t == LUA_TNIL) {
        lua_pop(L, 2);
        return;
    }
    const char *who = t == LUA_TBOOLEAN ? "a latency model's thread" : luaL_tolstring(L, -1, NULL);
    luaL_error(L,
               "%s: the coroutine is %s: a simulation's processes are resumed by the simulation only "
               "(wait on an event, a store or a timeout to hand over; s:spawn a new process to run code)",
               call, who);
}

/* coroutine.close(co): the original (upvalue 1), refused for a
 * simulation's threads. */
static int guarded_close(lua_State *L)
{
    refuse_owned(L, "coroutine.close");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* coroutine.resume(co, ...): the original (upvalue 1), with co entered. */
static int tracked_resume(lua_State *L)
{
    refuse_owned(L, "coroutine.resume");
    lua_State *co = lua_tothread(L, 1);
    kb_session *s = co ? kb_session_of(L) : NULL;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_State *outer = kb_session_enter(s, co);
    int st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    kb_session_leave(s, outer);
    if (st != LUA_OK)
        return lua_error(L);
    return lua_gettop(L);
}

/* The function coroutine.wrap returns: upvalue 1 the coroutine, 2 the
 * tracked resume. Errors propagate as the original's do: the coroutine is
 * closed and a string message gets the caller's position. */
static int wrapped(lua_State *L)
{
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int narg = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_rotate(L, 1, 2);
    lua_call(L, narg + 1, LUA_MULTRET);
    if (lua_toboolean(L, 1))
        return lua_gettop(L) - 1;
    lua_settop(L, 2);
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD) { /* an error in the coroutine */
#if LUA_VERSION_RELEASE_NUM >= 50406
        stat = lua_closethread(co, L);
#else
        stat = lua_resetthread(co);
#endif
        lua_xmove(co, L, 1);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

/* coroutine.wrap(f): upvalue 1 the tracked resume. */
static int tracked_wrap(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, wrapped, 2);
    return 1;
}

void kb_session_track_coroutines(lua_State *L)
{
    if (lua_getglobal(L, "coroutine") != LUA_TTABLE) {
        lua_pop(L, 1);
        return;
    }
    lua_getfield(L, -1, "resume");
    lua_pushcclosure(L, tracked_resume, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "resume");
    lua_pushcclosure(L, tracked_wrap, 1);
    lua_setfield(L, -2, "wrap");
    lua_getfield(L, -1, "close");
    lua_pushcclosure(L, guarded_close, 1);
    lua_setfield(L, -2, "close");
    lua_pop(L, 1);
}

const char *kb_stop_message(int stop)
{
    switch (stop) {
    case KB_STOP_SIGINT: return "interrupted (SIGINT)";
    case KB_STOP_SIGTERM: return "interrupted (SIGTERM)";
    case KB_STOP_TIMEOUT: return "stopped: --timeout reached";
    case KB_STOP_UNTIL: return "stopped: --until reached";
    case KB_STOP_EVENTS: return "stopped: --max-events reached";
    default: return "interrupted";
    }
}

const char *kb_stop_name(int stop)
{
    static const char *const names[] = {"none", "sigint", "sigterm", "timeout", "until", "max_events"};
    return stop >= 0 && stop <= KB_STOP_EVENTS ? names[stop] : "interrupted";
}
