/* Components written in Lua (`impl: lua:MODULE` or a name registered with
 * kb.components.register; lua/kernbench/components.lua, docs/extending.md).
 *
 * The fabric sees an ordinary component: a transaction (or, if the
 * implementation is flit-aware, a flit) arriving at the node goes into the
 * component's inbox, a store. The Lua side is a process per node, running
 * the implementation's run(self) on its own coroutine:
 *
 *   local msg = self:receive()   -- blocks until something arrives
 *   self:sleep(ns)               -- spends modelled time (s:sleep)
 *   msg:forward()                -- on to the next node of its path, now
 *   msg:finish()                 -- at the end of its path: served (a memory
 *                                -- target moves the data and answers)
 *   self:send{kind =, dst =, ...} -- a new message of a kind the definition
 *                                -- declares (`messages = {"Ping"}`)
 *
 * A message must be forwarded or finished exactly once; while a component
 * holds any, its process counts for quiescence reports (it is a daemon
 * otherwise), so a transaction it drops shows up with its node id. */
#include "lua/lcomp.h"

#include "comp/comp.h"
#include "core/store.h"
#include "core/util.h"
#include "lua/lbind.h"
#include "lua/lsim.h"
#include "lua/ltopo.h"
#include "topo/registry.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINST_MT "kernbench.component"
#define LMSG_MT "kernbench.msg"

static const char MSG_KEY; /* the message metatable's registry key */

typedef struct inst {
    kb_comp *c;
    struct inst **ud;   /* the Lua userdata's pointer (cleared when either goes) */
    kb_store inbox;     /* kb_txn* or kb_flit* */
    int held;           /* received and not yet forwarded or finished */
    lproc *proc;        /* the process that receives (bound on its first receive) */
    /* what it received last, for error messages (formatted on demand) */
    uint64_t cur_id, cur_bytes;
    const kb_msg_kind *cur_kind;
    uint32_t cur_flit, cur_nflits; /* flit index + 1, 0 for a transaction */
    bool waiting;       /* blocked in receive */
    kb_time deadline;   /* of a receive with a timeout (else -1) */
} inst;

typedef struct msg {
    inst *in;
    bool flit;
    bool done;
    void *ptr;
} msg;

/* A Lua implementation: the registry's kb_impl and the message kinds its
 * definition declares (`messages`), which its components may send. */
typedef struct limpl {
    kb_impl impl; /* first: a kb_impl * of a Lua implementation is a limpl * */
    kb_msg_kind *kinds;
    size_t nkinds;
} limpl;

/* The payload of a message a Lua component sends: an integer tag. */
static const char LUA_LAYOUT;
typedef struct lua_payload {
    int64_t tag;
} lua_payload;
KB_PAYLOAD_FITS(lua_payload);

/* ---- the fabric side ---- */

static void comp_init(kb_comp *c)
{
    inst *in = kb_xcalloc(1, sizeof *in);
    in->c = c;
    char name[160];
    snprintf(name, sizeof name, "%s inbox", c->n->id);
    kb_store_init(&in->inbox, kb_fabric_sim(c->fab), name, 0);
    c->state = in;
}

static void comp_fini(kb_comp *c)
{
    inst *in = c->state;
    if (in->ud)
        *in->ud = NULL;
    kb_store_deinit(&in->inbox);
    free(in);
}

static void set_holding(inst *in, int delta)
{
    in->held += delta;
    if (in->proc) /* a daemon only while it holds nothing */
        in->proc->proc.flags = in->held > 0 ? in->proc->proc.flags & ~KB_PROC_DAEMON
                                            : in->proc->proc.flags | KB_PROC_DAEMON;
}

static void arrive(kb_comp *c, void *p)
{
    inst *in = c->state;
    kb_store_put(&in->inbox, (kb_item){.p = p}, NULL);
    set_holding(in, 1);
}

static void comp_txn(kb_comp *c, kb_txn *t) { arrive(c, t); }
static void comp_flit(kb_comp *c, kb_flit *f) { arrive(c, f); }

const kb_comp_ops lcomp_ops_txn = {.flit_aware = false, .init = comp_init, .fini = comp_fini, .on_txn = comp_txn};
const kb_comp_ops lcomp_ops_flit = {
    .flit_aware = true, .init = comp_init, .fini = comp_fini, .on_flit = comp_flit};

