/* kernbench.procpool: runs a list of commands as child processes, at most
 * N at once (posix_spawn, waitpid), each one's standard output and error
 * to files; calls a Lua function as each one ends; returns every exit
 * status. An interrupted parent (SIGINT, SIGTERM, SIGHUP, SIGALRM of
 * --timeout) terminates its children before it stops. Reference:
 * docs/lua-api.md "kernbench.procpool"; used by benches/milestone_ccl.lua
 * and the sweeps (lua/kernbench/sweep/). The processes are kb_os's
 * (src/os/); the one-child calls are in lprocpool_spawn.c.
 *
 *   local pool = require "kernbench.procpool"
 *   local rs = pool.run({ {argv = {"prog", "a"}, stdout = "o.txt", stderr = "e.txt"}, ... },
 *                       {jobs = 2, on_done = function(i, r, done, total) end})
 *   -- rs[i] = {ok = bool, status = exit code | nil, signal = N | nil}
 *   pool.cpus(), pool.exe(), pool.pid()
 *   local pid, guard = pool.spawn(argv, {stdout =, stderr =, stdin =, group = true})
 *   pool.wait(pid, seconds) -- nil while it runs, then its result; pool.kill, pool.sleep
 */
#include "luasim/lprocpool.h"
#include "luasim/lbind.h"

#include "core/util.h"
#include "luasim/lprocpool_internal.h"
#include "luasim/session.h"
#include "os/procpool.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_JOBS 1024
#define REDRAW_S 0.5     /* the progress line is redrawn this often while waiting */

/* ---- results ---- */

