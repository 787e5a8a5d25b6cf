/* Locating the kernbench Lua library. */
#ifndef KB_CLI_PATHS_H
#define KB_CLI_PATHS_H

#include <stddef.h>

/* The directory holding kernbench/init.lua: $KERNBENCH_PATH if set, else
 * <executable dir>/../share/kernbench/lua (both the build tree and an
 * installation use that layout). Returns a malloc'd path, or NULL with a
 * message naming every place tried in err. */
char *kb_find_lua_dir(const char *argv0, char *err, size_t errn);

#endif
