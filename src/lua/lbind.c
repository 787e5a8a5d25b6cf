/* Helpers shared by the binding modules (lbind.h). */
#include "lua/lbind.h"

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
