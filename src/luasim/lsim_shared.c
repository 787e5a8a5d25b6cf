/* Lua containers, priority and filter stores, priority and preemptive
 * resources: the shared objects of core/shared.h.
 *
 * Every operation is a request (lsim_request.c); a blocking call is its
 * request waited on (SimPy's `yield c.get(n)`), so interrupts, conditions
 * and <close> work alike. Items of the stores stay on the Lua side: the
 * core carries integers (an integer item is its own ref 2v + 1, any other
 * value is kept in the object's items table under key k, ref 2k).
 *
 * Two hooks call back into Lua from the core: a filter store's filter
 * (each get's function on each item) and a preemptive resource's
 * preemption (an interrupt of the victim's process). They run on the
 * state of the binding that called the core (`Lcall`), or inside a run on
 * the run's state. */
#include "luasim/lsim.h"

#include "core/container.h"
#include "core/presource.h"
#include "core/pstore.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/lsim_shared.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lshared *lsh_check(lua_State *L, const char *mt, const char *call, const char *what)
{
    lshared *s = lbind_testudata(L, 1, mt);
    if (!s)
        lbind_bad_self(L, call, what);
    lsim_check_open(L, s->S);
    return s;
}

/* The object's type from its userdata (any of the four). */
lshared *lsh_any(lua_State *L, int idx)
{
    static const char *const mts[] = {LCONT_MT, LPSTORE_MT, LFSTORE_MT, LPRES_MT};
    for (size_t i = 0; i < sizeof mts / sizeof *mts; i++) {
        lshared *s = lbind_testudata(L, idx, mts[i]);
        if (s)
            return s;
    }
    return NULL;
}

/* ---- items ---- */

#define INLINE_MAX (LUA_MAXINTEGER / 2)

static kb_item keep(lua_State *L, lshared *s, int obj_idx, int v_idx)
{
    if (lua_isinteger(L, v_idx)) {
        lua_Integer v = lua_tointeger(L, v_idx);
        if (v >= -INLINE_MAX && v <= INLINE_MAX)
            return (kb_item){.i = 2 * v + 1};
    }
    lua_Integer key = s->nfree ? s->free_keys[--s->nfree] : ++s->next_key;
    lua_getiuservalue(L, obj_idx, LSH_UV_ITEMS);
    lua_pushvalue(L, v_idx);
    lua_rawseti(L, -2, key);
    lua_pop(L, 1);
    return (kb_item){.i = 2 * key};
}

/* Pushes the item of ref without taking it (a filter looks at it). */
static void peek(lua_State *L, int obj_idx, kb_item ref)
{
    if (ref.i & 1) {
        lua_pushinteger(L, (ref.i - 1) / 2);
        return;
    }
    lua_getiuservalue(L, obj_idx, LSH_UV_ITEMS);
    lua_rawgeti(L, -1, ref.i / 2);
    lua_remove(L, -2);
}

void lsim_shared_take(lua_State *L, int obj_idx, kb_item ref)
{
    obj_idx = lua_absindex(L, obj_idx);
    lshared *s = lsh_any(L, obj_idx);
    if (!s || (!lbind_testudata(L, obj_idx, LPSTORE_MT) && !lbind_testudata(L, obj_idx, LFSTORE_MT))) {
        lua_pushnil(L); /* a container's get: SimPy's value is None */
        return;
    }
    peek(L, obj_idx, ref);
    if (!(ref.i & 1) && s->S) { /* forget it; its key goes back */
        lua_getiuservalue(L, obj_idx, LSH_UV_ITEMS);
        lua_pushnil(L);
        lua_rawseti(L, -2, ref.i / 2);
        lua_pop(L, 1);
        if (s->nfree == s->free_cap) {
            s->free_cap = s->free_cap ? 2 * s->free_cap : 16;
            s->free_keys = kb_xrealloc(s->free_keys, s->free_cap * sizeof *s->free_keys);
        }
        s->free_keys[s->nfree++] = ref.i / 2;
    }
}

void lsim_shared_drop(lua_State *L, int obj_idx, kb_item item)
{
    lsim_shared_take(L, obj_idx, item);
    lua_pop(L, 1);
}

/* ---- hooks into Lua ---- */

/* Where a hook runs: the calling binding's state, else the run's. */
lua_State *lsh_hook_state(lshared *s, int *sim_idx)
{
    if (s->Lcall) {
        *sim_idx = s->Lcall_sim;
        return s->Lcall;
    }
    *sim_idx = s->S->sim_idx;
    return s->S->L;
}

