/* Internal to the `sim` Lua module (src/luasim/lsim*.c): the userdata layouts
 * and the helpers its files share.
 *
 * Ownership. A `sim` userdata owns its kb_sim. Events, processes, stores
 * and resources are userdata that keep their simulation's userdata alive
 * through a user value; their C state lives inside the userdata (stores,
 * resources, processes) or in the simulation's event pool (events, which
 * are reference counted). Lua values carried by events and stores stay on
 * the Lua side, in user values, so the C core only sees integers.
 *
 * Running processes are anchored in the simulation's process table (a user
 * value of the sim userdata), so they cannot be collected while the core
 * may still wake them; a simulation nobody references is collected with
 * all its processes. */
#ifndef KB_LUASIM_LSIM_H
#define KB_LUASIM_LSIM_H

#include "core/event.h"
#include "core/proc.h"
#include "core/request.h"
#include "core/resource.h"
#include "core/sim.h"
#include "core/store.h"

#include <lauxlib.h>
#include <lua.h>

#define LSIM_MT "kernbench.sim"
#define LEVENT_MT "kernbench.event"
#define LPROC_MT "kernbench.process"
#define LSTORE_MT "kernbench.store"
#define LRES_MT "kernbench.resource"
#define LREQ_MT "kernbench.request"
#define LERROR_MT "kernbench.error"

struct lproc;
struct lmachine;

typedef struct lsim {
    const void *tag;       /* lsim_check_any's type tag (lbind_test_tagged) */
    kb_sim *sim;           /* NULL once closed */
    lua_State *L;          /* the state inside s:run / s:step, else NULL */
    int sim_idx;           /* index of this userdata on L while running */
    struct lproc *running; /* the process being resumed, if any */
    uint64_t resumes;      /* coroutine resumes so far */
    int serial;            /* creation number within this Lua state */
    int objects;           /* stores and resources made, for default names */
    struct kb_session *session; /* NULL when the state has none */
    /* What the layer above built for a simulation on a topology (its
     * machine and the records of the operations in flight: src/lua,
     * lmachine.h), or NULL. Opaque here. */
    struct lmachine *mach;
} lsim;

/* User values of a sim userdata: its processes, its first error, a value
 * the layer above keeps alive with it (the topology), and the reasons of
 * failed events (keyed by their kb_event, lsim_keep_failure). */
enum { LSIM_UV_PROCS = 1, LSIM_UV_ERROR, LSIM_UV_MODEL, LSIM_UV_FAILURES, LSIM_NUV = LSIM_UV_FAILURES };

/* Kinds of awaitable userdata; all start with an levent header. */
typedef enum {
    LEV_PLAIN, LEV_TIMEOUT, LEV_ALL, LEV_ANY, LEV_PROC,
    LEV_PUT, LEV_GET, LEV_ACQUIRE, /* requests (lreq) of stores and resources */
    LEV_SH_PUT, LEV_SH_GET, LEV_SH_ACQUIRE /* ... of shared objects (lsim_shared.c) */
} levent_kind;

/* A success value built when it is first read (a wait, ev:value(), a
 * condition over the event): an operation's result, kept as a C record
 * until Lua asks for it, since the results of a big run mostly never are
 * (docs/decisions.md, "Operation results are built when first read"). */
typedef struct lsim_deferred lsim_deferred;
struct lsim_deferred {
    void (*push)(lua_State *L, lsim_deferred *d); /* pushes the value */
    void (*free)(lsim_deferred *d);
};

typedef struct levent {
    kb_event *ev; /* one reference, dropped by __gc / close */
    lsim *S;
    levent_kind kind;
    lsim_deferred *deferred; /* owned; the value once built is LEV_UV_VALUE */
} levent;

/* User values of event and process userdata. */
enum { LEV_UV_VALUE = 1, LEV_UV_SIM, LEV_UV_EXTRA, LEV_NUV = LEV_UV_EXTRA };
/* LEV_UV_VALUE: success value, failure reason, or (processes) the table of
 * returned values; LEV_UV_EXTRA: children (conditions) or thread (processes). */
/* A process's fourth: its function, for what it prints. */
enum { LPROC_UV_FN = LEV_NUV + 1, LPROC_NUV = LPROC_UV_FN };

