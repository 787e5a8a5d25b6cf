/* The `kernbench.alloc_c` module (first-fit allocators for the runtime). */
#ifndef KB_LUA_LALLOC_H
#define KB_LUA_LALLOC_H

#include <lua.h>

int luaopen_kb_alloc(lua_State *L);

#endif
