/* Fabric operations on a simulation built on a topology:
 *
 *   s = sim.new{topology = topo}
 *   s:memory_write{pa=|sip=,cube=,pe=,offset=, nbytes=, hops=}  -> event
 *   s:memory_read{...}                                           -> event
 *   s:pe_dma{sip=,cube=,pe=, dst_pa=|dst={sip,cube,pe,offset}|dst_sram={sip,cube,offset},
 *            nbytes=, write=true, hops=}                          -> event
 *   s:transfer{src=id, dst=id, nbytes=, view="data", hops=}      -> event
 *
 * Each returns an event that succeeds, when the operation completes, with
 * {kind, nbytes, start_ns, end_ns, latency_ns, path={ids}, hops={...}}.
 * The result table is built at the Lua boundary when the operation
 * completes; until then a small C record (listed on the simulation, so a
 * closed simulation frees it) holds the state. */
#include "lua/lmachine.h"

#include "comp/entry.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/session.h"
#include "lua/lbytes.h"
#include "lua/lmodels.h"
#include "lua/lcomponent.h"
#include "machine/machine.h"
#include "lua/ltopo.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct lrequest {
    struct lrequest *prev, *next;
    lsim *S;
    int ref;          /* registry reference to the event userdata */
    const kb_msg_kind *kind;
    uint64_t nbytes;
    const kb_path *path;
    kb_hoplog log;
    bool want_hops;
    bool data_string; /* a read whose bytes go to the result's `data` */
} lrequest;

static void op_unlink(lrequest *o)
{
    if (o->prev)
        o->prev->next = o->next;
    else
        o->S->mach->ops = o->next;
    if (o->next)
        o->next->prev = o->prev;
}

static void op_free(lrequest *o)
{
    kb_hoplog_free(&o->log);
    free(o);
}

void lfabric_close(lua_State *L, lsim *S)
{
    while (S->mach->ops) {
        lrequest *o = S->mach->ops;
        op_unlink(o);
        luaL_unref(L, LUA_REGISTRYINDEX, o->ref);
        op_free(o);
    }
}

/* Completion, inside the run (or the submitting call): build the result. */
static void op_done(kb_txn *t, void *arg)
{
    lrequest *o = arg;
    lsim *S = o->S;
    lua_State *L = S->L ? S->L : S->mach->opL;
    const kb_topo *topo = kb_fabric_topo(S->mach->fab);
    kb_time now = kb_sim_now(S->sim);
    kb_machine_completed(S->mach->m, o->kind->name, o->nbytes, t->t_start, now);
    luaL_checkstack(L, 8, "operation result");
    lua_rawgeti(L, LUA_REGISTRYINDEX, o->ref);
    levent *e = lua_touserdata(L, -1);
    lua_createtable(L, 0, 8);
    lua_pushstring(L, o->kind->name);
    lua_setfield(L, -2, "kind");
    lua_pushinteger(L, (lua_Integer)o->nbytes);
    lua_setfield(L, -2, "nbytes");
    lbind_set_num(L, "start_ns", (double)t->t_start / 1000.0);
    lbind_set_num(L, "end_ns", (double)now / 1000.0);
    lbind_set_num(L, "latency_ns", (double)(now - t->t_start) / 1000.0);
    ltopo_push_path(L, topo, o->path);
    lua_setfield(L, -2, "path");
    const kb_mem_req *r = kb_mem_req_of(t);
    if (o->data_string && r->data) {
        lua_pushlstring(L, kb_data_buffer_bytes(r->data), r->nbytes);
        lua_setfield(L, -2, "data");
    }
    if (o->want_hops) {
        lua_createtable(L, (int)o->log.n, 0);
        for (size_t i = 0; i < o->log.n; i++) {
            const kb_hop *h = &o->log.hops[i];
            lua_createtable(L, 0, 3);
            lua_pushstring(L, kb_topo_node(topo, h->node)->id);
            lua_setfield(L, -2, "node");
            lbind_set_num(L, "first_ns", (double)h->first_in / 1000.0);
            lbind_set_num(L, "last_ns", (double)h->last_in / 1000.0);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "hops");
    }
    lua_setiuservalue(L, -2, LEV_UV_VALUE);
    lua_pop(L, 1);
    kb_event_succeed(e->ev, KB_ITEM_NONE);
    op_unlink(o);
    luaL_unref(L, LUA_REGISTRYINDEX, o->ref);
    op_free(o);
}

