/* Lua processes: coroutines driven by the event core.
 *
 * A blocking call (s:sleep, ev:wait, st:get ...) registers the running
 * process's waiter with the core and yields from C (lua_yieldk); when the
 * core wakes the waiter, the coroutine is resumed and the call's
 * continuation returns the result. A process is also an event: it
 * succeeds with its function's return values when the function returns. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- finding the running process ---- */

_Noreturn void lsim_nested_call(lua_State *L, const lproc *p, const char *call)
{
    luaL_error(L,
               "%s: called from a coroutine nested inside process '%s'; blocking "
               "simulation calls must be made by the process itself",
               call, p->proc.name);
    abort(); /* not reached: luaL_error does not return */
}

int lsim_would_block(lua_State *L, const char *call, const char *why)
{
    return luaL_error(L,
                      "%s would block (%s); blocking calls may only be made inside a process "
                      "(a function started with s:spawn)",
                      call, why);
}

_Noreturn void lsim_cannot_block(lua_State *L, const char *call)
{
    luaL_error(L, "%s: cannot block here (inside a metamethod or C function that cannot yield)", call);
    abort(); /* not reached */
}

/* ---- resuming ---- */

static void push_proc_ud(lsim *S, lproc *p)
{
    lua_getiuservalue(S->L, S->sim_idx, LSIM_UV_PROCS);
    lua_rawgetp(S->L, -1, p);
    lua_remove(S->L, -2);
}

static void unanchor(lsim *S, lproc *p)
{
    lua_getiuservalue(S->L, S->sim_idx, LSIM_UV_PROCS);
    lua_pushnil(S->L);
    lua_rawsetp(S->L, -2, p);
    lua_pop(S->L, 1);
}

static void proc_fail(lsim *S, lproc *p, int with_traceback);

/* The function returned: its results become the process's value. */
static void proc_finish(lsim *S, lproc *p, int nres)
{
    lua_State *L = S->L;
    if (!lua_checkstack(L, nres + 4)) { /* raising here would unwind the event loop */
        lua_pushfstring(L, "process returned too many values (%d)", nres);
        proc_fail(S, p, 0);
        return;
    }
    push_proc_ud(S, p);
    int ud = lua_gettop(L);
    lua_createtable(L, nres, 1);
    lua_xmove(p->co, L, nres);
    for (int i = nres; i >= 1; i--)
        lua_rawseti(L, ud + 1, i);
    lua_pushinteger(L, nres);
    lua_setfield(L, -2, "n");
    lua_setiuservalue(L, ud, LEV_UV_VALUE);
    lua_pushnil(L); /* let the finished coroutine be collected */
    lua_setiuservalue(L, ud, LEV_UV_EXTRA);
    p->co = NULL;
    lua_pop(L, 1);
    unanchor(S, p);
    kb_proc_end(&p->proc);
    kb_event_succeed(p->hdr.ev, KB_ITEM_NONE);
}

/* The process raised (msg on L's top) or misbehaved: its event fails with
 * an error object, which goes to whatever waits on the process; if nothing
 * does when the failure is processed, the run fails with it
 * (lsim_unhandled). */
static void proc_fail(lsim *S, lproc *p, int with_traceback)
{
    lua_State *L = S->L;
    int msg = lua_gettop(L);
    char now[KB_TIME_STRLEN];
    kb_time_format(kb_sim_now(S->sim), now);
    const char *text = luaL_tolstring(L, msg, NULL);
    if (with_traceback)
        luaL_traceback(L, p->co, text, 0);
    else
        lua_pushstring(L, text);
    const char *tb = lua_tostring(L, -1);
    char *full = kb_asprintf("process '%s' failed at t=%s: %s", p->name, now, tb);
    lsim_push_error(L, S, msg, p->name, full);
    free(full);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "traceback");
    int err = lua_gettop(L);

    /* As Python's `with` blocks exit while the exception leaves the
     * generator, the coroutine's pending <close> variables (a request's
     * cancel and release) are closed before the process fails. */
    lua_resetthread(p->co);

    push_proc_ud(S, p);
    lua_pushvalue(L, err);
    lua_setiuservalue(L, -2, LEV_UV_VALUE);
    lua_pushnil(L);
    lua_setiuservalue(L, -2, LEV_UV_EXTRA);
    lua_pop(L, 1);
    p->co = NULL;

    lsim_keep_failure(L, S->sim_idx, p->hdr.ev, err);
    unanchor(S, p);
    kb_waiter_cancel(&p->waiter);
    kb_proc_end(&p->proc);
    kb_event_fail(p->hdr.ev, KB_ITEM_NONE);
    lua_settop(L, msg - 1);
}

