/* Running Lua code for the command line: protected calls with a traceback,
 * stopping on SIGINT, SIGTERM and --timeout, and error reporting on
 * stderr. */
#ifndef KB_CLI_EXEC_H
#define KB_CLI_EXEC_H

#include "luasim/session.h"

#include <lua.h>

/* Makes SIGINT, SIGTERM and SIGALRM (--timeout) raise the session's stop
 * flag (session->ctl) and arm the hooks that stop Lua code. The first
 * SIGINT or SIGTERM only asks the run to stop; a second one ends the
 * process at once (default action). */
void kb_exec_signals(kb_session *session);
/* Puts SIGINT back to its default action (the REPL's prompt: Ctrl-C ends
 * the session, as in lua) or back to the handler. */
void kb_exec_sigint(bool handled);
/* Raises the stop flag (KB_STOP_TIMEOUT) after `seconds` of wall clock;
 * 0 cancels the timer. */
void kb_exec_timeout(double seconds);
/* The hooks to arm when a run reaches a limit (kb_sim_control.on_limit). */
void kb_exec_on_limit(void *session);

/* Calls the function below its narg arguments on L's top in protected
 * mode; a stop ends it (Lua code through a hook, simulations through the
 * flag). Returns a Lua status; on error the message (with a traceback) is
 * left on the stack. */
int kb_exec_call(lua_State *L, kb_session *session, int narg, int nres);

/* The status kb_exec_report returns for a usage error (distinct from
 * Lua's statuses): the command line exits with status 2. */
#define KB_EXEC_USAGE 100

/* Whether the value at idx is a usage error: a table with the metatable of
 * kernbench.usage (its __name "kernbench.usage") or a plain {usage =
 * MESSAGE} table (lua/kernbench/usage.lua). */
bool kb_exec_is_usage(lua_State *L, int idx);

/* Prints the error on L's top to stderr if status is an error, and pops
 * it; not after a stop, which is reported on its own (kb_stop_text). A
 * usage error prints as `kernbench[ COMMAND]: MESSAGE` and its hint lines,
 * without a traceback, and gives KB_EXEC_USAGE: the one place a user's
 * mistake becomes exit status 2 (docs/cli.md). Otherwise returns status. */
int kb_exec_report(lua_State *L, int status);

#endif