/* Calls the core with hooks pointed at L (the object at 1; its sim
 * userdata pushed at the returned index). */
int lsh_enter(lua_State *L, lshared *s)
{
    lua_getiuservalue(L, 1, LSH_UV_SIM);
    s->Lcall = L;
    s->Lcall_sim = lua_gettop(L);
    return s->Lcall_sim;
}

void lsh_leave(lshared *s) { s->Lcall = NULL; }

static int call_filter(lua_State *L)
{
    lua_call(L, 1, 1);
    return 1;
}

static bool match(void *ctx, kb_request *r, kb_item item)
{
    if (!r->qw.item.u) /* no filter: any item */
        return true;
    lshared *s = ctx;
    int sim_idx;
    lua_State *L = lsh_hook_state(s, &sim_idx);
    lreq *q = KB_CONTAINER_OF(r, lreq, req);
    if (!L || !lua_checkstack(L, 8)) {
        kb_sim_fail(s->S->sim, "a filter store's filter could not run (no Lua stack)");
        return false;
    }
    int top = lua_gettop(L);
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    lua_rawgetp(L, -1, q); /* anchored while queued */
    int qi = lua_gettop(L);
    lua_pushcfunction(L, call_filter);
    lua_getiuservalue(L, qi, LREQ_UV_FILTER);
    lua_getiuservalue(L, qi, LEV_UV_EXTRA);
    peek(L, -1, item);
    lua_remove(L, -2);
    bool yes = false;
    if (lua_pcall(L, 2, 1, 0) == LUA_OK) {
        yes = lua_toboolean(L, -1);
    } else {
        char what[200];
        kb_event_label(r->ev, what, sizeof what);
        const char *msg = lua_tostring(L, -1);
        kb_sim_fail(s->S->sim, "the filter of %s raised an error: %s", what, msg ? msg : "(not a string)");
    }
    lua_settop(L, top);
    return yes;
}

/* ---- construction ---- */

lshared *lsh_push_new(lua_State *L, const char *mt)
{
    lshared *s = lua_newuserdatauv(L, sizeof *s, LSH_NUV);
    memset(s, 0, sizeof *s);
    s->S = lsim_check(L, 1);
    luaL_setmetatable(L, mt);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, LSH_UV_SIM);
    lua_newtable(L);
    lua_setiuservalue(L, -2, LSH_UV_ITEMS);
    return s;
}

/* A name for an object: given, or "<kind>#N". */
const char *lsh_name_of(lua_State *L, const char *given, const char *kind, char *buf, size_t n)
{
    if (given)
        return given;
    snprintf(buf, n, "%s#%d", kind, ++lsim_check(L, 1)->objects);
    return buf;
}

/* Options: (capacity[, name]) or {capacity =, name =}. *cap untouched when absent. */
const char *lsh_parse_cap(lua_State *L, const char *call, lua_Number *cap, bool integer)
{
    static const char *const known[] = {"capacity", "name", NULL};
    return lsh_parse_cap_of(L, call, cap, integer, known);
}

const char *lsh_parse_cap_of(lua_State *L, const char *call, lua_Number *cap, bool integer,
                             const char *const *known)
{
    const char *name = NULL;
    if (lua_istable(L, 2)) {
        lbind_check_keys(L, 2, call, NULL, known);
        if (lua_getfield(L, 2, "capacity") != LUA_TNIL)
            *cap = lua_tonumber(L, -1);
        if (integer && !lua_isnil(L, -1) && !lua_isinteger(L, -1))
            luaL_error(L, "%s: capacity must be an integer", call);
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "%s: capacity must be a number", call);
        if (lua_getfield(L, 2, "name") != LUA_TNIL)
            name = lbind_tostr(L, -1, call, "field 'name'");
        return name;
    }
    if (!lua_isnoneornil(L, 2))
        *cap = integer ? (lua_Number)luaL_checkinteger(L, 2) : luaL_checknumber(L, 2);
    return lbind_optstr(L, 3, call, "name", NULL);
}

