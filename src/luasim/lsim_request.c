/* Lua requests: puts, gets and resource requests as events
 * (core/request.h), made by st:put_event(v), st:get_event() and
 * r:request() (lsim_store.c).
 *
 * A request is an awaitable like an event (wait, value, conditions) with
 * cancel, release and close; `local req <close> = r:request()` is SimPy's
 * `with r.request() as req:`. While the core may touch it (queued, its
 * event triggered and not yet processed, or holding a slot) the request is
 * anchored in the simulation's process table, so what the simulation does
 * never depends on when the collector runs. */
#include "luasim/lsim.h"

#include "core/presource.h"
#include "luasim/lbind.h"

#include <string.h>

/* ---- anchoring ---- */

static void anchor(lua_State *L, lreq *q, int req_idx, int sim_idx)
{
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    lua_pushvalue(L, req_idx);
    lua_rawsetp(L, -2, q);
    lua_pop(L, 1);
    q->anchored = true;
}

/* Lets the request go once the core is done with it. */
static void release_anchor(lua_State *L, lreq *q, int sim_idx)
{
    if (!q->anchored || kb_request_busy(&q->req))
        return;
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    lua_pushnil(L);
    lua_rawsetp(L, -2, q);
    lua_pop(L, 1);
    q->anchored = false;
}

/* The core processed the request's event (its object's part done). Runs
 * inside s:run / s:step, where S->L holds the sim userdata. */
static void on_processed(kb_request *r)
{
    lreq *q = KB_CONTAINER_OF(r, lreq, req);
    lsim *S = q->hdr.S;
    if (S->L && lua_checkstack(S->L, 3))
        release_anchor(S->L, q, S->sim_idx);
}

/* ---- construction ---- */

static const char *const kind_names[] = {[LEV_PUT] = "put request", [LEV_GET] = "get request",
                                         [LEV_ACQUIRE] = "resource request",
                                         [LEV_SH_PUT] = "put request", [LEV_SH_GET] = "get request",
                                         [LEV_SH_ACQUIRE] = "resource request"};

void lsim_request_settled(lua_State *L, lreq *q, int sim_idx) { release_anchor(L, q, lua_absindex(L, sim_idx)); }

lreq *lsim_request_new(lua_State *L, lsim *S, int sim_idx, int obj_idx, levent_kind kind)
{
    sim_idx = lua_absindex(L, sim_idx);
    obj_idx = lua_absindex(L, obj_idx);
    lreq *q = lua_newuserdatauv(L, sizeof *q, LREQ_NUV);
    memset(q, 0, sizeof *q);
    q->hdr.S = S;
    q->hdr.kind = kind;
    q->req.on_processed = on_processed;
    luaL_setmetatable(L, LREQ_MT);
    lua_pushvalue(L, sim_idx);
    lua_setiuservalue(L, -2, LEV_UV_SIM);
    lua_pushvalue(L, obj_idx);
    lua_setiuservalue(L, -2, LEV_UV_EXTRA);
    return q;
}

void lsim_request_started(lua_State *L, lreq *q, int req_idx, int sim_idx)
{
    q->hdr.ev = q->req.ev;
    kb_event_ref(q->hdr.ev);
    anchor(L, q, lua_absindex(L, req_idx), lua_absindex(L, sim_idx));
}

void lsim_request_anchor(lua_State *L, lreq *q, int req_idx, int sim_idx)
{
    anchor(L, q, lua_absindex(L, req_idx), lua_absindex(L, sim_idx));
}

void lsim_request_took(lua_State *L, lreq *q, int req_idx, int sim_idx)
{
    (void)req_idx;
    q->hdr.ev = q->req.ev;
    kb_event_ref(q->hdr.ev);
    release_anchor(L, q, lua_absindex(L, sim_idx)); /* busy unless a hook let it go */
}

/* A request that took over a served blocking call: that call's processing
 * has run (it served the other side); the request is settled, and let go
 * unless it holds a slot. A get's item goes with the request. */
static void adopted_served(kb_sim *sim, void *arg)
{
    (void)sim;
    lreq *q = KB_CONTAINER_OF(arg, lreq, req.qw);
    kb_request_settle(&q->req);
    on_processed(&q->req);
}

