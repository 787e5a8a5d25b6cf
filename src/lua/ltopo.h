/* Topology userdata shared by the topology module and the simulation's
 * fabric operations. */
#ifndef KB_LUA_LTOPO_H
#define KB_LUA_LTOPO_H

#include "topo/route.h"
#include "topo/topo.h"

#include <lua.h>

#define LTOPO_MT "kernbench.topology"

typedef struct ltopo {
    kb_topo *topo; /* owned; NULL once collected */
} ltopo;

ltopo *ltopo_check(lua_State *L, int idx);
/* "all" | "data" | "memory" | "local" at idx, or dflt when absent. */
kb_view ltopo_check_view(lua_State *L, int idx, kb_view dflt);
/* Pushes a path as a list of node ids. */
void ltopo_push_path(lua_State *L, const kb_topo *t, const kb_path *p);

/* The C part of kb.topology: {load, implementations}. */
int luaopen_kb_topology(lua_State *L);

/* The node named by the string at idx (raises if there is none). */
uint32_t ltopo_check_node(lua_State *L, const kb_topo *t, int idx);

#endif