int lsim_container_new(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    const char *call = "s:container()";
    lua_Number cap = HUGE_VAL, init = 0;
    const char *name = NULL;
    if (lua_istable(L, 2)) {
        static const char *const known[] = {"capacity", "init", "name", NULL};
        name = lsh_parse_cap_of(L, call, &cap, false, known);
        if (lua_getfield(L, 2, "init") != LUA_TNIL) {
            if (lua_type(L, -1) != LUA_TNUMBER)
                return luaL_error(L, "%s: init must be a number", call);
            init = lua_tonumber(L, -1);
        }
    } else {
        if (!lua_isnoneornil(L, 2))
            cap = luaL_checknumber(L, 2);
        if (!lua_isnoneornil(L, 3))
            init = luaL_checknumber(L, 3);
        name = lbind_optstr(L, 4, call, "name", NULL);
    }
    if (!(cap > 0))
        return luaL_error(L, "%s: capacity must be > 0 (got %f)", call, cap);
    if (!(init >= 0))
        return luaL_error(L, "%s: init must be >= 0 (got %f)", call, init);
    if (init > cap)
        return luaL_error(L, "%s: init (%f) must be <= capacity (%f)", call, init, cap);
    char buf[32];
    name = lsh_name_of(L, name, "container", buf, sizeof buf);
    lshared *s = lsh_push_new(L, LCONT_MT);
    s->sh = kb_container_new(S->sim, name, cap, init);
    return 1;
}

static int new_store(lua_State *L, bool filter)
{
    lsim *S = lsim_check(L, 1);
    const char *call = filter ? "s:filter_store()" : "s:priority_store()";
    lua_Number cap = 0;
    const char *name = lsh_parse_cap(L, call, &cap, true);
    bool given = cap != 0 || (lua_istable(L, 2) ? false : !lua_isnoneornil(L, 2));
    if (given && cap < 1)
        return luaL_error(L, "%s: capacity must be >= 1 (got %I; omit it for an unbounded store)", call,
                          (lua_Integer)cap); /* an integer's value (lsh_parse_cap) */
    char buf[32];
    name = lsh_name_of(L, name, filter ? "filter_store" : "priority_store", buf, sizeof buf);
    lshared *s = lsh_push_new(L, filter ? LFSTORE_MT : LPSTORE_MT);
    s->sh = filter ? kb_pstore_new_filter(S->sim, name, (size_t)cap, match, s)
                   : kb_pstore_new_priority(S->sim, name, (size_t)cap);
    return 1;
}

int lsim_priority_store_new(lua_State *L) { return new_store(L, false); }
int lsim_filter_store_new(lua_State *L) { return new_store(L, true); }

/* ---- requests ---- */

/* A new request of `kind` on the object at 1, pushed; the sim userdata
 * at sim_idx. */
lreq *lsh_new_request(lua_State *L, lshared *s, int sim_idx, levent_kind kind)
{
    return lsim_request_new(L, s->S, sim_idx, 1, kind);
}

static double check_amount(lua_State *L, int idx, const char *call)
{
    lua_Number a = luaL_checknumber(L, idx);
    if (!(a > 0))
        luaL_error(L, "%s: amount must be > 0 (got %f)", call, a);
    return a;
}

double lsh_opt_priority(lua_State *L, int idx, const char *call)
{
    if (lua_isnoneornil(L, idx))
        return 0;
    if (lua_type(L, idx) != LUA_TNUMBER)
        luaL_error(L, "%s: priority must be a number (got %s)", call, luaL_typename(L, idx));
    lua_Number p = lua_tonumber(L, idx);
    if (p != p)
        luaL_error(L, "%s: priority must not be NaN", call);
    return p;
}

/* Makes the request of a call (`put` true: a put) and leaves it on the
 * top; args from index 2. It is anchored before the core sees it (a
 * filter looks it up). */
static lreq *make(lua_State *L, lshared *s, const char *mt, bool put, const char *call)
{
    int nargs = lua_gettop(L);
    bool container = !strcmp(mt, LCONT_MT), pstore = !strcmp(mt, LPSTORE_MT);
    double amount = 0, key = 0;
    bool filter = false;
    if (container) {
        amount = check_amount(L, 2, call);
    } else if (put) {
        if (nargs < 2)
            luaL_checkany(L, 2);
        if (pstore) {
            if (lua_isnoneornil(L, 3) && lua_type(L, 2) != LUA_TNUMBER)
                luaL_error(L, "%s: a priority store orders its items by number: give a number item or "
                              "a priority (ps:put(item, priority))", call);
            key = lua_isnoneornil(L, 3) ? lua_tonumber(L, 2) : lsh_opt_priority(L, 3, call);
            if (key != key)
                luaL_error(L, "%s: priority must not be NaN", call);
        }
    } else {
        filter = !strcmp(mt, LFSTORE_MT) && !lua_isnoneornil(L, 2);
        if (filter)
            luaL_checktype(L, 2, LUA_TFUNCTION);
    }
    int sim_idx = lsh_enter(L, s);
    lreq *q = lsh_new_request(L, s, sim_idx, put ? LEV_SH_PUT : LEV_SH_GET);
    int qi = lua_gettop(L);
    lsim_request_anchor(L, q, qi, sim_idx);
    if (container) {
        if (put)
            kb_container_put(s->sh, &q->req, amount);
        else
            kb_container_get(s->sh, &q->req, amount);
    } else if (put) {
        kb_pstore_put(s->sh, &q->req, keep(L, s, 1, 2), key);
    } else {
        if (filter) {
            lua_pushvalue(L, 2);
            lua_setiuservalue(L, qi, LREQ_UV_FILTER);
        }
        q->req.qw.item.u = filter; /* match() reads it */
        kb_pstore_get(s->sh, &q->req);
    }
    lsh_leave(s);
    lsim_request_took(L, q, qi, sim_idx);
    lua_settop(L, qi);
    return q;
}

