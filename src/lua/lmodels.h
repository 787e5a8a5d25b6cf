/* Latency models in Lua for builtin components (lmodels.c). */
#ifndef KB_LUA_LMODELS_H
#define KB_LUA_LMODELS_H

#include <lua.h>

struct lsim;

/* Loads the latency models the simulation's topology names and hooks them
 * into their components (raises if one does not load). */
void lmodels_attach(lua_State *L, struct lsim *S);
/* Releases them (before the fabric goes). */
void lmodels_close(lua_State *L, struct lsim *S);

#endif
