/* Host tensors in Lua: the module `kernbench.tensor_c`, a binding of
 * src/tensor/ (reference: docs/torch.md, "Host tensors").
 *
 * A tensor is a userdata whose block starts with its kb_tensor header. A
 * tensor that owns its bytes has them in the same block, after the header,
 * so Lua's collector sees its real size and frees both together; a view
 * (t[i], reshape, view, flatten) is a header-only userdata pointing into
 * its owner's block, and the owner is the view's user value. */
#ifndef KB_LUA_LTENSOR_H
#define KB_LUA_LTENSOR_H

#include "tensor/tensor.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>

kb_tensor *ltensor_check(lua_State *L, int idx);
/* A host memory operation takes (delta 1) or lets go of (-1) the tensor at
 * idx (its owner, for a view): while one holds it, in-place writes (set,
 * copy_, fill_, zero_, set_block, t[i] = v) are errors naming the call
 * (ltensor_check_writable). */
void ltensor_hold(lua_State *L, int idx, int delta);
void ltensor_check_writable(lua_State *L, int idx, const char *fn);
kb_tensor *ltensor_test(lua_State *L, int idx);
/* Pushes a new tensor with desc's dtype and shape (its bytes zeroed when
 * zero); desc comes from kb_tensor_init or a *_shape function. */
kb_tensor *ltensor_push(lua_State *L, const kb_tensor *desc, bool zero);

int luaopen_kb_tensor(lua_State *L);

/* ---- shared by the binding's files (ltensor.c, ltensor_make.c, ltensor_lib.c);
 * errors name the function fn ---- */

lua_Integer ltensor_check_int(lua_State *L, int idx, const char *fn, const char *what);
/* A number or a boolean (1 / 0). */
bool ltensor_to_scalar(lua_State *L, int idx, double *v);
/* A dtype name (or torch name) at idx. */
kb_dtype ltensor_parse_dtype(lua_State *L, int idx, const char *fn);
/* Options at idx: none, nil, a dtype name or a table {dtype = name} (another key is an error). */
kb_dtype ltensor_opt_dtype(lua_State *L, int idx, const char *fn, kb_dtype def);
/* The same, for functions whose options hold more keys than dtype (`known`, NULL-ended, names
 * them all; any other key is an error). */
kb_dtype ltensor_opt_dtype_of(lua_State *L, int idx, const char *fn, kb_dtype def, const char *const *known);
/* A shape as a table at idx or sizes as arguments from idx on; returns the
 * index of the first argument after it. */
int ltensor_read_shape(lua_State *L, int idx, const char *fn, int *ndim, int64_t *shape, bool allow_infer);
/* Checks and pushes a new tensor of that dtype and shape. */
kb_tensor *ltensor_new(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape, bool zero);
int ltensor_check_dim(lua_State *L, const char *fn, lua_Integer d, int ndim);

/* Pushes a view of the tensor at src_idx: (ndim, shape) from element off. */
void ltensor_push_view(lua_State *L, int src_idx, const kb_tensor *src, int64_t off, int ndim, const int64_t *shape);

/* What the other files register: module functions, methods, functions that
 * are methods too (ltensor_make_both, math), metamethods. */
extern const luaL_Reg ltensor_make_funcs[];
extern const luaL_Reg ltensor_make_methods[];
extern const luaL_Reg ltensor_make_both[];
extern const luaL_Reg ltensor_lib_methods[];
extern const luaL_Reg ltensor_lib_funcs[];
extern const luaL_Reg ltensor_math_funcs[];
extern const luaL_Reg ltensor_lib_meta[];
/* Sets the element-wise math functions (add, exp ...) into the table at
 * index funcs and, meta not 0, the operators' metamethods (__add ...) into
 * the table at index meta. */
void ltensor_set_ewise(lua_State *L, int funcs, int meta);
/* Creates the generator's metatable. */
void ltensor_open_random(lua_State *L);

#endif
