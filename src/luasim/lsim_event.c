/* Lua events: s:event, s:timeout, s:all_of, s:any_of, and the waiting
 * methods shared with process objects.
 *
 * Values stay in Lua: an event's success value or failure reason is its
 * LEV_UV_VALUE user value (an operation's result is built into it when
 * first read: lsim_deferred); a condition keeps its children
 * (LEV_UV_EXTRA) and reads their values when it is waited on. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"

#include <stdlib.h>
#include <string.h>

levent *lsim_test_awaitable(lua_State *L, int idx)
{
    levent *e = lbind_testudata(L, idx, LEVENT_MT);
    if (!e)
        e = lbind_testudata(L, idx, LPROC_MT);
    return e ? e : lbind_testudata(L, idx, LREQ_MT);
}

levent *lsim_check_awaitable(lua_State *L, int idx)
{
    levent *e = lsim_test_awaitable(L, idx);
    if (!e)
        luaL_typeerror(L, idx, "event, process or request");
    lsim_check_open(L, e->S);
    return e;
}

void lsim_release_event(levent *e)
{
    if (e->ev && e->S && e->S->sim)
        kb_event_unref(e->ev);
    e->ev = NULL;
    if (e->deferred) {
        e->deferred->free(e->deferred);
        e->deferred = NULL;
    }
}

levent *lsim_push_event(lua_State *L, int sim_idx, lsim *S, kb_event *ev, levent_kind kind)
{
    levent *e = lua_newuserdatauv(L, sizeof *e, LEV_NUV);
    e->ev = ev;
    e->S = S;
    e->kind = kind;
    e->deferred = NULL;
    luaL_setmetatable(L, LEVENT_MT);
    lua_pushvalue(L, sim_idx);
    lua_setiuservalue(L, -2, LEV_UV_SIM);
    return e;
}

/* ---- values ---- */

/* Pushes the values an awaitable (at idx, processed and successful) yields:
 * all of them, or only the first when `first` is set. Returns the count. */
static int push_values(lua_State *L, int idx, levent *e, int first)
{
    luaL_checkstack(L, 4, "event values");
    idx = lua_absindex(L, idx);
    switch (e->kind) {
    case LEV_PLAIN:
    case LEV_TIMEOUT:
        if (e->deferred) { /* built on this first read, then kept */
            e->deferred->push(L, e->deferred);
            lua_setiuservalue(L, idx, LEV_UV_VALUE);
            e->deferred->free(e->deferred);
            e->deferred = NULL;
        }
        lua_getiuservalue(L, idx, LEV_UV_VALUE);
        return 1;
    case LEV_PUT:
    case LEV_ACQUIRE: /* SimPy's value: None */
        lua_pushnil(L);
        return 1;
    case LEV_SH_PUT:
    case LEV_SH_ACQUIRE:
        lua_pushnil(L);
        return 1;
    case LEV_GET:
    case LEV_SH_GET: {
        lreq *q = (lreq *)(void *)e;
        if (!q->item_taken) { /* moved out of the store on this first read, then kept */
            lua_getiuservalue(L, idx, LEV_UV_EXTRA);
            if (e->kind == LEV_GET)
                lsim_store_take(L, -1, q->req.ev->value.i);
            else
                lsim_shared_take(L, -1, q->req.ev->value);
            lua_setiuservalue(L, idx, LEV_UV_VALUE);
            lua_pop(L, 1);
            q->item_taken = true;
        }
        lua_getiuservalue(L, idx, LEV_UV_VALUE);
        return 1;
    }
    case LEV_PROC: {
        lua_getiuservalue(L, idx, LEV_UV_VALUE);
        int t = lua_gettop(L);
        lua_getfield(L, t, "n");
        int n = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (first)
            n = n > 0 ? 1 : 0;
        luaL_checkstack(L, n, "process results");
        for (int i = 1; i <= n; i++)
            lua_rawgeti(L, t, i);
        lua_remove(L, t);
        return n;
    }
    case LEV_ALL: { /* a list of each child's (first) value */
        lua_getiuservalue(L, idx, LEV_UV_EXTRA);
        int kids = lua_gettop(L);
        int n = (int)lua_rawlen(L, kids);
        lua_createtable(L, n, 0);
        for (int i = 1; i <= n; i++) {
            lua_rawgeti(L, kids, i);
            int got = push_values(L, -1, lsim_test_awaitable(L, -1), 1);
            if (got == 0)
                lua_pushnil(L);
            lua_rawseti(L, kids + 1, i);
            lua_pop(L, 1);
        }
        lua_remove(L, kids);
        return 1;
    }
    case LEV_ANY: { /* the deciding child's value, then its index */
        int index = kb_event_cond_index(e->ev) + 1;
        if (index <= 0) { /* any_of{} */
            lua_pushnil(L);
            if (first)
                return 1;
            lua_pushnil(L);
            return 2;
        }
        lua_getiuservalue(L, idx, LEV_UV_EXTRA);
        lua_rawgeti(L, -1, index);
        int got = push_values(L, -1, lsim_test_awaitable(L, -1), 1);
        if (got == 0)
            lua_pushnil(L);
        lua_replace(L, -3);
        lua_pop(L, 1);
        if (first)
            return 1;
        lua_pushinteger(L, index);
        return 2;
    }
    }
    return 0;
}