bool lcomp_is_lua(const kb_comp *c) { return c->ops == &lcomp_ops_txn || c->ops == &lcomp_ops_flit; }

void lcomp_counts(const kb_comp *c, int *queued, int *held)
{
    const inst *in = c->state;
    *queued = (int)kb_store_count(&in->inbox);
    *held = in->held;
}

/* ---- instances ---- */

static inst *check_inst(lua_State *L, int idx)
{
    inst **u = luaL_checkudata(L, idx, LINST_MT);
    if (!*u)
        luaL_error(L, "the component's simulation is closed");
    return *u;
}

static kb_txn *txn_of(const msg *m) { return m->flit ? ((kb_flit *)m->ptr)->txn : m->ptr; }

static void note(inst *in, const msg *m)
{
    const kb_txn *t = txn_of(m);
    in->cur_id = t->id;
    in->cur_bytes = t->nbytes;
    in->cur_kind = t->kind;
    in->cur_flit = m->flit ? ((kb_flit *)m->ptr)->idx + 1 : 0;
    in->cur_nflits = t->nflits;
}

static void describe(const inst *in, char *buf, size_t n)
{
    if (!in->cur_id)
        buf[0] = '\0';
    else if (in->cur_flit)
        snprintf(buf, n, "flit %u/%u of transaction #%llu (%s, %llu bytes)", in->cur_flit, in->cur_nflits,
                 (unsigned long long)in->cur_id, in->cur_kind->name, (unsigned long long)in->cur_bytes);
    else
        snprintf(buf, n, "transaction #%llu (%s, %llu bytes)", (unsigned long long)in->cur_id,
                 in->cur_kind->name, (unsigned long long)in->cur_bytes);
}

static void push_msg(lua_State *L, inst *in, kb_item item)
{
    msg *m = lua_newuserdatauv(L, sizeof *m, 1);
    m->in = in;
    m->flit = in->c->ops->flit_aware;
    m->done = false;
    m->ptr = item.p;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 1); /* keeps the instance alive */
    lua_setiuservalue(L, -2, 1);
    note(in, m);
}

static int receive_k(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    lproc *p = (lproc *)ctx;
    inst *in = check_inst(L, 1);
    in->waiting = false;
    if (!p->waiter.item.p) /* the timeout came first */
        return 0;
    push_msg(L, in, p->waiter.item);
    return 1;
}

/* The deadline of a receive with a timeout: if it is still waiting, it
 * stops waiting and gets nil. (Callbacks of earlier receives find a
 * different deadline, or none.) */
static void receive_timeout(kb_sim *sim, void *arg)
{
    inst *in = arg;
    if (!in->waiting || in->deadline != kb_sim_now(sim) || !kb_waiter_queued(&in->proc->waiter))
        return;
    kb_waiter_cancel(&in->proc->waiter);
    in->proc->waiter.item = KB_ITEM_NONE;
    in->proc->waiter.wake(sim, &in->proc->waiter);
}

/* self:poll() -> msg | nil: what has arrived, without blocking */
static int inst_poll(lua_State *L)
{
    inst *in = check_inst(L, 1);
    lua_settop(L, 1);
    kb_item item;
    if (!kb_store_get(&in->inbox, &item, NULL))
        return 0;
    push_msg(L, in, item);
    return 1;
}

/* self:receive([timeout_ns]) -> msg, or nil when the timeout passes first */
static int inst_receive(lua_State *L)
{
    inst *in = check_inst(L, 1);
    kb_time timeout = lua_isnoneornil(L, 2) ? -1 : lsim_check_duration(L, 2, "self:receive(timeout_ns)");
    lua_settop(L, 1);
    lproc *p = lsim_current(L, *(lsim **)lua_touserdata(L, lua_upvalueindex(1)), "self:receive()");
    if (!p)
        return luaL_error(L, "self:receive(): only the component's own process may receive");
    if (in->proc != p) {
        in->proc = p;
        set_holding(in, 0);
    }
    kb_item item;
    in->cur_id = 0;
    if (kb_store_get(&in->inbox, &item, NULL)) {
        push_msg(L, in, item);
        return 1;
    }
    if (timeout == 0)
        return 0;
    lsim_prepare_block(L, p, "self:receive()");
    kb_store_get(&in->inbox, &item, &p->waiter);
    in->waiting = true;
    in->deadline = -1;
    if (timeout > 0) {
        kb_sim *sim = kb_fabric_sim(in->c->fab);
        in->deadline = kb_sim_now(sim) + timeout;
        kb_sim_at(sim, in->deadline, KB_PRIO_NORMAL, receive_timeout, in);
    }
    return lsim_block(L, p, receive_k);
}

