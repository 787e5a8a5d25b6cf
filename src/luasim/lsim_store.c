/* Lua stores and resources.
 *
 * A Lua store keeps its items on the Lua side and the C store carries only
 * integers that stand for them (an item's "ref", item_ref below), so FIFO
 * order, capacity, blocking and SimPy's order of completions are the
 * core's (core/store.h, core/resource.h). Where an item is kept, cheapest
 * first (docs/decisions.md, "Lua process fast path"):
 *   - an integer v with |v| < 2^62 is its own ref (2v + 1, odd): nothing
 *     is kept, and a get pushes it back (the same integer);
 *   - else, in the store's slot (a user value) when it is free: a store
 *     holding one item at a time moves each item with one user-value write
 *     and one read instead of four table operations;
 *   - else in the items table (another user value) under key k >= 1
 *     (ref 2k).
 * The slot and the table entries are cleared when their item is taken, so
 * what a store keeps alive is the same wherever an item went. */
#include "luasim/lsim.h"

#include "core/util.h"
#include "luasim/lbind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lstore {
    const void *tag; /* check_store's type tag (lbind_test_tagged) */
    kb_store *st;
    lsim *S;
    lua_Integer next_key;
    /* keys given back by gets, reused first so that the items table keeps
     * small integer keys (its array part) however many items pass */
    lua_Integer *free_keys;
    size_t nfree, free_cap;
    bool slot_used; /* an item is in the slot (ref SLOT_REF) */
} lstore;

typedef struct lresource {
    kb_resource *r;
    lsim *S;
} lresource;

enum { LSTORE_UV_ITEMS = 1, LSTORE_UV_SIM, LSTORE_UV_SLOT, LSTORE_NUV = LSTORE_UV_SLOT };
enum { LRES_UV_SIM = 1, LRES_NUV = LRES_UV_SIM };

/* Optional capacity and name: (capacity, name) or {capacity=, name=}.
 * Returns whether a capacity was given. The name stays anchored on the
 * stack. */
static bool parse_opts(lua_State *L, const char *call, lua_Integer *cap, const char **name)
{
    bool has_cap = false;
    if (lua_istable(L, 2)) {
        static const char *const known[] = {"capacity", "name", NULL};
        lbind_check_keys(L, 2, call, NULL, known);
        if (lua_getfield(L, 2, "capacity") != LUA_TNIL) {
            if (!lua_isinteger(L, -1))
                luaL_error(L, "%s: capacity must be an integer", call);
            *cap = lua_tointeger(L, -1);
            has_cap = true;
        }
        if (lua_getfield(L, 2, "name") != LUA_TNIL)
            *name = lbind_tostr(L, -1, call, "field 'name'");
        return has_cap;
    }
    if (!lua_isnoneornil(L, 2)) {
        *cap = luaL_checkinteger(L, 2);
        has_cap = true;
    }
    *name = lbind_optstr(L, 3, call, "name", *name);
    return has_cap;
}

/* ---- stores ---- */

static const char LSTORE_TAG; /* its address tags store userdata */

static lstore *check_store(lua_State *L)
{
    lstore *s = lbind_test_tagged(L, 1, &LSTORE_TAG, sizeof *s);
    if (!s)
        s = lbind_checkudata(L, 1, LSTORE_MT);
    lsim_check_open(L, s->S);
    return s;
}

int lsim_store_new(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lua_Integer cap = 0;
    const char *name = NULL;
    if (parse_opts(L, "s:store()", &cap, &name) && cap < 1)
        return luaL_error(L, "s:store(): capacity must be >= 1 (got %I; omit it for an unbounded store)",
                          cap);
    lstore *s = lua_newuserdatauv(L, sizeof *s, LSTORE_NUV);
    memset(s, 0, sizeof *s);
    s->tag = &LSTORE_TAG;
    s->S = S;
    char fallback[32];
    if (!name) {
        snprintf(fallback, sizeof fallback, "store#%d", (int)(++S->objects));
        name = fallback;
    }
    s->st = kb_store_new(S->sim, name, (size_t)cap);
    luaL_setmetatable(L, LSTORE_MT);
    lua_newtable(L);
    lua_setiuservalue(L, -2, LSTORE_UV_ITEMS);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, LSTORE_UV_SIM);
    return 1;
}

static lua_Integer new_key(lstore *s)
{
    return s->nfree ? s->free_keys[--s->nfree] : ++s->next_key;
}

static void free_key(lstore *s, lua_Integer key)
{
    if (s->nfree == s->free_cap) {
        s->free_cap = s->free_cap ? 2 * s->free_cap : 16;
        s->free_keys = kb_xrealloc(s->free_keys, s->free_cap * sizeof *s->free_keys);
    }
    s->free_keys[s->nfree++] = key;
}

