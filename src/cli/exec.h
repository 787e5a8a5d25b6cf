/* Running Lua code for the command line: protected calls with a traceback,
 * Ctrl-C handling, and error reporting on stderr. */
#ifndef KB_CLI_EXEC_H
#define KB_CLI_EXEC_H

#include "luasim/session.h"

#include <lua.h>

/* Calls the function below its narg arguments on L's top in protected
 * mode, with SIGINT interrupting it (Lua code through a hook, simulations
 * through session->interrupt). Returns a Lua status; on error the message
 * (with a traceback) is left on the stack. */
int kb_exec_call(lua_State *L, kb_session *session, int narg, int nres);

/* Prints the message on L's top to stderr ("kernbench: ...") if status is
 * an error, and pops it. Returns status. */
int kb_exec_report(lua_State *L, int status);

#endif
