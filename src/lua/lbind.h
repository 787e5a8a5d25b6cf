/* What every binding module shares: raising a C layer's error message. */
#ifndef KB_LUA_LBIND_H
#define KB_LUA_LBIND_H

#include <lua.h>

/* Raises `msg` (allocated by a C module, freed here) as a Lua error; does
 * not return. Written as `return lbind_raise(L, err);` in C functions. */
int lbind_raise(lua_State *L, char *msg);
/* The same with the calling Lua code's position in front ("file:12: msg"),
 * as luaL_error does: for bindings whose messages always had it. */
int lbind_raise_where(lua_State *L, char *msg);

#endif
