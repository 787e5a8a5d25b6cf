/* Components written in Lua: their fabric behaviour (lcomp.c) and their
 * implementations in the registry. */
#ifndef KB_LUA_LCOMP_H
#define KB_LUA_LCOMP_H

#include "fabric/fabric.h"

#include <lua.h>
#include <stdbool.h>

struct lsim;

/* Behaviours of Lua implementations: whole transactions, or flits. */
extern const kb_comp_ops lcomp_ops_txn;
extern const kb_comp_ops lcomp_ops_flit;
bool lcomp_is_lua(const kb_comp *c);
/* A Lua component's inbox length and the messages it holds. */
void lcomp_counts(const kb_comp *c, int *queued, int *held);

/* The metatables (at module load). */
void lcomp_open(lua_State *L);
/* Starts a process per Lua component of the simulation at sim_idx. */
void lcomp_attach(lua_State *L, struct lsim *S, int sim_idx);

/* A kb_impl from the definition table at idx ({attrs = {name = default},
 * flit_aware =, kinds =, doc =}); NULL with an error message pushed. */
struct kb_impl;
struct kb_impl *lcomp_new_impl(lua_State *L, const char *name, int idx);
void lcomp_free_impl(struct kb_impl *impl);

#endif