typedef struct lproc {
    levent hdr; /* completion event: must stay first */
    kb_proc proc;
    kb_waiter waiter;
    lua_State *co;
    int start_nargs; /* arguments for the first resume */
    int blocked;     /* set by a blocking call just before it yields: an lsim_block_kind */
    bool interrupted; /* resumed by p:interrupt(): the error is on the stack top */
    const char *call; /* the blocking call, for messages */
    void *blocked_on; /* what the blocking call's continuation needs (its object) */
    char *name;      /* owned copy: outlives the simulation, for messages */
} lproc;

/* A request as an event (core/request.h): a store's put or get, a
 * resource's request. User values: LEV_UV_VALUE (a get's item once taken
 * from the store), LEV_UV_SIM, LEV_UV_EXTRA (the store or resource). While
 * the core may touch it (kb_request_busy) it is anchored in the
 * simulation's process table, as SimPy's queues hold their requests. */
typedef struct lreq {
    levent hdr; /* its event: must stay first */
    kb_request req;
    bool anchored;
    bool item_taken; /* a served get's item was moved from the store to LEV_UV_VALUE */
} lreq;

/* What a blocked process waits in (lproc.blocked): the sim's own calls,
 * which p:interrupt() can withdraw it from, or a call of a layer above. */
typedef enum lsim_block_kind {
    LSIM_BLOCK_OTHER = 1, /* tl.*, a component's receive: cannot be interrupted */
    LSIM_BLOCK_SLEEP,
    LSIM_BLOCK_WAIT,      /* on an event, process, condition or request */
    LSIM_BLOCK_PUT,
    LSIM_BLOCK_GET,
    LSIM_BLOCK_ACQUIRE
} lsim_block_kind;

/* lsim.c */
lsim *lsim_check(lua_State *L, int idx);      /* a sim userdata that is not closed */
lsim *lsim_check_any(lua_State *L, int idx);  /* closed or not */
_Noreturn void lsim_closed(lua_State *L, const lsim *S); /* raises "simulation #N is closed" */
static inline void lsim_check_open(lua_State *L, const lsim *S)
{
    if (!S->sim)
        lsim_closed(L, S);
}
/* A time in ns at idx as ps, checked: an integer or a float of ns in
 * 0 .. 9223372036854775.807 (int64 picoseconds; floats rounded to the ps).
 * NaN, infinities, negative and larger values, and non-numbers raise an
 * error naming `what` and the range. */
kb_time lsim_check_duration(lua_State *L, int idx, const char *what);
/* The same for a delay from now: now + delay must be a simulated time
 * too (the error names the time reached). */
kb_time lsim_check_delay(lua_State *L, const lsim *S, int idx, const char *what);
void lsim_set_error(lua_State *L, lsim *S, int err_idx); /* first process error wins */
void lsim_new_meta(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *meta);

/* lsim_proc.c */
void lsim_open_proc(lua_State *L);
int lsim_spawn(lua_State *L);
int lsim_sleep(lua_State *L);
int lsim_current_process(lua_State *L);
/* The process whose coroutine is L, or NULL when L is not running inside a
 * process of S (errors if L is a coroutine nested inside one). */
static inline lproc *lsim_current(lua_State *L, lsim *S, const char *call);
/* The blocking protocol of every call that may block:
 *   p = lsim_current(...); try the operation without a waiter; if it
 *   cannot complete: no p -> lsim_would_block(); else
 *   lsim_prepare_block(L, p, call); register p->waiter with the core;
 *   return lsim_block(L, p, continuation).
 * prepare checks that L can yield before anything is registered. */
static inline void lsim_prepare_block(lua_State *L, lproc *p, const char *call);
static inline int lsim_block(lua_State *L, lproc *p, lua_KFunction k);
int lsim_would_block(lua_State *L, const char *call, const char *why);
/* Out of line for the inline helpers below: the errors, and the wake of
 * every process's waiter. */
_Noreturn void lsim_nested_call(lua_State *L, const lproc *p, const char *call);
_Noreturn void lsim_cannot_block(lua_State *L, const char *call);
void lsim_proc_wake(kb_sim *sim, void *waiter);

/* Inline: every blocking call goes through these (the per-resume path). */
static inline lproc *lsim_current(lua_State *L, lsim *S, const char *call)
{
    lproc *p = S->running;
    if (p && p->co != L)
        lsim_nested_call(L, p, call);
    return p;
}

static inline void lsim_prepare_block(lua_State *L, lproc *p, const char *call)
{
    if (!lua_isyieldable(L))
        lsim_cannot_block(L, call);
    p->call = call;
    kb_waiter_init(&p->waiter, lsim_proc_wake, &p->proc);
}

