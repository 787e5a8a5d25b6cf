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

/* What a simulation on a topology has besides its kb_sim (S->mach). */
typedef struct lmachine {
    struct kb_machine *m;
    struct kb_fabric *fab;        /* the machine's */
    struct lrequest *ops;              /* fabric operations in flight (lfabric.c) */
    struct lctrl *ctrls;          /* device control operations in flight (ldevice.c) */
    lua_State *opL;               /* the state that last submitted an operation */
    struct lmodel *models;        /* latency models of its components (lmodels.c) */
    lua_State *model_thread;      /* where they are called */
    int model_thread_ref;
} lmachine;

/* Extends the state's `sim` module with machines (call after luaopen_sim). */
void lmachine_open(lua_State *L);

/* lfabric.c: s:memory_write, s:memory_read, s:pe_dma, s:transfer, s:topology */
extern const luaL_Reg lfabric_methods[];
void lfabric_close(lua_State *L, lsim *S); /* operations in flight dropped */
/* ldevice.c: s:mmu_map, s:mmu_unmap, s:launch */
extern const luaL_Reg ldevice_methods[];
void ldevice_close(lua_State *L, lsim *S);
/* lobserve.c: s:stats, s:op_log */
extern const luaL_Reg lobserve_methods[];
/* At close, before the machine goes: hands the statistics and op log to the session. */
void lobserve_close(lua_State *L, lsim *S);

#endif
