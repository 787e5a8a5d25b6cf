/* Simulations built on a topology, from Lua: sim.new{topology = t} makes a
 * machine (src/machine) for the simulation and the records of the host
 * operations in flight; the model's methods join every simulation
 * (s:memory_write ..., s:mmu_map, s:launch, s:stats, s:component ...).
 * Installed into the `sim` module (src/luasim/lsim.h) by lmachine_open. */
#ifndef KB_LUA_LMACHINE_H
#define KB_LUA_LMACHINE_H

#include "luasim/lsim.h"

struct kb_machine;
struct kb_fabric;

/* A host operation in flight from Lua (a fabric request, lfabric.c; a
 * device control message, ldevice.c): listed on its simulation's machine
 * so that closing the simulation frees it, and holding the event its
 * completion succeeds. Each record embeds one. */
typedef struct lpending {
    struct lpending *prev, *next;
    lsim *S;
    int ref;                            /* registry reference to the event userdata */
    void (*close)(struct lpending *p);  /* frees the record of an operation still in flight */
} lpending;

/* What a simulation on a topology has besides its kb_sim (S->mach). */
typedef struct lmachine {
    struct kb_machine *m;
    struct kb_fabric *fab;        /* kb_machine_fabric(m), kept as every binding reads it */
    lpending *pending;            /* host operations in flight */
    lua_State *opL;               /* the state that last submitted an operation */
    struct lmodel *models;        /* latency models of its components (lmodels.c) */
    lua_State *model_thread;      /* where they are called */
    int model_thread_ref;
} lmachine;

/* Lists p, an operation being submitted on S, with the event on the top
 * of the stack (left there); `close` frees it if S closes first. */
void lpending_link(lua_State *L, lsim *S, lpending *p, void (*close)(lpending *p));
/* Unlists p and drops its event (a submission that failed); the caller frees p. */
void lpending_unlink(lua_State *L, lpending *p);
/* p's operation completed with the value on the top of the stack (popped):
 * the value becomes the event's, the event succeeds, p is unlisted; the
 * caller frees p. */
void lpending_succeed(lua_State *L, lpending *p);
/* The same with a value built when first read (lsim_deferred): p is
 * unlisted and d, which may live in p's memory, belongs to the event from
 * here on (it frees d once built or with itself). d NULL: the event's
 * value is already set. */
void lpending_succeed_deferred(lua_State *L, lpending *p, lsim_deferred *d);
/* Where a completion builds its value: the state inside the run, or the
 * one that submitted last (a completion inside the submitting call). */
lua_State *lpending_state(const lpending *p);

/* Extends the state's `sim` module with machines (call after luaopen_sim). */
void lmachine_open(lua_State *L);

/* lfabric.c: s:memory_write, s:memory_read, s:pe_dma, s:transfer, s:topology */
extern const luaL_Reg lfabric_methods[];
/* ldevice.c: s:mmu_map, s:mmu_unmap, s:launch */
extern const luaL_Reg ldevice_methods[];
/* lobserve.c: s:stats, s:op_log */
extern const luaL_Reg lobserve_methods[];
/* At close, before the machine goes: hands the statistics and op log to the session. */
void lobserve_close(lua_State *L, lsim *S);

#endif
