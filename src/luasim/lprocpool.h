/* kernbench.procpool: child processes run a list at a time, or one at a
 * time without waiting (lprocpool.c, lprocpool_spawn.c; the processes are
 * kb_os's, src/os/). */
#ifndef KB_LUASIM_LPROCPOOL_H
#define KB_LUASIM_LPROCPOOL_H

#include <lua.h>

/* The module table: run(cmds[, opts]), cpus(), exe(), pid(), spawn(argv[,
 * opts]), wait(pid[, seconds]), kill(pid, sig), sleep(seconds). */
int luaopen_kb_procpool(lua_State *L);

#endif
