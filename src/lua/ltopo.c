/* Topologies in Lua: the C side of kb.topology (lua/kernbench/topology.lua
 * adds file lookup and command-line defaults).
 *
 *   T.load(path[, {"key.path=value", ...}[, shipped_dir]]) -> topology | raises
 *   topo:nodes([glob]) -> {id, ...} in id order
 *   topo:node(id) -> {id, kind, impl, attrs, sip, cube, pe, io, pos_mm}
 *   topo:edges(id) -> {{src, dst, kind, bw_gbs, mm}, ...}
 *   topo:path(src, dst[, view]) -> {id, ...}
 *   topo:resolve(pa) -> node id
 *   topo:summary() -> string;  topo:params() -> table;  topo.name, topo.file
 *
 * The registry of implementations lives in the module's upvalue (one per
 * Lua state), so Lua-written implementations can join it later. */
#include "lua/ltopo.h"

#include "comp/comp.h"
#include "comp/entry.h"
#include "comp/scripted.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/session.h"
#include "lua/lcomponent.h"
#include "mem/view.h"
#include "topo/route.h"

#include <fnmatch.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct lregistry {
    kb_registry *reg;
    kb_impl **owned;   /* Lua implementations made here */
    size_t nowned;
    lua_State *L;      /* while a topology loads: for the resolver */
    const char *dir;   /* the loading topology's directory */
} lregistry;

static int reg_gc(lua_State *L)
{
    lregistry *r = lua_touserdata(L, 1);
    kb_registry_free(r->reg);
    r->reg = NULL;
    for (size_t i = 0; i < r->nowned; i++)
        kb_scripted_impl_free(r->owned[i]);
    free(r->owned);
    r->owned = NULL;
    r->nowned = 0;
    return 0;
}

/* Makes an implementation from the definition table at idx and adds it
 * (an error message pushed and false if it cannot). */
static bool add_lua_impl(lua_State *L, lregistry *r, const char *name, int idx)
{
    kb_impl *impl = lcomponent_new_impl(L, name, idx);
    if (!impl)
        return false;
    if (!kb_registry_add(r->reg, impl)) {
        kb_scripted_impl_free(impl);
        lua_pushfstring(L, "an implementation named '%s' is already registered", name);
        return false;
    }
    r->owned = kb_xrealloc(r->owned, (r->nowned + 1) * sizeof *r->owned);
    r->owned[r->nowned++] = impl;
    return true;
}

/* `impl: lua:MODULE` during a load: kernbench.components.resolve loads the
 * module (the topology's directory first on the path). */
static const kb_impl *resolve_lua(void *ctx, const char *name, char **err)
{
    lregistry *r = ctx;
    lua_State *L = r->L;
    if (!L || strncmp(name, "lua:", 4) != 0)
        return NULL;
    int top = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "kernbench.components");
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        *err = kb_asprintf("%s: %s", name, lua_tostring(L, -1));
        lua_settop(L, top);
        return NULL;
    }
    lua_getfield(L, -1, "resolve");
    lua_pushstring(L, name);
    lua_pushstring(L, r->dir ? r->dir : ".");
    if (lua_pcall(L, 2, 1, 0) != LUA_OK || !add_lua_impl(L, r, name, -1)) {
        *err = kb_xstrdup(lua_tostring(L, -1));
        lua_settop(L, top);
        return NULL;
    }
    lua_settop(L, top);
    return kb_registry_find(r->reg, name);
}

/* T.register_impl(name, def): a Lua implementation under a name of its own. */
static int l_register_impl(lua_State *L)
{
    lregistry *r = lua_touserdata(L, lua_upvalueindex(1));
    const char *name = lbind_checkstr(L, 1, "register_impl", "name");
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!add_lua_impl(L, r, name, 2))
        return lua_error(L);
    return 0;
}

