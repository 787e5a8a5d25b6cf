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
 * A small C record holds the operation's state: listed on the simulation
 * while in flight (a closed simulation frees it), then owned by the event,
 * which builds the result table from it when the value is first read
 * (lsim_deferred). A read that returns its bytes builds it at completion,
 * while the transaction still holds them. */
#include "lua/lmachine.h"

#include "comp/entry.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "mem/view.h"
#include "luasim/session.h"
#include "lua/lbytes.h"
#include "lua/lmodels.h"
#include "lua/lcomponent.h"
#include "machine/machine.h"
#include "lua/ltopo.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct lrequest {
    lpending pending;
    lsim_deferred deferred;
    const kb_msg_kind *kind;
    uint64_t nbytes;
    const kb_path *path;
    const kb_topo *topo; /* its node ids: alive while the event is (sim -> topology) */
    kb_time start, end;
    kb_hoplog log;
    bool want_hops;
    bool data_string; /* a read whose bytes go to the result's `data` */
} lrequest;

static void free_request(lrequest *o)
{
    kb_hoplog_free(&o->log);
    free(o);
}

/* Closing with the request in flight: the fabric drops its transaction. */
static void close_request(lpending *p) { free_request(KB_CONTAINER_OF(p, lrequest, pending)); }

/* Pushes the result table of a completed operation; `data` (ndata
 * bytes), when given, is a read's bytes. */
static void push_result(lua_State *L, const lrequest *o, const void *data, size_t ndata)
{
    luaL_checkstack(L, 8, "operation result");
    lua_createtable(L, 0, 8);
    lbind_set_str(L, "kind", o->kind->name);
    lbind_set_int(L, "nbytes", (lua_Integer)o->nbytes);
    lbind_set_ns(L, "start_ns", o->start);
    lbind_set_ns(L, "end_ns", o->end);
    lbind_set_ns(L, "latency_ns", o->end - o->start);
    ltopo_push_path(L, o->topo, o->path);
    lua_setfield(L, -2, "path");
    if (data) {
        lua_pushlstring(L, data, ndata);
        lua_setfield(L, -2, "data");
    }
    if (o->want_hops) {
        lua_createtable(L, (int)o->log.n, 0);
        for (size_t i = 0; i < o->log.n; i++) {
            const kb_hop *h = &o->log.hops[i];
            lua_createtable(L, 0, 3);
            lbind_set_str(L, "node", kb_topo_node(o->topo, h->node)->id);
            lbind_set_ns(L, "first_ns", h->first_in);
            lbind_set_ns(L, "last_ns", h->last_in);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "hops");
    }
}

static void push_deferred(lua_State *L, lsim_deferred *d) { push_result(L, KB_CONTAINER_OF(d, lrequest, deferred), NULL, 0); }
static void free_deferred(lsim_deferred *d) { free_request(KB_CONTAINER_OF(d, lrequest, deferred)); }

/* Completion, inside the run (or the submitting call). */
static void op_done(kb_txn *t, void *arg)
{
    lrequest *o = arg;
    lsim *S = o->pending.S;
    lua_State *L = lpending_state(&o->pending);
    o->topo = kb_fabric_topo(S->mach->fab);
    o->start = t->t_start;
    o->end = kb_sim_now(S->sim);
    kb_machine_completed(S->mach->m, o->kind->name, o->nbytes, o->start, o->end);
    const kb_mem_req *r = kb_mem_req_of(t);
    if (o->data_string && r->data) {
        push_result(L, o, kb_data_buffer_bytes(r->data), r->nbytes);
        lpending_succeed(L, &o->pending);
        free_request(o);
        return;
    }
    o->deferred = (lsim_deferred){push_deferred, free_deferred};
    lpending_succeed_deferred(L, &o->pending, &o->deferred);
}