/* The kind named k among those the component's implementation declares. */
static const kb_msg_kind *own_kind(lua_State *L, const inst *in, const char *k)
{
    const limpl *li = (const limpl *)in->c->n->spec->impl;
    for (size_t i = 0; i < li->nkinds; i++)
        if (strcmp(li->kinds[i].name, k) == 0)
            return &li->kinds[i];
    luaL_error(L, "self:send{}: %s (%s) declares no message kind '%s' (its definition's `messages` list)",
               in->c->n->id, li->impl.name, k);
    return NULL;
}

/* self:send{kind = "Ping", dst = id, nbytes = 0, view = "data", tag = 0} ->
 * transaction id: a new message of one of the implementation's kinds, from
 * this node to dst, leaving now (the component already handled it). It
 * completes where it ends: a Lua component there finishes it. */
static int inst_send(lua_State *L)
{
    inst *in = check_inst(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "kind");
    const kb_msg_kind *kind = own_kind(L, in, luaL_checkstring(L, -1));
    const kb_topo *t = kb_fabric_topo(in->c->fab);
    lua_getfield(L, 2, "dst");
    uint32_t dst = ltopo_check_node(L, t, lua_gettop(L));
    lua_getfield(L, 2, "nbytes");
    lua_Integer nbytes = luaL_optinteger(L, -1, 0);
    if (nbytes < 0)
        return luaL_error(L, "self:send{}: nbytes must be >= 0, got %I", nbytes);
    lua_getfield(L, 2, "view");
    kb_view view = ltopo_check_view(L, lua_gettop(L), KB_VIEW_DATA);
    lua_getfield(L, 2, "tag");
    lua_Integer tag = luaL_optinteger(L, -1, 0);
    if (dst == in->c->node)
        return luaL_error(L, "self:send{}: %s sends to itself", in->c->n->id);
    char *err = NULL;
    const kb_path *path = kb_route(t, view, in->c->node, dst, &err);
    if (!path)
        return lbind_raise(L, err);
    kb_txn *x = kb_txn_new(in->c->fab, kind, path, (uint64_t)nbytes);
    KB_PAYLOAD(x, lua_payload)->tag = tag;
    kb_fabric_send(in->c->fab, x);
    lua_pushinteger(L, (lua_Integer)x->id);
    return 1;
}

static int inst_busy(lua_State *L)
{
    inst *in = check_inst(L, 1);
    kb_time a = lsim_check_duration(L, 2, "self:busy"), b = lsim_check_duration(L, 3, "self:busy");
    kb_comp_busy(in->c, a, b);
    return 0;
}

static int inst_span(lua_State *L)
{
    inst *in = check_inst(L, 1);
    const char *name = luaL_checkstring(L, 2);
    kb_time a = lsim_check_duration(L, 3, "self:span"), b = lsim_check_duration(L, 4, "self:span");
    kb_tracer *tr = kb_fabric_tracer(in->c->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(in->c->fab, in->c->node), name, a, b > a ? b : a, NULL, 0, 0,
                      KB_FLOW_NONE);
    return 0;
}

static int inst_index(lua_State *L)
{
    inst *in = check_inst(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "id") == 0) {
        lua_pushstring(L, in->c->n->id);
    } else if (strcmp(k, "impl") == 0) {
        lua_pushstring(L, in->c->n->spec->impl->name);
    } else if (strcmp(k, "queued") == 0) {
        lua_pushinteger(L, (lua_Integer)kb_store_count(&in->inbox));
    } else if (strcmp(k, "current") == 0) {
        char buf[160];
        describe(in, buf, sizeof buf);
        lua_pushstring(L, buf);
    } else if (strcmp(k, "held") == 0) {
        lua_pushinteger(L, in->held);
    } else if (strcmp(k, "attrs") == 0) {
        const kb_comp_spec *s = in->c->n->spec;
        lua_createtable(L, 0, (int)s->impl->nattrs);
        for (size_t i = 0; i < s->impl->nattrs; i++) {
            lua_pushnumber(L, s->vals[i]);
            lua_setfield(L, -2, s->impl->attrs[i].name);
        }
    } else {
        lua_getiuservalue(L, 1, 1); /* the methods table */
        lua_getfield(L, -1, k);
    }
    return 1;
}