/* What follows a resume that did not end in a simulation call's yield
 * (the function returned or raised, or yielded by itself, or a simulation
 * call yielded values): out of line, so that the resume below stays small. */
static void proc_resumed(lsim *S, lproc *p, int status, int nres)
{
    if (status == LUA_YIELD) {
        if (nres)
            lua_pop(p->co, nres);
        if (!p->blocked) {
            lua_pushliteral(S->L, "the process yielded outside a simulation call "
                                  "(coroutine.yield cannot be used to suspend a process; use "
                                  "s:sleep or wait on an event)");
            proc_fail(S, p, 1);
        }
    } else if (status == LUA_OK) {
        proc_finish(S, p, nres);
    } else {
        lua_xmove(p->co, S->L, 1);
        proc_fail(S, p, 1);
    }
}

/* Inline: every wake of a process comes here (the per-resume path). */
static inline void proc_resume(lproc *p, int nargs)
{
    lsim *S = p->hdr.S;
    lproc *outer = S->running;
    S->running = p;
    p->blocked = 0;
    S->resumes++;
    int nres = 0;
    lua_State *outer_co = kb_session_enter(S->session, p->co); /* a stop can end its Lua code */
    int status = lua_resume(p->co, S->L, nargs, &nres);
    kb_session_leave(S->session, outer_co);
    S->running = outer;
    if (status != LUA_YIELD || !p->blocked || nres) /* else blocked in a simulation call */
        proc_resumed(S, p, status, nres);
}

void lsim_proc_wake(kb_sim *sim, void *waiter)
{
    (void)sim;
    kb_waiter *w = waiter;
    proc_resume(KB_CONTAINER_OF(w, lproc, waiter), 0);
}

static void proc_start(kb_sim *sim, void *arg)
{
    lproc *p = arg;
    kb_sim_resuming_last(sim, &p->proc);
    int nargs = p->start_nargs;
    p->start_nargs = 0;
    proc_resume(p, nargs);
}

/* Where a blocked process stands: the innermost Lua line of its stack. */
static void proc_where(const kb_proc *proc, char *buf, size_t n)
{
    const lproc *p = KB_CONTAINER_OF(proc, lproc, proc);
    buf[0] = '\0';
    if (!p->co)
        return;
    lua_Debug ar;
    for (int level = 0; lua_getstack(p->co, level, &ar); level++) {
        if (lua_getinfo(p->co, "Sl", &ar) && ar.currentline > 0) {
            snprintf(buf, n, "%s:%d", ar.short_src, ar.currentline);
            return;
        }
    }
}

/* ---- s:spawn ---- */