/* Pushes the failure reason of an awaitable that failed. */
static void push_reason(lua_State *L, int idx, const levent *e)
{
    luaL_checkstack(L, 3, "event failure");
    idx = lua_absindex(L, idx);
    if (e->kind == LEV_ALL || e->kind == LEV_ANY) { /* the failing child's reason */
        lua_getiuservalue(L, idx, LEV_UV_EXTRA);
        lua_rawgeti(L, -1, kb_event_cond_index(e->ev) + 1);
        push_reason(L, -1, lsim_test_awaitable(L, -1));
        lua_replace(L, -3);
        lua_pop(L, 1);
        return;
    }
    lua_getiuservalue(L, idx, LEV_UV_VALUE);
}

/* Returns the outcome of the processed awaitable at index 1. */
static int finish_wait(lua_State *L, levent *e, bool ok)
{
    if (ok)
        return push_values(L, 1, e, 0);
    push_reason(L, 1, e);
    return lua_error(L);
}

static int wait_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    lproc *p = (lproc *)ctx;
    LSIM_INTERRUPTED(L, p);
    return finish_wait(L, lsim_test_awaitable(L, 1), p->waiter.ok);
}

int lsim_wait_as(lua_State *L, const char *call, const char *why)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_settop(L, 1);
    if (e->ev->state == KB_EVENT_PROCESSED)
        return finish_wait(L, e, e->ev->ok);
    lproc *p = lsim_current(L, e->S, call);
    if (!p)
        return lsim_would_block(L, call, why);
    lsim_prepare_block(L, p, call);
    kb_event_wait(e->ev, &p->waiter);
    return lsim_block_as(L, p, wait_k, LSIM_BLOCK_WAIT);
}

int lsim_event_wait(lua_State *L) { return lsim_wait_as(L, "ev:wait()", "the event has not happened yet"); }

int lsim_event_triggered(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_pushboolean(L, e->ev->state != KB_EVENT_PENDING);
    return 1;
}

int lsim_event_processed(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_pushboolean(L, e->ev->state == KB_EVENT_PROCESSED);
    return 1;
}

/* true / false once triggered, nil while pending. */
int lsim_event_ok(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    if (e->ev->state == KB_EVENT_PENDING)
        lua_pushnil(L);
    else
        lua_pushboolean(L, e->ev->ok);
    return 1;
}

/* ---- plain events ---- */

static levent *check_plain(lua_State *L, const char *call)
{
    levent *e = lsim_check_awaitable(L, 1);
    if (e->kind != LEV_PLAIN)
        luaL_error(L, "%s: only events made by s:event() can be triggered by hand", call);
    if (e->ev->state != KB_EVENT_PENDING) {
        char what[160];
        kb_event_describe(e->ev, what, sizeof what);
        luaL_error(L, "%s: %s was already triggered", call, what);
    }
    return e;
}

static int ev_succeed(lua_State *L)
{
    levent *e = check_plain(L, "ev:succeed()");
    lua_settop(L, 2);
    lua_setiuservalue(L, 1, LEV_UV_VALUE);
    kb_event_succeed(e->ev, KB_ITEM_NONE);
    return 0;
}