/* ---- messages ---- */

static msg *test_msg(lua_State *L, int idx)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    bool same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}

static msg *check_msg_any(lua_State *L)
{
    msg *m = test_msg(L, 1);
    if (!m)
        luaL_typeerror(L, 1, "message");
    return m;
}

static msg *check_msg(lua_State *L, const char *call)
{
    msg *m = test_msg(L, 1);
    if (!m)
        luaL_typeerror(L, 1, "message");
    if (m->done)
        luaL_error(L, "%s: this message was already forwarded or finished", call);
    return m;
}

static bool at_end(const msg *m)
{
    return m->flit ? kb_flit_at_end(m->ptr) : txn_of(m)->step + 1 >= txn_of(m)->path->n;
}

static void done(msg *m)
{
    m->done = true;
    set_holding(m->in, -1);
}

static int msg_forward(lua_State *L)
{
    msg *m = check_msg(L, "msg:forward()");
    if (at_end(m))
        return luaL_error(L, "msg:forward(): the message ends here (at %s): finish it", m->in->c->n->id);
    kb_time now = kb_sim_now(kb_fabric_sim(m->in->c->fab));
    if (m->flit)
        kb_fabric_send_flit(m->ptr, now);
    else
        kb_fabric_forward(m->ptr, now);
    done(m);
    return 0;
}

static int msg_finish(lua_State *L)
{
    msg *m = check_msg(L, "msg:finish()");
    if (!at_end(m))
        return luaL_error(L, "msg:finish(): the message goes on past %s: forward it", m->in->c->n->id);
    kb_txn *t = txn_of(m);
    bool last = !m->flit || ((kb_flit *)m->ptr)->idx + 1 == t->nflits;
    if (m->flit)
        kb_fabric_free_flit(m->in->c->fab, m->ptr);
    done(m);
    if (last) {
        kb_mem_req *r = kb_mem_req_of(t);
        if (r && !r->t_serve)
            r->t_serve = kb_sim_now(kb_fabric_sim(m->in->c->fab));
        kb_target_finish(t); /* a memory target moves the data and answers; others complete */
    }
    return 0;
}

static int msg_index(lua_State *L)
{
    msg *m = check_msg_any(L);
    lua_pushvalue(L, 2); /* methods first: forward and finish are the hot keys */
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    lua_settop(L, 2);
    if (m->done)
        return luaL_error(L, "msg.%s: the message was already forwarded or finished", lua_tostring(L, 2));
    const char *k = luaL_checkstring(L, 2);
    const kb_txn *t = txn_of(m);
    const kb_topo *topo = kb_fabric_topo(m->in->c->fab);
    kb_mem_req *r = kb_mem_req_of((kb_txn *)t);
    if (strcmp(k, "kind") == 0)
        lua_pushstring(L, t->kind->name);
    else if (strcmp(k, "id") == 0)
        lua_pushinteger(L, (lua_Integer)t->id);
    else if (strcmp(k, "bytes") == 0)
        lua_pushinteger(L, m->flit ? ((kb_flit *)m->ptr)->bytes : (lua_Integer)t->nbytes);
    else if (strcmp(k, "nbytes") == 0)
        lua_pushinteger(L, (lua_Integer)t->nbytes);
    else if (strcmp(k, "req_bytes") == 0)
        lua_pushinteger(L, (lua_Integer)(r ? r->nbytes : t->nbytes));
    else if (strcmp(k, "addr") == 0)
        lua_pushinteger(L, (lua_Integer)(r ? r->addr : 0));
    else if (strcmp(k, "write") == 0)
        lua_pushboolean(L, r && kb_mem_writes(t));
    else if (strcmp(k, "first") == 0)
        lua_pushboolean(L, !m->flit || ((kb_flit *)m->ptr)->idx == 0);
    else if (strcmp(k, "last") == 0)
        lua_pushboolean(L, !m->flit || ((kb_flit *)m->ptr)->idx + 1 == t->nflits);
    else if (strcmp(k, "at_end") == 0)
        lua_pushboolean(L, at_end(m));
    else if (strcmp(k, "src") == 0)
        lua_pushstring(L, kb_topo_node(topo, t->path->nodes[0])->id);
    else if (strcmp(k, "dst") == 0)
        lua_pushstring(L, kb_topo_node(topo, t->path->nodes[t->path->n - 1])->id);
    else if (strcmp(k, "done") == 0)
        lua_pushboolean(L, m->done);
    else if (strcmp(k, "tag") == 0 && t->request->layout == &LUA_LAYOUT)
        lua_pushinteger(L, KB_PAYLOAD((kb_txn *)t, lua_payload)->tag);
    else
        lua_pushnil(L);
    return 1;
}

