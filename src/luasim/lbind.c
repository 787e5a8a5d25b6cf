/* Helpers every binding module shares (lbind.h). */
#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *message(const char *msg) { return msg ? msg : "error without a message"; }

int lbind_raise(lua_State *L, char *msg)
{
    lua_pushstring(L, message(msg));
    free(msg);
    return lua_error(L);
}

int lbind_raise_where(lua_State *L, char *msg)
{
    luaL_where(L, 1);
    lua_pushstring(L, message(msg));
    free(msg);
    lua_concat(L, 2);
    return lua_error(L);
}

int lbind_raise_prefixed(lua_State *L, const char *prefix, char *msg)
{
    lua_pushfstring(L, "%s: %s", prefix, message(msg));
    free(msg);
    return lua_error(L);
}

int lbind_fail(lua_State *L, char *msg)
{
    lua_pushnil(L);
    lua_pushstring(L, message(msg));
    free(msg);
    return 2;
}

static void bad_str(lua_State *L, int idx, const char *call, const char *what, bool nul)
{
    int argn = idx;
    const char *sep = what ? " (" : "", *w = what ? what : "", *end = what ? ")" : "";
    if (nul)
        luaL_error(L, "%s: argument %d%s%s%s must be a string without NUL bytes", call, argn, sep, w, end);
    luaL_error(L, "%s: argument %d%s%s%s must be a string, got %s", call, argn, sep, w, end, luaL_typename(L, idx));
}

const char *lbind_checkstr(lua_State *L, int idx, const char *call, const char *what)
{
    size_t n;
    const char *s = lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER ? lua_tolstring(L, idx, &n)
                                                                                        : NULL;
    if (!s)
        bad_str(L, idx, call, what, false);
    if (strlen(s) != n)
        bad_str(L, idx, call, what, true);
    return s;
}

const char *lbind_optstr(lua_State *L, int idx, const char *call, const char *what, const char *dflt)
{
    if (lua_isnoneornil(L, idx))
        return dflt;
    return lbind_checkstr(L, idx, call, what);
}

const char *lbind_tostr(lua_State *L, int idx, const char *call, const char *what)
{
    size_t n;
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &n) : NULL;
    if (!s)
        luaL_error(L, "%s: %s must be a string, got %s", call, what, luaL_typename(L, idx));
    if (strlen(s) != n)
        luaL_error(L, "%s: %s must be a string without NUL bytes", call, what);
    return s;
}

int lbind_bad_self(lua_State *L, const char *call, const char *what)
{
    return luaL_error(L, "%s: call it with ':' (argument 1 must be a %s, got %s)", call, what, luaL_typename(L, 1));
}

/* Whether "a.b" (lengths na, nb) is a better name than the best so far
 * (the shortest, then the first in byte order): names must not depend on
 * the order lua_next visits a table in, which varies between runs. */
static bool better(const char *a, const char *b, const char *best_a, const char *best_b)
{
    if (!best_a)
        return true;
    size_t n = strlen(a) + strlen(b), best_n = strlen(best_a) + strlen(best_b);
    if (n != best_n)
        return n < best_n;
    int c = strcmp(a, best_a);
    return c != 0 ? c < 0 : strcmp(b, best_b) < 0;
}

const char *lbind_fname(lua_State *L)
{
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar)) {
        lua_pushliteral(L, "?");
        return lua_tostring(L, -1);
    }
    lua_getinfo(L, "nf", &ar);
    int f = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushnil(L); /* the best module name */
    lua_pushnil(L); /* and key */
    const char *best_mod = NULL, *best_key = NULL;
    lua_pushnil(L);
    while (lua_next(L, f + 1)) { /* stack: f, loaded, best mod, best key, module name, module */
        if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1) && strcmp(lua_tostring(L, -2), "_G") != 0) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, f) &&
                    better(lua_tostring(L, -4), lua_tostring(L, -2), best_mod, best_key)) {
                    lua_pushvalue(L, -4);
                    lua_replace(L, f + 2);
                    lua_pushvalue(L, -2);
                    lua_replace(L, f + 3);
                    best_mod = lua_tostring(L, f + 2);
                    best_key = lua_tostring(L, f + 3);
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    if (best_mod) {
        size_t n = strlen(best_mod);
        if (n > 2 && best_mod[0] == '<' && best_mod[n - 1] == '>') /* a metatable's table named "<NAME>" */
            lua_pushfstring(L, "%s.%s", lua_pushlstring(L, best_mod + 1, n - 2), best_key);
        else
            lua_pushfstring(L, "%s.%s", best_mod, best_key);
    } else {
        lua_pushstring(L, ar.name ? ar.name : "?");
    }
    lua_replace(L, f);
    lua_settop(L, f);
    return lua_tostring(L, -1);
}

