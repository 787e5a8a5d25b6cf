/* kernbench.procpool: child processes run a list at a time (procpool.c). */
#ifndef KB_LUA_PROCPOOL_H
#define KB_LUA_PROCPOOL_H

#include <lua.h>

/* The module table: run(cmds[, opts]), cpus(), exe(), pid(). */
int luaopen_kb_procpool(lua_State *L);

#endif
