/* Between kernbench.procpool's two files: lprocpool.c (the module, run)
 * and lprocpool_spawn.c (the one-child calls). */
#ifndef KB_LUASIM_LPROCPOOL_INTERNAL_H
#define KB_LUASIM_LPROCPOOL_INTERNAL_H

#include <lua.h>

/* A child's result from its waitpid status: {ok =, status =} when it
 * exited, {ok = false, signal =} otherwise. */
void lprocpool_push_result(lua_State *L, int wstatus);

/* pool.spawn, pool.wait, pool.kill, pool.sleep (lprocpool_spawn.c). */
int lprocpool_spawn(lua_State *L);
int lprocpool_wait(lua_State *L);
int lprocpool_kill(lua_State *L);
int lprocpool_sleep(lua_State *L);
/* Registers the metatable of spawn's guard (its __close). */
void lprocpool_guard_open(lua_State *L);

#endif