/* A blocking call: its request waited on (SimPy's `yield obj.put(...)`).
 * Outside a process it completes at once or raises, leaving nothing
 * queued. */
static int blocking(lua_State *L, const char *mt, const char *what, bool put, const char *call,
                    const char *why)
{
    lshared *s = lsh_check(L, mt, call, what);
    lreq *q = make(L, s, mt, put, call);
    int qi = lua_gettop(L);
    lproc *p = lsim_current(L, s->S, call);
    if (p) {
        lua_copy(L, qi, 1);
        lua_settop(L, 1);
        return lsim_wait_as(L, call, why);
    }
    if (q->hdr.ev->state == KB_EVENT_PENDING) {
        lsim_request_cancel(L, q, qi);
        return lsim_would_block(L, call, why);
    }
    if (put || !strcmp(mt, LCONT_MT))
        return 0;
    lsim_shared_take(L, 1, q->req.ev->value);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, qi, LEV_UV_VALUE);
    q->item_taken = true;
    return 1;
}

static int event_of(lua_State *L, const char *mt, const char *what, bool put, const char *call)
{
    lshared *s = lsh_check(L, mt, call, what);
    make(L, s, mt, put, call);
    return 1;
}

static void push_amount(lua_State *L, double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnumber(L, v);
}

int lsh_queue_len(lua_State *L, const char *mt, const char *what, const char *call, bool puts)
{
    lshared *s = lsh_check(L, mt, call, what);
    lua_pushinteger(L, (lua_Integer)kb_list_count(puts ? &s->sh->putq : &s->sh->getq));
    return 1;
}

int lsh_push_name(lua_State *L, lshared *s)
{
    lua_pushstring(L, s->sh->name);
    return 1;
}

/* ---- containers ---- */

#define C_ARGS LCONT_MT, "container"
static int c_put(lua_State *L) { return blocking(L, C_ARGS, true, "c:put()", "the container has no room for it"); }
static int c_get(lua_State *L) { return blocking(L, C_ARGS, false, "c:get()", "the container does not hold that much"); }
static int c_put_event(lua_State *L) { return event_of(L, C_ARGS, true, "c:put_event()"); }
static int c_get_event(lua_State *L) { return event_of(L, C_ARGS, false, "c:get_event()"); }
static int c_getters(lua_State *L) { return lsh_queue_len(L, C_ARGS, "c:getters()", false); }
static int c_putters(lua_State *L) { return lsh_queue_len(L, C_ARGS, "c:putters()", true); }
static int c_name(lua_State *L) { return lsh_push_name(L, lsh_check(L, C_ARGS, "c:name()")); }

static int c_level(lua_State *L)
{
    push_amount(L, kb_container_level(lsh_check(L, C_ARGS, "c:level()")->sh));
    return 1;
}

static int c_capacity(lua_State *L)
{
    double cap = kb_container_capacity(lsh_check(L, C_ARGS, "c:capacity()")->sh);
    if (isinf(cap))
        lua_pushnil(L);
    else
        push_amount(L, cap);
    return 1;
}

/* ---- priority and filter stores ---- */

static int store_count(lua_State *L, const char *mt, const char *what, const char *call)
{
    lua_pushinteger(L, (lua_Integer)kb_pstore_count(lsh_check(L, mt, call, what)->sh));
    return 1;
}

static int store_capacity(lua_State *L, const char *mt, const char *what, const char *call)
{
    size_t cap = kb_pstore_capacity(lsh_check(L, mt, call, what)->sh);
    if (cap)
        lua_pushinteger(L, (lua_Integer)cap);
    else
        lua_pushnil(L);
    return 1;
}

