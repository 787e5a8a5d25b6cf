/* Host tensors for the torch-like runtime: dense, row-major, real bytes in
 * their dtype's encoding (an f16 tensor holds f16 bits). The Lua module is
 * `kernbench.tensor_c` (reference: docs/torch.md, "Host tensors"). */
#ifndef KB_LUA_LTENSOR_H
#define KB_LUA_LTENSOR_H

#include "mem/dtype.h"

#include <lua.h>
#include <stdint.h>

#define LTENSOR_MAXDIM 8

typedef struct ltensor {
    kb_dtype dtype;
    int ndim;
    int64_t shape[LTENSOR_MAXDIM];
    int64_t numel;
    void *data; /* numel * kb_dtype_size(dtype) bytes */
} ltensor;

ltensor *ltensor_check(lua_State *L, int idx);
ltensor *ltensor_test(lua_State *L, int idx);
/* A new zeroed tensor, pushed on the stack. */
ltensor *ltensor_push_new(lua_State *L, kb_dtype dtype, int ndim, const int64_t *shape);

int luaopen_kb_tensor(lua_State *L);

#endif
