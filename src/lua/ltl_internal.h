/* Internal to the `kernbench.pe_c` module (ltl*.c): the Lua side of a
 * kernel instance and the tensor handle layout. The instance itself is C
 * machine state (kb_kernel, src/comp/pe/pe.h); a context userdata holds a
 * reference to it and the one thing Lua adds: the process that waits. */
#ifndef KB_LUA_LTL_INTERNAL_H
#define KB_LUA_LTL_INTERNAL_H

#include "comp/pe/pe.h"
#include "lua/lmachine.h"

#include <lauxlib.h>
#include <lua.h>

typedef struct ltl_ctx {
    kb_kernel *k;     /* one reference; NULL once collected */
    lsim *S;
    lproc *waiting;   /* the kernel's process while a command or a wait blocks it */
    int nret;         /* results the blocking command returns (0 or 1) */
    kb_pe_op *recv;   /* the last tl.recv (its direction, once done) */
} ltl_ctx;

/* A tensor handle: a view of the instance's scratch (user value 1: the
 * context userdata). */
typedef struct ltl_tensor {
    kb_tview v;
    uint64_t stamp;      /* when its scratch was handed out (liveness) */
    const char *made_by; /* "tl.load" ... (static) */
} ltl_tensor;

/* ltl.c */
void *ltl_test_ud(lua_State *L, int idx, const void *key);
/* Pushes a context for instance k (taking a reference) of the simulation
 * whose userdata is at sim_idx. */
void ltl_push_context(lua_State *L, int sim_idx, lsim *S, kb_kernel *k);
ltl_ctx *ltl_check_ctx(lua_State *L, int idx); /* open and its kernel running, or raises */
ltl_ctx *ltl_check_open_ctx(lua_State *L, int idx); /* open (its kernel may have ended), or raises */
int ltl_parse_shape(lua_State *L, int idx, const char *call, int64_t *shape);
kb_dtype ltl_parse_dtype(lua_State *L, int idx, const char *call, const char *dflt);
/* The integer at idx (a float with an integral value counts), or an error
 * "CALL: WHAT must be an integer, got ..." (NaN, inf, 2.5, a string ...). */
lua_Integer ltl_check_int(lua_State *L, int idx, const char *call, const char *what);
/* The pointer argument at idx: an integer virtual address (raises). */
uint64_t ltl_check_ptr(lua_State *L, int idx, const char *call);
/* The instance's command for `call`, zeroed (raises if one is in flight). */
kb_pe_op *ltl_command(lua_State *L, ltl_ctx *c, const char *call);
/* Submits the command filled since ltl_command and yields until it
 * completes; returns c->nret results (the one above the context at 1). */
int ltl_start_command(lua_State *L, ltl_ctx *c, const char *call);
/* The same in two steps, for a call that must raise nothing once it has
 * started something: the process that will block (raises if there is
 * none or it cannot yield), then the submission. */
lproc *ltl_command_process(lua_State *L, ltl_ctx *c, const char *call);
int ltl_submit_command(lua_State *L, ltl_ctx *c, lproc *p);
/* ctx:math with the context at 1, operands at first .. first+nargs-1 and
 * the axis at axis_idx (0: none). */
int ltl_math_command(lua_State *L, ltl_ctx *c, kb_mop op, int first, int nargs, int axis_idx);

/* ltl_tensor.c */
void ltl_open_tensor(lua_State *L);
ltl_tensor *ltl_test_tensor(lua_State *L, int idx);
/* A live tensor of context c (NULL: any) at idx, argument argn of call. */
ltl_tensor *ltl_check_tensor(lua_State *L, int idx, const char *call, int argn, ltl_ctx *c);
/* The same for operand argn of math op `op` (errors name "tl.OP"). */
ltl_tensor *ltl_check_operand(lua_State *L, int idx, const char *op, int argn, ltl_ctx *c);
/* A new handle (uninitialised view) of the context at ctx_idx, pushed. */
ltl_tensor *ltl_new_tensor(lua_State *L, int ctx_idx);
/* A new result of shape/dtype in c's scratch, pushed (raises on overflow). */
ltl_tensor *ltl_push_result(lua_State *L, int ctx_idx, ltl_ctx *c, const char *call, kb_dtype dt, int ndim,
                            const int64_t *shape);
/* The same for a result whose dtype, ndim and shape v holds (a command's,
 * from the PE wing's kb_pe_op_*): v becomes its place in scratch. */
void ltl_place_result(lua_State *L, int ctx_idx, ltl_ctx *c, const char *call, kb_tview *v);

/* ltl_composite.c: the composite handle type; ctx methods composite, wait. */
void ltl_open_composite(lua_State *L);
bool ltl_test_composite(lua_State *L, int idx); /* a composite handle at idx */
extern const luaL_Reg ltl_composite_methods[];

/* ltl_ipcq.c: ctx methods send, recv, recv_claim, recv_dir, ipcq. */
extern const luaL_Reg ltl_ipcq_methods[];

/* ltl_pe.c: pe_c.mmu_translate, mmu_regions, tcm_alloc, tcm_free, tcm_pristine. */
extern const luaL_Reg ltl_pe_funcs[];

#endif