ltopo *ltopo_check(lua_State *L, int idx)
{
    ltopo *t = luaL_checkudata(L, idx, LTOPO_MT);
    if (!t->topo)
        luaL_error(L, "topology has been freed");
    return t;
}

static int t_gc(lua_State *L)
{
    ltopo *t = luaL_checkudata(L, 1, LTOPO_MT);
    kb_topo_free(t->topo);
    t->topo = NULL;
    return 0;
}

static int l_load(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_error(L, "kb.topology.load: argument 1 (path) must be a string, got %s", luaL_typename(L, 1));
    const char *path = lbind_checkstr(L, 1, "kb.topology.load", "path");
    const char *shipped = lbind_optstr(L, 3, "kb.topology.load", "shipped", NULL); /* where `base: NAME` looks */
    size_t n = 0;
    const char **ov = NULL;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        n = (size_t)lua_rawlen(L, 2);
        ov = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ov, 0); /* freed by the GC */
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 2, (lua_Integer)i + 1);
            if (!lua_isstring(L, -1))
                return luaL_error(L, "kb.topology.load: override %d is not a \"key.path=value\" string",
                                  (int)i + 1);
            lua_tostring(L, -1); /* a number becomes a string in place */
            ov[i] = lbind_tostr(L, -1, "kb.topology.load", "an override");
            lua_rawseti(L, 2, (lua_Integer)i + 1); /* keep the string anchored */
        }
    }
    lregistry *r = lua_touserdata(L, lua_upvalueindex(1));
    char *err = NULL;
    const char *slash = strrchr(path, '/');
    lua_pushlstring(L, slash ? path : ".", slash ? (size_t)(slash - path) : 1); /* the directory, anchored */
    r->L = L;
    r->dir = lua_tostring(L, -1);
    kb_topo *topo = kb_topo_load_from(path, shipped, ov, n, r->reg, &err);
    r->L = NULL;
    r->dir = NULL;
    lua_pop(L, 1);
    if (!topo)
        return lbind_raise(L, err);
    ltopo *t = lua_newuserdatauv(L, sizeof *t, 0);
    t->topo = topo;
    luaL_setmetatable(L, LTOPO_MT);
    kb_session *session = kb_session_of(L);
    if (session && session->config_out) {
        char *yaml = kb_topo_config_yaml(topo);
        kb_session_dump_config(session, yaml);
        free(yaml);
    }
    return 1;
}

uint32_t ltopo_check_node(lua_State *L, const kb_topo *t, int idx)
{
    idx = lua_absindex(L, idx);
    size_t len = 0;
    const char *id = lua_type(L, idx) == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!id || strlen(id) != len)
        luaL_error(L, "%s: argument %d (node id) must be a string without NUL bytes, got %s", lbind_fname(L), idx,
                   id ? "one with a NUL byte" : luaL_typename(L, idx));
    int64_t n = kb_topo_find(t, id);
    if (n < 0)
        luaL_error(L, "%s: no node '%s' in topology %s", lbind_fname(L), id, kb_topo_name(t));
    return (uint32_t)n;
}

static int t_nodes(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const char *pat = lbind_optstr(L, 2, "topo:nodes", "pattern", "*");
    lua_newtable(L);
    lua_Integer k = 0;
    for (uint32_t r = 0; r < kb_topo_node_count(t); r++) {
        const kb_node *n = kb_topo_node(t, kb_topo_by_rank(t, r));
        if (fnmatch(pat, n->id, 0) == 0) {
            lua_pushstring(L, n->id);
            lua_rawseti(L, -2, ++k);
        }
    }
    return 1;
}

