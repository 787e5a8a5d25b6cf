/* Inspection methods of a simulation (linspect.c): s:in_flight,
 * s:component, s:pe_state. */
#ifndef KB_LUA_LINSPECT_H
#define KB_LUA_LINSPECT_H

#include <lauxlib.h>

extern const luaL_Reg linspect_methods[];

#endif
