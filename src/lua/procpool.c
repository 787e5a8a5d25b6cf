/* kernbench.procpool: runs a list of commands as child processes, at most
 * N at once (posix_spawn, waitpid), each one's standard output and error
 * to files; calls a Lua function as each one ends; returns every exit
 * status. An interrupted parent (SIGINT, SIGTERM, SIGHUP, SIGALRM of
 * --timeout) terminates its children before it stops. Reference:
 * docs/lua-api.md "kernbench.procpool"; used by benches/milestone_ccl.lua.
 *
 *   local pool = require "kernbench.procpool"
 *   local rs = pool.run({ {argv = {"prog", "a"}, stdout = "o.txt", stderr = "e.txt"}, ... },
 *                       {jobs = 2, on_done = function(i, r, done, total) end})
 *   -- rs[i] = {ok = bool, status = exit code | nil, signal = N | nil}
 *   pool.cpus(), pool.exe(), pool.pid()
 *   local pid, guard = pool.spawn(argv, {stdout =, stderr =, stdin =, group = true})
 *   pool.wait(pid, seconds) -- nil while it runs, then its result; pool.kill, pool.sleep
 */
#include "lua/procpool.h"

#include "core/util.h"
#include "luasim/session.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_JOBS 1024
#define TERM_GRACE_S 5.0 /* SIGTERM, then SIGKILL after this long */
#define REDRAW_S 0.5     /* the progress line is redrawn this often while waiting */

/* The signals that stop the pool; each is re-raised once the children are
 * gone, so the command line's own handling (or the default action) follows. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM};
enum { NSTOP = sizeof stop_signals / sizeof *stop_signals };

/* Set by the handlers while a pool runs (a pool does not nest: run is
 * refused inside an on_done callback). */
static volatile sig_atomic_t pool_stop;
static volatile sig_atomic_t pool_running;

static void on_stop(int sig)
{
    if (!pool_stop)
        pool_stop = sig;
}

static void on_child(int sig) { (void)sig; /* wakes pselect */ }

typedef struct cmd {
    char **argv;      /* into Lua strings anchored on the stack */
    const char *out;  /* NULL: inherited */
    const char *err;  /* NULL: inherited; equal to out: the same file */
    const char *in;   /* NULL: inherited (pool.spawn's stdin) */
    bool group;       /* a process group of its own (pool.spawn's group) */
    pid_t pid;        /* > 0 while running */
    int state;        /* 0 waiting, 1 running, 2 done */
    int wstatus;
} cmd;

typedef struct pool {
    cmd *cmds;
    int n;
    struct sigaction old_act[NSTOP], old_chld;
    bool handled[NSTOP];
    sigset_t old_mask, blocked;
    bool installed;
} pool;

/* ---- checks made before anything starts ---- */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* NULL if argv0 can be run, else why not (in buf). */
static const char *cannot_run(const char *argv0, char *buf, size_t n)
{
    if (!*argv0) {
        snprintf(buf, n, "the program name is empty");
        return buf;
    }
    if (strchr(argv0, '/')) {
        struct stat st;
        if (stat(argv0, &st) != 0)
            snprintf(buf, n, "cannot run '%s': %s", argv0, strerror(errno));
        else if (!S_ISREG(st.st_mode) || access(argv0, X_OK) != 0)
            snprintf(buf, n, "cannot run '%s': not an executable file", argv0);
        else
            return NULL;
        return buf;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char full[4096];
    for (const char *p = path;; p++) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        int w = len == 0 ? snprintf(full, sizeof full, "./%s", argv0)
                         : snprintf(full, sizeof full, "%.*s/%s", (int)len, p, argv0);
        if (w > 0 && (size_t)w < sizeof full && executable(full))
            return NULL;
        if (!colon)
            break;
        p = colon;
    }
    snprintf(buf, n, "cannot run '%s': no such program in PATH", argv0);
    return buf;
}

/* ---- signals ---- */

static void install(pool *p)
{
    sigemptyset(&p->blocked);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSTOP; i++) {
        sigaction(stop_signals[i], NULL, &p->old_act[i]);
        /* an ignored signal stays ignored */
        p->handled[i] = p->old_act[i].sa_handler != SIG_IGN;
        if (p->handled[i]) {
            sa.sa_handler = on_stop;
            sigaction(stop_signals[i], &sa, NULL);
            sigaddset(&p->blocked, stop_signals[i]);
        }
    }
    sa.sa_handler = on_child;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, &p->old_chld);
    sigaddset(&p->blocked, SIGCHLD);
    sigprocmask(SIG_BLOCK, &p->blocked, &p->old_mask);
    pool_stop = 0;
    pool_running = 1;
    p->installed = true;
}

