/* A Lua state with everything kernbench preloads: the standard libraries;
 * `sim` (global and require "sim") with simulations on topologies; the C
 * modules kernbench.topology_c, kernbench.addr, kernbench.alloc_c,
 * kernbench.tensor_c, kernbench.pe_c; package.path extended with the
 * kernbench Lua library directory (and the directory above it, for
 * kernels/); and the global `kb` = require "kernbench". */
#ifndef KB_LUA_STATE_H
#define KB_LUA_STATE_H

#include "luasim/session.h"

#include <lua.h>
#include <stddef.h>

/* Returns a new state serving `session` (which must outlive it), or NULL
 * with a message in err (size errn). lua_dir may be NULL (no library). */
lua_State *kb_lua_open(kb_session *session, const char *lua_dir, char *err, size_t errn);
/* Closes the state: every simulation still open is closed (and reported). */
void kb_lua_close(lua_State *L);

#endif