/* Refs (the header comment): odd for inline integers, even for the rest;
 * 0 (an even ref, table key 0) is also what a waiter that was never
 * served holds (KB_ITEM_NONE). */
#define INLINE_MAX (LUA_MAXINTEGER / 2) /* |v| < 2^62: 2v + 1 cannot overflow */
#define SLOT_REF (-2)

/* Keeps the value at index 2, which must be the stack top, as a new item
 * of the store at index 1; returns its ref. What is left above index 1
 * afterwards varies (callers return or yield nothing from it). */
static lua_Integer keep_item(lua_State *L, lstore *s)
{
    if (lua_isinteger(L, 2)) {
        lua_Integer v = lua_tointeger(L, 2);
        if (v >= -INLINE_MAX && v <= INLINE_MAX)
            return 2 * v + 1;
    }
    if (!s->slot_used) {
        s->slot_used = true;
        lua_setiuservalue(L, 1, LSTORE_UV_SLOT); /* pops the value */
        return SLOT_REF;
    }
    lua_Integer key = new_key(s);
    lua_getiuservalue(L, 1, LSTORE_UV_ITEMS);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, key);
    return 2 * key;
}

/* keep_item for the value on the stack top, the store at st_idx; pops it. */
static lua_Integer keep_item_at(lua_State *L, lstore *s, int st_idx)
{
    if (lua_isinteger(L, -1)) {
        lua_Integer v = lua_tointeger(L, -1);
        if (v >= -INLINE_MAX && v <= INLINE_MAX) {
            lua_pop(L, 1);
            return 2 * v + 1;
        }
    }
    if (!s->slot_used) {
        s->slot_used = true;
        lua_setiuservalue(L, st_idx, LSTORE_UV_SLOT);
        return SLOT_REF;
    }
    lua_Integer key = new_key(s);
    lua_getiuservalue(L, st_idx, LSTORE_UV_ITEMS);
    lua_rotate(L, -2, 1);
    lua_rawseti(L, -2, key);
    lua_pop(L, 1);
    return 2 * key;
}

/* Moves the item of ref out of the store (its userdata at st_idx) to the
 * stack top. */
static inline void take_at(lua_State *L, lstore *s, int st_idx, lua_Integer ref)
{
    if (ref & 1) {
        lua_pushinteger(L, (ref - 1) / 2);
        return;
    }
    if (ref == SLOT_REF) {
        s->slot_used = false;
        lua_getiuservalue(L, st_idx, LSTORE_UV_SLOT);
        lua_pushnil(L);
        lua_setiuservalue(L, st_idx, LSTORE_UV_SLOT);
        return;
    }
    lua_Integer key = ref / 2;
    free_key(s, key);
    lua_getiuservalue(L, st_idx, LSTORE_UV_ITEMS);
    lua_rawgeti(L, -1, key);
    lua_pushnil(L);
    lua_rawseti(L, -3, key);
}

/* The store at 1 (every blocking call's). */
static void take_item(lua_State *L, lstore *s, lua_Integer ref) { take_at(L, s, 1, ref); }

void lsim_store_take(lua_State *L, int st_idx, lua_Integer ref)
{
    st_idx = lua_absindex(L, st_idx);
    lstore *s = lua_touserdata(L, st_idx);
    if (!s->S && !(ref & 1)) { /* collected with its simulation: nothing is kept */
        lua_pushnil(L);
        return;
    }
    take_at(L, s, st_idx, ref);
    if (!(ref & 1) && ref != SLOT_REF)
        lua_remove(L, -2); /* the items table */
}

static int put_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    LSIM_INTERRUPTED(L, (lproc *)ctx);
    return 0;
}

static int st_put(lua_State *L)
{
    lstore *s = check_store(L);
    int top = lua_gettop(L);
    if (top < 2)
        luaL_checkany(L, 2); /* raises its usual message */
    lproc *p = lsim_current(L, s->S, "st:put()");
    if (p)
        lsim_prepare_block(L, p, "st:put()");
    if (top > 2) /* extra arguments are ignored: the item becomes the top */
        lua_settop(L, 2);
    kb_item item = {.i = keep_item(L, s)};
    if (kb_store_put(s->st, item, p ? &p->waiter : NULL))
        return 0;
    if (!p) {
        take_item(L, s, item.i);
        return lsim_would_block(L, "st:put()", kb_list_empty(&s->st->putters) ? "the store is full"
                                                   : "puts made earlier are waiting for room");
    }
    return lsim_block_as(L, p, put_k, LSIM_BLOCK_PUT);
}

