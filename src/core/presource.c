#include "core/presource.h"

#include "core/sim_internal.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct presource {
    size_t capacity, nusers;
    kb_link users;
    bool preemptive;
    kb_presource_preempted on_preempt;
    void *ctx;
} presource;

static presource *state(const kb_shared *sh) { return sh->ctx; }

/* SimPy's key (priority, time, not preempt), compared as a tuple. */
static bool key_less(const kb_request *a, const kb_request *b)
{
    if (a->key != b->key)
        return a->key < b->key;
    if (a->time != b->time)
        return a->time < b->time;
    return a->preempt && !b->preempt; /* not preempt: False < True */
}

/* SortedQueue.append: a stable sort by key puts r after every request
 * whose key is not greater. */
static void enqueue_put(kb_shared *sh, kb_request *r)
{
    kb_link *l = sh->putq.next;
    while (l != &sh->putq && !key_less(r, KB_CONTAINER_OF(l, kb_request, qw.link)))
        l = l->next;
    kb_list_push_back(l, &r->qw.link); /* just before l */
}

static bool do_put(kb_shared *sh, kb_request *r)
{
    presource *p = state(sh);
    if (p->preemptive && p->nusers >= p->capacity && r->preempt) {
        /* sorted(users, key=key)[-1]: the greatest key, the latest of equals */
        kb_request *victim = NULL;
        for (kb_link *l = p->users.next; l != &p->users; l = l->next) {
            kb_request *u = KB_CONTAINER_OF(l, kb_request, user);
            if (!victim || !key_less(u, victim))
                victim = u;
        }
        if (victim && key_less(r, victim)) {
            kb_link_unlink(&victim->user);
            p->nusers--;
            if (p->on_preempt)
                p->on_preempt(p->ctx, victim, r);
        }
    }
    if (p->nusers < p->capacity) {
        kb_list_push_back(&p->users, &r->user);
        p->nusers++;
        r->since = sh->sim->now;
        kb_shared_grant(sh, r, KB_ITEM_NONE);
    }
    return false;
}

static bool do_get(kb_shared *sh, kb_request *r)
{
    (void)sh, (void)r; /* releases never queue (kb_presource_release) */
    return false;
}

static void destroy(kb_shared *sh)
{
    presource *p = state(sh);
    while (kb_list_pop_front(&p->users))
        ;
    free(p);
}

static void describe(const kb_shared *sh, char *buf, size_t n)
{
    const presource *p = state(sh);
    snprintf(buf, n, "%zu of %zu in use", p->nusers, p->capacity);
}

static const kb_shared_ops priority_ops = {
    .what = "priority resource", .put_noun = "request", .put_prep = "for",
    .do_put = do_put, .do_get = do_get, .enqueue_put = enqueue_put,
    .destroy = destroy, .describe = describe,
};

static const kb_shared_ops preemptive_ops = {
    .what = "preemptive resource", .put_noun = "request", .put_prep = "for",
    .do_put = do_put, .do_get = do_get, .enqueue_put = enqueue_put,
    .destroy = destroy, .describe = describe,
};

kb_shared *kb_presource_new(kb_sim *sim, const char *name, size_t capacity, bool preemptive,
                            kb_presource_preempted on_preempt, void *ctx)
{
    presource *p = kb_xcalloc(1, sizeof *p);
    p->capacity = capacity;
    p->preemptive = preemptive;
    p->on_preempt = on_preempt;
    p->ctx = ctx;
    kb_list_init(&p->users);
    return kb_shared_new(sim, preemptive ? &preemptive_ops : &priority_ops, name, p);
}

void kb_presource_request(kb_shared *sh, kb_request *r, double priority, bool preempt, kb_proc *proc)
{
    r->key = priority;
    r->preempt = preempt;
    r->time = sh->sim->now;
    r->proc = proc;
    kb_shared_put(sh, r);
}

bool kb_presource_release(kb_shared *sh, kb_request *r)
{
    presource *p = state(sh);
    bool held = kb_link_linked(&r->user);
    if (held) {
        kb_link_unlink(&r->user);
        p->nusers--;
    }
    kb_shared_schedule_trigger_put(sh);
    return held;
}

void kb_presource_forget(kb_shared *sh, kb_request *r)
{
    if (kb_link_linked(&r->user)) {
        kb_link_unlink(&r->user);
        state(sh)->nusers--;
    }
}

size_t kb_presource_capacity(const kb_shared *sh) { return state(sh)->capacity; }
size_t kb_presource_in_use(const kb_shared *sh) { return state(sh)->nusers; }
bool kb_presource_preemptive(const kb_shared *sh) { return state(sh)->preemptive; }
const kb_link *kb_presource_users(const kb_shared *sh) { return &state(sh)->users; }
bool kb_presource_is(const kb_shared *sh) { return sh->ops == &priority_ops || sh->ops == &preemptive_ops; }
