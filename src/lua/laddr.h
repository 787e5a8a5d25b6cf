/* The PhysAddr codec (src/mem/addr.h) as a Lua module. */
#ifndef KB_LUA_LADDR_H
#define KB_LUA_LADDR_H

#include <lua.h>

/* lua_CFunction in the luaopen_* style: pushes the module table
 *   decode(pa) -> {sip, die, kind, pe, sub_unit, offset, io}
 *   hbm, pe_hbm, pe_tcm, pe_local, mcpu, cube_sram, iocpu, ual -> pa
 *   format(pa) -> string
 * Invalid input raises an error carrying the codec's message. */
int luaopen_kb_addr(lua_State *L);

#endif
