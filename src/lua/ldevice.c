/* Device control from Lua: the host's messages that IO_CPU and M_CPU carry
 * to PEs (src/comp/device/control.h).
 *
 *   s:mmu_map{targets = {{sip=, cube=, pe=}, ...}, entries = {{va=, pa=, size=}, ...},
 *             label = "tensor 'w' [4, 4] f32"}                                         -> event
 *   s:mmu_unmap{targets = {...}, entries = {{va=, size=}, ...}}                          -> event
 *   s:ipcq_install{buffer_kind =, backpressure =, n_slots =, slot_size =,
 *                  pes = {{sip=, cube=, pe=, dirs = {{name=, peer=, peer_dir=, rx_pa=}, ...}}, ...},
 *                  clear = {{sip=, cube=, pe=}, ...}}   (PEs that leave the queues)
 *                                                                                      -> event
 *   s:launch{name =, targets = {...}, grid = {pes =, cubes =}, data =, pa_fallback =,
 *            body = function(ctx, sip, cube, pe) ... end}                                -> event
 *
 * Each sends one operation from the PCIe endpoint of the targets' SIP(s)
 * now and returns an event that succeeds when its completion is back at
 * the host: with true, or for a launch with its answer (the PEs' figures,
 * merged by max, and each PE's). At each target PE, at the launch's start
 * barrier, a process "kernel NAME on sipS.cubeC.peP" runs body with the
 * kernel instance's context (ltl.c); the body ends with ctx:finish().
 * Until the completion a small record, listed on the simulation so that
 * closing it frees everything, holds the event. */
#include "lua/lmachine.h"

#include "comp/device/control.h"
#include "comp/entry.h"
#include "comp/pe/ipcq.h"
#include "lua/ltl_internal.h"
#include "core/util.h"
#include "luasim/lbind.h"
#include "machine/machine.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lctrl {
    lpending pending;
    kb_ctrl_op *op;
    kb_time start;
} lctrl;

static lctrl *ctrl_of(lpending *p) { return KB_CONTAINER_OF(p, lctrl, pending); }

/* Closing with the operation in flight: its completion will find no one. */
static void close_ctrl(lpending *p)
{
    lctrl *r = ctrl_of(p);
    kb_ctrl_abandon(r->op);
    free(r);
}

/* A launch's answer: every PE's figures in target order, and the largest
 * of each (pe_exec_ns = end - start). */
static void push_answer(lua_State *L, const kb_ctrl_op *op)
{
    const kb_pe_answer *a = kb_ctrl_answers(op);
    size_t n = kb_ctrl_ntargets(op);
    kb_time exec = 0, dma = 0, compute = 0, late = 0;
    lua_createtable(L, 0, 6);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const kb_ctrl_target *tg = kb_ctrl_target_at(op, i);
        lua_createtable(L, 0, 10);
        lbind_set_int(L, "sip", tg->sip);
        lbind_set_int(L, "cube", tg->cube);
        lbind_set_int(L, "pe", tg->pe);
        lbind_set_ns(L, "start_ns", a[i].start_ps);
        lbind_set_time(L, "end_ns", a[i].end_ps);
        lbind_set_ns(L, "pe_exec_ns", a[i].end_ps - a[i].start_ps);
        lbind_set_time(L, "dma_ns", a[i].dma_ps);
        lbind_set_time(L, "compute_ns", a[i].compute_ps);
        lbind_set_int(L, "calls", (lua_Integer)a[i].calls);
        lbind_set_ns(L, "late_ns", a[i].late_ps);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        exec = a[i].end_ps - a[i].start_ps > exec ? a[i].end_ps - a[i].start_ps : exec;
        dma = a[i].dma_ps > dma ? a[i].dma_ps : dma;
        compute = a[i].compute_ps > compute ? a[i].compute_ps : compute;
        late = a[i].late_ps > late ? a[i].late_ps : late;
    }
    lua_setfield(L, -2, "pes");
    lbind_set_ns(L, "pe_exec_ns", exec);
    lbind_set_time(L, "dma_ns", dma);
    lbind_set_time(L, "compute_ns", compute);
    lbind_set_ns(L, "late_ns", late);
    lbind_set_ns(L, "target_start_ns", kb_ctrl_start_ps(op, kb_ctrl_target_at(op, 0)->sip));
}