static lsim *check_fabric(lua_State *L, const char *call)
{
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        luaL_error(L, "%s: this simulation has no topology (create it with sim.new{topology = t})", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    return S;
}

static lua_Integer opt_int(lua_State *L, const char *call, const char *key, lua_Integer dflt,
                           bool required)
{
    lua_getfield(L, 2, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if (required)
            luaL_error(L, "%s: missing field '%s'", call, key);
        return dflt;
    }
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok)
        luaL_error(L, "%s: field '%s' must be an integer, got %s", call, key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

static bool opt_bool(lua_State *L, const char *key, bool dflt)
{
    lua_getfield(L, 2, key);
    bool v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static uint64_t check_nbytes(lua_State *L, const char *call)
{
    lua_Integer n = opt_int(L, call, "nbytes", 0, true);
    if (n <= 0)
        luaL_error(L, "%s: nbytes must be > 0, got %I", call, n);
    return (uint64_t)n;
}

static void raise_codec(lua_State *L, const char *call, const char *msg)
{
    luaL_error(L, "%s: %s", call, msg);
}

/* An HBM address from {sip, cube, pe, offset} fields of the table at idx. */
static kb_pa pa_from_fields(lua_State *L, lsim *S, int idx, const char *call, bool sram)
{
    lua_pushvalue(L, idx);
    lua_replace(L, 2); /* opt_int reads index 2 */
    unsigned sip = (unsigned)opt_int(L, call, "sip", 0, false);
    unsigned cube = (unsigned)opt_int(L, call, "cube", 0, false);
    uint64_t off = (uint64_t)opt_int(L, call, "offset", 0, false);
    kb_pa pa = 0;
    char msg[KB_PA_ERRLEN];
    bool ok;
    if (sram) {
        ok = kb_pa_cube_sram(sip, cube, off, &pa, msg, sizeof msg);
    } else {
        unsigned pe = (unsigned)opt_int(L, call, "pe", 0, false);
        uint64_t slice = kb_topo_params_of(kb_fabric_topo(S->mach->fab))->hbm_slice_bytes;
        ok = kb_pa_pe_hbm(sip, cube, pe, off, slice, &pa, msg, sizeof msg);
    }
    if (!ok)
        raise_codec(L, call, msg);
    return pa;
}

/* Pushes the event userdata and returns a new op record for it. */
static lrequest *new_op(lua_State *L, lsim *S, const kb_msg_kind *kind, uint64_t nbytes, const char *name)
{
    bool hops = opt_bool(L, "hops", false);
    kb_event *ev = kb_event_new(S->sim);
    kb_event_set_name(ev, name);
    levent *e = lsim_push_event(L, 1, S, ev, LEV_PLAIN);
    (void)e;
    lrequest *o = kb_xcalloc(1, sizeof *o);
    o->S = S;
    o->kind = kind;
    o->nbytes = nbytes;
    o->want_hops = hops;
    lua_pushvalue(L, -1);
    o->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    kb_machine_submitted(S->mach->m, name, nbytes);
    o->next = S->mach->ops;
    if (S->mach->ops)
        S->mach->ops->prev = o;
    S->mach->ops = o;
    S->mach->opL = L;
    return o;
}

static int fail_op(lua_State *L, lrequest *o, char *err)
{
    op_unlink(o);
    luaL_unref(L, LUA_REGISTRYINDEX, o->ref);
    op_free(o);
    return lbind_raise(L, err);
}

static int memory(lua_State *L, bool write)
{
    const kb_msg_kind *kind = write ? &kb_msg_mem_write : &kb_msg_mem_read;
    const char *call = write ? "s:memory_write{}" : "s:memory_read{}";
    lsim *S = check_fabric(L, call);
    uint64_t nbytes = check_nbytes(L, call);
    lua_getfield(L, 2, "pa");
    bool has_pa = !lua_isnil(L, -1);
    lua_pop(L, 1);
    lua_pushvalue(L, 2);
    int tbl = lua_gettop(L);
    kb_pa pa = has_pa ? (kb_pa)opt_int(L, call, "pa", 0, true)
                      : pa_from_fields(L, S, tbl, call, false);
    kb_data *data = lbytes_from_args(L, tbl, call, write, nbytes);
    char name[96];
    snprintf(name, sizeof name, "%s %llu B", kind->name, (unsigned long long)nbytes);
    lrequest *o = new_op(L, S, kind, nbytes, name);
    o->data_string = data && !write && lbytes_is_buffer(data);
    char *err = NULL;
    S->mach->opL = L;
    bool ok = kb_host_memory(S->mach->fab, write, pa, nbytes, data, op_done, o,
                             o->want_hops ? &o->log : NULL, &o->path, &err);
    if (!ok)
        return fail_op(L, o, err);
    return 1;
}

static int l_memory_write(lua_State *L) { return memory(L, true); }
static int l_memory_read(lua_State *L) { return memory(L, false); }

static int l_pe_dma(lua_State *L)
{
    const char *call = "s:pe_dma{}";
    lsim *S = check_fabric(L, call);
    uint64_t nbytes = check_nbytes(L, call);
    int sip = (int)opt_int(L, call, "sip", 0, false);
    int cube = (int)opt_int(L, call, "cube", 0, false);
    int pe = (int)opt_int(L, call, "pe", 0, false);
    bool write = opt_bool(L, "write", true);
    lua_pushvalue(L, 2);
    int tbl = lua_gettop(L);
    kb_pa pa;
    lua_getfield(L, tbl, "dst_pa");
    if (!lua_isnil(L, -1)) {
        lua_pop(L, 1);
        pa = (kb_pa)opt_int(L, call, "dst_pa", 0, true);
    } else {
        lua_pop(L, 1);
        lua_getfield(L, tbl, "dst");
        bool sram = false;
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_getfield(L, tbl, "dst_sram");
            sram = true;
        }
        if (!lua_istable(L, -1))
            return luaL_error(L, "%s: give the target as dst_pa=, dst={sip,cube,pe,offset} or "
                                 "dst_sram={sip,cube,offset}", call);
        pa = pa_from_fields(L, S, lua_gettop(L), call, sram);
        lua_pop(L, 1);
        lua_pushvalue(L, tbl);
        lua_replace(L, 2);
    }
    char name[96];
    snprintf(name, sizeof name, "PE DMA %s sip%d.cube%d.pe%d %llu B", write ? "write" : "read", sip,
             cube, pe, (unsigned long long)nbytes);
    lrequest *o = new_op(L, S, write ? &kb_msg_dma_write : &kb_msg_dma_read, nbytes, name);
    char *err = NULL;
    if (!kb_pe_dma(S->mach->fab, sip, cube, pe, write, pa, nbytes, op_done, o,
                   o->want_hops ? &o->log : NULL, &o->path, &err))
        return fail_op(L, o, err);
    return 1;
}

static int l_transfer(lua_State *L)
{
    const char *call = "s:transfer{}";
    lsim *S = check_fabric(L, call);
    /* 0 bytes: a control message (one empty flit) */
    lua_Integer n = opt_int(L, call, "nbytes", 0, true);
    if (n < 0)
        luaL_error(L, "%s: nbytes must be >= 0, got %I", call, n);
    uint64_t nbytes = (uint64_t)n;
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    int64_t ends[2];
    const char *keys[2] = {"src", "dst"};
    for (int i = 0; i < 2; i++) {
        lua_getfield(L, 2, keys[i]);
        const char *id = lua_tostring(L, -1);
        if (!id)
            return luaL_error(L, "%s: missing node id '%s'", call, keys[i]);
        ends[i] = kb_topo_find(t, id);
        if (ends[i] < 0)
            return luaL_error(L, "%s: no node '%s' in topology %s", call, id, kb_topo_name(t));
        lua_pop(L, 1);
    }
    lua_getfield(L, 2, "view");
    kb_view view = ltopo_check_view(L, lua_gettop(L), KB_VIEW_DATA);
    lua_pop(L, 1);
    lrequest *o = new_op(L, S, &kb_msg_transfer, nbytes, "Transfer");
    char *err = NULL;
    if (!kb_transfer(S->mach->fab, (uint32_t)ends[0], (uint32_t)ends[1], view, nbytes, opt_bool(L, "relay", false),
                     op_done, o,
                     o->want_hops ? &o->log : NULL, &o->path, &err))
        return fail_op(L, o, err);
    return 1;
}

static int l_topology(lua_State *L)
{
    lsim_check_any(L, 1);
    lua_getiuservalue(L, 1, LSIM_UV_MODEL);
    return 1;
}

const luaL_Reg lfabric_methods[] = {
    {"memory_write", l_memory_write},
    {"memory_read", l_memory_read},
    {"pe_dma", l_pe_dma},
    {"transfer", l_transfer},
    {"topology", l_topology},
    {NULL, NULL}};
