/* Callbacks on events and defused failures: SimPy's
 * ev.callbacks.append(fn) and ev.defused = True (s:run(ev) is in lsim.c).
 *
 * A callback is a waiter on the event like a process's wait, so it runs
 * in the order callbacks and waits were added, when the event is
 * processed; it is a function called with the event and must not block.
 * It is anchored in the simulation until it runs, so it runs whether or
 * not anything else references it. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"

#include <stdlib.h>

typedef struct lcallback {
    kb_waiter w;
    lsim *S;
} lcallback;

enum { LCB_UV_FN = 1, LCB_UV_EVENT, LCB_NUV = LCB_UV_EVENT };

static int call_callback(lua_State *L)
{
    lua_call(L, 1, 0);
    return 0;
}

static void callback_wake(kb_sim *sim, void *arg)
{
    lcallback *cb = KB_CONTAINER_OF(arg, lcallback, w);
    lsim *S = cb->S;
    lua_State *L = S->L; /* inside s:run / s:step */
    if (!L || !lua_checkstack(L, 8)) {
        kb_sim_fail(sim, "an event's callback could not run (no Lua stack)");
        return;
    }
    int top = lua_gettop(L);
    lua_getiuservalue(L, S->sim_idx, LSIM_UV_PROCS);
    lua_rawgetp(L, -1, cb);
    int ud = lua_gettop(L);
    lua_pushnil(L);
    lua_rawsetp(L, ud - 1, cb); /* it runs once: let it go */
    lua_pushcfunction(L, call_callback);
    lua_getiuservalue(L, ud, LCB_UV_FN);
    lua_getiuservalue(L, ud, LCB_UV_EVENT);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* SimPy: the exception leaves env.step() */
        lua_getiuservalue(L, ud, LCB_UV_EVENT);
        levent *e = lsim_test_awaitable(L, -1);
        char what[200], now[KB_TIME_STRLEN];
        kb_event_label(e->ev, what, sizeof what);
        kb_time_format(kb_sim_now(sim), now);
        const char *why = lsim_safe_tostring(L, ud + 1);
        char *text = kb_asprintf("a callback of %s failed at t=%s: %s", what, now, why);
        lsim_push_error(L, S, ud + 1, NULL, text);
        free(text);
        lsim_set_error(L, S, -1);
        kb_sim_fail(sim, "a callback of %s failed", what);
    }
    lua_settop(L, top);
}

int lsim_add_callback(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    if (e->ev->state == KB_EVENT_PROCESSED) {
        char what[200];
        kb_event_label(e->ev, what, sizeof what);
        return luaL_error(L, "ev:add_callback(): %s has been processed: its callbacks have run", what);
    }
    lcallback *cb = lua_newuserdatauv(L, sizeof *cb, LCB_NUV);
    cb->S = e->S;
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, 3, LCB_UV_FN);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, 3, LCB_UV_EVENT);
    lua_getiuservalue(L, 1, LEV_UV_SIM);
    lua_getiuservalue(L, -1, LSIM_UV_PROCS);
    lua_pushvalue(L, 3);
    lua_rawsetp(L, -2, cb);
    kb_waiter_init(&cb->w, callback_wake, NULL);
    kb_event_wait(e->ev, &cb->w);
    return 0;
}

/* ev:defuse(): a failure of the event no longer fails the run when nothing
 * waits on it (SimPy's ev.defused = True). */
int lsim_defuse(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    e->ev->defused = true;
    return 0;
}

int lsim_defused(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_pushboolean(L, e->ev->defused);
    return 1;
}