static int get_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    lproc *p = (lproc *)ctx;
    LSIM_INTERRUPTED(L, p);
    take_item(L, p->blocked_on, p->waiter.item.i);
    return 1;
}

static int st_get(lua_State *L)
{
    lstore *s = check_store(L);
    kb_item item;
    lproc *p = lsim_current(L, s->S, "st:get()");
    if (p)
        lsim_prepare_block(L, p, "st:get()");
    if (kb_store_get(s->st, &item, p ? &p->waiter : NULL)) {
        take_item(L, s, item.i);
        return 1;
    }
    if (!p)
        return lsim_would_block(L, "st:get()", kb_store_count(s->st) == 0 ? "the store is empty"
                                                   : "gets made earlier are waiting for its items");
    p->blocked_on = s;
    return lsim_block_as(L, p, get_k, LSIM_BLOCK_GET);
}

/* ---- requests as events (lsim_request.c) ---- */

/* st:put_event(v): a put request, not waited on. */
static int st_put_event(lua_State *L)
{
    lstore *s = check_store(L);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    lua_getiuservalue(L, 1, LSTORE_UV_SIM); /* 3 */
    lreq *q = lsim_request_new(L, s->S, 3, 1, LEV_PUT); /* 4 */
    lua_pushvalue(L, 2);
    lua_Integer ref = keep_item_at(L, s, 1);
    lua_settop(L, 4);
    kb_store_put_request(s->st, &q->req, (kb_item){.i = ref});
    lsim_request_started(L, q, 4, 3);
    return 1;
}

/* st:get_event(): a get request, not waited on; its value is the item. */
static int st_get_event(lua_State *L)
{
    lstore *s = check_store(L);
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, LSTORE_UV_SIM); /* 2 */
    lreq *q = lsim_request_new(L, s->S, 2, 1, LEV_GET); /* 3 */
    kb_store_get_request(s->st, &q->req);
    lsim_request_started(L, q, 3, 2);
    return 1;
}

static int st_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_store_count(check_store(L)->st));
    return 1;
}

static int st_capacity(lua_State *L)
{
    lstore *s = check_store(L);
    if (s->st->capacity)
        lua_pushinteger(L, (lua_Integer)s->st->capacity);
    else
        lua_pushnil(L);
    return 1;
}

/* Requests waiting (blocking calls and requests alike): SimPy's
 * len(st.get_queue) and len(st.put_queue). */
static int st_getters(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_list_count(&check_store(L)->st->getters));
    return 1;
}

static int st_putters(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_list_count(&check_store(L)->st->putters));
    return 1;
}

static int st_name(lua_State *L)
{
    lua_pushstring(L, check_store(L)->st->name);
    return 1;
}

static int st_tostring(lua_State *L)
{
    lstore *s = lbind_checkudata(L, 1, LSTORE_MT);
    if (!s->S->sim) {
        lua_pushliteral(L, "store (simulation closed)");
        return 1;
    }
    char what[256];
    kb_store_describe(s->st, what, sizeof what);
    lua_pushstring(L, what);
    return 1;
}

static int st_gc(lua_State *L)
{
    lstore *s = lbind_checkudata(L, 1, LSTORE_MT);
    if (s->S && s->S->sim) /* else the simulation freed it */
        kb_store_close(s->st);
    s->S = NULL;
    free(s->free_keys);
    s->free_keys = NULL;
    return 0;
}

/* ---- resources ---- */

static lresource *check_res(lua_State *L)
{
    lresource *r = lbind_checkudata(L, 1, LRES_MT);
    lsim_check_open(L, r->S);
    return r;
}

int lsim_resource_new(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lua_Integer cap = 1;
    const char *name = NULL;
    parse_opts(L, "s:resource()", &cap, &name);
    if (cap < 1)
        return luaL_error(L, "s:resource(): capacity must be >= 1 (got %I)", cap);
    lresource *r = lua_newuserdatauv(L, sizeof *r, LRES_NUV);
    memset(r, 0, sizeof *r);
    r->S = S;
    char fallback[32];
    if (!name) {
        snprintf(fallback, sizeof fallback, "resource#%d", (int)(++S->objects));
        name = fallback;
    }
    r->r = kb_resource_new(S->sim, name, (size_t)cap);
    luaL_setmetatable(L, LRES_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, LRES_UV_SIM);
    return 1;
}

static int acquire_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    LSIM_INTERRUPTED(L, (lproc *)ctx);
    return 0;
}

