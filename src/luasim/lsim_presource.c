/* Lua priority and preemptive resources (core/presource.h): requests
 * with a priority, and SimPy's preemption, which interrupts the process
 * that made the request losing its slot (lsim_interrupt.c). */
#include "luasim/lsim.h"

#include "core/presource.h"
#include "luasim/lbind.h"
#include "luasim/lsim_shared.h"

#include <stdio.h>

/* A preemptive resource took victim's slot for `by`: SimPy interrupts
 * victim's process with Preempted(by, usage_since, resource). */
static void preempted(void *ctx, kb_request *victim, kb_request *by)
{
    lshared *s = ctx;
    int sim_idx;
    lua_State *L = lsh_hook_state(s, &sim_idx);
    lreq *vq = KB_CONTAINER_OF(victim, lreq, req);
    if (!L || !lua_checkstack(L, 10)) {
        kb_sim_fail(s->S->sim, "a preemption could not interrupt its victim (no Lua stack)");
        return;
    }
    int top = lua_gettop(L);
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    int procs = lua_gettop(L);
    lproc *vp = victim->proc ? KB_CONTAINER_OF(victim->proc, lproc, proc) : NULL;
    if (vp && vp->co && kb_proc_live(&vp->proc)) {
        lua_rawgetp(L, procs, vp); /* the victim's process */
        int pi = lua_gettop(L);
        lua_createtable(L, 0, 3); /* the cause */
        int cause = lua_gettop(L);
        if (by->proc)
            lua_rawgetp(L, procs, KB_CONTAINER_OF(by->proc, lproc, proc));
        else
            lua_pushnil(L);
        int by_idx = lua_gettop(L);
        lua_pushvalue(L, by_idx);
        lua_setfield(L, cause, "by");
        lbind_push_time(L, victim->since);
        lua_setfield(L, cause, "usage_since");
        lua_rawgetp(L, procs, vq);
        lua_getiuservalue(L, -1, LEV_UV_EXTRA);
        lua_setfield(L, cause, "resource");
        lua_pop(L, 1);
        lsim_interrupt_schedule(L, vp, pi, cause, by_idx, sim_idx);
    }
    lsim_request_settled(L, vq, sim_idx); /* no longer a user */
    lua_settop(L, top);
}

static int new_presource(lua_State *L, bool preemptive)
{
    lsim *S = lsim_check(L, 1);
    const char *call = preemptive ? "s:preemptive_resource()" : "s:priority_resource()";
    lua_Number cap = 1;
    const char *name = lsh_parse_cap(L, call, &cap, true);
    if (cap < 1)
        return luaL_error(L, "%s: capacity must be >= 1 (got %I)", call, (lua_Integer)cap); /* an integer's value */
    char buf[40];
    name = lsh_name_of(L, name, preemptive ? "preemptive_resource" : "priority_resource", buf, sizeof buf);
    lshared *s = lsh_push_new(L, LPRES_MT);
    s->sh = kb_presource_new(S->sim, name, (size_t)cap, preemptive, preempted, s);
    return 1;
}

int lsim_priority_resource_new(lua_State *L) { return new_presource(L, false); }
int lsim_preemptive_resource_new(lua_State *L) { return new_presource(L, true); }

/* ---- priority and preemptive resources ---- */

#define R_ARGS LPRES_MT, "priority resource"

/* r:request([priority[, preempt]]) or r:request{priority =, preempt =}:
 * SimPy's PriorityRequest (priority 0, preempt true by default). */
static int pr_request(lua_State *L)
{
    const char *call = "r:request()";
    lshared *s = lsh_check(L, R_ARGS, call);
    double prio = 0;
    bool preempt = true;
    if (lua_istable(L, 2)) {
        static const char *const known[] = {"priority", "preempt", NULL};
        lbind_check_keys(L, 2, call, NULL, known);
        lua_getfield(L, 2, "priority");
        prio = lsh_opt_priority(L, -1, call);
        preempt = lbind_field_bool(L, 2, call, "preempt", true);
    } else {
        prio = lsh_opt_priority(L, 2, call);
        if (!lua_isnoneornil(L, 3))
            preempt = lua_toboolean(L, 3);
    }
    lua_settop(L, 1);
    int sim_idx = lsh_enter(L, s);
    lreq *q = lsh_new_request(L, s, sim_idx, LEV_SH_ACQUIRE);
    int qi = lua_gettop(L);
    lsim_request_anchor(L, q, qi, sim_idx);
    lproc *cur = s->S->running;
    kb_presource_request(s->sh, &q->req, prio, preempt, cur ? &cur->proc : NULL);
    lsh_leave(s);
    lsim_request_took(L, q, qi, sim_idx);
    lua_settop(L, qi);
    return 1;
}

static int pr_release(lua_State *L)
{
    lshared *s = lsh_check(L, R_ARGS, "r:release(req)");
    lreq *q = lsim_check_request(L, 2, "r:release(req)");
    if (q->req.qw.target != s->sh)
        return luaL_error(L, "r:release(req): the request is not one of %s '%s'", s->sh->ops->what,
                          s->sh->name);
    return lsim_request_release(L, q, 2, "r:release(req)");
}

static int pr_in_use(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_presource_in_use(lsh_check(L, R_ARGS, "r:in_use()")->sh));
    return 1;
}

static int pr_capacity(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)kb_presource_capacity(lsh_check(L, R_ARGS, "r:capacity()")->sh));
    return 1;
}

static int pr_queued(lua_State *L) { return lsh_queue_len(L, R_ARGS, "r:queued()", true); }
static int pr_name(lua_State *L) { return lsh_push_name(L, lsh_check(L, R_ARGS, "r:name()")); }

static int pr_users(lua_State *L)
{
    lshared *s = lsh_check(L, R_ARGS, "r:users()");
    lua_getiuservalue(L, 1, 1 /* the sim */);
    lsim_push_list(L, -1, kb_presource_users(s->sh), true);
    return 1;
}

static int pr_queue(lua_State *L)
{
    lshared *s = lsh_check(L, R_ARGS, "r:queue()");
    lua_getiuservalue(L, 1, 1 /* the sim */);
    lsim_push_list(L, -1, &s->sh->putq, false);
    return 1;
}

static int pr_preemptive(lua_State *L)
{
    lua_pushboolean(L, kb_presource_preemptive(lsh_check(L, R_ARGS, "r:preemptive()")->sh));
    return 1;
}

void lsim_open_presource(lua_State *L, const luaL_Reg *meta)
{
    static const luaL_Reg pr_methods[] = {
        {"request", pr_request}, {"release", pr_release}, {"in_use", pr_in_use},
        {"capacity", pr_capacity}, {"queued", pr_queued}, {"name", pr_name},
        {"preemptive", pr_preemptive}, {"users", pr_users}, {"queue", pr_queue}, {NULL, NULL}};
    lsim_new_meta(L, LPRES_MT, pr_methods, meta);
}
