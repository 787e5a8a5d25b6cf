/* What the options hand to the Lua library before anything runs: the
 * topology and its overrides, the bench's parameters and settings (kb.*
 * fields), and the checks that a --topology or --ccl names something. */
#ifndef KB_CLI_DEFAULTS_H
#define KB_CLI_DEFAULTS_H

#include "cli/options.h"

#include <lua.h>
#include <stdbool.h>

/* Hands --topology, --set, --profile and the bench's settings (--device,
 * --data, --jobs, --ccl, --param, --results-json) to `kb`. LUA_OK, or
 * LUA_ERRRUN (reported) when a replaced Lua library has no kb.topology
 * but the options ask for one. */
int kb_cli_set_defaults(lua_State *L, const kb_cli_options *o);

/* Whether the --topology names a topology (true without one); false
 * reported as a usage error. */
bool kb_cli_topology_exists(lua_State *L, const char *topology);
/* Whether the --ccl file exists (true without one); false reported as a
 * usage error. */
bool kb_cli_ccl_exists(const char *path);

#endif
