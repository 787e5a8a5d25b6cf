/* The `kernbench.pe_c` module: kernel instances on PEs (contexts) and the
 * tensor handles of tl.* calls. See lpe.c. */
#ifndef KB_LUA_LPE_H
#define KB_LUA_LPE_H

#include <lua.h>

int luaopen_kb_pe(lua_State *L);

#endif
