/* What every binding module shares: raising a C layer's error message,
 * and value trees (src/trace/val.h) as Lua tables. */
#ifndef KB_LUASIM_LBIND_H
#define KB_LUASIM_LBIND_H

#include "trace/val.h"

#include <lua.h>

/* Raises `msg` (allocated by a C module, freed here) as a Lua error; does
 * not return. Written as `return lbind_raise(L, err);` in C functions. */
int lbind_raise(lua_State *L, char *msg);
/* The same with the calling Lua code's position in front ("file:12: msg"),
 * as luaL_error does: for bindings whose messages always had it. */
int lbind_raise_where(lua_State *L, char *msg);

/* t[k] = v for the table on the top of the stack. */
void lbind_set_int(lua_State *L, const char *k, lua_Integer v);
void lbind_set_num(lua_State *L, const char *k, lua_Number v);
void lbind_set_str(lua_State *L, const char *k, const char *v);
/* t[k] = ps in ns, always a float (as a division of ps by 1000 in Lua). */
void lbind_set_ns(lua_State *L, const char *k, int64_t ps);
/* Pushes v as Lua values: objects become tables with string keys, arrays
 * sequences, null nil. */
void lbind_push_val(lua_State *L, const kb_val *v);

#endif