static int ev_fail(lua_State *L)
{
    levent *e = check_plain(L, "ev:fail()");
    lua_settop(L, 2);
    if (lua_isnil(L, 2)) {
        char what[200];
        kb_event_label(e->ev, what, sizeof what);
        lua_pushfstring(L, "%s failed", what);
        lua_replace(L, 2);
    }
    lua_getiuservalue(L, 1, LEV_UV_SIM);
    lsim_keep_failure(L, 3, e->ev, 2);
    lua_settop(L, 2);
    lua_setiuservalue(L, 1, LEV_UV_VALUE);
    kb_event_fail(e->ev, KB_ITEM_NONE);
    return 0;
}

/* Non-blocking: the value of a triggered event (processed or not, as
 * SimPy's ev.value); raises its reason if it failed, and an error while it
 * is pending. */
int lsim_event_value(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_settop(L, 1);
    if (e->ev->state == KB_EVENT_PENDING) {
        char what[200];
        kb_event_label(e->ev, what, sizeof what);
        return luaL_error(L, "ev:value(): %s has not been triggered yet (it has no value)", what);
    }
    return finish_wait(L, e, e->ev->ok);
}

int lsim_event_reason(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_settop(L, 1);
    push_reason(L, 1, e);
    return 1;
}

int lsim_event_id(lua_State *L)
{
    levent *e = lsim_check_awaitable(L, 1);
    lua_pushinteger(L, (lua_Integer)e->ev->id);
    return 1;
}

static int ev_tostring(lua_State *L)
{
    levent *e = luaL_checkudata(L, 1, LEVENT_MT);
    if (!e->ev || !e->S->sim) {
        lua_pushliteral(L, "event (simulation closed)");
        return 1;
    }
    char what[200];
    lua_getiuservalue(L, 1, LEV_UV_VALUE);
    if (e->kind == LEV_TIMEOUT && !lua_isnil(L, -1)) { /* what SimPy's Timeout(delay, value=v) says */
        static const char *const states[] = {"pending", "triggered", "processed"};
        char delay[KB_TIME_STRLEN];
        kb_event_label(e->ev, what, sizeof what);
        const char *v = lsim_safe_tostring(L, -1);
        lua_pushfstring(L, "%s (%s, value %s%s%s, %s)", what, kb_time_format(e->ev->delay, delay),
                        lua_type(L, -2) == LUA_TSTRING ? "'" : "", v,
                        lua_type(L, -2) == LUA_TSTRING ? "'" : "", states[e->ev->state]);
        return 1;
    }
    kb_event_describe(e->ev, what, sizeof what); /* a timeout: "timeout #4 (5.000 ns, triggered)" */
    lua_pushstring(L, what);
    return 1;
}

static int ev_gc(lua_State *L)
{
    lsim_release_event(luaL_checkudata(L, 1, LEVENT_MT));
    return 0;
}

int lsim_event_new(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    const char *name = lbind_optstr(L, 2, "s:event", "name", NULL);
    kb_event *ev = kb_event_new(S->sim);
    if (name)
        kb_event_set_name(ev, name);
    lsim_push_event(L, 1, S, ev, LEV_PLAIN);
    return 1;
}

int lsim_timeout(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    kb_time d = lsim_check_delay(L, S, 2, "s:timeout(ns)");
    lua_settop(L, 3);
    lsim_push_event(L, 1, S, kb_event_timeout(S->sim, d, KB_ITEM_NONE), LEV_TIMEOUT);
    lua_pushvalue(L, 3);
    lua_setiuservalue(L, -2, LEV_UV_VALUE);
    return 1;
}

/* ---- conditions ---- */

static int make_condition(lua_State *L, bool any)
{
    const char *call = any ? "s:any_of{...}" : "s:all_of{...}";
    lsim *S = lsim_check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_Integer n = luaL_len(L, 2);
    kb_event **evs = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *evs, 0);
    lua_createtable(L, (int)n, 0);
    int kids = lua_gettop(L);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 2, i);
        levent *c = lsim_test_awaitable(L, -1);
        if (!c)
            return luaL_error(L, "%s: element %I is a %s, not an event, process or request", call, i,
                              luaL_typename(L, -1));
        if (c->S != S)
            return luaL_error(L, "%s: element %I belongs to another simulation", call, i);
        evs[i - 1] = c->ev;
        lua_rawseti(L, kids, i);
    }
    kb_event *ev = any ? kb_event_any_of(S->sim, evs, (size_t)n)
                       : kb_event_all_of(S->sim, evs, (size_t)n);
    lsim_push_event(L, 1, S, ev, any ? LEV_ANY : LEV_ALL);
    lua_pushvalue(L, kids);
    lua_setiuservalue(L, -2, LEV_UV_EXTRA);
    return 1;
}

