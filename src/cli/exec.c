#include "cli/exec.h"

#include "trace/trace.h"

#include <lauxlib.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

/* Signal handlers cannot take a context argument, so the session being
 * run is kept here. With the REPL's completion pointer (repl.c, for the
 * same reason) this is the command line's only process-wide state;
 * simulations never see it. */
static kb_session *volatile signal_session;

static void on_signal(int sig)
{
    kb_session *s = signal_session;
    if (!s)
        return;
    if (!s->ctl.stop)
        s->ctl.stop = sig == SIGINT ? KB_STOP_SIGINT : sig == SIGTERM ? KB_STOP_SIGTERM : KB_STOP_TIMEOUT;
    kb_session_arm(s);
}

static void handle(int sig, bool once)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = once ? SA_RESETHAND : 0; /* the second one takes the default action */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void kb_exec_signals(kb_session *session)
{
    signal_session = session;
    session->ctl.on_limit = kb_exec_on_limit;
    session->ctl.ctx = session;
    handle(SIGINT, true);
    handle(SIGTERM, true);
    handle(SIGALRM, false);
}

void kb_exec_sigint(bool handled)
{
    if (handled)
        handle(SIGINT, true);
    else
        signal(SIGINT, SIG_DFL);
}

void kb_exec_timeout(double seconds)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    double whole = floor(seconds);
    it.it_value.tv_sec = (time_t)whole;
    it.it_value.tv_usec = (suseconds_t)llround((seconds - whole) * 1e6);
    if (it.it_value.tv_usec >= 1000000) {
        it.it_value.tv_sec++;
        it.it_value.tv_usec -= 1000000;
    }
    if (seconds > 0 && it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

void kb_exec_on_limit(void *session) { kb_session_arm(session); }

bool kb_exec_is_usage(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        return false;
    idx = lua_absindex(L, idx);
    if (lua_getmetatable(L, idx)) {
        lua_getfield(L, -1, "__name");
        bool typed = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "kernbench.usage") == 0;
        lua_pop(L, 2);
        return typed;
    }
    bool plain = lua_getfield(L, idx, "usage") == LUA_TSTRING;
    lua_pop(L, 1);
    return plain;
}

/* Error messages get a traceback; usage errors stay as they are (a user's
 * mistake: no traceback); error objects with a __tostring (such as a
 * process failure, which carries the process's own traceback) are
 * converted as they are. */
static int message_handler(lua_State *L)
{
    if (kb_exec_is_usage(L, 1))
        return 1;
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
    session->in_call = 1;
    if (session->ctl.stop)
        kb_session_arm(session); /* stopped already: the call ends at its first instruction */
    int status = lua_pcall(L, narg, nres, base);
    session->in_call = 0;
    lua_sethook(L, NULL, 0, 0);
    session->current = NULL;
    session->runs_active = 0; /* no run outlives the call, even one unwound by an error */
    lua_remove(L, base);
    return status;
}

static const char USAGE_HINT[] = "usage: kernbench [options] [script.lua [args...]]\n"
                                 "run 'kernbench --help' for the options";

/* A string field of the table on L's top, or NULL. */
static const char *field(lua_State *L, const char *key)
{
    lua_getfield(L, -1, key);
    const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1); /* the table still holds the string */
    return v;
}

/* Prints usage error on L's top: one line, the hint. */
static void report_usage(lua_State *L)
{
    const char *msg = field(L, "message");
    if (!msg)
        msg = field(L, "usage");
    const char *command = field(L, "command");
    const char *hint = field(L, "hint");
    fprintf(stderr, "kernbench%s%s: %s\n%s\n", command ? " " : "", command ? command : "",
            msg ? msg : "usage error", hint ? hint : USAGE_HINT);
    fflush(stderr);
}

int kb_exec_report(lua_State *L, int status)
{
    if (status != LUA_OK && kb_exec_is_usage(L, -1)) {
        kb_session *s = kb_session_of(L);
        kb_session_clear_line(s);
        if (!s || !s->ctl.stop)
            report_usage(L);
        lua_pop(L, 1);
        return KB_EXEC_USAGE;
    }
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        if (!msg)
            msg = "(error object is not a string)";
        kb_session *s = kb_session_of(L);
        kb_session_clear_line(s); /* the progress line, if an error left one */
        if (!s || !s->ctl.stop) { /* a stop's error: reported once, with what was reached */
            fprintf(stderr, "kernbench: %s\n", msg);
            if (s && s->trace)
                kb_trace_error(s->trace, msg); /* the trace says how the run ended */
            fflush(stderr);
        }
        lua_pop(L, 1);
    }
    return status;
}