/* For each function with a string key in table `from` not in `seen`:
 * names[f] = its smallest key there (so that a function under two keys,
 * __gc and __close, is listed under one). */
/* __gc and __close free what an object holds: only Lua may call them. */
static int is_finalizer(lua_State *L, int key)
{
    const char *k = lua_tostring(L, key);
    return strcmp(k, "__gc") == 0 || strcmp(k, "__close") == 0;
}

static void collect_functions(lua_State *L, int from, int names, int seen)
{
    from = lua_absindex(L, from);
    lua_pushnil(L);
    while (lua_next(L, from)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION && !is_finalizer(L, -2) &&
            lua_rawget(L, seen) == LUA_TNIL) { /* pops the function: stack key, nil */
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_rawget(L, from); /* the function again */
            lua_pushvalue(L, -1);
            int had = lua_rawget(L, names);
            if (had == LUA_TNIL || strcmp(lua_tostring(L, -3), lua_tostring(L, -1)) < 0) {
                lua_pop(L, 1);
                lua_pushvalue(L, -2);
                lua_rawset(L, names); /* names[f] = key */
            } else {
                lua_pop(L, 2);
            }
        } else {
            lua_pop(L, 1);
        }
    }
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define MAX_METATABLES 256

void lbind_name_metatables(lua_State *L)
{
    luaL_checkstack(L, 16, "lbind_name_metatables");
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    int loaded = lua_gettop(L);
    /* the functions modules list already: Lua names them from there */
    lua_newtable(L);
    int seen = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, loaded)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                if (lua_type(L, -1) == LUA_TFUNCTION) {
                    lua_pushboolean(L, 1);
                    lua_rawset(L, seen);
                } else {
                    lua_pop(L, 1);
                }
            }
        }
        lua_pop(L, 1);
    }
    /* metatables of luaL_newmetatable (registry[tname] = mt with a
     * __name), in the order of their registry names */
    const char *tnames[MAX_METATABLES];
    size_t nt = 0;
    lua_pushnil(L);
    while (lua_next(L, LUA_REGISTRYINDEX)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1) && nt < MAX_METATABLES) {
            if (lua_getfield(L, -1, "__name") == LUA_TSTRING)
                tnames[nt++] = lua_tostring(L, -3); /* the key, anchored in the registry */
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    qsort(tnames, nt, sizeof tnames[0], compare_names);
    for (size_t i = 0; i < nt; i++) {
        lua_getfield(L, LUA_REGISTRYINDEX, tnames[i]);
        int mt = lua_gettop(L);
        lua_getfield(L, mt, "__name");
        /* the name, or "<name>" when a module has it (kernbench.alloc is a Lua module too) */
        if (lua_getfield(L, loaded, lua_tostring(L, -1)) != LUA_TNIL) {
            lua_pop(L, 1);
            lua_pushfstring(L, "<%s>", lua_tostring(L, -1));
            lua_replace(L, -2);
            if (lua_getfield(L, loaded, lua_tostring(L, -1)) != LUA_TNIL) {
                lua_settop(L, mt - 1);
                continue;
            }
        }
        lua_pop(L, 1); /* stack: mt, name */
        lua_newtable(L);
        int names = lua_gettop(L);
        collect_functions(L, mt, names, seen);
        /* the methods: __index, or the table an __index closure looks in */
        static const char *const methods[] = {"__index", "methods", "__methods"};
        for (int m = 0; m < 3; m++) {
            int t = lua_getfield(L, mt, methods[m]);
            if (t == LUA_TTABLE)
                collect_functions(L, -1, names, seen);
            else if (t == LUA_TFUNCTION && lua_getupvalue(L, -1, 1)) {
                if (lua_istable(L, -1))
                    collect_functions(L, -1, names, seen);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        /* names (f -> key) as the listed table (key -> f) */
        lua_newtable(L);
        lua_pushnil(L);
        while (lua_next(L, names)) { /* stack: ..., list, f, key */
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -1);
            lua_pushboolean(L, 1);
            lua_rawset(L, seen);
            lua_rawset(L, -4); /* list[key] = f */
        }
        lua_setfield(L, loaded, lua_tostring(L, mt + 1));
        lua_settop(L, mt - 1);
    }
    lua_settop(L, loaded - 1);
}

/* Raises "CALL: field 'KEY' must be [an integer ]RANGE, got VALUE" for the
 * value on the top of the stack. */
static void bad_int(lua_State *L, const char *call, const char *key, bool integer, lua_Integer min,
                    lua_Integer max)
{
    const char *given = lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1);
    const char *what = integer ? "" : "an integer ";
    if (max == LUA_MAXINTEGER)
        luaL_error(L, "%s: field '%s' must be %s>= %I, got %s", call, key, what, min, given);
    luaL_error(L, "%s: field '%s' must be %s>= %I and <= %I, got %s", call, key, what, min, max, given);
}