static inline int lsim_block(lua_State *L, lproc *p, lua_KFunction k)
{
    p->blocked = LSIM_BLOCK_OTHER;
    return lua_yieldk(L, 0, (lua_KContext)p, k);
}

/* The same for the sim's own blocking calls, which an interrupt can end:
 * their continuation k starts with LSIM_INTERRUPTED(L, p). */
static inline int lsim_block_as(lua_State *L, lproc *p, lua_KFunction k, lsim_block_kind kind)
{
    p->blocked = (int)kind;
    return lua_yieldk(L, 0, (lua_KContext)p, k);
}

/* Raises the interrupt error the resume put on the stack top. */
int lsim_raise_interrupt(lua_State *L, lproc *p);
#define LSIM_INTERRUPTED(L, p)                     \
    do {                                           \
        if (__builtin_expect((p)->interrupted, 0)) \
            return lsim_raise_interrupt(L, p);     \
    } while (0)

/* lsim_interrupt.c */
int lsim_interrupt(lua_State *L);     /* p:interrupt([cause]) */
/* Schedules an interruption of p (its userdata at proc_idx) with the cause
 * at cause_idx, by the process at by_idx (nil: none); sim userdata at
 * sim_idx. The checks are the caller's. */
void lsim_interrupt_schedule(lua_State *L, lproc *p, int proc_idx, int cause_idx, int by_idx, int sim_idx);
int lsim_is_interrupt(lua_State *L);  /* sim.is_interrupt(v) */
void lsim_open_interrupt(lua_State *L);
/* lsim_proc.c, for lsim_interrupt.c: resumes p with nargs values on its
 * stack; drops p's pending wake from a sleep (the timeout stays queued). */
void lsim_proc_resume(lproc *p, int nargs);
void lsim_proc_cancel_sleep(kb_sim *sim, lproc *p);
/* The blocked process's object (its blocking call's self) on L's top. */
void lsim_proc_push_blocked_self(lua_State *L, lproc *p);

/* lsim_event.c */
void lsim_open_event(lua_State *L);
levent *lsim_check_awaitable(lua_State *L, int idx);
levent *lsim_test_awaitable(lua_State *L, int idx);
int lsim_event_new(lua_State *L);
/* Pushes a new event userdata for ev (one reference taken over). */
levent *lsim_push_event(lua_State *L, int sim_idx, lsim *S, kb_event *ev, levent_kind kind);
int lsim_timeout(lua_State *L);
int lsim_all_of(lua_State *L);
int lsim_any_of(lua_State *L);
/* Methods shared by events and processes. */
int lsim_event_wait(lua_State *L);
/* ev:wait() for the awaitable at 1 under another name: the blocking calls
 * made of a request and its wait; `why` says why it would block. */
int lsim_wait_as(lua_State *L, const char *call, const char *why);
int lsim_event_value(lua_State *L);
int lsim_event_triggered(lua_State *L);
int lsim_event_processed(lua_State *L);
int lsim_event_ok(lua_State *L);
int lsim_event_id(lua_State *L);
/* The failure reason of the failed awaitable at 1, returned (not raised). */
int lsim_event_reason(lua_State *L);
void lsim_release_event(levent *e); /* drops the kb_event reference if the sim lives, frees a deferred value */
/* Keeps the reason at reason_idx for ev, which has just failed, so that an
 * unhandled failure (nothing took it when it was processed) can be raised
 * by s:run with it, even if nothing references the event any more. The
 * sim userdata is at sim_idx. Entries are keyed by the kb_event and
 * overwritten when the pooled object fails again, so they stay as many as
 * the events ever live at once. */
void lsim_keep_failure(lua_State *L, int sim_idx, kb_event *ev, int reason_idx);
/* The simulation's unhandled-failure hook (kb_event_set_unhandled): makes
 * the run fail with an error object for the event's reason. */
void lsim_unhandled(void *ctx, kb_event *ev);
/* Pushes a new error object (LERROR_MT): message = the value at msg_idx,
 * text = `text`, time_ns = now, and process = `process` unless NULL. */
void lsim_push_error(lua_State *L, lsim *S, int msg_idx, const char *process, const char *text);
/* Pushes the text of the value at idx (its __tostring may raise: then its
 * type name) and returns it. */
const char *lsim_safe_tostring(lua_State *L, int idx);

/* lsim_callback.c: callbacks on events, defused failures */
int lsim_add_callback(lua_State *L); /* ev:add_callback(fn) */
int lsim_defuse(lua_State *L);       /* ev:defuse() */
int lsim_defused(lua_State *L);      /* ev:defused() */

