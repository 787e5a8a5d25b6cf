/* Running what the command line names: the `arg` table, --require and -e,
 * a script or bench (`kernbench run`), and the subcommands written in Lua
 * (probe, list, help, web, draw, sweep). Each returns kb_exec_report's
 * status (docs/cli.md). */
#ifndef KB_CLI_RUN_H
#define KB_CLI_RUN_H

#include "luasim/session.h"

#include <lua.h>
#include <stdbool.h>

/* The global `arg`: arg[0] is argv[script], negative indices the
 * interpreter and its options, positive ones the script's arguments. */
void kb_cli_arg_table(lua_State *L, int argc, char **argv, int script);
/* require(name), as --require does before anything else runs. */
int kb_cli_run_require(lua_State *L, kb_session *session, const char *name);
/* Runs -e CODE. */
int kb_cli_run_code(lua_State *L, kb_session *session, const char *code);

/* `kernbench run NAME`: the bench's file (kernbench.bench_find.resolve), newly
 * allocated, or NULL with the status of the error reported (KB_EXEC_USAGE
 * for an unknown bench) in *status. */
char *kb_cli_resolve_bench(lua_State *L, kb_session *session, const char *name, int *status);
/* Runs the script argv[script] (standard input for "-"); a script that
 * returns a bench table ({name, description, run}) is then run as a bench,
 * whose exit status goes to *exit_status. `require_bench`: `kernbench run
 * FILE`. */
int kb_cli_run_script(lua_State *L, kb_session *session, int argc, char **argv, int script, bool require_bench,
                      int *exit_status);
/* `kernbench probe|list|help ...`: the Lua function module.fn(args), args
 * being argv[first ..], returns the exit status (*exit_status). */
int kb_cli_run_subcommand(lua_State *L, kb_session *session, const char *module, const char *fn, int argc,
                          char **argv, int first, int *exit_status);

/* The string a bench left in kb.FIELD (results_document, summary_note),
 * newly allocated, or NULL. */
char *kb_cli_take_kb_string(lua_State *L, const char *field);

#endif
