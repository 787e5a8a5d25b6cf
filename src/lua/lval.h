/* Value trees (src/trace/val.h) as Lua tables: objects become tables with
 * string keys, arrays sequences, null nil. */
#ifndef KB_LUA_LVAL_H
#define KB_LUA_LVAL_H

#include "trace/val.h"

#include <lua.h>

void lval_push(lua_State *L, const kb_val *v);

#endif
