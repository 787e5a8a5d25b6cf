/* Components written in Lua: the binding of scripted components
 * (comp/scripted.h) to a process per node running the definition's
 * run(self), and implementations made from definition tables. */
#ifndef KB_LUA_LCOMPONENT_H
#define KB_LUA_LCOMPONENT_H

#include <lua.h>

struct lsim;
struct kb_impl;

/* The metatables (at module load). */
void lcomponent_open(lua_State *L);
/* Starts a process per Lua component of the simulation at sim_idx. */
void lcomponent_attach(lua_State *L, struct lsim *S, int sim_idx);

/* A scripted kb_impl (freed with kb_scripted_impl_free) from the
 * definition table at idx ({attrs = {name = default}, flit_aware =,
 * kinds =, messages =, doc =}); NULL with an error message pushed. */
struct kb_impl *lcomponent_new_impl(lua_State *L, const char *name, int idx);

#endif