static int msg_tostring(lua_State *L)
{
    msg *m = check_msg_any(L);
    if (m->done) {
        lua_pushliteral(L, "message (forwarded or finished)");
        return 1;
    }
    inst tmp = *m->in;
    note(&tmp, m);
    char buf[160];
    describe(&tmp, buf, sizeof buf);
    lua_pushstring(L, buf);
    return 1;
}

/* ---- attaching to a simulation ---- */

static int inst_gc(lua_State *L)
{
    inst **u = luaL_checkudata(L, 1, LINST_MT);
    if (*u)
        (*u)->ud = NULL;
    return 0;
}

/* The methods every instance shares, C ones here (receive, busy, span);
 * components.start adds the Lua ones. */
static void push_methods(lua_State *L, lsim *S)
{
    lua_newtable(L);
    lsim **up = lua_newuserdatauv(L, sizeof *up, 0);
    *up = S;
    lua_pushcclosure(L, inst_receive, 1);
    lua_setfield(L, -2, "receive");
    lua_pushcfunction(L, inst_poll);
    lua_setfield(L, -2, "poll");
    lua_pushcfunction(L, inst_send);
    lua_setfield(L, -2, "send");
    lua_pushcfunction(L, inst_busy);
    lua_setfield(L, -2, "busy");
    lua_pushcfunction(L, inst_span);
    lua_setfield(L, -2, "span");
}

void lcomp_attach(lua_State *L, lsim *S, int sim_idx)
{
    const kb_topo *t = kb_fabric_topo(S->fab);
    int comps = 0, methods = 0;
    for (uint32_t i = 0; i < kb_topo_node_count(t); i++) {
        kb_comp *c = kb_fabric_comp(S->fab, i);
        if (!lcomp_is_lua(c))
            continue;
        if (!comps) {
            lua_getglobal(L, "require");
            lua_pushliteral(L, "kernbench.components");
            lua_call(L, 1, 1);
            comps = lua_gettop(L);
            push_methods(L, S);
            methods = lua_gettop(L);
        }
        lua_getfield(L, comps, "start");
        lua_pushvalue(L, sim_idx);
        inst **u = lua_newuserdatauv(L, sizeof *u, 1);
        *u = c->state;
        (*u)->ud = u;
        luaL_setmetatable(L, LINST_MT);
        lua_pushvalue(L, methods);
        lua_setiuservalue(L, -2, 1);
        lua_pushstring(L, c->n->spec->impl->name);
        lua_pushvalue(L, methods);
        lua_call(L, 4, 0);
    }
    if (comps)
        lua_settop(L, comps - 1);
}

/* ---- implementations ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const kb_attr_def *)a)->name, ((const kb_attr_def *)b)->name);
}

/* The kinds a definition's `messages` list names (at idx), into li. False
 * with an error message pushed. */
