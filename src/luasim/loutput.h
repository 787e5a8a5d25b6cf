/* kernbench.output_c: kb.open_output's C side (loutput.c). */
#ifndef KB_LUASIM_LOUTPUT_H
#define KB_LUASIM_LOUTPUT_H

#include <lua.h>

/* The module table: open(path) -> an output object. */
int luaopen_kb_output(lua_State *L);

#endif