/* lsim_request.c */
void lsim_open_request(lua_State *L);
/* Pushes a new request of `kind` on the object at obj_idx (its sim
 * userdata at sim_idx); the caller then hands q->req to the core
 * (kb_store_put_request ...) and calls lsim_request_started. */
lreq *lsim_request_new(lua_State *L, lsim *S, int sim_idx, int obj_idx, levent_kind kind);
/* The core holds q->req now: q takes its event and is anchored (the
 * request is at req_idx, the sim userdata at sim_idx). */
void lsim_request_started(lua_State *L, lreq *q, int req_idx, int sim_idx);
/* An interrupt: a request (kind LEV_PUT, LEV_GET or LEV_ACQUIRE) takes
 * over p's blocking call on the object at obj_idx and goes on without it,
 * anchored as any request (L: the running s:run's state). */
void lsim_request_adopt(lua_State *L, lsim *S, lproc *p, int obj_idx, levent_kind kind);
/* User value 4 of a request: a filter store get's filter. */
enum { LREQ_UV_FILTER = LEV_NUV + 1, LREQ_NUV = LREQ_UV_FILTER };
/* The core let go of q (a preempted slot): unanchor it if nothing holds it. */
void lsim_request_settled(lua_State *L, lreq *q, int sim_idx);
/* lsim_request_started in two halves, for a request the core may call
 * back about while it takes it (a filter): anchor first, then take the
 * event the core made. */
void lsim_request_anchor(lua_State *L, lreq *q, int req_idx, int sim_idx);
void lsim_request_took(lua_State *L, lreq *q, int req_idx, int sim_idx);
/* Views: pushes what waits in a queue entry (a request, or the process of
 * a blocking call), and a list of a queue's entries (kb_waiter links) or,
 * with `users`, of a resource's users (kb_request.user links). */
void lsim_push_queued(lua_State *L, int sim_idx, kb_waiter *w);
void lsim_push_list(lua_State *L, int sim_idx, const kb_link *head, bool users);
/* req:cancel() of the request q at idx: true if it left its queue. */
bool lsim_request_cancel(lua_State *L, lreq *q, int idx);
/* A request at idx (error naming `call` otherwise). */
lreq *lsim_check_request(lua_State *L, int idx, const char *call);
/* r:release(req) and req:release(): req at idx. */
int lsim_request_release(lua_State *L, lreq *q, int idx, const char *call);

/* lsim_shared.c: containers, priority and filter stores, priority and
 * preemptive resources */
void lsim_open_shared(lua_State *L);
int lsim_container_new(lua_State *L);
int lsim_priority_store_new(lua_State *L);
int lsim_filter_store_new(lua_State *L);
int lsim_priority_resource_new(lua_State *L);
int lsim_preemptive_resource_new(lua_State *L);
/* A shared store's item `item` (the object's userdata at obj_idx) moved
 * out to the stack top; nil for a container. */
void lsim_shared_take(lua_State *L, int obj_idx, kb_item item);
/* A cancelled put's item given back to nobody. */
void lsim_shared_drop(lua_State *L, int obj_idx, kb_item item);

/* lsim_store.c */
void lsim_open_store(lua_State *L);
/* A get request's item: moves the item of `ref` out of the store at
 * st_idx to the stack top (nil if the store is gone). */
void lsim_store_take(lua_State *L, int st_idx, lua_Integer ref);
int lsim_store_new(lua_State *L);
int lsim_resource_new(lua_State *L);

/* ---- what a layer above adds ----
 * The `sim` module knows the event core only. A layer above (the model's
 * bindings, src/lua/lmachine.c) extends every simulation of a state:
 * attach() builds what sim.new's options ask (a machine for `topology`),
 * close() releases it when the simulation closes (the kb_sim still alive),
 * and methods are added to every simulation. */
typedef struct lsim_ext {
    void (*attach)(lua_State *L, lsim *S, int sim_idx, int opts_idx);
    void (*close)(lua_State *L, lsim *S);
} lsim_ext;

/* Installs ext (static data, at most one per state). */
void lsim_extend(lua_State *L, const lsim_ext *ext);
/* Adds functions to the methods of every simulation of the state. */
void lsim_add_methods(lua_State *L, const luaL_Reg *methods);

/* The `sim` module opener. */
int luaopen_sim(lua_State *L);

#endif