bool lbind_field_int(lua_State *L, int idx, const char *call, const char *key, lua_Integer min,
                     lua_Integer max, lua_Integer *out)
{
    if (lua_getfield(L, idx, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return false;
    }
    int ok = 0;
    lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
    if (!ok || v < min || v > max)
        bad_int(L, call, key, ok, min, max);
    lua_pop(L, 1);
    *out = v;
    return true;
}

lua_Integer lbind_need_int(lua_State *L, int idx, const char *call, const char *key, lua_Integer min,
                           lua_Integer max)
{
    lua_Integer v = 0;
    if (!lbind_field_int(L, idx, call, key, min, max, &v))
        luaL_error(L, "%s: missing field '%s'", call, key);
    return v;
}

static bool is_known(lua_State *L, int key, const char *const *known)
{
    if (lua_type(L, key) != LUA_TSTRING)
        return false;
    const char *k = lua_tostring(L, key);
    for (; *known; known++)
        if (strcmp(k, *known) == 0)
            return true;
    return false;
}

void lbind_check_keys(lua_State *L, int idx, const char *call, const char *what, const char *const *known)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 6, "lbind_check_keys");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (is_known(L, -1, known))
            continue;
        int key = lua_gettop(L);
        switch (lua_type(L, key)) {
        case LUA_TSTRING: lua_pushfstring(L, "'%s'", lua_tostring(L, key)); break;
        case LUA_TNUMBER:
        case LUA_TBOOLEAN: lua_pushfstring(L, "[%s]", luaL_tolstring(L, key, NULL)); break;
        default: lua_pushfstring(L, "(a %s key)", luaL_typename(L, key)); break;
        }
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (const char *const *k = known; *k; k++) {
            luaL_addstring(&b, k == known ? "" : ", ");
            luaL_addstring(&b, *k);
            luaL_addstring(&b, " =");
        }
        luaL_pushresult(&b);
        what = what ? what : "its options";
        luaL_error(L, "%s: unknown %s %s (%s are {%s})", call, strstr(what, "field") ? "field" : "option",
                   lua_tostring(L, -2), what, lua_tostring(L, -1));
    }
}