static int t_node(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const kb_node *n = kb_topo_node(t, ltopo_check_node(L, t, 2));
    lua_createtable(L, 0, 10);
    lbind_set_str(L, "id", n->id);
    lbind_set_str(L, "kind", n->spec->kind);
    lbind_set_str(L, "impl", n->spec->impl->name);
    lbind_set_str(L, "role", n->spec->role);
    if (n->sip >= 0) lbind_set_int(L, "sip", n->sip);
    if (n->cube >= 0) lbind_set_int(L, "cube", n->cube);
    if (n->pe >= 0) lbind_set_int(L, "pe", n->pe);
    if (n->io >= 0) lbind_set_int(L, "io", n->io);
    if (n->has_pos) {
        lua_createtable(L, 2, 0);
        lua_pushnumber(L, n->x_mm);
        lua_rawseti(L, -2, 1);
        lua_pushnumber(L, n->y_mm);
        lua_rawseti(L, -2, 2);
        lua_setfield(L, -2, "pos_mm");
    }
    lua_newtable(L);
    const kb_impl *impl = n->spec->impl;
    for (size_t i = 0; i < impl->nattrs; i++) {
        if (impl->attrs[i].type == KB_ATTR_BOOL)
            lua_pushboolean(L, n->spec->vals[i] != 0);
        else if (impl->attrs[i].type == KB_ATTR_INT)
            lua_pushinteger(L, (lua_Integer)n->spec->vals[i]);
        else
            lua_pushnumber(L, n->spec->vals[i]);
        lua_setfield(L, -2, impl->attrs[i].name);
    }
    lua_setfield(L, -2, "attrs");
    return 1;
}

/* Coordinate field k of the table at 2: an integer >= 0, or -1 when absent. */
static int place_field(lua_State *L, const char *k)
{
    lua_Integer v = -1;
    lbind_field_int(L, 2, "topology:node_at", k, 0, INT_MAX, &v);
    return (int)v;
}

/* t:node_at{kind=, sip=, cube=, pe=, io=} -> id | nil: the node of a kind
 * at a place (coordinates that do not apply are left out). */
static int t_node_at(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"kind", "sip", "cube", "pe", "io", NULL};
    lbind_check_keys(L, 2, "topology:node_at", NULL, known);
    lua_getfield(L, 2, "kind");
    const char *kind = lua_isnil(L, -1) ? NULL : lbind_tostr(L, -1, "topology:node_at", "field 'kind'");
    if (!kind)
        return luaL_error(L, "topology:node_at: field 'kind' (a node kind such as \"pe_dma\") is missing");
    int64_t n = kb_topo_node_at(t, kind, place_field(L, "sip"), place_field(L, "cube"), place_field(L, "pe"),
                                place_field(L, "io"));
    if (n == KB_NODE_AMBIGUOUS)
        return luaL_error(L, "topology:node_at: several %s nodes share that place: name one by its id", kind);
    if (n < 0)
        lua_pushnil(L);
    else
        lua_pushstring(L, kb_topo_node(t, (uint32_t)n)->id);
    return 1;
}

static void push_edge(lua_State *L, const kb_topo *t, const kb_edge *e)
{
    lua_createtable(L, 0, 6);
    lbind_set_str(L, "src", kb_topo_node(t, e->src)->id);
    lbind_set_str(L, "dst", kb_topo_node(t, e->dst)->id);
    lbind_set_str(L, "kind", kb_edge_kind_name(e->kind));
    lbind_set_num(L, "bw_gbs", e->bw_gbs);
    lbind_set_num(L, "mm", e->mm);
    lbind_set_ns(L, "prop_ns", kb_topo_edge_prop_ps(t, e));
}