static int r_acquire(lua_State *L)
{
    lresource *r = check_res(L);
    lua_settop(L, 1);
    lproc *p = lsim_current(L, r->S, "r:acquire()");
    if (p)
        lsim_prepare_block(L, p, "r:acquire()");
    if (kb_resource_acquire(r->r, p ? &p->waiter : NULL))
        return 0;
    if (!p)
        return lsim_would_block(L, "r:acquire()", r->r->in_use >= r->r->capacity
                                                       ? "every slot is in use"
                                                       : "requests made earlier are waiting for a slot");
    return lsim_block_as(L, p, acquire_k, LSIM_BLOCK_ACQUIRE);
}

/* r:request(): a request for a slot, not waited on (lsim_request.c). */
static int r_request(lua_State *L)
{
    lresource *r = check_res(L);
    lua_settop(L, 1);
    lua_getiuservalue(L, 1, LRES_UV_SIM); /* 2 */
    lreq *q = lsim_request_new(L, r->S, 2, 1, LEV_ACQUIRE); /* 3 */
    kb_resource_request(r->r, &q->req);
    lsim_request_started(L, q, 3, 2);
    return 1;
}

/* r:release(): a slot taken by r:acquire(); r:release(req): req's. */
static int r_release(lua_State *L)
{
    lresource *r = check_res(L);
    if (!lua_isnoneornil(L, 2)) {
        lreq *q = lsim_check_request(L, 2, "r:release(req)");
        if (q->req.qw.target != r->r)
            return luaL_error(L, "r:release(req): the request is not one of resource '%s'", r->r->name);
        return lsim_request_release(L, q, 2, "r:release(req)");
    }
    if (!kb_resource_release(r->r)) {
        if (r->r->in_use)
            return luaL_error(L, "r:release(): resource '%s' has no slot taken by r:acquire() in "
                                 "use (%d held by requests: release those with r:release(req))",
                              r->r->name, (int)r->r->nusers);
        return luaL_error(L, "r:release(): resource '%s' has no slot in use", r->r->name);
    }
    return 0;
}

static int r_in_use(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_res(L)->r->in_use);
    return 1;
}

static int r_capacity(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_res(L)->r->capacity);
    return 1;
}

static int r_queued(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_resource_queued(check_res(L)->r));
    return 1;
}

/* r:users(): the requests holding a slot, in the order they got it (slots
 * taken by r:acquire() have no request: in_use - #users of them). */
static int r_users(lua_State *L)
{
    lresource *r = check_res(L);
    lua_getiuservalue(L, 1, LRES_UV_SIM);
    lsim_push_list(L, -1, &r->r->users, true);
    return 1;
}

/* r:queue(): what waits for a slot, in order: requests, and the processes
 * blocked in r:acquire(). */
static int r_queue(lua_State *L)
{
    lresource *r = check_res(L);
    lua_getiuservalue(L, 1, LRES_UV_SIM);
    lsim_push_list(L, -1, &r->r->waiters, false);
    return 1;
}

static int r_name(lua_State *L)
{
    lua_pushstring(L, check_res(L)->r->name);
    return 1;
}

static int r_tostring(lua_State *L)
{
    lresource *r = lbind_checkudata(L, 1, LRES_MT);
    if (!r->S->sim) {
        lua_pushliteral(L, "resource (simulation closed)");
        return 1;
    }
    char what[256];
    kb_resource_describe(r->r, what, sizeof what);
    lua_pushstring(L, what);
    return 1;
}

static int r_gc(lua_State *L)
{
    lresource *r = lbind_checkudata(L, 1, LRES_MT);
    if (r->S && r->S->sim) /* else the simulation freed it */
        kb_resource_close(r->r);
    r->S = NULL;
    return 0;
}

void lsim_open_store(lua_State *L)
{
    static const luaL_Reg st_methods[] = {{"put", st_put},           {"get", st_get},
                                          {"put_event", st_put_event}, {"get_event", st_get_event},
                                          {"getters", st_getters},   {"putters", st_putters},
                                          {"count", st_len},         {"capacity", st_capacity},
                                          {"name", st_name},         {NULL, NULL}};
    static const luaL_Reg st_meta[] = {
        {"__gc", st_gc}, {"__len", st_len}, {"__tostring", st_tostring}, {NULL, NULL}};
    lsim_new_meta(L, LSTORE_MT, st_methods, st_meta);

    static const luaL_Reg r_methods[] = {{"acquire", r_acquire}, {"release", r_release},
                                         {"request", r_request},
                                         {"users", r_users},     {"queue", r_queue},
                                         {"in_use", r_in_use},   {"capacity", r_capacity},
                                         {"queued", r_queued},   {"name", r_name},
                                         {NULL, NULL}};
    static const luaL_Reg r_meta[] = {{"__gc", r_gc}, {"__tostring", r_tostring}, {NULL, NULL}};
    lsim_new_meta(L, LRES_MT, r_methods, r_meta);
}
