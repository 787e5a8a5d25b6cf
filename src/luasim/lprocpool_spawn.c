/* kernbench.procpool's one-child calls, which do not wait for the child
 * (the sweep backends): spawn, wait, kill, sleep (lprocpool.c has the
 * rest of the module). */
#include "luasim/lbind.h"
#include "luasim/lprocpool_internal.h"

#include "core/util.h"
#include "luasim/session.h"
#include "os/child.h"

#include <errno.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#define GUARD_MT "kernbench.procpool.guard"

/* The guard's __close: C, so the stop hook (which raises on every Lua
 * instruction once a stop is flagged) cannot keep it from running. */
static int guard_close(lua_State *L)
{
    pid_t *guard = luaL_checkudata(L, 1, GUARD_MT);
    if (*guard > 0)
        kb_os_child_terminate(*guard);
    *guard = 0;
    return 0;
}

static const char *spawn_opt(lua_State *L, const char *key)
{
    int ty = lua_getfield(L, 2, key);
    const char *s = NULL;
    if (ty == LUA_TSTRING)
        s = lua_tostring(L, -1); /* anchored: the options table holds it */
    else if (ty != LUA_TNIL)
        luaL_error(L, "procpool.spawn: %s must be a file name (a string), got %s", key, lua_typename(L, ty));
    lua_pop(L, 1);
    return s;
}

/* pool.spawn(argv[, {stdout =, stderr =, stdin =, group =}]) -> pid, guard:
 * starts one child and returns at once; pool.wait reaps it. The guard, held
 * in a to-be-closed variable (`local _ <close> = guard`), terminates the
 * child (its group) if it has not been reaped when the variable goes out of
 * scope, an error included. */
int lprocpool_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    else
        lua_newtable(L);
    lua_settop(L, 2);
    lua_Integer argc = luaL_len(L, 1);
    if (argc < 1 || argc > 100000)
        return luaL_error(L, "procpool.spawn: argv must list the program and its arguments");
    kb_os_child c;
    memset(&c, 0, sizeof c);
    c.argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(argc + 1), 0); /* 3 */
    for (lua_Integer k = 1; k <= argc; k++) {
        if (lua_geti(L, 1, k) != LUA_TSTRING)
            return luaL_error(L, "procpool.spawn: argv[%I] must be a string, got %s", k, luaL_typename(L, -1));
        c.argv[k - 1] = (char *)lua_tostring(L, -1); /* anchored by argv, unchanged until spawned */
        lua_pop(L, 1);
    }
    c.argv[argc] = NULL;
    static const char *const known[] = {"stdout", "stderr", "stdin", "group", NULL};
    lbind_check_keys(L, 2, "procpool.spawn", NULL, known);
    c.out = spawn_opt(L, "stdout");
    c.err = spawn_opt(L, "stderr");
    c.in = spawn_opt(L, "stdin");
    c.group = lbind_field_bool(L, 2, "procpool.spawn", "group", false);
    char why[600];
    if (kb_os_cannot_run(c.argv[0], why, sizeof why))
        return luaL_error(L, "procpool.spawn: %s", why);
    if (!kb_os_child_start(&c, NULL, why, sizeof why)) /* with the mask it has now */
        return luaL_error(L, "procpool.spawn: %s", why);
    lua_pushinteger(L, (lua_Integer)c.pid);
    pid_t *guard = lua_newuserdatauv(L, sizeof *guard, 0);
    *guard = c.pid;
    luaL_setmetatable(L, GUARD_MT);
    return 2;
}

/* pool.wait(pid[, seconds]) -> result | nil: reaps the child pid if it ends
 * within seconds (default 0: a poll), else nil. A stop of the command line
 * (SIGINT, SIGTERM, --timeout) while it waits terminates the child (its
 * process group if it leads one: SIGTERM, SIGKILL after 5 s), reaps it and
 * raises. */
int lprocpool_wait(lua_State *L)
{
    lua_Integer ipid = luaL_checkinteger(L, 1);
    double limit = luaL_optnumber(L, 2, 0);
    if (ipid <= 0 || ipid > INT32_MAX)
        return luaL_error(L, "procpool.wait: %I is not a process id", ipid);
    if (!(limit >= 0 && limit <= 86400))
        return luaL_error(L, "procpool.wait: seconds must be from 0 to 86400");
    pid_t pid = (pid_t)ipid;
    double t0 = kb_wall_seconds();
    for (;;) {
        int ws = 0;
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid) {
            lprocpool_push_result(L, ws);
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return luaL_error(L, "procpool.wait: process %d: %s", (int)pid, strerror(errno));
        kb_session *s = kb_session_of(L);
        if (s && s->ctl.stop) {
            kb_os_child_terminate(pid);
            return luaL_error(L, "procpool.wait: %s: process %d was terminated", kb_stop_message(s->ctl.stop),
                              (int)pid);
        }
        double left = limit - (kb_wall_seconds() - t0);
        if (left <= 0) {
            lua_pushnil(L);
            return 1;
        }
        kb_os_sleep(left < 0.02 ? left : 0.02);
    }
}

/* pool.kill(pid, sig) -> true | nil, why: kill(2); sig a number or "TERM",
 * "KILL", "INT", "HUP"; a negative pid names a process group; sig 0 asks
 * whether the process exists. */
int lprocpool_kill(lua_State *L)
{
    lua_Integer pid = luaL_checkinteger(L, 1);
    int sig;
    if (lua_type(L, 2) == LUA_TSTRING) {
        static const char *const names[] = {"TERM", "KILL", "INT", "HUP", NULL};
        static const int sigs[] = {SIGTERM, SIGKILL, SIGINT, SIGHUP};
        sig = sigs[luaL_checkoption(L, 2, NULL, names)];
    } else {
        lua_Integer k = luaL_checkinteger(L, 2);
        if (k < 0 || k > 64)
            return luaL_error(L, "procpool.kill: %I is not a signal number", k);
        sig = (int)k;
    }
    if (pid == 0 || pid == -1 || pid > INT32_MAX || pid < -INT32_MAX)
        return luaL_error(L, "procpool.kill: %I is not a process id", pid);
    if (kill((pid_t)pid, sig) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* pool.sleep(seconds): at most seconds (0 to 60); a signal ends it early. */
int lprocpool_sleep(lua_State *L)
{
    double t = luaL_checknumber(L, 1);
    if (!(t >= 0 && t <= 60))
        return luaL_error(L, "procpool.sleep: seconds must be from 0 to 60");
    kb_os_sleep(t);
    return 0;
}

void lprocpool_guard_open(lua_State *L)
{
    luaL_newmetatable(L, GUARD_MT);
    lua_pushcfunction(L, guard_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
}
