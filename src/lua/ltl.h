/* The `kernbench.pe_c` module: kernel instances on PEs (contexts), the
 * tensor handles of tl.* calls, composites, the PE page tables. See ltl.c. */
#ifndef KB_LUA_LTL_H
#define KB_LUA_LTL_H

#include <lua.h>

int luaopen_kb_pe(lua_State *L);

struct lsim;
struct kb_pe;
/* The PE (sip, cube, pe) given by the integers at idx .. idx+2 (raises). */
struct kb_pe *ltl_check_pe(lua_State *L, struct lsim *S, int idx);

#endif
