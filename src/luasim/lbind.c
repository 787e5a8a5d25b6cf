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
