#include "lua/lval.h"

#include <lauxlib.h>

void lval_push(lua_State *L, const kb_val *v)
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
            lval_push(L, v->u.c.items[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case KB_V_OBJ:
        lua_createtable(L, 0, (int)v->u.c.n);
        for (size_t i = 0; i < v->u.c.n; i++) {
            lval_push(L, v->u.c.items[i]);
            lua_setfield(L, -2, v->u.c.keys[i]);
        }
        break;
    }
}
