/* The interactive Lua REPL. */
#ifndef KB_CLI_REPL_H
#define KB_CLI_REPL_H

#include "luasim/session.h"

#include <lua.h>

/* Reads statements or expressions until end of input, running each and
 * printing expression values like the `lua` interpreter. On a terminal it
 * uses line editing with a history file ($KERNBENCH_HISTORY, default
 * ~/.kernbench_history); otherwise it reads plain lines without prompts,
 * so it can be driven through stdin. Errors are printed and the loop goes
 * on. */
void kb_repl(lua_State *L, kb_session *session);

#endif