static bool read_messages(lua_State *L, const char *name, int idx, limpl *li)
{
    if (lua_getfield(L, idx, "messages") == LUA_TNIL) {
        lua_pop(L, 1);
        return true;
    }
    int m = lua_gettop(L);
    size_t n = lua_istable(L, m) ? lua_rawlen(L, m) : 0;
    li->kinds = kb_xcalloc(n ? n : 1, sizeof *li->kinds);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, m, (lua_Integer)i + 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        bool ok = k && *k && strlen(k) < 64;
        for (size_t j = 0; ok && j < li->nkinds; j++)
            ok = strcmp(li->kinds[j].name, k) != 0;
        if (!ok) {
            lua_pushfstring(L, "%s: messages[%d] must be a new message kind name (a non-empty string of under "
                               "64 characters, each listed once)", name, (int)i + 1);
            return false;
        }
        kb_msg_kind *kd = &li->kinds[li->nkinds++];
        kd->name = kb_xstrdup(k);
        kd->data_span = kb_asprintf("%s data", k);
        kd->ack_span = kb_asprintf("%s ack", k);
        kd->layout = &LUA_LAYOUT;
        lua_pop(L, 1);
    }
    if (!lua_istable(L, m)) {
        lua_pushfstring(L, "%s: messages must be a list of message kind names", name);
        return false;
    }
    lua_pop(L, 1);
    return true;
}

kb_impl *lcomp_new_impl(lua_State *L, const char *name, int idx)
{
    idx = lua_absindex(L, idx);
    if (!lua_istable(L, idx)) {
        lua_pushfstring(L, "the definition of %s is not a table", name);
        return NULL;
    }
    lua_getfield(L, idx, "run");
    bool has_run = lua_isfunction(L, -1);
    lua_pop(L, 1);
    if (!has_run) {
        lua_pushfstring(L, "%s has no run(self) function", name);
        return NULL;
    }
    limpl *li = kb_xcalloc(1, sizeof *li);
    kb_impl *impl = &li->impl;
    impl->name = kb_xstrdup(name);
    if (!read_messages(L, name, idx, li)) {
        lcomp_free_impl(impl);
        return NULL;
    }
    size_t n = 0, cap = 4;
    kb_attr_def *attrs = kb_xcalloc(cap, sizeof *attrs);
    impl->attrs = attrs;
    if (lua_getfield(L, idx, "attrs") == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) != LUA_TSTRING || !lua_isnumber(L, -1)) {
                lua_pop(L, 3);
                impl->nattrs = n;
                lcomp_free_impl(impl);
                lua_pushfstring(L, "%s: attrs must map names to numbers (their defaults)", name);
                return NULL;
            }
            if (n == cap)
                impl->attrs = attrs = kb_xrealloc(attrs, (cap *= 2) * sizeof *attrs);
            attrs[n++] = (kb_attr_def){kb_xstrdup(lua_tostring(L, -2)), KB_ATTR_NUMBER, lua_tonumber(L, -1),
                                       -HUGE_VAL, HUGE_VAL, false, false, NULL, "a Lua component's attribute"};
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    qsort(attrs, n, sizeof *attrs, by_name); /* a fixed order, whatever the table's */
    impl->nattrs = n;
    lua_getfield(L, idx, "flit_aware");
    bool flits = lua_toboolean(L, -1);
    lua_getfield(L, idx, "kinds");
    const char *kinds = lua_tostring(L, -1);
    lua_getfield(L, idx, "doc");
    const char *doc = lua_tostring(L, -1);
    impl->kinds = kinds ? kb_xstrdup(kinds) : NULL;
    impl->ops = flits ? &lcomp_ops_flit : &lcomp_ops_txn;
    impl->doc = kb_xstrdup(doc ? doc : "a component written in Lua");
    lua_pop(L, 3);
    return impl;
}

void lcomp_free_impl(kb_impl *impl)
{
    limpl *li = (limpl *)impl;
    for (size_t i = 0; i < impl->nattrs; i++)
        free((char *)impl->attrs[i].name);
    for (size_t i = 0; i < li->nkinds; i++) {
        free((char *)li->kinds[i].name);
        free((char *)li->kinds[i].data_span);
        free((char *)li->kinds[i].ack_span);
    }
    free(li->kinds);
    free((void *)impl->attrs);
    free((char *)impl->name);
    free((char *)impl->kinds);
    free((char *)impl->doc);
    free(li);
}

void lcomp_open(lua_State *L)
{
    static const luaL_Reg msg_methods[] = {{"forward", msg_forward}, {"finish", msg_finish}, {NULL, NULL}};
    luaL_newmetatable(L, LMSG_MT);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &MSG_KEY);
    luaL_newlib(L, msg_methods);
    lua_pushcclosure(L, msg_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, msg_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    luaL_newmetatable(L, LINST_MT);
    lua_pushcfunction(L, inst_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, inst_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}