/* The completion is back at the host: the event succeeds. */
static void ctrl_done(kb_ctrl_op *op, void *arg)
{
    lctrl *r = arg;
    lsim *S = r->pending.S;
    lua_State *L = lpending_state(&r->pending);
    kb_machine_completed(S->mach->m, kb_ctrl_kind(op)->name, 0, r->start, kb_sim_now(S->sim));
    luaL_checkstack(L, 8, "launch answer");
    if (kb_ctrl_kind(op) == &kb_msg_kernel_launch)
        push_answer(L, op);
    else
        lua_pushboolean(L, 1);
    lpending_succeed(L, &r->pending);
    free(r);
}

/* The list at field k of the table at 2 (a non-empty table of tables). */
static int check_list(lua_State *L, const char *k, const char *call)
{
    lua_getfield(L, 2, k);
    if (!lua_istable(L, -1) || lua_rawlen(L, -1) == 0)
        luaL_error(L, "%s: field '%s' must be a non-empty list", call, k);
    return (int)lua_rawlen(L, -1);
}

static kb_ctrl_target *read_targets(lua_State *L, const char *field, const char *call, size_t *n)
{
    int len = check_list(L, field, call);
    kb_ctrl_target *tg = lua_newuserdatauv(L, (size_t)len * sizeof *tg, 0); /* freed by the collector */
    for (int i = 0; i < len; i++) {
        lua_rawgeti(L, -2, i + 1);
        if (!lua_istable(L, -1))
            luaL_error(L, "%s: %s[%d] must be a table {sip =, cube =, pe =}", call, field, i + 1);
        lua_Integer v[3];
        static const char *const keys[4] = {"sip", "cube", "pe", NULL};
        lbind_check_keys(L, -1, call, "a target's fields", keys);
        for (int k = 0; k < 3; k++)
            if (!lbind_field_int(L, -1, call, keys[k], 0, INT_MAX, &v[k]))
                luaL_error(L, "%s: %s[%d] has no '%s'", call, field, i + 1, keys[k]);
        tg[i] = (kb_ctrl_target){(int)v[0], (int)v[1], (int)v[2]};
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return tg;
}

static kb_mmu_entry *read_entries(lua_State *L, const char *call, bool map, size_t *n)
{
    int len = check_list(L, "entries", call);
    kb_mmu_entry *e = lua_newuserdatauv(L, (size_t)len * sizeof *e, 0);
    for (int i = 0; i < len; i++) {
        lua_rawgeti(L, -2, i + 1);
        lua_Integer va = 0, pa = 0, size = 0;
        static const char *const map_keys[] = {"va", "pa", "size", NULL};
        static const char *const unmap_keys[] = {"va", "size", NULL};
        if (lua_istable(L, -1))
            lbind_check_keys(L, -1, call, "an entry's fields", map ? map_keys : unmap_keys);
        if (!lua_istable(L, -1) || !lbind_field_int(L, -1, call, "va", 0, LUA_MAXINTEGER, &va) ||
            !lbind_field_int(L, -1, call, "size", 0, LUA_MAXINTEGER, &size) ||
            (map && !lbind_field_int(L, -1, call, "pa", 0, LUA_MAXINTEGER, &pa)))
            luaL_error(L, "%s: entries[%d] must be a table {va =, %ssize =}", call, i + 1, map ? "pa =, " : "");
        e[i] = (kb_mmu_entry){(uint64_t)va, (uint64_t)pa, (uint64_t)size};
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return e;
}

/* Each entry of a map must lie in one memory: its PA resolves, and its
 * size stays inside the slice (SRAM, TCM ...) the PA starts in. */
static void check_entries(lua_State *L, lsim *S, const kb_mmu_entry *e, size_t n, const char *call)
{
    const kb_topo *t = kb_fabric_topo(S->mach->fab);
    for (size_t i = 0; i < n; i++) {
        if (e[i].size == 0)
            continue;
        kb_target tg;
        char *err = NULL, what[64];
        snprintf(what, sizeof what, "%s: entries[%zu] (va 0x%llx)", call, i + 1, (unsigned long long)e[i].va);
        if (!kb_resolve_pa(t, (kb_pa)e[i].pa, &tg, &err)) {
            char *msg = kb_asprintf("%s: %s", what, err);
            free(err);
            lbind_raise(L, msg);
        }
        if (!kb_target_check_range(t, &tg, (kb_pa)e[i].pa, e[i].size, what, &err))
            lbind_raise(L, err);
    }
}

/* Submits op; pushes the event that its completion succeeds. */
static int submit(lua_State *L, lsim *S, kb_ctrl_op *op, const char *name)
{
    kb_event *ev = kb_event_new(S->sim);
    kb_event_set_name(ev, name);
    lsim_push_event(L, 1, S, ev, LEV_PLAIN);
    lctrl *r = kb_xcalloc(1, sizeof *r);
    r->op = op;
    r->start = kb_sim_now(S->sim);
    lpending_link(L, S, &r->pending, close_ctrl);
    kb_ctrl_on_done(op, ctrl_done, r);
    kb_machine_submitted(S->mach->m, name, 0);
    char *err = NULL;
    if (!kb_ctrl_submit(S->mach->fab, op, &err)) {
        lpending_unlink(L, &r->pending);
        free(r);
        return lbind_raise(L, err);
    }
    return 1;
}

static int mmu(lua_State *L, bool map)
{
    const char *call = map ? "s:mmu_map{}" : "s:mmu_unmap{}";
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        return luaL_error(L, "%s: this simulation has no topology", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const map_keys[] = {"targets", "entries", "label", NULL};
    static const char *const unmap_keys[] = {"targets", "entries", NULL};
    lbind_check_keys(L, 2, call, NULL, map ? map_keys : unmap_keys);
    size_t nt, ne;
    kb_ctrl_target *tg = read_targets(L, "targets", call, &nt);
    kb_mmu_entry *e = read_entries(L, call, map, &ne);
    if (map)
        check_entries(L, S, e, ne, call);
    const char *label = NULL;
    if (map && lua_getfield(L, 2, "label") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "%s: field 'label' must be a string (what the entries hold, named in errors), "
                                 "got %s", call, luaL_typename(L, -1));
        label = lbind_tostr(L, -1, call, "field 'label'");
    }
    kb_ctrl_op *op = kb_ctrl_new(map ? &kb_msg_mmu_map : &kb_msg_mmu_unmap, tg, nt);
    kb_ctrl_set_entries(op, e, ne);
    kb_ctrl_set_label(op, label);
    lua_settop(L, 1);
    return submit(L, S, op, map ? "mmu map" : "mmu unmap");
}

static int l_mmu_map(lua_State *L) { return mmu(L, true); }
static int l_mmu_unmap(lua_State *L) { return mmu(L, false); }

/* ---- PE-to-PE queues ---- */

static void free_plan(void *p) { kb_ipcq_plan_unref(p); }

static lua_Integer need_int(lua_State *L, int idx, const char *call, const char *what, const char *key,
                            lua_Integer lo, lua_Integer hi)
{
    lua_Integer v;
    if (!lbind_field_int(L, idx, call, key, lo, hi, &v))
        luaL_error(L, "%s: %s has no '%s'", call, what, key);
    return v;
}

static int guard_gc(lua_State *L)
{
    kb_ipcq_plan **g = lua_touserdata(L, 1);
    if (g && *g)
        kb_ipcq_plan_unref(*g);
    return 0;
}

/* The plan in the table at 2 (rank order; peers and peer directions are
 * 0-based indices), checked against the topology. */
static kb_ipcq_plan *read_plan(lua_State *L, lsim *S, const char *call)
{
    static const char *const known[] = {"buffer_kind", "backpressure", "n_slots", "slot_size", "pes", "clear", NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    lua_getfield(L, 2, "buffer_kind");
    kb_ipcq_kind kind;
    if (lua_type(L, -1) == LUA_TSTRING)
        lbind_tostr(L, -1, call, "buffer_kind");
    if (!lua_isstring(L, -1) || !kb_ipcq_kind_find(lua_tostring(L, -1), &kind))
        luaL_error(L, "%s: buffer_kind must be \"tcm\", \"sram\" or \"hbm\", got %s", call,
                   lua_isstring(L, -1) ? lua_tostring(L, -1) : luaL_typename(L, -1));
    lua_getfield(L, 2, "backpressure");
    const char *bp = lua_type(L, -1) == LUA_TSTRING ? lbind_tostr(L, -1, call, "backpressure") : "";
    if (strcmp(bp, "sleep") != 0 && strcmp(bp, "poll") != 0)
        luaL_error(L, "%s: backpressure must be \"sleep\" or \"poll\", got %s", call, bp[0] ? bp : luaL_typename(L, -1));
    bool poll = bp[0] == 'p';
    lua_pop(L, 2);
    uint32_t n_slots = (uint32_t)need_int(L, 2, call, "the plan", "n_slots", 1, KB_IPCQ_MAX_SLOTS);
    uint64_t slot_size = (uint64_t)need_int(L, 2, call, "the plan", "slot_size", 16, (lua_Integer)1 << 34);
    lua_getfield(L, 2, "pes");
    bool empty = lua_istable(L, -1) && lua_rawlen(L, -1) == 0;
    lua_getfield(L, 2, "clear");
    bool clears = !lua_isnil(L, -1);
    lua_pop(L, 2);
    int npes = 0;
    if (empty && clears) /* a message that only clears PEs */
        lua_newtable(L);
    else
        npes = check_list(L, "pes", call);
    kb_ipcq_plan *plan = kb_ipcq_plan_new((uint32_t)npes);
    plan->kind = kind;
    plan->poll = poll;
    plan->n_slots = n_slots;
    plan->slot_size = slot_size;
    /* a userdata that frees the plan if a field raises */
    kb_ipcq_plan **guard = lua_newuserdatauv(L, sizeof *guard, 0);
    *guard = plan;
    if (luaL_newmetatable(L, "kernbench.ipcq_plan_guard")) {
        lua_pushcfunction(L, guard_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_insert(L, -2);
    for (int r = 0; r < npes; r++) {
        lua_rawgeti(L, -1, r + 1);
        int pi = lua_gettop(L);
        if (!lua_istable(L, pi))
            luaL_error(L, "%s: pes[%d] must be a table", call, r + 1);
        kb_ipcq_pe_cfg *pe = &plan->pes[r];
        char what[32];
        snprintf(what, sizeof what, "pes[%d]", r + 1);
        static const char *const pe_keys[] = {"sip", "cube", "pe", "dirs", NULL};
        lbind_check_keys(L, pi, call, "a PE's fields", pe_keys);
        pe->sip = (int)need_int(L, pi, call, what, "sip", 0, INT_MAX);
        pe->cube = (int)need_int(L, pi, call, what, "cube", 0, INT_MAX);
        pe->pe = (int)need_int(L, pi, call, what, "pe", 0, INT_MAX);
        lua_getfield(L, pi, "dirs");
        int nd = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : -1;
        if (nd < 0 || nd > KB_IPCQ_MAX_DIRS)
            luaL_error(L, "%s: %s.dirs must be a list of at most %d directions", call, what, KB_IPCQ_MAX_DIRS);
        pe->ndirs = nd;
        for (int d = 0; d < nd; d++) {
            lua_rawgeti(L, -1, d + 1);
            int di = lua_gettop(L);
            kb_ipcq_dir_cfg *dc = &pe->dir[d];
            static const char *const dir_keys[] = {"name", "peer", "peer_dir", "rx_pa", NULL};
            if (lua_istable(L, di))
                lbind_check_keys(L, di, call, "a direction's fields", dir_keys);
            lua_getfield(L, di, "name");
            size_t len;
            const char *name = lua_isstring(L, -1) ? lua_tolstring(L, -1, &len) : NULL;
            if (!name || len == 0 || len >= KB_IPCQ_NAME || strlen(name) != len)
                luaL_error(L, "%s: %s.dirs[%d].name must be a string of 1 to %d bytes", call, what, d + 1,
                           KB_IPCQ_NAME - 1);
            memcpy(dc->name, name, len + 1);
            lua_pop(L, 1);
            dc->peer = (uint32_t)need_int(L, di, call, what, "peer", 0, npes - 1);
            dc->peer_dir = (uint32_t)need_int(L, di, call, what, "peer_dir", 0, KB_IPCQ_MAX_DIRS - 1);
            dc->rx_pa = (uint64_t)need_int(L, di, call, what, "rx_pa", 0, LUA_MAXINTEGER);
            lua_settop(L, di - 1);
        }
        lua_settop(L, pi - 1);
    }
    char *err = NULL;
    if (npes > 0 && !kb_ipcq_plan_check(kb_fabric_topo(S->mach->fab), plan, &err)) {
        char *msg = kb_asprintf("%s: %s", call, err);
        free(err);
        lbind_raise(L, msg); /* the guard frees the plan */
    }
    *guard = NULL;
    lua_pop(L, 2);
    return plan;
}

static int l_ipcq_install(lua_State *L)
{
    const char *call = "s:ipcq_install{}";
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        return luaL_error(L, "%s: this simulation has no topology", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    kb_ipcq_plan *plan = read_plan(L, S, call);
    /* clear = {{sip, cube, pe}, ...}: PEs that leave the queues */
    size_t nclear = 0;
    kb_ctrl_target *clear = NULL;
    int t = lua_getfield(L, 2, "clear");
    lua_pop(L, 1);
    if (t != LUA_TNIL)
        clear = read_targets(L, "clear", call, &nclear);
    size_t n = plan->npes + nclear;
    if (n == 0) {
        kb_ipcq_plan_unref(plan);
        return luaL_error(L, "%s: neither pes nor clear lists a PE", call);
    }
    kb_ctrl_target *tg = kb_xmalloc(n * sizeof *tg);
    for (uint32_t r = 0; r < plan->npes; r++)
        tg[r] = (kb_ctrl_target){plan->pes[r].sip, plan->pes[r].cube, plan->pes[r].pe};
    for (size_t i = 0; i < nclear; i++)
        tg[plan->npes + i] = clear[i];
    kb_ctrl_op *op = kb_ctrl_new(&kb_msg_ipcq_install, tg, n);
    free(tg);
    kb_ctrl_set_object(op, plan, free_plan);
    lua_settop(L, 1);
    return submit(L, S, op, "ipcq install");
}

/* ---- kernel launches ---- */

/* What runs a launch's body at each PE: its Lua function. */
typedef struct lrunner {
    lsim *S;
    lua_State *main; /* for releasing the reference from anywhere */
    int body;        /* registry reference to body(ctx, sip, cube, pe) */
    char *name;
} lrunner;

/* PE_CPU made instance k at the start barrier: the kernel's process. */
static void run_body(void *arg, kb_kernel *k, int sip, int cube, int pe)
{
    lrunner *r = arg;
    lsim *S = r->S;
    lua_State *L = S->L; /* inside the run */
    luaL_checkstack(L, 8, "kernel process");
    lua_pushcfunction(L, lsim_spawn);
    lua_pushvalue(L, S->sim_idx);
    lua_createtable(L, 0, 3);
    lua_pushfstring(L, "kernel %s on sip%d.cube%d.pe%d", r->name, sip, cube, pe);
    lua_setfield(L, -2, "name");
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->body);
    lua_setfield(L, -2, "fn");
    lua_createtable(L, 4, 0);
    ltl_push_context(L, S->sim_idx, S, k);
    lua_rawseti(L, -2, 1);
    int at[3] = {sip, cube, pe};
    for (int i = 0; i < 3; i++) {
        lua_pushinteger(L, at[i]);
        lua_rawseti(L, -2, i + 2);
    }
    lua_setfield(L, -2, "args");
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* a spawn does not fail on these arguments */
        kb_sim_fail(S->sim, "kernel %s: cannot start on sip%d.cube%d.pe%d: %s", r->name, sip, cube, pe,
                    lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

static void release_runner(void *arg)
{
    lrunner *r = arg;
    luaL_unref(r->main, LUA_REGISTRYINDEX, r->body);
    free(r->name);
    free(r);
}

static int l_launch(lua_State *L)
{
    const char *call = "s:launch{}";
    lsim *S = lsim_check(L, 1);
    if (!S->mach)
        return luaL_error(L, "%s: this simulation has no topology", call);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"name", "body", "grid", "targets", "data", "pa_fallback", NULL};
    lbind_check_keys(L, 2, call, NULL, known);
    bool data = lbind_field_bool(L, 2, call, "data", false);
    bool pa_fallback = lbind_field_bool(L, 2, call, "pa_fallback", false);
    lua_getfield(L, 2, "name");
    if (lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "%s: field 'name' (the kernel's) must be a string", call);
    const char *name = lbind_tostr(L, -1, call, "field 'name'");
    lua_getfield(L, 2, "body");
    luaL_argexpected(L, lua_isfunction(L, -1), 2, "table with a function field 'body'");
    lua_getfield(L, 2, "grid");
    if (!lua_istable(L, -1))
        return luaL_error(L, "%s: field 'grid' must be a table {pes =, cubes =}", call);
    static const char *const grid_keys[] = {"pes", "cubes", NULL};
    lbind_check_keys(L, -1, "s:launch{} grid", "its fields", grid_keys);
    int pes = (int)lbind_need_int(L, -1, "s:launch{} grid", "pes", 1, INT_MAX);
    int cubes = (int)lbind_need_int(L, -1, "s:launch{} grid", "cubes", 1, INT_MAX);
    lua_pop(L, 1);
    size_t nt = 0;
    const kb_ctrl_target *tg = read_targets(L, "targets", call, &nt);
    for (size_t i = 0; i < nt; i++) { /* each target can run a kernel (its engines are builtins) */
        char *err = NULL;
        if (!kb_pe_find(S->mach->fab, tg[i].sip, tg[i].cube, tg[i].pe, &err))
            return lbind_raise(L, err);
    }
    kb_ctrl_op *op = kb_ctrl_new(&kb_msg_kernel_launch, tg, nt);
    lua_pop(L, 2); /* the targets and their list */
    lrunner *r = kb_xcalloc(1, sizeof *r);
    r->S = S;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    r->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    r->body = luaL_ref(L, LUA_REGISTRYINDEX); /* the body, on top */
    r->name = kb_xstrdup(name);
    kb_launch l = {r->name, data, pa_fallback, run_body, release_runner, r};
    kb_ctrl_set_launch(op, pes, cubes, &l);
    lua_settop(L, 1);
    lua_pushfstring(L, "launch %s", name);
    char *what = kb_xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    int n = submit(L, S, op, what);
    free(what);
    return n;
}

const luaL_Reg ldevice_methods[] = {
    {"mmu_map", l_mmu_map}, {"mmu_unmap", l_mmu_unmap}, {"ipcq_install", l_ipcq_install},
    {"launch", l_launch},   {NULL, NULL}};