int lsim_spawn(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    const char *name = NULL;
    unsigned flags = 0;
    int fn, nargs;
    if (lua_istable(L, 2)) { /* s:spawn{fn=..., name=..., args={...}, daemon=bool} */
        luaL_argcheck(L, lua_gettop(L) == 2, 3, "s:spawn{...} takes one table");
        static const char *const known[] = {"fn", "name", "args", "daemon", NULL};
        lbind_check_keys(L, 2, "s:spawn{}", NULL, known);
        lua_getfield(L, 2, "fn");
        luaL_argexpected(L, lua_isfunction(L, -1), 2, "table with a function field 'fn'");
        fn = lua_gettop(L);
        if (lua_getfield(L, 2, "name") != LUA_TNIL) {
            luaL_argexpected(L, lua_type(L, -1) == LUA_TSTRING, 2, "string 'name'");
            name = lbind_tostr(L, -1, "s:spawn", "field 'name'");
        }
        if (lbind_field_bool(L, 2, "s:spawn{}", "daemon", false))
            flags |= KB_PROC_DAEMON;
        nargs = 0;
        if (lua_getfield(L, 2, "args") != LUA_TNIL) {
            luaL_argexpected(L, lua_istable(L, -1), 2, "table 'args'");
            int args = lua_gettop(L);
            nargs = (int)luaL_len(L, args);
            luaL_checkstack(L, nargs, "process arguments");
            for (int i = 1; i <= nargs; i++)
                lua_geti(L, args, i);
            lua_remove(L, args);
        } else {
            lua_pop(L, 1);
        }
        /* stack: ... fn [name] args... : bring fn to just below the args */
        lua_pushvalue(L, fn);
        lua_insert(L, -nargs - 1);
        fn = lua_gettop(L) - nargs;
    } else {
        luaL_checktype(L, 2, LUA_TFUNCTION);
        fn = 2;
        nargs = lua_gettop(L) - 2;
    }

    lproc *p = lua_newuserdatauv(L, sizeof *p, LPROC_NUV);
    memset(p, 0, sizeof *p);
    int ud = lua_gettop(L);
    luaL_setmetatable(L, LPROC_MT);
    lua_State *co = lua_newthread(L);
    kb_session_own_thread(L, ud);
    lua_setiuservalue(L, ud, LEV_UV_EXTRA);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, ud, LEV_UV_SIM);
    lua_pushvalue(L, fn);
    lua_setiuservalue(L, ud, LPROC_UV_FN);

    luaL_checkstack(co, nargs + 1, "process arguments");
    lua_pushvalue(L, fn);
    for (int i = 0; i < nargs; i++)
        lua_pushvalue(L, fn + 1 + i);
    lua_xmove(L, co, nargs + 1);

    p->co = co;
    p->start_nargs = nargs;
    p->hdr.S = S;
    p->hdr.kind = LEV_PROC;
    p->hdr.ev = kb_event_new(S->sim);
    kb_proc_start(S->sim, &p->proc, name, flags);
    p->proc.where = proc_where;
    p->name = kb_xstrdup(p->proc.name);
    kb_event_set_process(p->hdr.ev, &p->proc); /* named as the process, "process 'name' #id" */
    kb_waiter_init(&p->waiter, lsim_proc_wake, &p->proc);

    lua_getiuservalue(L, 1, LSIM_UV_PROCS); /* anchor while the core may wake it */
    lua_pushvalue(L, ud);
    lua_rawsetp(L, -2, p);
    lua_pop(L, 1);

    kb_sim_at(S->sim, kb_sim_now(S->sim), KB_PRIO_URGENT, proc_start, p);
    lua_pushvalue(L, ud);
    return 1;
}

/* ---- s:sleep ---- */

static int sleep_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    LSIM_INTERRUPTED(L, (lproc *)ctx);
    return 0;
}

static void sleep_done(kb_sim *sim, void *arg)
{
    lproc *p = arg;
    kb_sim_resuming_last(sim, &p->proc);
    proc_resume(p, 0);
}

int lsim_sleep(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    kb_time d = lsim_check_delay(L, S, 2, "s:sleep(ns)");
    lproc *p = lsim_current(L, S, "s:sleep()");
    if (!p)
        return luaL_error(L, "s:sleep() may only be called inside a process (a function started "
                             "with s:spawn), not from the main script");
    lsim_prepare_block(L, p, "s:sleep()");
    if (d == 0 && kb_sim_can_continue(S->sim, &p->proc)) { /* the timeout would be the next event */
        kb_sim_count_inline(S->sim);
        return 0;
    }
    kb_sim_after(S->sim, d, KB_PRIO_NORMAL, sleep_done, p);
    return lsim_block_as(L, p, sleep_k, LSIM_BLOCK_SLEEP);
}

/* ---- for interrupts (lsim_interrupt.c) ---- */

void lsim_proc_resume(lproc *p, int nargs) { proc_resume(p, nargs); }

/* SimPy's timeout stays queued without its process: it still counts. */
static void sleep_stale(kb_sim *sim, void *arg) { (void)sim, (void)arg; }

void lsim_proc_cancel_sleep(kb_sim *sim, lproc *p) { kb_sim_redirect(sim, sleep_done, p, sleep_stale, NULL); }

void lsim_proc_push_blocked_self(lua_State *L, lproc *p)
{
    lua_Debug ar; /* the blocking C function's first argument, as debug.getlocal reads it */
    if (p->co && lua_getstack(p->co, 0, &ar) && lua_getlocal(p->co, &ar, 1))
        lua_xmove(p->co, L, 1);
    else
        lua_pushnil(L);
}

