/* Internal to the `kernbench.tensor_c` Lua module (src/lua/ltensor*.c): the
 * helpers its files share and the function tables each file contributes.
 *
 * A tensor that owns its data is one userdata block: the ltensor header,
 * then the elements (so Lua's collector sees the real size and frees header
 * and bytes together). A view (t[i], reshape, view, flatten) is a
 * header-only userdata whose data points into its owner's block; the owner
 * is the view's user value. Every other operation makes a new tensor.
 *
 * Arithmetic runs in double over chunks of RUN elements and rounds once per
 * element when the result is stored in the result's dtype (kb_dtype_store).
 * Indices and dimensions are 0-based; negative ones count from the end.
 * Reference: docs/torch.md, "Host tensors".
 *
 * Files: ltensor.c (the userdata, argument helpers, element runs, module
 * registration), ltensor_create.c (constructors), ltensor_access.c
 * (indexing, elements, conversions, bytes), ltensor_shape.c (views,
 * slicing, transposition, concatenation), ltensor_math.c (the elementwise
 * engine, promotion, arithmetic, comparisons, matmul), ltensor_reduce.c
 * (reductions, softmax), ltensor_print.c (torch-style __tostring),
 * ltensor_random.c (generators, rand, randn). */
#ifndef KB_LUA_LTENSOR_INTERNAL_H
#define KB_LUA_LTENSOR_INTERNAL_H

#include "lua/ltensor.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAXD LTENSOR_MAXDIM
/* Elements per chunk of the double-precision loops (a few chunks live on the C stack). */
#define RUN 512

static inline int64_t esize(kb_dtype t) { return (int64_t)kb_dtype_size(t); }
static inline char *eptr(const ltensor *t, int64_t off) { return (char *)t->data + off * esize(t->dtype); }
static inline size_t nbytes_of(const ltensor *t) { return (size_t)t->numel * kb_dtype_size(t->dtype); }

/* ---- ltensor.c: shapes ---- */

int64_t ltensor_prod(const int64_t *shape, int from, int to);
void ltensor_strides(int ndim, const int64_t *shape, int64_t *st);
const char *ltensor_shape_str(lua_State *L, int ndim, const int64_t *shape);
const char *ltensor_tshape(lua_State *L, const ltensor *t);

/* ---- ltensor.c: arguments (errors name the function fn) ---- */

lua_Integer ltensor_check_int(lua_State *L, int idx, const char *fn, const char *what);
bool ltensor_to_scalar(lua_State *L, int idx, double *v);
kb_dtype ltensor_parse_dtype(lua_State *L, int idx, const char *fn);
kb_dtype ltensor_opt_dtype(lua_State *L, int idx, const char *fn, kb_dtype def);
int ltensor_read_shape(lua_State *L, int idx, const char *fn, int *ndim, int64_t *shape, bool allow_infer);
int ltensor_check_dim(lua_State *L, const char *fn, lua_Integer d, int ndim);

/* ---- ltensor.c: the userdata ---- */

int64_t ltensor_checked_numel(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape);
/* A new tensor, pushed; its bytes are zeroed only with zero. */
ltensor *ltensor_new(lua_State *L, kb_dtype dt, int ndim, const int64_t *shape, bool zero);
ltensor *ltensor_push_view(lua_State *L, int src_idx, const ltensor *src, int64_t off, int ndim,
                           const int64_t *shape);
void ltensor_fill(const ltensor *t, double v);

/* ---- ltensor.c: element runs, n elements from off, stride apart ---- */

void ltensor_load_run(const ltensor *t, int64_t off, int64_t stride, double *dst, int64_t n);
void ltensor_store_run(const ltensor *t, int64_t off, int64_t stride, const double *src, int64_t n);

/* ---- ltensor_math.c ---- */

kb_dtype ltensor_promote(kb_dtype a, kb_dtype b);
/* Pushes a copy of a converted to dtype dt. */
ltensor *ltensor_push_copy(lua_State *L, const ltensor *a, kb_dtype dt);
/* Pushes a copy of t with dimensions d0 and d1 swapped. */
void ltensor_push_transposed(lua_State *L, const ltensor *t, int d0, int d1);
void ltensor_assign(lua_State *L, const char *fn, const ltensor *dst, int vidx);

/* ---- ltensor_random.c ---- */

/* Creates the generator metatable. */
void ltensor_open_random(lua_State *L);

/* ---- what each file registers: *_funcs are module functions (and, for
 * math and reduce, methods too), *_methods methods, *_meta metamethods ---- */

extern const luaL_Reg ltensor_create_funcs[];
extern const luaL_Reg ltensor_random_funcs[];
extern const luaL_Reg ltensor_access_funcs[];
extern const luaL_Reg ltensor_access_methods[];
extern const luaL_Reg ltensor_access_meta[];
extern const luaL_Reg ltensor_shape_funcs[];
extern const luaL_Reg ltensor_shape_methods[];
extern const luaL_Reg ltensor_math_funcs[];
extern const luaL_Reg ltensor_math_meta[];
extern const luaL_Reg ltensor_reduce_funcs[];
extern const luaL_Reg ltensor_print_meta[];
/* __index: elements, methods (upvalue 1: the method table) and fields. */
int ltensor_index(lua_State *L);

#endif