void lprocpool_push_result(lua_State *L, int wstatus)
{
    lua_createtable(L, 0, 3);
    if (WIFEXITED(wstatus)) {
        lua_pushinteger(L, WEXITSTATUS(wstatus));
        lua_setfield(L, -2, "status");
        lua_pushboolean(L, WEXITSTATUS(wstatus) == 0);
    } else {
        lua_pushinteger(L, WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
        lua_setfield(L, -2, "signal");
        lua_pushboolean(L, 0);
    }
    lua_setfield(L, -2, "ok");
}

/* Redraws the command line's progress line (kb.progress's point) while no
 * simulation runs: a report of simulation 0, which has no clock of its own. */
static void redraw(lua_State *L, bool ended)
{
    kb_session *s = kb_session_of(L);
    if (!s || !s->ctl.on_progress || (!ended && s->point.n <= 0))
        return; /* nothing to show: the bench has not called kb.progress */
    kb_sim_progress r;
    memset(&r, 0, sizeof r);
    r.id = 0;
    r.clock_s = kb_wall_seconds();
    r.ended = ended;
    s->ctl.on_progress(s->ctl.progress_ctx, &r);
}

/* ---- run ---- */

static const char *opt_string(lua_State *L, int t, const char *key, int i)
{
    int ty = lua_getfield(L, t, key);
    const char *s = NULL;
    if (ty == LUA_TSTRING)
        s = lua_tostring(L, -1); /* anchored: the command table holds it */
    else if (ty != LUA_TNIL)
        luaL_error(L, "procpool.run: command %d: %s must be a file name (a string), got %s", i, key,
                   lua_typename(L, ty));
    lua_pop(L, 1);
    return s;
}

/* pool.run(cmds, opts) */
static int l_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    if (kb_os_pool_active())
        return luaL_error(L, "procpool.run: a pool is already running (called from its on_done?)");
    lua_Integer jobs = 0;
    if (lua_istable(L, 2)) {
        static const char *const known[] = {"jobs", "on_done", NULL};
        lbind_check_keys(L, 2, "procpool.run", NULL, known);
        if (lua_getfield(L, 2, "jobs") != LUA_TNIL) {
            int isnum;
            jobs = lua_tointegerx(L, -1, &isnum);
            if (!isnum || jobs < 1 || jobs > MAX_JOBS)
                return luaL_error(L, "procpool.run: jobs must be an integer from 1 to %d", MAX_JOBS);
        }
        lua_pop(L, 1);
        lua_getfield(L, 2, "on_done");
        if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
            return luaL_error(L, "procpool.run: on_done must be a function, got %s", luaL_typename(L, -1));
    } else {
        lua_pushnil(L);
    }
    /* 3: on_done or nil */
    if (jobs == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = c > 0 ? (c > MAX_JOBS ? MAX_JOBS : c) : 1;
    }
    lua_Integer n = luaL_len(L, 1);
    if (n > 1000000)
        return luaL_error(L, "procpool.run: too many commands (%I)", n);
    kb_os_pool p;
    memset(&p, 0, sizeof p);
    p.n = (int)n;
    p.cmds = lua_newuserdatauv(L, sizeof(kb_os_child) * (size_t)(n > 0 ? n : 1), 0); /* 4: freed by the GC */
    memset(p.cmds, 0, sizeof(kb_os_child) * (size_t)(n > 0 ? n : 1));
    lua_createtable(L, (int)n, 0); /* 5: each command's argv and file names, copied */
    char why[512];
    for (int i = 1; i <= p.n; i++) {
        kb_os_child *c = &p.cmds[i - 1];
        if (lua_geti(L, 1, i) != LUA_TTABLE)
            return luaL_error(L, "procpool.run: command %d must be a table {argv = {...}, stdout =, stderr =} "
                                 "or an argv list, got %s", i, luaL_typename(L, -1));
        int t = lua_gettop(L);
        int argv_t = t;
        if (lua_getfield(L, t, "argv") == LUA_TTABLE) {
            static const char *const known[] = {"argv", "stdout", "stderr", NULL};
            lbind_check_keys(L, t, "procpool.run", "a command's fields", known);
            argv_t = lua_gettop(L);
        } else {
            lua_pop(L, 1);
            lua_pushvalue(L, t);
            argv_t = lua_gettop(L);
        }
        lua_Integer argc = luaL_len(L, argv_t);
        if (argc < 1 || argc > 100000)
            return luaL_error(L, "procpool.run: command %d: argv must list the program and its arguments", i);
        const char *out = opt_string(L, t, "stdout", i), *errf = opt_string(L, t, "stderr", i);
        /* the strings are copied: the callback may change the tables */
        size_t bytes = sizeof(char *) * (size_t)(argc + 1) + (out ? strlen(out) + 1 : 0) +
                       (errf ? strlen(errf) + 1 : 0);
        for (lua_Integer k = 1; k <= argc; k++) {
            if (lua_geti(L, argv_t, k) != LUA_TSTRING)
                return luaL_error(L, "procpool.run: command %d: argv[%I] must be a string, got %s", i, k,
                                  luaL_typename(L, -1));
            bytes += lua_rawlen(L, -1) + 1;
            lua_pop(L, 1);
        }
        c->argv = lua_newuserdatauv(L, bytes, 0);
        lua_rawseti(L, 5, i);
        char *at = (char *)(c->argv + argc + 1);
        for (lua_Integer k = 1; k <= argc; k++) {
            size_t len;
            lua_geti(L, argv_t, k);
            const char *a = lua_tolstring(L, -1, &len);
            memcpy(at, a, len + 1);
            c->argv[k - 1] = at;
            at += len + 1;
            lua_pop(L, 1);
        }
        c->argv[argc] = NULL;
        if (out) {
            memcpy(at, out, strlen(out) + 1);
            c->out = at;
            at += strlen(out) + 1;
        }
        if (errf) {
            memcpy(at, errf, strlen(errf) + 1);
            c->err = at;
        }
        if (kb_os_cannot_run(c->argv[0], why, sizeof why))
            return luaL_error(L, "procpool.run: command %d: %s", i, why);
        lua_settop(L, 5);
    }
    kb_session *s = kb_session_of(L);
    if (s && s->ctl.stop)
        return luaL_error(L, "procpool.run: %s", kb_stop_message(s->ctl.stop));

    kb_os_pool_install(&p);
    int next = 0, done = 0;
    char err[600];
    err[0] = '\0';
    bool failed = false, callback_failed = false;
    double last_draw = 0;
    redraw(L, false);
    while (done < p.n && !kb_os_pool_stopped()) {
        while (next < p.n && kb_os_pool_running(&p) < jobs && !failed) {
            if (!kb_os_child_start(&p.cmds[next], &p.old_mask, err, sizeof err)) {
                failed = true; /* command next + 1 */
                break;
            }
            next++;
        }
        if (failed)
            break;
        /* reap whatever has ended, calling on_done for each */
        kb_os_child *c;
        while (!callback_failed && (c = kb_os_pool_reap(&p)) != NULL) {
            done++;
            if (!lua_isnil(L, 3)) {
                lua_pushvalue(L, 3);
                lua_pushinteger(L, (lua_Integer)(c - p.cmds) + 1);
                lprocpool_push_result(L, c->wstatus);
                lua_pushinteger(L, done);
                lua_pushinteger(L, p.n);
                kb_os_pool_unblock(&p); /* the pool's handlers stay: a signal is recorded */
                int st = lua_pcall(L, 4, 0, 0);
                kb_os_pool_block(&p);
                if (st != LUA_OK) {
                    callback_failed = true; /* the error object stays on the stack (6) */
                    break;
                }
            }
            redraw(L, false);
            last_draw = kb_wall_seconds();
        }
        if (callback_failed || kb_os_pool_stopped() || done >= p.n)
            break;
        if (next < p.n && kb_os_pool_running(&p) < jobs)
            continue;
        /* wait for a child or a signal, with the signals unblocked */
        kb_os_pool_pause(&p, REDRAW_S);
        if (kb_wall_seconds() - last_draw >= REDRAW_S) {
            redraw(L, false);
            last_draw = kb_wall_seconds();
        }
    }
    int stopped = kb_os_pool_stopped();
    if (stopped || failed || callback_failed)
        kb_os_pool_terminate(&p);
    redraw(L, true);
    kb_os_pool_uninstall(&p); /* a stop signal is delivered again here */
    if (callback_failed)
        return lua_error(L); /* the callback's error, as it raised it */
    if (stopped) {
        s = kb_session_of(L);
        return luaL_error(L, "procpool.run: %s: the running commands were terminated",
                          s && s->ctl.stop ? kb_stop_message(s->ctl.stop) : strsignal(stopped));
    }
    if (failed)
        return luaL_error(L, "procpool.run: command %d: %s (the running commands were terminated)", next + 1, err);
    lua_createtable(L, p.n, 0);
    for (int i = 0; i < p.n; i++) {
        lprocpool_push_result(L, p.cmds[i].wstatus);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* pool.cpus(): the processors online (at least 1). */
static int l_cpus(lua_State *L)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, c > 0 ? c : 1);
    return 1;
}

/* pool.exe(): the running executable's path (/proc/self/exe), or nil and why. */
static int l_exe(lua_State *L)
{
    char buf[4096];
    ssize_t k = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (k <= 0 || (size_t)k >= sizeof buf - 1) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot read /proc/self/exe: %s", k < 0 ? strerror(errno) : "path too long");
        return 2;
    }
    buf[k] = '\0';
    lua_pushstring(L, buf);
    return 1;
}

static int l_pid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)getpid());
    return 1;
}

int luaopen_kb_procpool(lua_State *L)
{
    static const luaL_Reg fns[] = {{"run", l_run},
                                   {"cpus", l_cpus},
                                   {"exe", l_exe},
                                   {"pid", l_pid},
                                   {"spawn", lprocpool_spawn},
                                   {"wait", lprocpool_wait},
                                   {"kill", lprocpool_kill},
                                   {"sleep", lprocpool_sleep},
                                   {NULL, NULL}};
    lprocpool_guard_open(L);
    luaL_newlib(L, fns);
    return 1;
}