int lsim_all_of(lua_State *L) { return make_condition(L, false); }

int lsim_any_of(lua_State *L) { return make_condition(L, true); }

void lsim_open_event(lua_State *L)
{
    static const luaL_Reg methods[] = {{"wait", lsim_event_wait},
                                       {"succeed", ev_succeed},
                                       {"fail", ev_fail},
                                       {"value", lsim_event_value},
                                       {"triggered", lsim_event_triggered},
                                       {"processed", lsim_event_processed},
                                       {"ok", lsim_event_ok},
                                       {"id", lsim_event_id},
                                       {"add_callback", lsim_add_callback},
                                       {"defuse", lsim_defuse},
                                       {"defused", lsim_defused},
                                       {NULL, NULL}};
    static const luaL_Reg meta[] = {{"__gc", ev_gc}, {"__tostring", ev_tostring}, {NULL, NULL}};
    lsim_new_meta(L, LEVENT_MT, methods, meta);
}

/* ---- failures nothing took ---- */

void lsim_keep_failure(lua_State *L, int sim_idx, kb_event *ev, int reason_idx)
{
    reason_idx = lua_absindex(L, reason_idx);
    lua_getiuservalue(L, sim_idx, LSIM_UV_FAILURES);
    lua_pushvalue(L, reason_idx);
    lua_rawsetp(L, -2, ev);
    lua_pop(L, 1);
}

void lsim_push_error(lua_State *L, lsim *S, int msg_idx, const char *process, const char *text)
{
    msg_idx = lua_absindex(L, msg_idx);
    lua_createtable(L, 0, 5);
    lua_pushvalue(L, msg_idx);
    lua_setfield(L, -2, "message");
    if (process) {
        lua_pushstring(L, process);
        lua_setfield(L, -2, "process");
    }
    lbind_push_time(L, kb_sim_now(S->sim));
    lua_setfield(L, -2, "time_ns");
    lua_pushstring(L, text);
    lua_setfield(L, -2, "text");
    luaL_setmetatable(L, LERROR_MT);
}

static int tostring_value(lua_State *L)
{
    luaL_tolstring(L, 1, NULL);
    return 1;
}

/* The text of the value at idx (its __tostring may raise: then its type). */
const char *lsim_safe_tostring(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, tostring_value);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_isstring(L, -1)) {
        lua_pop(L, 1);
        lua_pushstring(L, luaL_typename(L, idx));
    }
    return lua_tostring(L, -1);
}

void lsim_unhandled(void *ctx, kb_event *ev)
{
    lsim *S = ctx;
    lua_State *L = S->L; /* hooks run inside s:run / s:step */
    char label[200], now[KB_TIME_STRLEN];
    kb_event_label(ev, label, sizeof label);
    kb_time_format(kb_sim_now(S->sim), now);
    if (!L || !lua_checkstack(L, 8)) {
        kb_sim_fail(S->sim, "%s failed at t=%s and nothing waited on it", label, now);
        return;
    }
    /* A condition's reason is the one of the member whose failure it took. */
    kb_event *from = ev;
    for (kb_event *c; (c = kb_event_cond_failed_child(from)) != NULL;)
        from = c;
    int top = lua_gettop(L);
    lua_getiuservalue(L, S->sim_idx, LSIM_UV_FAILURES);
    lua_rawgetp(L, -1, from);
    int reason = lua_gettop(L);
    if (lua_getmetatable(L, reason)) {
        luaL_getmetatable(L, LERROR_MT);
        bool is_error = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (is_error) { /* a process's error object: raised as it is */
            lsim_set_error(L, S, reason);
            kb_sim_fail(S->sim, "%s failed", label);
            lua_settop(L, top);
            return;
        }
    }
    const char *why = lsim_safe_tostring(L, reason);
    char *text = kb_asprintf("%s failed at t=%s and nothing waited on it: %s", label, now, why);
    lsim_push_error(L, S, reason, NULL, text);
    free(text);
    lsim_set_error(L, S, -1);
    kb_sim_fail(S->sim, "%s failed", label);
    lua_settop(L, top);
}
