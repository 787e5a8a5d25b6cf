/* Internal to the `kernbench.pe_c` module (lpe.c, lcomposite.c): the
 * kernel-instance context and tensor handle layouts and the helpers the
 * files share. */
#ifndef KB_LUA_LPE_INTERNAL_H
#define KB_LUA_LPE_INTERNAL_H

#include "comp/pe/pe.h"
#include "mem/addr.h"
#include "lua/lsim.h"

#include <lauxlib.h>
#include <lua.h>

struct kb_composite;

typedef struct pe_ctx {
    lsim *S;
    kb_pe *pe;
    uint64_t scratch_base, scratch_size;
    uint64_t vcur;     /* bytes of scratch handed out so far (virtual, never wraps) */
    bool data;
    bool pa_fallback;  /* an unmapped VA is used as a PA (the original's behaviour) */
    bool busy;         /* a blocking command is in flight */
    bool orphan;       /* the userdata was collected while busy: free when done */
    kb_pe_op op;
    lproc *waiting;
    kb_time dma_ps, compute_ps;
    uint64_t calls;
    char where[48];    /* "sip0.cube0.pe3" */
    /* the HBM slice last resolved: PAs [pa_lo, pa_hi) are node's offsets
     * from off_lo (HBM offsets are a PA's low bits) */
    kb_pa pa_lo, pa_hi;
    uint32_t pa_node;
    uint64_t off_lo;
    int nret;          /* results the current command returns (0 or 1) */
    /* composites (lcomposite.c): in flight, and what a tl.wait waits for */
    struct kb_composite **live;
    size_t nlive, cap_live;
    struct kb_composite *wait_for;
    bool wait_all;
    char *composite_error; /* the first failed composite's message, until a wait reports it */
} pe_ctx;

typedef struct tensor_ud {
    kb_tview v;
    uint64_t vstart;   /* scratch position it was made at (validity) */
    const char *made_by; /* "tl.load" ... (static) */
} tensor_ud;

pe_ctx *lpe_check_ctx(lua_State *L, int idx);
tensor_ud *lpe_test_tensor(lua_State *L, int idx);
/* A live tensor of context c (NULL: any) at idx, argument argn of call. */
tensor_ud *lpe_check_tensor(lua_State *L, int idx, const char *call, int argn, pe_ctx *c);
int lpe_parse_shape(lua_State *L, int idx, const char *call, int64_t *shape);
kb_dtype lpe_parse_dtype(lua_State *L, int idx, const char *call, const char *dflt);
/* The PA of the pointer at idx through the PE's MMU (raises if unmapped). */
kb_pa lpe_translate(lua_State *L, pe_ctx *c, int idx, const char *call);
/* Starts c->op and yields until it completes; returns c->nret results
 * (from the top of the stack). */
int lpe_start_command(lua_State *L, pe_ctx *c, const char *call);

/* lcomposite.c: the composite handle type and the ctx methods composite, wait. */
void lcomposite_open(lua_State *L);
extern const luaL_Reg lcomposite_ctx_methods[];
/* Frees the context's composite bookkeeping (detaching composites in flight). */
void lcomposite_release(pe_ctx *c);

#endif