int lsim_current_process(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lproc *p = S->running;
    if (!p || p->co != L) {
        lua_pushnil(L);
        return 1;
    }
    lua_getiuservalue(L, 1, LSIM_UV_PROCS);
    lua_rawgetp(L, -1, p);
    return 1;
}

/* ---- process objects ---- */

static lproc *check_proc(lua_State *L, int idx) { return lbind_checkudata(L, idx, LPROC_MT); }

static int p_name(lua_State *L)
{
    lproc *p = check_proc(L, 1);
    lua_pushstring(L, p->name);
    return 1;
}

static int p_id(lua_State *L)
{
    lproc *p = check_proc(L, 1);
    lua_pushinteger(L, (lua_Integer)p->proc.id);
    return 1;
}

static int p_alive(lua_State *L)
{
    lproc *p = check_proc(L, 1);
    lua_pushboolean(L, p->hdr.S->sim && kb_proc_live(&p->proc));
    return 1;
}

/* The name a loaded module gives the function at the top (a global's
 * "f", a module's "mod.f"), pushed; false if none. As Lua's tracebacks
 * name functions. */
static bool push_loaded_name(lua_State *L)
{
    int fn = lua_gettop(L);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    int loaded = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, loaded)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fn)) {
                    const char *mod = lua_tostring(L, -4), *key = lua_tostring(L, -2);
                    if (!strcmp(mod, LUA_GNAME))
                        lua_pushstring(L, key);
                    else
                        lua_pushfstring(L, "%s.%s", mod, key);
                    lua_replace(L, fn + 1);
                    lua_settop(L, fn + 1);
                    return true;
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, fn);
    return false;
}

/* What a process is: its state and its function, named as Lua's
 * tracebacks name it, and where it is defined (SimPy's Process(func)). */
static int p_tostring(lua_State *L)
{
    lproc *p = check_proc(L, 1);
    const char *state = !p->hdr.S->sim              ? "simulation closed"
                        : kb_proc_live(&p->proc)    ? (p->proc.wait_on ? "waiting" : "active")
                        : p->hdr.ev->ok             ? "finished"
                                                    : "failed";
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, LPROC_UV_FN); /* 2 */
    bool named = push_loaded_name(L);     /* 3 if named */
    lua_Debug ar;
    lua_pushvalue(L, 2);
    lua_getinfo(L, ">S", &ar);
    const char *where = ar.what[0] == 'C' ? "[C]" : ar.short_src;
    if (ar.what[0] == 'C')
        lua_pushfstring(L, "process '%s' #%I (%s, function %s%s[C])", p->name, (lua_Integer)p->proc.id,
                        state, named ? lua_tostring(L, 3) : "", named ? " " : "");
    else
        lua_pushfstring(L, "process '%s' #%I (%s, function %s%sat %s:%d)", p->name,
                        (lua_Integer)p->proc.id, state, named ? lua_tostring(L, 3) : "",
                        named ? " " : "", where, ar.linedefined);
    return 1;
}

static int p_gc(lua_State *L)
{
    lproc *p = check_proc(L, 1);
    if (p->hdr.S && p->hdr.S->sim) {
        kb_waiter_cancel(&p->waiter);
        kb_proc_end(&p->proc);
    }
    lsim_release_event(&p->hdr);
    free(p->name);
    p->name = NULL;
    return 0;
}

void lsim_open_proc(lua_State *L)
{
    static const luaL_Reg methods[] = {{"wait", lsim_event_wait},
                                       {"value", lsim_event_value},
                                       {"name", p_name},
                                       {"id", p_id},
                                       {"alive", p_alive},
                                       {"triggered", lsim_event_triggered},
                                       {"processed", lsim_event_processed},
                                       {"ok", lsim_event_ok},
                                       {"interrupt", lsim_interrupt},
                                       {"add_callback", lsim_add_callback},
                                       {"defuse", lsim_defuse},
                                       {"defused", lsim_defused},
                                       {NULL, NULL}};
    static const luaL_Reg meta[] = {{"__gc", p_gc}, {"__tostring", p_tostring}, {NULL, NULL}};
    lsim_new_meta(L, LPROC_MT, methods, meta);
}
