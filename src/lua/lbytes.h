/* Real bytes of fabric operations from Lua (kb_data sources and sinks):
 * a string, a buffer returned as a string, or a block of a host tensor
 * used in place (no copy; the tensor is kept alive until the operation is
 * released). */
#ifndef KB_LUA_LBYTES_H
#define KB_LUA_LBYTES_H

#include "comp/mem_access.h"

#include <lua.h>
#include <stdbool.h>

/* From the operation table at idx: for a write, `data = string` or
 * `src = tensor[, block = {row0, rows, col0, cols}]`; for a read,
 * `data = true` (bytes in the result) or `dst = tensor[, block = ...]`.
 * NULL when none is given; raises on a size mismatch. */
kb_data *lbytes_from_args(lua_State *L, int idx, const char *call, bool write, uint64_t nbytes);
bool lbytes_is_buffer(const kb_data *d);

#endif