bool lbind_field_bool(lua_State *L, int idx, const char *call, const char *key, bool dflt)
{
    int t = lua_getfield(L, idx, key);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        luaL_error(L, "%s: field '%s' must be a boolean, got %s", call, key, luaL_typename(L, -1));
    bool v = t == LUA_TNIL ? dflt : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

void lbind_push_time(lua_State *L, kb_time ps)
{
    if (ps % KB_PS_PER_NS == 0)
        lua_pushinteger(L, (lua_Integer)(ps / KB_PS_PER_NS));
    else
        lua_pushnumber(L, (lua_Number)kb_ps_to_ns((double)ps));
}

void lbind_set_time(lua_State *L, const char *k, kb_time ps)
{
    lbind_push_time(L, ps);
    lua_setfield(L, -2, k);
}

void lbind_set_ns(lua_State *L, const char *k, kb_time ps) { lbind_set_num(L, k, kb_ps_to_ns((double)ps)); }

void lbind_set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

void lbind_set_num(lua_State *L, const char *k, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

void lbind_set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

void lbind_push_val(lua_State *L, const kb_val *v)
{
    luaL_checkstack(L, 4, "value tree too deep");
    switch (v->type) {
    case KB_V_NULL: lua_pushnil(L); break;
    case KB_V_BOOL: lua_pushboolean(L, v->u.b); break;
    case KB_V_INT: lua_pushinteger(L, (lua_Integer)v->u.i); break;
    case KB_V_NUM: lua_pushnumber(L, v->u.d); break;
    case KB_V_STR: lua_pushstring(L, v->u.s); break;
    case KB_V_ARR:
        lua_createtable(L, (int)v->u.c.n, 0);
        for (size_t i = 0; i < v->u.c.n; i++) {
            lbind_push_val(L, v->u.c.items[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case KB_V_OBJ:
        lua_createtable(L, 0, (int)v->u.c.n);
        for (size_t i = 0; i < v->u.c.n; i++) {
            lbind_push_val(L, v->u.c.items[i]);
            lua_setfield(L, -2, v->u.c.keys[i]);
        }
        break;
    }
}

/* Metatables of type names by the name's address: a small open-addressed
 * table, a full userdata anchored in the registry (freed with the state). */
#define TYPE_SLOTS 64
typedef struct type_cache {
    const char *name[TYPE_SLOTS];
    const void *mt[TYPE_SLOTS];
} type_cache;

static const char TYPE_CACHE_KEY;

void lbind_init_state(lua_State *L)
{
    type_cache *c = lua_newuserdatauv(L, sizeof *c, 0);
    memset(c, 0, sizeof *c);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &TYPE_CACHE_KEY);
    *(type_cache **)lua_getextraspace(L) = c;
}

/* The metatable registered as tname, or NULL when there is no cache or no
 * such metatable yet (then nothing is cached). */
static const void *metatable_named(lua_State *L, const char *tname)
{
    type_cache *c = *(type_cache **)lua_getextraspace(L);
    if (!c)
        return NULL;
    for (size_t i = ((uintptr_t)tname >> 3) % TYPE_SLOTS, n = 0; n < TYPE_SLOTS; i = (i + 1) % TYPE_SLOTS, n++) {
        if (c->name[i] == tname)
            return c->mt[i];
        if (!c->name[i]) {
            luaL_getmetatable(L, tname);
            const void *mt = lua_topointer(L, -1);
            lua_pop(L, 1);
            if (mt) {
                c->name[i] = tname;
                c->mt[i] = mt;
            }
            return mt;
        }
    }
    return NULL; /* full: the slow path */
}

void *lbind_testudata(lua_State *L, int idx, const char *tname)
{
    void *p = lua_touserdata(L, idx);
    if (!p)
        return NULL;
    const void *want = metatable_named(L, tname);
    if (!want)
        return luaL_testudata(L, idx, tname);
    if (!lua_getmetatable(L, idx))
        return NULL;
    bool same = lua_topointer(L, -1) == want;
    lua_pop(L, 1);
    return same ? p : NULL;
}

void *lbind_checkudata(lua_State *L, int idx, const char *tname)
{
    void *p = lbind_testudata(L, idx, tname);
    return p ? p : luaL_checkudata(L, idx, tname); /* raises the usual message */
}

void lbind_hide_finalizers(lua_State *L)
{
    luaL_checkstack(L, 8, "lbind_hide_finalizers");
    lua_pushnil(L);
    while (lua_next(L, LUA_REGISTRYINDEX)) {
        int mt = lua_gettop(L);
        if (lua_type(L, mt - 1) == LUA_TSTRING && lua_istable(L, mt) &&
            lua_getfield(L, mt, "__name") == LUA_TSTRING &&
            lua_getfield(L, mt, "__metatable") == LUA_TNIL &&
            (lua_getfield(L, mt, "__gc") != LUA_TNIL || lua_getfield(L, mt, "__close") != LUA_TNIL)) {
            lua_settop(L, mt);
            lua_newtable(L); /* the public view: every field but the finalizers */
            lua_pushnil(L);
            while (lua_next(L, mt)) {
                if (lua_type(L, -2) == LUA_TSTRING && is_finalizer(L, -2)) {
                    lua_pop(L, 1);
                    continue;
                }
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, mt + 1);
            }
            lua_setfield(L, mt, "__metatable");
        }
        lua_settop(L, mt - 1);
    }
}

void lbind_push_weak_keyed(lua_State *L, const void *key)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) != LUA_TNIL)
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, key);
}