/* Restores the handlers and the mask; a stop signal caught is raised again
 * for the previous handler (the command line's: it sets the session's stop
 * flag) or the default action. */
static void uninstall(pool *p)
{
    if (!p->installed)
        return;
    p->installed = false;
    for (int i = 0; i < NSTOP; i++)
        if (p->handled[i])
            sigaction(stop_signals[i], &p->old_act[i], NULL);
    sigaction(SIGCHLD, &p->old_chld, NULL);
    int sig = pool_stop;
    pool_running = 0;
    pool_stop = 0;
    if (sig)
        raise(sig); /* pending while blocked: delivered by the sigprocmask below */
    sigprocmask(SIG_SETMASK, &p->old_mask, NULL);
}

/* ---- children ---- */

static int open_for(const char *path, char *err, size_t n, const char *what)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        snprintf(err, n, "cannot open the %s file '%s': %s", what, path, strerror(errno));
    return fd;
}

/* Starts c; false with a message in err. */
static bool start(pool *p, cmd *c, char *err, size_t n)
{
    int fo = -1, fe = -1, fi = -1;
    bool ok = false;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    if (c->out && (fo = open_for(c->out, err, n, "stdout")) < 0)
        goto done;
    if (c->err && !(c->out && strcmp(c->err, c->out) == 0) && (fe = open_for(c->err, err, n, "stderr")) < 0)
        goto done;
    if (c->in && (fi = open(c->in, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(err, n, "cannot open the stdin file '%s': %s", c->in, strerror(errno));
        goto done;
    }
    if (fi >= 0)
        posix_spawn_file_actions_adddup2(&fa, fi, STDIN_FILENO);
    if (fo >= 0)
        posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO);
    if (c->err)
        posix_spawn_file_actions_adddup2(&fa, fe >= 0 ? fe : fo, STDERR_FILENO);
    /* the child starts with the mask the parent had before the pool */
    posix_spawnattr_setsigmask(&at, &p->old_mask);
    short flags = POSIX_SPAWN_SETSIGMASK;
    if (c->group) {
        posix_spawnattr_setpgroup(&at, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&at, flags);
    pid_t pid;
    int e = strchr(c->argv[0], '/') ? posix_spawn(&pid, c->argv[0], &fa, &at, c->argv, environ)
                                     : posix_spawnp(&pid, c->argv[0], &fa, &at, c->argv, environ);
    if (e != 0) {
        snprintf(err, n, "cannot run '%s': %s", c->argv[0], strerror(e));
        goto done;
    }
    c->pid = pid;
    c->state = 1;
    ok = true;
done:
    if (fi >= 0)
        close(fi);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return ok;
}

/* The next child of the pool that has ended (reaped), or NULL: only the
 * pool's own children are waited for (not, say, an io.popen's). */
static cmd *reap_one(pool *p)
{
    for (int i = 0; i < p->n; i++) {
        cmd *c = &p->cmds[i];
        int ws;
        if (c->state == 1 && waitpid(c->pid, &ws, WNOHANG) == c->pid) {
            c->state = 2;
            c->wstatus = ws;
            return c;
        }
    }
    return NULL;
}

static int running(const pool *p)
{
    int k = 0;
    for (int i = 0; i < p->n; i++)
        k += p->cmds[i].state == 1;
    return k;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Terminates every running child (SIGTERM; SIGKILL after TERM_GRACE_S)
 * and reaps it: none outlives the pool. */
static void terminate_all(pool *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->cmds[i].state == 1)
            kill(p->cmds[i].pid, SIGTERM);
    double t0 = kb_wall_seconds();
    bool killed = false;
    while (running(p) > 0) {
        if (reap_one(p))
            continue;
        if (!killed && kb_wall_seconds() - t0 > TERM_GRACE_S) {
            for (int i = 0; i < p->n; i++)
                if (p->cmds[i].state == 1)
                    kill(p->cmds[i].pid, SIGKILL);
            killed = true;
        }
        sleep_s(0.01);
    }
}

/* ---- results ---- */

static void push_result(lua_State *L, const cmd *c)
{
    lua_createtable(L, 0, 3);
    if (WIFEXITED(c->wstatus)) {
        lua_pushinteger(L, WEXITSTATUS(c->wstatus));
        lua_setfield(L, -2, "status");
        lua_pushboolean(L, WEXITSTATUS(c->wstatus) == 0);
    } else {
        lua_pushinteger(L, WIFSIGNALED(c->wstatus) ? WTERMSIG(c->wstatus) : 0);
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
    if (pool_running)
        return luaL_error(L, "procpool.run: a pool is already running (called from its on_done?)");
    lua_Integer jobs = 0;
    if (lua_istable(L, 2)) {
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
    pool p;
    memset(&p, 0, sizeof p);
    p.n = (int)n;
    p.cmds = lua_newuserdatauv(L, sizeof(cmd) * (size_t)(n > 0 ? n : 1), 0); /* 4: freed by the GC */
    memset(p.cmds, 0, sizeof(cmd) * (size_t)(n > 0 ? n : 1));
    lua_createtable(L, (int)n, 0); /* 5: each command's argv and file names, copied */
    char why[512];
    for (int i = 1; i <= p.n; i++) {
        cmd *c = &p.cmds[i - 1];
        if (lua_geti(L, 1, i) != LUA_TTABLE)
            return luaL_error(L, "procpool.run: command %d must be a table {argv = {...}, stdout =, stderr =} "
                                 "or an argv list, got %s", i, luaL_typename(L, -1));
        int t = lua_gettop(L);
        int argv_t = t;
        if (lua_getfield(L, t, "argv") == LUA_TTABLE) {
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
        if (cannot_run(c->argv[0], why, sizeof why))
            return luaL_error(L, "procpool.run: command %d: %s", i, why);
        lua_settop(L, 5);
    }
    kb_session *s = kb_session_of(L);
    if (s && s->ctl.stop)
        return luaL_error(L, "procpool.run: %s", kb_stop_message(s->ctl.stop));

    install(&p);
    int next = 0, done = 0;
    char err[600];
    err[0] = '\0';
    bool failed = false, callback_failed = false;
    double last_draw = 0;
    redraw(L, false);
    while (done < p.n && !pool_stop) {
        while (next < p.n && running(&p) < jobs && !failed) {
            if (!start(&p, &p.cmds[next], err, sizeof err)) {
                failed = true; /* command next + 1 */
                break;
            }
            next++;
        }
        if (failed)
            break;
        /* reap whatever has ended, calling on_done for each */
        cmd *c;
        while (!callback_failed && (c = reap_one(&p)) != NULL) {
            done++;
            if (!lua_isnil(L, 3)) {
                lua_pushvalue(L, 3);
                lua_pushinteger(L, (lua_Integer)(c - p.cmds) + 1);
                push_result(L, c);
                lua_pushinteger(L, done);
                lua_pushinteger(L, p.n);
                sigprocmask(SIG_SETMASK, &p.old_mask, NULL); /* our handlers stay: a signal sets pool_stop */
                int st = lua_pcall(L, 4, 0, 0);
                sigprocmask(SIG_BLOCK, &p.blocked, NULL);
                if (st != LUA_OK) {
                    callback_failed = true; /* the error object stays on the stack (6) */
                    break;
                }
            }
            redraw(L, false);
            last_draw = kb_wall_seconds();
        }
        if (callback_failed || pool_stop || done >= p.n)
            break;
        if (next < p.n && running(&p) < jobs)
            continue;
        /* wait for a child or a signal, with the signals unblocked */
        struct timespec ts = {0, (long)(REDRAW_S * 1e9)};
        pselect(0, NULL, NULL, NULL, &ts, &p.old_mask);
        if (kb_wall_seconds() - last_draw >= REDRAW_S) {
            redraw(L, false);
            last_draw = kb_wall_seconds();
        }
    }
    int stopped = pool_stop;
    if (stopped || failed || callback_failed)
        terminate_all(&p);
    redraw(L, true);
    uninstall(&p); /* a stop signal is delivered again here */
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
        push_result(L, &p.cmds[i]);
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

/* ---- one child without waiting for it (the sweep backends) ---- */

#define GUARD_MT "kernbench.procpool.guard"

/* Sends sig to pid's process group when pid leads one, else to pid. */
static void signal_child(pid_t pid, int sig)
{
    if (getpgid(pid) == pid)
        kill(-pid, sig);
    else
        kill(pid, sig);
}

/* Terminates the child pid if it has not been reaped (its process group
 * if it leads one: SIGTERM, SIGKILL after TERM_GRACE_S) and reaps it. */
static void terminate_child(pid_t pid)
{
    int ws;
    if (waitpid(pid, &ws, WNOHANG) != 0)
        return; /* ended now, or not (any more) our child */
    bool leader = getpgid(pid) == pid;
    signal_child(pid, SIGTERM);
    double t1 = kb_wall_seconds();
    bool killed = false;
    while (waitpid(pid, &ws, WNOHANG) == 0) {
        if (!killed && kb_wall_seconds() - t1 > TERM_GRACE_S) {
            signal_child(pid, SIGKILL);
            killed = true;
        }
        sleep_s(0.01);
    }
    if (leader) /* the rest of its group */
        kill(-pid, SIGKILL);
}

/* The guard's __close: C, so the stop hook (which raises on every Lua
 * instruction once a stop is flagged) cannot keep it from running. */
static int guard_close(lua_State *L)
{
    pid_t *guard = luaL_checkudata(L, 1, GUARD_MT);
    if (*guard > 0)
        terminate_child(*guard);
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
static int l_spawn(lua_State *L)
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
    cmd c;
    memset(&c, 0, sizeof c);
    c.argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(argc + 1), 0); /* 3 */
    for (lua_Integer k = 1; k <= argc; k++) {
        if (lua_geti(L, 1, k) != LUA_TSTRING)
            return luaL_error(L, "procpool.spawn: argv[%I] must be a string, got %s", k, luaL_typename(L, -1));
        c.argv[k - 1] = (char *)lua_tostring(L, -1); /* anchored by argv, unchanged until spawned */
        lua_pop(L, 1);
    }
    c.argv[argc] = NULL;
    c.out = spawn_opt(L, "stdout");
    c.err = spawn_opt(L, "stderr");
    c.in = spawn_opt(L, "stdin");
    lua_getfield(L, 2, "group");
    c.group = lua_toboolean(L, -1);
    lua_pop(L, 1);
    char why[600];
    if (cannot_run(c.argv[0], why, sizeof why))
        return luaL_error(L, "procpool.spawn: %s", why);
    pool p;
    memset(&p, 0, sizeof p);
    sigprocmask(SIG_SETMASK, NULL, &p.old_mask);
    if (!start(&p, &c, why, sizeof why))
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
static int l_wait(lua_State *L)
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
        cmd c;
        memset(&c, 0, sizeof c);
        pid_t r = waitpid(pid, &c.wstatus, WNOHANG);
        if (r == pid) {
            push_result(L, &c);
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return luaL_error(L, "procpool.wait: process %d: %s", (int)pid, strerror(errno));
        kb_session *s = kb_session_of(L);
        if (s && s->ctl.stop) {
            terminate_child(pid);
            return luaL_error(L, "procpool.wait: %s: process %d was terminated", kb_stop_message(s->ctl.stop),
                              (int)pid);
        }
        double left = limit - (kb_wall_seconds() - t0);
        if (left <= 0) {
            lua_pushnil(L);
            return 1;
        }
        sleep_s(left < 0.02 ? left : 0.02);
    }
}

/* pool.kill(pid, sig) -> true | nil, why: kill(2); sig a number or "TERM",
 * "KILL", "INT", "HUP"; a negative pid names a process group; sig 0 asks
 * whether the process exists. */
static int l_kill(lua_State *L)
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
static int l_sleep(lua_State *L)
{
    double t = luaL_checknumber(L, 1);
    if (!(t >= 0 && t <= 60))
        return luaL_error(L, "procpool.sleep: seconds must be from 0 to 60");
    sleep_s(t);
    return 0;
}

int luaopen_kb_procpool(lua_State *L)
{
    static const luaL_Reg fns[] = {{"run", l_run},     {"cpus", l_cpus}, {"exe", l_exe},     {"pid", l_pid},
                                   {"spawn", l_spawn}, {"wait", l_wait}, {"kill", l_kill}, {"sleep", l_sleep},
                                   {NULL, NULL}};
    luaL_newmetatable(L, GUARD_MT);
    lua_pushcfunction(L, guard_close);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
    luaL_newlib(L, fns);
    return 1;
}