static int t_edges(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const kb_node *n = kb_topo_node(t, ltopo_check_node(L, t, 2));
    lua_createtable(L, (int)n->nout, 0);
    for (uint32_t i = 0; i < n->nout; i++) {
        push_edge(L, t, kb_topo_edge(t, n->first_out + i));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

kb_view ltopo_check_view(lua_State *L, int idx, kb_view dflt)
{
    static const char *const names[] = {"all", "data", "memory", "local", NULL};
    if (lua_isnoneornil(L, idx))
        return dflt;
    return (kb_view)luaL_checkoption(L, idx, NULL, names);
}

void ltopo_push_path(lua_State *L, const kb_topo *t, const kb_path *p)
{
    lua_createtable(L, (int)p->n, 0);
    for (uint32_t i = 0; i < p->n; i++) {
        lua_pushstring(L, kb_topo_node(t, p->nodes[i])->id);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* The path of t:path(src, dst[, view]) / t:path_edges(...): from a PE DMA
 * engine without a view, the PE DMA routing policy (local view inside a
 * cube); else the view's shortest path. */
static const kb_path *check_path(lua_State *L, const kb_topo *t)
{
    uint32_t a = ltopo_check_node(L, t, 2), b = ltopo_check_node(L, t, 3);
    char *err = NULL;
    const kb_path *p;
    if (lua_isnoneornil(L, 4) && strstr(kb_topo_node(t, a)->id, ".pe_dma"))
        p = kb_route_pe(t, a, b, &err);
    else
        p = kb_route(t, ltopo_check_view(L, 4, KB_VIEW_DATA), a, b, &err);
    if (!p)
        lbind_raise(L, err);
    return p;
}

static int t_path(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    ltopo_push_path(L, t, check_path(L, t));
    return 1;
}

static int t_path_edges(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const kb_path *p = check_path(L, t);
    lua_createtable(L, (int)p->n, 0);
    for (uint32_t i = 0; i + 1 < p->n; i++) {
        push_edge(L, t, kb_topo_edge(t, p->edges[i]));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* t:path_latency_ns(src, dst[, view[, nbytes]]): the path formula. */
static int t_path_latency(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const kb_path *p = check_path(L, t);
    lua_Integer n = luaL_optinteger(L, 5, 0);
    luaL_argcheck(L, n >= 0 && (uint64_t)n <= KB_VIEW_MAX_BYTES, 5, "nbytes must be 0 .. 2^46 (the largest tensor)");
    lua_pushnumber(L, kb_ps_to_ns((double)kb_path_latency_ps(t, p, (uint64_t)n)));
    return 1;
}

static int t_resolve(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    kb_target tg;
    char *err = NULL;
    if (!kb_resolve_pa(t, (kb_pa)luaL_checkinteger(L, 2), &tg, &err)) {
        return lbind_raise_prefixed(L, lbind_fname(L), err);
    }
    lua_pushstring(L, kb_topo_node(t, tg.node)->id);
    lua_pushinteger(L, (lua_Integer)tg.offset);
    return 2;
}

static int t_summary(lua_State *L)
{
    char *s = kb_topo_summary(ltopo_check(L, 1)->topo);
    lua_pushstring(L, s);
    free(s);
    return 1;
}

static int t_config(lua_State *L)
{
    char *s = kb_topo_config_yaml(ltopo_check(L, 1)->topo);
    lua_pushstring(L, s);
    free(s);
    return 1;
}

static int t_params(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const kb_topo_params *p = kb_topo_params_of(t);
    lua_newtable(L);
    lbind_set_str(L, "name", kb_topo_name(t));
    lbind_set_str(L, "path", kb_topo_path(t));
    lbind_set_str(L, "profile", kb_topo_profile(t));
    lbind_set_num(L, "ns_per_mm", p->ns_per_mm);
    lbind_set_int(L, "flit_bytes", p->flit_bytes);
    lbind_set_int(L, "host_max_outstanding", p->host_max_outstanding);
    lbind_set_int(L, "sips", p->sips);
    lbind_set_str(L, "sip_topology", p->sip_topology);
    lbind_set_int(L, "sip_grid_w", p->sip_grid_w);
    lbind_set_int(L, "sip_grid_h", p->sip_grid_h);
    lbind_set_int(L, "cube_w", p->cube_w);
    lbind_set_int(L, "cube_h", p->cube_h);
    lbind_set_int(L, "cubes_per_sip", p->cubes_per_sip);
    lbind_set_int(L, "pes_per_cube", p->pes_per_cube);
    lbind_set_int(L, "io_per_sip", p->io_per_sip);
    lbind_set_int(L, "hbm_channels_per_pe", p->hbm_channels_per_pe);
    lbind_set_num(L, "hbm_channel_bw_gbs", p->hbm_channel_bw_gbs);
    lbind_set_int(L, "hbm_slice_bytes", (lua_Integer)p->hbm_slice_bytes);
    lbind_set_int(L, "nodes", (lua_Integer)kb_topo_node_count(t));
    lbind_set_int(L, "edges", (lua_Integer)kb_topo_edge_count(t));
    return 1;
}

static int t_index(lua_State *L)
{
    const kb_topo *t = ltopo_check(L, 1)->topo;
    const char *k = lbind_checkstr(L, 2, "topo[key]", "key");
    if (strcmp(k, "name") == 0) {
        lua_pushstring(L, kb_topo_name(t));
        return 1;
    }
    if (strcmp(k, "file") == 0) {
        lua_pushstring(L, kb_topo_path(t));
        return 1;
    }
    luaL_getmetafield(L, 1, "__methods");
    lua_getfield(L, -1, k);
    return 1;
}

static int t_tostring(lua_State *L)
{
    ltopo *t = luaL_checkudata(L, 1, LTOPO_MT);
    if (!t->topo)
        lua_pushliteral(L, "topology (freed)");
    else
        lua_pushfstring(L, "topology %s (%d nodes)", kb_topo_name(t->topo),
                        (int)kb_topo_node_count(t->topo));
    return 1;
}

static int l_implementations(lua_State *L)
{
    lregistry *r = lua_touserdata(L, lua_upvalueindex(1));
    lua_newtable(L);
    for (size_t i = 0; i < kb_registry_count(r->reg); i++) {
        const kb_impl *impl = kb_registry_at(r->reg, i);
        lua_createtable(L, 0, 4);
        lbind_set_str(L, "name", impl->name);
        if (impl->kinds)
            lbind_set_str(L, "kinds", impl->kinds);
        lbind_set_str(L, "doc", impl->doc ? impl->doc : "");
        lua_newtable(L);
        for (size_t a = 0; a < impl->nattrs; a++) {
            lua_createtable(L, 0, 4);
            lbind_set_str(L, "name", impl->attrs[a].name);
            lbind_set_num(L, "default", impl->attrs[a].dflt);
            if (impl->attrs[a].unit)
                lbind_set_str(L, "unit", impl->attrs[a].unit);
            lbind_set_str(L, "doc", impl->attrs[a].doc ? impl->attrs[a].doc : "");
            lua_rawseti(L, -2, (lua_Integer)a + 1);
        }
        lua_setfield(L, -2, "attrs");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static const luaL_Reg topo_methods[] = {
    {"nodes", t_nodes},     {"node", t_node},       {"node_at", t_node_at}, {"edges", t_edges},
    {"path", t_path},       {"path_edges", t_path_edges}, {"path_latency_ns", t_path_latency},
    {"resolve", t_resolve}, {"summary", t_summary}, {"params", t_params}, {"config", t_config},
    {NULL, NULL}};

int luaopen_kb_topology(lua_State *L)
{
    luaL_newmetatable(L, LTOPO_MT);
    luaL_newlib(L, topo_methods);
    lua_setfield(L, -2, "__methods");
    lua_pushcfunction(L, t_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, t_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, t_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    lua_newtable(L);
    lregistry *r = lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    r->reg = kb_registry_new();
    kb_comp_register_builtins(r->reg);
    kb_registry_set_resolver(r->reg, resolve_lua, r);
    lcomponent_open(L);
    lua_newtable(L);
    lua_pushcfunction(L, reg_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, l_load, 1);
    lua_setfield(L, -3, "load");
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, l_implementations, 1);
    lua_setfield(L, -3, "implementations");
    lua_pushcclosure(L, l_register_impl, 1);
    lua_setfield(L, -2, "register_impl");
    return 1;
}