static lsim *check_fabric(lua_State *L, const char *call)
{
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        luaL_error(L, "%s: this simulation has no topology (create it with sim.new{topology = t})", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    return S;
}

static bool opt_bool(lua_State *L, const char *call, const char *key, bool dflt)
{
    return lbind_field_bool(L, 2, call, key, dflt);
}

static void raise_codec(lua_State *L, const char *call, const char *msg)
{
    luaL_error(L, "%s: %s", call, msg);
}

/* An HBM address from {sip, cube, pe, offset} fields of the table at idx. */
static kb_pa pa_from_fields(lua_State *L, lsim *S, int idx, const char *call, bool sram)
{
    lua_Integer sip = 0, cube = 0, pe = 0, off = 0;
    lbind_field_int(L, idx, call, "sip", 0, INT_MAX, &sip);
    lbind_field_int(L, idx, call, "cube", 0, INT_MAX, &cube);
    lbind_field_int(L, idx, call, "offset", 0, LUA_MAXINTEGER, &off);
    kb_pa pa = 0;
    char msg[KB_PA_ERRLEN];
    bool ok;
    if (sram) {
        ok = kb_pa_cube_sram((unsigned)sip, (unsigned)cube, (uint64_t)off, &pa, msg, sizeof msg);
    } else {
        lbind_field_int(L, idx, call, "pe", 0, INT_MAX, &pe);
        uint64_t slice = kb_topo_params_of(kb_fabric_topo(S->mach->fab))->hbm_slice_bytes;
        ok = kb_pa_pe_hbm((unsigned)sip, (unsigned)cube, (unsigned)pe, (uint64_t)off, slice, &pa, msg, sizeof msg);
    }
    if (!ok)
        raise_codec(L, call, msg);
    return pa;
}

/* Pushes the event userdata and returns a new request record for it. */
static lrequest *new_op(lua_State *L, lsim *S, const char *call, const kb_msg_kind *kind, uint64_t nbytes,
                        const char *name)
{
    bool hops = opt_bool(L, call, "hops", false);
    kb_event *ev = kb_event_new(S->sim);
    kb_event_set_name(ev, name);
    lsim_push_event(L, 1, S, ev, LEV_PLAIN);
    lrequest *o = kb_xcalloc(1, sizeof *o);
    o->kind = kind;
    o->nbytes = nbytes;
    o->want_hops = hops;
    lpending_link(L, S, &o->pending, close_request);
    kb_machine_submitted(S->mach->m, name, nbytes);
    return o;
}

static int fail_op(lua_State *L, lrequest *o, char *err)
{
    lpending_unlink(L, &o->pending);
    free_request(o);
    return lbind_raise(L, err);
}

/* At most the largest tensor, 2^46 bytes (src/mem/view.h): its time on
 * any link stays far inside int64 picoseconds. */
static uint64_t check_nbytes(lua_State *L, const char *call, lua_Integer min)
{
    return (uint64_t)lbind_need_int(L, 2, call, "nbytes", min, (lua_Integer)KB_VIEW_MAX_BYTES);
}

/* The physical address at field `key` of the table at 2, if there is one. */
static bool opt_pa(lua_State *L, const char *call, const char *key, kb_pa *pa)
{
    lua_Integer v;
    if (!lbind_field_int(L, 2, call, key, 0, LUA_MAXINTEGER, &v))
        return false;
    *pa = (kb_pa)v;
    return true;
}

static int memory(lua_State *L, bool write)
{
    const kb_msg_kind *kind = write ? &kb_msg_mem_write : &kb_msg_mem_read;
    const char *call = write ? "s:memory_write{}" : "s:memory_read{}";
    lsim *S = check_fabric(L, call);
    /* src and dst both: the wrong direction's field has a message of its own (lbytes_from_args) */
    static const char *const known[] = {"nbytes", "pa", "sip", "cube", "pe", "offset", "src", "dst", "block", "data",
                                        "hops", NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    uint64_t nbytes = check_nbytes(L, call, 1);
    kb_pa pa;
    if (!opt_pa(L, call, "pa", &pa))
        pa = pa_from_fields(L, S, 2, call, false);
    kb_data *data = lbytes_from_args(L, 2, call, write, nbytes);
    char name[96];
    snprintf(name, sizeof name, "%s %llu B", kind->name, (unsigned long long)nbytes);
    lrequest *o = new_op(L, S, call, kind, nbytes, name);
    o->data_string = data && !write && lbytes_is_buffer(data);
    char *err = NULL;
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
    static const char *const known[] = {"nbytes", "sip", "cube", "pe", "write", "dst_pa", "dst", "dst_sram", "hops",
                                        NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    uint64_t nbytes = check_nbytes(L, call, 1);
    lua_Integer sip = 0, cube = 0, pe = 0;
    lbind_field_int(L, 2, call, "sip", 0, INT_MAX, &sip);
    lbind_field_int(L, 2, call, "cube", 0, INT_MAX, &cube);
    lbind_field_int(L, 2, call, "pe", 0, INT_MAX, &pe);
    bool write = opt_bool(L, call, "write", true);
    kb_pa pa;
    if (!opt_pa(L, call, "dst_pa", &pa)) {
        lua_getfield(L, 2, "dst");
        bool sram = false;
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_getfield(L, 2, "dst_sram");
            sram = true;
        }
        if (!lua_istable(L, -1))
            return luaL_error(L, "%s: give the target as dst_pa=, dst={sip,cube,pe,offset} or "
                                 "dst_sram={sip,cube,offset}", call);
        static const char *const hbm_keys[] = {"sip", "cube", "pe", "offset", NULL};
        static const char *const sram_keys[] = {"sip", "cube", "offset", NULL};
        lbind_check_keys(L, -1, call, sram ? "dst_sram's fields" : "dst's fields", sram ? sram_keys : hbm_keys);
        pa = pa_from_fields(L, S, lua_gettop(L), call, sram);
        lua_pop(L, 1);
    }
    char name[96];
    snprintf(name, sizeof name, "PE DMA %s sip%d.cube%d.pe%d %llu B", write ? "write" : "read", (int)sip,
             (int)cube, (int)pe, (unsigned long long)nbytes);
    lrequest *o = new_op(L, S, call, write ? &kb_msg_dma_write : &kb_msg_dma_read, nbytes, name);
    char *err = NULL;
    if (!kb_pe_dma(S->mach->fab, (int)sip, (int)cube, (int)pe, write, pa, nbytes, op_done, o,
                   o->want_hops ? &o->log : NULL, &o->path, &err))
        return fail_op(L, o, err);
    return 1;
}

static int l_transfer(lua_State *L)
{
    const char *call = "s:transfer{}";
    lsim *S = check_fabric(L, call);
    static const char *const known[] = {"nbytes", "src", "dst", "view", "relay", "hops", NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    uint64_t nbytes = check_nbytes(L, call, 0); /* 0 bytes: a control message (one empty flit) */
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    int64_t ends[2];
    const char *keys[2] = {"src", "dst"};
    for (int i = 0; i < 2; i++) {
        lua_getfield(L, 2, keys[i]);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "%s: missing node id '%s'", call, keys[i]);
        const char *id = lbind_tostr(L, -1, call, keys[i]);
        ends[i] = kb_topo_find(t, id);
        if (ends[i] < 0)
            return luaL_error(L, "%s: no node '%s' in topology %s", call, id, kb_topo_name(t));
        lua_pop(L, 1);
    }
    lua_getfield(L, 2, "view");
    kb_view view = ltopo_check_view(L, lua_gettop(L), KB_VIEW_DATA);
    lua_pop(L, 1);
    lrequest *o = new_op(L, S, call, &kb_msg_transfer, nbytes, "Transfer");
    char *err = NULL;
    if (!kb_transfer(S->mach->fab, (uint32_t)ends[0], (uint32_t)ends[1], view, nbytes, opt_bool(L, call, "relay", false),
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