void lsim_request_adopt(lua_State *L, lsim *S, lproc *p, int obj_idx, levent_kind kind)
{
    obj_idx = lua_absindex(L, obj_idx);
    lreq *q = lsim_request_new(L, S, S->sim_idx, obj_idx, kind);
    kb_waiter *w = &p->waiter;
    if (kind == LEV_ACQUIRE)
        kb_resource_adopt(w->target, &q->req, w, adopted_served);
    else
        kb_store_adopt(w->target, &q->req, w, kind == LEV_PUT ? KB_REQ_PUT : KB_REQ_GET,
                       adopted_served);
    lsim_request_started(L, q, -1, S->sim_idx);
    lua_pop(L, 1);
}

void lsim_push_queued(lua_State *L, int sim_idx, kb_waiter *w)
{
    sim_idx = lua_absindex(L, sim_idx);
    lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
    if (w->request)
        lua_rawgetp(L, -1, KB_CONTAINER_OF(KB_CONTAINER_OF(w, kb_request, qw), lreq, req));
    else if (w->proc)
        lua_rawgetp(L, -1, KB_CONTAINER_OF(w->proc, lproc, proc));
    else
        lua_pushnil(L);
    lua_remove(L, -2);
}

void lsim_push_list(lua_State *L, int sim_idx, const kb_link *head, bool users)
{
    sim_idx = lua_absindex(L, sim_idx);
    lua_newtable(L);
    lua_Integer i = 0;
    for (const kb_link *l = head->next; l != head; l = l->next) {
        if (users) {
            const kb_request *r = KB_CONTAINER_OF(l, kb_request, user);
            lua_getiuservalue(L, sim_idx, LSIM_UV_PROCS);
            lua_rawgetp(L, -1, KB_CONTAINER_OF(r, lreq, req));
            lua_remove(L, -2);
        } else {
            lsim_push_queued(L, sim_idx, KB_CONTAINER_OF(l, kb_waiter, link));
        }
        lua_rawseti(L, -2, ++i);
    }
}

lreq *lsim_check_request(lua_State *L, int idx, const char *call)
{
    lreq *q = lbind_testudata(L, idx, LREQ_MT);
    if (!q)
        luaL_error(L, "%s: argument %d must be a request (from st:put_event, st:get_event or "
                      "r:request), got %s", call, idx, luaL_typename(L, idx));
    lsim_check_open(L, q->hdr.S);
    return q;
}

/* ---- methods ---- */

static lreq *check_self(lua_State *L, const char *call)
{
    lreq *q = lbind_testudata(L, 1, LREQ_MT);
    if (!q)
        lbind_bad_self(L, call, "request");
    lsim_check_open(L, q->hdr.S);
    return q;
}

/* Withdraws a request not served yet (at idx); a put's item is dropped. */
bool lsim_request_cancel(lua_State *L, lreq *q, int idx)
{
    idx = lua_absindex(L, idx);
    if (!kb_request_cancel(&q->req))
        return false;
    if (q->hdr.kind == LEV_PUT) {
        lua_getiuservalue(L, idx, LEV_UV_EXTRA);
        lsim_store_take(L, -1, q->req.qw.item.i);
        lua_pop(L, 2);
    } else if (q->hdr.kind == LEV_SH_PUT) {
        lua_getiuservalue(L, idx, LEV_UV_EXTRA);
        lsim_shared_drop(L, -1, q->req.qw.item);
        lua_pop(L, 1);
    }
    lua_getiuservalue(L, idx, LEV_UV_SIM);
    release_anchor(L, q, lua_gettop(L));
    lua_pop(L, 1);
    return true;
}

/* req:cancel(): true if the request left its queue; false if it had been
 * served already (SimPy's cancel then does nothing either). */
static int req_cancel(lua_State *L)
{
    lreq *q = check_self(L, "req:cancel()");
    lua_settop(L, 1);
    lua_pushboolean(L, lsim_request_cancel(L, q, 1));
    return 1;
}

