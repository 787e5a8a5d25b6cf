/* Helpers every binding module shares (lbind.h). */
#include "luasim/lbind.h"

#include <lauxlib.h>
#include <lauxlib.h>
#include <stdlib.h>

int lbind_raise(lua_State *L, char *msg)
{
    lua_pushstring(L, msg ? msg : "error without a message");
    free(msg);
    return lua_error(L);
}

int lbind_raise_where(lua_State *L, char *msg)
{
    luaL_where(L, 1);
    lua_pushstring(L, msg ? msg : "error without a message");
    free(msg);
    lua_concat(L, 2);
    return lua_error(L);
}

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

void lbind_set_ns(lua_State *L, const char *k, int64_t ps) { lbind_set_num(L, k, (lua_Number)ps / 1000.0); }

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