#define P_ARGS LPSTORE_MT, "priority store"
static int ps_put(lua_State *L) { return blocking(L, P_ARGS, true, "ps:put()", "the store is full"); }
static int ps_get(lua_State *L) { return blocking(L, P_ARGS, false, "ps:get()", "the store is empty"); }
static int ps_put_event(lua_State *L) { return event_of(L, P_ARGS, true, "ps:put_event()"); }
static int ps_get_event(lua_State *L) { return event_of(L, P_ARGS, false, "ps:get_event()"); }
static int ps_getters(lua_State *L) { return lsh_queue_len(L, P_ARGS, "ps:getters()", false); }
static int ps_putters(lua_State *L) { return lsh_queue_len(L, P_ARGS, "ps:putters()", true); }
static int ps_count(lua_State *L) { return store_count(L, P_ARGS, "ps:count()"); }
static int ps_capacity(lua_State *L) { return store_capacity(L, P_ARGS, "ps:capacity()"); }
static int ps_name(lua_State *L) { return lsh_push_name(L, lsh_check(L, P_ARGS, "ps:name()")); }

#define F_ARGS LFSTORE_MT, "filter store"
static int fs_put(lua_State *L) { return blocking(L, F_ARGS, true, "fs:put()", "the store is full"); }
static int fs_get(lua_State *L) { return blocking(L, F_ARGS, false, "fs:get()", "no item it accepts is in the store"); }
static int fs_put_event(lua_State *L) { return event_of(L, F_ARGS, true, "fs:put_event()"); }
static int fs_get_event(lua_State *L) { return event_of(L, F_ARGS, false, "fs:get_event()"); }
static int fs_getters(lua_State *L) { return lsh_queue_len(L, F_ARGS, "fs:getters()", false); }
static int fs_putters(lua_State *L) { return lsh_queue_len(L, F_ARGS, "fs:putters()", true); }
static int fs_count(lua_State *L) { return store_count(L, F_ARGS, "fs:count()"); }
static int fs_capacity(lua_State *L) { return store_capacity(L, F_ARGS, "fs:capacity()"); }
static int fs_name(lua_State *L) { return lsh_push_name(L, lsh_check(L, F_ARGS, "fs:name()")); }

/* ---- metatables ---- */

static int sh_tostring(lua_State *L)
{
    lshared *s = lsh_any(L, 1);
    if (!s)
        return luaL_typeerror(L, 1, "shared object");
    if (!s->S->sim) {
        lua_pushliteral(L, "shared object (simulation closed)");
        return 1;
    }
    char what[256];
    kb_shared_describe(s->sh, what, sizeof what);
    lua_pushstring(L, what);
    return 1;
}

static int sh_gc(lua_State *L)
{
    lshared *s = lsh_any(L, 1);
    if (s && s->S && s->S->sim && s->sh)
        kb_shared_close(s->sh);
    if (s) {
        s->S = NULL;
        free(s->free_keys);
        s->free_keys = NULL;
    }
    return 0;
}

void lsim_open_shared(lua_State *L)
{
    static const luaL_Reg meta[] = {{"__gc", sh_gc}, {"__tostring", sh_tostring}, {NULL, NULL}};
    static const luaL_Reg c_methods[] = {
        {"put", c_put}, {"get", c_get}, {"put_event", c_put_event}, {"get_event", c_get_event},
        {"level", c_level}, {"capacity", c_capacity}, {"name", c_name},
        {"getters", c_getters}, {"putters", c_putters}, {NULL, NULL}};
    lsim_new_meta(L, LCONT_MT, c_methods, meta);
    static const luaL_Reg ps_methods[] = {
        {"put", ps_put}, {"get", ps_get}, {"put_event", ps_put_event}, {"get_event", ps_get_event},
        {"count", ps_count}, {"capacity", ps_capacity}, {"name", ps_name},
        {"getters", ps_getters}, {"putters", ps_putters}, {NULL, NULL}};
    lsim_new_meta(L, LPSTORE_MT, ps_methods, meta);
    static const luaL_Reg fs_methods[] = {
        {"put", fs_put}, {"get", fs_get}, {"put_event", fs_put_event}, {"get_event", fs_get_event},
        {"count", fs_count}, {"capacity", fs_capacity}, {"name", fs_name},
        {"getters", fs_getters}, {"putters", fs_putters}, {NULL, NULL}};
    lsim_new_meta(L, LFSTORE_MT, fs_methods, meta);
    lsim_open_presource(L, meta);
}