int lsim_request_release(lua_State *L, lreq *q, int idx, const char *call)
{
    if (q->hdr.kind != LEV_ACQUIRE && q->hdr.kind != LEV_SH_ACQUIRE)
        return luaL_error(L, "%s: a %s holds nothing to release (cancel it with req:cancel())",
                          call, kind_names[q->hdr.kind]);
    if (kb_request_pending(&q->req))
        return luaL_error(L, "%s: the request is still waiting for a slot; cancel it "
                             "(req:cancel()) or close it (req:close())", call);
    if (q->hdr.kind == LEV_ACQUIRE)
        kb_resource_release_request(q->req.qw.target, &q->req);
    else
        kb_presource_release(q->req.qw.target, &q->req);
    lua_getiuservalue(L, idx, LEV_UV_SIM);
    release_anchor(L, q, lua_gettop(L));
    lua_pop(L, 1);
    return 0;
}

static int req_release(lua_State *L)
{
    lreq *q = check_self(L, "req:release()");
    lua_settop(L, 1);
    return lsim_request_release(L, q, 1, "req:release()");
}

/* req:close() and <close>: SimPy's `with` exit. Any request is cancelled
 * if still waiting; a resource request is then released, granted or not,
 * which (as SimPy's release) queues a release that tries the first waiter. */
static int req_close(lua_State *L)
{
    lreq *q = lbind_testudata(L, 1, LREQ_MT);
    if (!q)
        return lbind_bad_self(L, "req:close()", "request");
    if (!q->hdr.S->sim || !q->hdr.ev) /* the simulation is gone: nothing to give back */
        return 0;
    lua_settop(L, 1);
    lsim_request_cancel(L, q, 1);
    if (q->hdr.kind == LEV_ACQUIRE || q->hdr.kind == LEV_SH_ACQUIRE)
        lsim_request_release(L, q, 1, "req:close()");
    return 0;
}

static int req_tostring(lua_State *L)
{
    lreq *q = luaL_checkudata(L, 1, LREQ_MT);
    if (!q->hdr.ev || !q->hdr.S->sim) {
        lua_pushfstring(L, "%s (simulation closed)", kind_names[q->hdr.kind]);
        return 1;
    }
    char what[256];
    kb_event_describe(q->hdr.ev, what, sizeof what);
    lua_pushstring(L, what);
    return 1;
}

static int req_gc(lua_State *L)
{
    lreq *q = luaL_checkudata(L, 1, LREQ_MT);
    if (q->hdr.S && q->hdr.S->sim && q->req.ev) {
        /* Busy only when the simulation itself is being collected with it:
         * detach from whatever still links to it. */
        kb_request_cancel(&q->req);
        kb_waiter_cancel(&q->req.hook);
        if (kb_link_linked(&q->req.user)) {
            if (q->hdr.kind == LEV_ACQUIRE) {
                kb_resource *r = q->req.qw.target;
                kb_link_unlink(&q->req.user);
                r->nusers--;
                r->in_use--;
            } else {
                kb_presource_forget(q->req.qw.target, &q->req);
            }
        }
        if ((q->hdr.kind == LEV_GET || q->hdr.kind == LEV_SH_GET) &&
            q->hdr.ev->state != KB_EVENT_PENDING && !q->item_taken) {
            lua_getiuservalue(L, 1, LEV_UV_EXTRA); /* an item nobody read: the store lets it go */
            if (q->hdr.kind == LEV_GET)
                lsim_store_take(L, -1, q->req.ev->value.i);
            else
                lsim_shared_drop(L, -1, q->req.ev->value);
            q->item_taken = true;
        }
        kb_request_fini(&q->req);
    }
    lsim_release_event(&q->hdr);
    return 0;
}

void lsim_open_request(lua_State *L)
{
    static const luaL_Reg methods[] = {{"wait", lsim_event_wait},
                                       {"value", lsim_event_value},
                                       {"triggered", lsim_event_triggered},
                                       {"processed", lsim_event_processed},
                                       {"ok", lsim_event_ok},
                                       {"id", lsim_event_id},
                                       {"cancel", req_cancel},
                                       {"release", req_release},
                                       {"close", req_close},
                                       {"add_callback", lsim_add_callback},
                                       {NULL, NULL}};
    static const luaL_Reg meta[] = {
        {"__gc", req_gc}, {"__close", req_close}, {"__tostring", req_tostring}, {NULL, NULL}};
    lsim_new_meta(L, LREQ_MT, methods, meta);
}
