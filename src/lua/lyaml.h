/* The `kernbench.yaml_c` module: YAML configuration files (ccl.yaml) as
 * plain Lua data, with the file position of every value. */
#ifndef KB_LUA_LYAML_H
#define KB_LUA_LYAML_H

#include <lua.h>

/* lua_CFunction in the luaopen_* style: pushes the module table
 *   load(path) -> {value = data, marks = {[path] = "file:line:col"},
 *                  key_marks = {[path] = "file:line:col"}} | nil, err
 *   null       -- the value of a null item of a list
 * (lyaml.c says how scalars are typed). */
int luaopen_kb_yaml(lua_State *L);

#endif
