#include "cli/exec.h"

#include "trace/trace.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>

/* Signal handlers cannot take a context argument, so the one state and
 * session being run are kept here while a call is in progress. This is the
 * command line's only process-wide state; simulations never see it. */
static lua_State *volatile running_L;
static kb_session *volatile running_session;

static void stop_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (running_session && running_session->runs_active)
        return; /* the simulation stops itself when it polls the flag */
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
    signal(sig, SIG_DFL); /* a second Ctrl-C kills the process */
    if (running_session)
        running_session->interrupt = 1;
    if (running_L)
        lua_sethook(running_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Error messages get a traceback; error objects with a __tostring (such as
 * a process failure, which carries the process's own traceback) are
 * converted as they are. */
static int message_handler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int kb_exec_call(lua_State *L, kb_session *session, int narg, int nres)
{
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    session->interrupt = 0;
    running_L = L;
    running_session = session;
    signal(SIGINT, on_sigint);
    int status = lua_pcall(L, narg, nres, base);
    signal(SIGINT, SIG_DFL);
    lua_sethook(L, NULL, 0, 0);
    running_L = NULL;
    running_session = NULL;
    session->interrupt = 0;
    session->runs_active = 0; /* no run outlives the call, even one unwound by an error */
    lua_remove(L, base);
    return status;
}

int kb_exec_report(lua_State *L, int status)
{
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (!msg)
            msg = "(error object is not a string)";
        fprintf(stderr, "kernbench: %s\n", msg);
        kb_session *s = kb_session_of(L);
        if (s && s->trace)
            kb_trace_error(s->trace, msg); /* the trace says how the run ended */
        fflush(stderr);
        lua_pop(L, 1);
    }
    return status;
}
